"""Publish by push: the branch goes to a real bare origin, a PR command opens the PR.

Git, the remote, the store and the board are real. The PR service is the only thing
stubbed: `tests/scripts/pr_ok.py` records its argv and prints a URL, `pr_fail.py` fails
the way `gh` does. Each test that uses one says so.
"""

from __future__ import annotations

import sys
from pathlib import Path

from board.core.cards import actions
from board.core.model import Blocked
from board.core.publish import push
from board.core.publish.publish import Owner

from tests.support.operator import (
    PR_FAIL,
    add_card,
    claim,
    configure,
    make_tree,
    pr_argv_ok,
    pr_calls,
    remote_sha,
    set_branch,
)
from tests.support.repos import git


def _built(repo: Path, store, cfg, title: str = "Add a feature", **kw):
    card = add_card(store, title, **kw)
    token = claim(store, card.id)
    tree = make_tree(cfg, card, {"feature.py": "x = 1\n"})
    set_branch(store, card.id, f"feat/{card.id}")
    return store.get(card.id), token, tree


def test_push_publishes_the_branch_and_records_the_pr_url(repo: Path, store, tmp_path: Path):
    """The PR service is stubbed (pr_ok.py); the push goes to a real bare origin."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record))
    card, token, tree = _built(repo, store, cfg, spec="the spec text", acceptance="it works")

    out = push.publish(cfg, store, card, card.branch, Owner("working", token))

    assert out.ok, f"the publish failed: {out.lines}"
    assert remote_sha(cfg, card.branch) == git(tree, "rev-parse", "HEAD"), (
        "the card branch did not reach the remote"
    )
    after = store.get(card.id)
    assert after.lane == "review", f"a pushed card waits in review, got {after.lane}"
    assert after.pr_url == "https://prs.example.test/pull/1", f"pr_url not recorded: {after}"
    assert after.drive == "", "the drive still owns a published card"
    assert after.to_json()["pr_url"] == after.pr_url
    calls = pr_calls(record)
    assert len(calls) == 1, f"the PR command ran {len(calls)} times"
    argv = calls[0]["argv"]
    assert argv[argv.index("--head") + 1] == card.branch
    assert argv[argv.index("--base") + 1] == cfg.board.base
    assert argv[argv.index("--title") + 1] == card.title
    assert "the spec text" in calls[0]["body"] and "it works" in calls[0]["body"], (
        "the PR body lost the card's spec or acceptance"
    )
    assert "{draft}" not in argv and "--draft" not in argv


def test_refused_push_blocks_the_card_with_gits_words(repo: Path, store, tmp_path: Path):
    """The PR service is stubbed (pr_ok.py); the refusal comes from a real pre-receive hook."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record))
    hook = Path(git(repo, "remote", "get-url", "origin")) / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'remote policy: pushes are frozen today' >&2\nexit 1\n")
    hook.chmod(0o755)
    card, token, _ = _built(repo, store, cfg)

    out = push.publish(cfg, store, card, card.branch, Owner("working", token))

    after = store.get(card.id)
    assert after.blocked is not None, "a refused push left the card unblocked"
    assert after.blocked.cls == "terminal"
    assert "pushes are frozen today" in after.blocked.reason, (
        f"the block does not carry git's output: {after.blocked.reason!r}"
    )
    assert f"board approve {card.id}" in after.blocked.reason, "the block does not say what next"
    assert after.lane == "review" and after.drive == ""
    assert not out.pushed and remote_sha(cfg, card.branch) is None
    assert pr_calls(record) == [], "a PR was opened for a branch the remote refused"


def test_failing_pr_command_blocks_and_the_branch_stays_pushed(repo: Path, store):
    """The PR service is stubbed (pr_fail.py fails like gh); the push is real."""
    cfg = configure(repo, mode="push", pr_argv=[sys.executable, str(PR_FAIL), "{branch}"])
    card, token, tree = _built(repo, store, cfg)

    out = push.publish(cfg, store, card, card.branch, Owner("working", token))

    assert out.pushed and remote_sha(cfg, card.branch) == git(tree, "rev-parse", "HEAD"), (
        "the branch did not stay pushed after the PR command failed"
    )
    after = store.get(card.id)
    assert after.blocked is not None, "a failing PR command left the card unblocked"
    assert "Resource not accessible by integration" in after.blocked.reason, (
        f"the block lost the PR command's output: {after.blocked.reason!r}"
    )
    assert f"open a pull request from {card.branch} into main by hand" in after.blocked.reason, (
        "the card does not say how to open the PR by hand"
    )
    assert after.lane == "review" and after.pr_url == ""


def test_a_missing_pr_tool_blocks_naming_it(repo: Path, store):
    """No PR service at all: the configured executable does not exist."""
    cfg = configure(repo, mode="push", pr_argv=["/nonexistent/gh", "pr", "create"])
    card, token, _ = _built(repo, store, cfg)

    push.publish(cfg, store, card, card.branch, Owner("working", token))

    after = store.get(card.id)
    assert after.blocked and "/nonexistent/gh" in after.blocked.reason, (
        f"the block does not name the missing tool: {after.blocked}"
    )


def test_card_text_reaches_the_pr_command_as_one_literal_item(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_ok.py): it records the argv it was given."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record))
    pwned = tmp_path / "pwned"
    title = f"Fix $(touch {pwned}); `touch {pwned}` && rm -rf / # it"
    card, token, _ = _built(repo, store, cfg, title=title)

    push.publish(cfg, store, card, card.branch, Owner("working", token))

    argv = pr_calls(record)[0]["argv"]
    assert argv[argv.index("--title") + 1] == title, "the title was split or rewritten"
    assert not pwned.exists(), "a card title reached a shell"


def test_draft_marks_the_pr_only_when_asked(repo: Path, store, tmp_path: Path):
    """The PR service is stubbed (pr_ok.py); `{draft}` becomes --draft only for a draft."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record, draft_item=True))
    plain, t1, _ = _built(repo, store, cfg, title="plain")
    draft = add_card(store, "drafty")
    t2 = claim(store, draft.id)
    make_tree(cfg, draft, {"d.py": "d = 1\n"})
    draft = set_branch(store, draft.id, f"feat/{draft.id}")

    push.publish(cfg, store, plain, plain.branch, Owner("working", t1))
    push.publish(cfg, store, draft, draft.branch, Owner("working", t2), draft_why="gate red")

    first, second = pr_calls(record)
    assert "--draft" not in first["argv"] and "{draft}" not in first["argv"], (
        f"a normal PR was marked draft: {first['argv']}"
    )
    assert "--draft" in second["argv"], "a forced publish was not opened as a draft"
    assert second["argv"][second["argv"].index("--title") + 1].startswith("[draft: gate red]")
    assert "Draft: gate red" in second["body"] and second["draft_env"] == "1"


def test_a_card_moved_before_the_push_is_not_pushed(repo: Path, store, tmp_path: Path):
    """The PR service is stubbed (pr_ok.py); it must never be called here."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record))
    card, token, _ = _built(repo, store, cfg)
    actions.requeue(store, card.id, "not like this")
    before = store.get(card.id)

    out = push.publish(cfg, store, card, card.branch, Owner("working", token))

    assert out.stood_aside and not out.pushed
    assert remote_sha(cfg, card.branch) is None, "a card moved under its drive was pushed"
    assert pr_calls(record) == []
    assert store.get(card.id) == before, "the publish wrote to a card someone else moved"


def test_push_without_a_pr_command_says_how_to_open_it(repo: Path, store):
    """No PR service configured: only the real push runs."""
    cfg = configure(repo, mode="push", pr_argv=[])
    card, token, _ = _built(repo, store, cfg)

    out = push.publish(cfg, store, card, card.branch, Owner("working", token))

    assert out.ok and remote_sha(cfg, card.branch)
    after = store.get(card.id)
    assert after.lane == "review" and after.blocked is None
    said = " ".join(e.text for e in store.timeline(card.id))
    assert "open a pull request from" in said, "the card does not say how to open the PR"


def test_push_never_overwrites_a_commit_someone_else_pushed(repo: Path, store, tmp_path: Path):
    """The PR service is stubbed (pr_ok.py); a reviewer's real commit sits on the remote."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record))
    card, token, tree = _built(repo, store, cfg)
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(Path(git(repo, "remote", "get-url", "origin"))), str(other))
    git(other, "checkout", "-q", "-b", card.branch)
    (other / "theirs.txt").write_text("a reviewer's fix\n")
    git(other, "add", "-A")
    git(other, "commit", "-q", "-m", "theirs")
    git(other, "push", "-q", "origin", card.branch)
    theirs = git(other, "rev-parse", "HEAD")

    push.publish(cfg, store, card, card.branch, Owner("working", token))

    assert remote_sha(cfg, card.branch) == theirs, "the push overwrote someone else's commit"
    assert store.get(card.id).blocked is not None, "the refused push did not block the card"


def test_a_rebuilt_branch_replaces_the_boards_own_earlier_push(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_ok.py); a requeued card's new build updates its PR branch."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record))
    card, token, tree = _built(repo, store, cfg)
    push.publish(cfg, store, card, card.branch, Owner("working", token))
    # the operator requeues; the next build starts the branch again from the base
    actions.requeue(store, card.id, "use a constant")
    token = claim(store, card.id)
    git(tree, "reset", "-q", "--hard", cfg.board.base)
    (tree / "feature.py").write_text("X = 1\n")
    git(tree, "add", "-A")
    git(tree, "commit", "-q", "-m", "rebuilt")
    rebuilt = git(tree, "rev-parse", "HEAD")

    out = push.publish(cfg, store, card, card.branch, Owner("working", token))

    assert out.ok, f"the board could not update its own PR branch: {out.lines}"
    assert remote_sha(cfg, card.branch) == rebuilt


def test_pr_url_is_the_last_url_printed():
    text = "see https://docs.example/help for help\nhttps://github.com/o/r/pull/7.\n"
    assert push.find_url(text) == "https://github.com/o/r/pull/7"
    assert push.find_url("no url here") == ""


def test_a_blocked_review_card_keeps_its_class(repo: Path, store):
    """Plumbing guard: the block written is a real Blocked with the terminal class."""
    cfg = configure(repo, mode="push", pr_argv=["/nonexistent/gh"])
    card, token, _ = _built(repo, store, cfg)
    push.publish(cfg, store, card, card.branch, Owner("working", token))
    assert isinstance(store.get(card.id).blocked, Blocked)
