"""The operator's verbs on live work: stop, cancel, hold, approve, requeue, stranded salvage.

Everything is real: git (a bare origin and a clone), the store, the drive and its coder and
gate scripts, the processes killed (checked in /proc). Where a test publishes with push, the
PR service is the only thing stubbed (tests/scripts/pr_*.py), and the test says so. Each test
runs on a board on the SQLite file and on one on PostgreSQL (`board init --store`; the
`backends` mark, tests/conftest.py), the CLI and the drives reading it from board.toml.
"""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest
from board.core import ops as operator
from board.core.cards import actions
from board.core.errors import BoardError, Conflict, NotFound, Refused
from board.core.git import worktrees
from board.core.model import Blocked
from board.core.publish import publish
from board.core.store import Expect

from tests.support.operator import (
    DriveThread,
    add_card,
    claim,
    coder,
    configure,
    gate,
    make_tree,
    pr_argv_ok,
    pr_calls,
    remote_sha,
    run_drive,
    script,
    stranded,
)
from tests.support.procs import group_members, kill_group_quietly, wait_gone
from tests.support.repos import git, run_cli
from tests.support.waiting import has_text, wait_for

pytestmark = pytest.mark.backends()


def _state(store):
    """Everything the store holds, to prove a refusal changed nothing."""
    return [(c, store.timeline(c.id)) for c in store.list_cards()]


def _refs(cfg):
    return git(cfg.root, "for-each-ref", "--format=%(refname) %(objectname)")


def _show(cfg, ref: str, path: str) -> str | None:
    return git_ok(cfg.root, "show", f"{ref}:{path}")


def git_ok(cwd: Path, *args: str) -> str | None:
    try:
        return git(cwd, *args)
    except AssertionError:
        return None


def _reviewed(repo: Path, store, **publish_keys):
    """A card built by a real drive (coder_edit.sh) and waiting in review (review=operator)."""
    cfg = configure(repo, coder=coder("coder_edit.sh"), review="operator", **publish_keys)
    card = add_card(store, "Add work")
    end = run_drive(cfg, store, card.id)
    assert end.outcome == "review", f"the build did not reach review: {end}"
    return cfg, store.get(card.id)


def _stranded_card(cfg, store, text: str = "saved work\n", lane: str = "ready"):
    """A card whose tree was saved (the real save-then-remove) to a stranded/… branch."""
    card = add_card(store, "Rescue me")
    tree = make_tree(cfg, card, {"rescued.py": "done = 1\n"})
    (tree / "notes.txt").write_text(text)  # uncommitted, next to a committed change
    res = worktrees.discard_worktree(cfg, tree, store=store, card_id=card.id, why="a test")
    assert res.saved is not None and res.removed
    if lane == "cancelled":
        actions.cancel(store, None, card.id)
    return store.get(card.id), res.saved.branch


# ---------------------------------------------------------------------------------------------
# stop


def test_stop_mid_coder_leaves_no_process_and_the_work_on_a_branch(repo: Path, store):
    cfg = configure(repo, coder=coder("coder_sleepy.sh"))
    card = add_card(store, "Runaway")
    run = DriveThread(cfg, store, card.id)
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    wait_for(lambda: store.get_drive(run.token).pgid and has_text(tree / "work" / f"{card.id}.txt"))
    pgid = store.get_drive(run.token).pgid
    assert group_members(pgid), "the coder is not running"

    try:
        res = run_cli(repo, "stop", card.id, "--reason", "runaway coder")
        left = wait_gone(pgid)
    finally:
        kill_group_quietly(pgid)  # a failing stop must not leave the coder behind

    assert res.returncode == 0, res.stderr
    assert not left, f"processes of the coder's group are still alive: {left}"
    end = run.join()
    assert end.outcome == "stood-aside", f"the drive did not stand aside: {end}"
    after = store.get(card.id)
    assert after.lane == "ready" and after.drive == ""
    assert after.blocked == Blocked("held", "stopped: runaway coder"), after.blocked
    assert not any(x.startswith("budget:") for x in after.labels), "a stop spent budget"
    assert store.get_drive(run.token).status == "stopped"
    branches = stranded(cfg)
    assert len(branches) == 1, f"the stopped work is not on one stranded branch: {branches}"
    saved = _show(cfg, branches[0], f"work/{card.id}.txt")
    assert saved and "unfinished" in saved, "the coder's work was lost by the stop"
    assert not tree.exists(), "the stopped drive's tree was left behind"
    assert "stranded/" in res.stdout, "board stop did not say where the work went"


def test_a_stopped_card_resumes_with_unblock(repo: Path, store):
    """A stopped card is not taken straight back; `unblock` makes it claimable again."""
    cfg = configure(repo)
    card = add_card(store, "Stop me")
    token = claim(store, card.id)

    operator.stop(store, cfg, card.id)

    assert store.get(card.id).blocked.reason == "stopped: by the operator"
    assert card.id not in [c.id for c in actions.ready_queue(store)], "the loop would retake it"
    assert store.get_drive(token).status == "stopped"
    actions.unblock(store, card.id)
    assert card.id in [c.id for c in actions.ready_queue(store)], "unblock did not resume it"


def test_stop_of_a_drive_whose_loop_died_kills_its_group_and_saves(repo: Path, store, tmp_path):
    """A loop killed with -9 leaves its coder running in its own group; stop still ends it."""
    from board.core import proc

    cfg = configure(repo)
    card = add_card(store, "Orphaned")
    token = claim(store, card.id)
    tree = make_tree(cfg, card, {}, commit=False)
    (tree / "half.py").write_text("half = 1\n")
    started: list[int] = []
    sleeper = threading.Thread(
        target=proc.stream,
        args=(["sh", "-c", "sleep 1000 & sleep 1000"], tree, 30, lambda _l: None),
        kwargs={"on_start": started.append},
        daemon=True,
    )
    sleeper.start()
    wait_for(lambda: started, what="the coder's group to start")
    pgid = started[0]
    store.update_drive(token, pgid=pgid, owner_pid=2**22 + 7)  # a pid that is not running
    try:
        result = operator.stop(store, cfg, card.id, "loop died")
        assert not wait_gone(pgid), "the orphaned coder group survived the stop"
        assert pgid in result.killed
        assert result.saved and _show(cfg, result.saved[0], "half.py") == "half = 1", (
            "the orphaned drive's uncommitted work was not saved"
        )
        assert not tree.exists()
    finally:
        kill_group_quietly(pgid)


def test_stop_refuses_a_card_that_is_not_working_and_changes_nothing(repo: Path, store):
    cfg = configure(repo)
    card = add_card(store, "Idle")
    before = _state(store)

    with pytest.raises(Refused, match="not working"):
        operator.stop(store, cfg, card.id)

    assert _state(store) == before
    res = run_cli(repo, "stop", card.id)
    assert res.returncode == 1 and res.stderr.startswith("board: ") and "not working" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1


# ---------------------------------------------------------------------------------------------
# hold and cancel on a working card


def test_hold_on_a_working_card_makes_its_drive_stand_aside_and_keep_its_tree(
    repo: Path, store, monkeypatch
):
    monkeypatch.setenv("CODER_SLEEP", "0.6")
    cfg = configure(repo, coder=coder("coder_edit.sh"))
    card = add_card(store, "Hold me")
    run_before = git(repo, "rev-parse", cfg.board.run_branch)
    run = DriveThread(cfg, store, card.id)
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    wait_for(lambda: (tree / "work").exists())

    actions.hold(store, card.id, "let me look first")

    assert store.get(card.id).blocked.cls == "held", "the hold did not set the flag at once"
    end = run.join()
    assert end.outcome == "stood-aside", f"the drive did not stand aside: {end}"
    assert git(repo, "rev-parse", cfg.board.run_branch) == run_before, "a held card was published"
    assert (tree / "work" / f"{card.id}.txt").exists(), "the held card's tree lost its work"
    after = store.get(card.id)
    assert after.lane == "ready" and after.blocked.reason == "let me look first"


def test_cancel_on_a_working_card_kills_saves_and_reaps(repo: Path, store):
    cfg = configure(repo, coder=coder("coder_sleepy.sh"))
    card = add_card(store, "Cancel me")
    run = DriveThread(cfg, store, card.id)
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    wait_for(lambda: store.get_drive(run.token).pgid and has_text(tree / "work" / f"{card.id}.txt"))
    pgid = store.get_drive(run.token).pgid

    try:
        actions.cancel(store, cfg, card.id, reason="not needed")
        left = wait_gone(pgid)
    finally:
        kill_group_quietly(pgid)

    assert not left, "the cancelled drive's processes are still alive"
    assert run.join().outcome == "stood-aside"
    assert store.get(card.id).lane == "cancelled"
    assert not tree.exists(), "the cancelled card's tree was not reaped"
    branches = stranded(cfg)
    assert branches and _show(cfg, branches[0], f"work/{card.id}.txt"), (
        "the cancelled drive's work was not saved"
    )


# ---------------------------------------------------------------------------------------------
# push: done on a review card


def test_done_on_a_pushed_review_card_reaps_with_nothing_stranded(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_ok.py); the drive, the push and the reap are real."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, coder=coder("coder_edit.sh"), mode="push", pr_argv=pr_argv_ok(record))
    card = add_card(store, "Push me")
    end = run_drive(cfg, store, card.id)
    assert end.outcome == "review", end
    after = store.get(card.id)
    assert after.pr_url == "https://prs.example.test/pull/1" and after.lane == "review"
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    assert tree.exists(), "a card waiting on its PR lost its tree"
    assert remote_sha(cfg, after.branch) == git(tree, "rev-parse", "HEAD")

    res = run_cli(repo, "done", card.id, "--reason", "PR merged")

    assert res.returncode == 0, res.stderr
    assert not tree.exists(), "done did not reap the tree"
    assert stranded(cfg) == [], "pushed commits were saved as if they were stranded"


# ---------------------------------------------------------------------------------------------
# approve and requeue


def test_approve_folds_a_reviewed_card(repo: Path, store):
    cfg, card = _reviewed(repo, store)
    tree = cfg.worktrees_dir / f"feat-{card.id}"
    assert tree.exists() and git_ok(repo, "rev-parse", "--verify", card.branch)

    res = run_cli(repo, "approve", card.id, "--reason", "looks right")

    assert res.returncode == 0, res.stderr
    after = store.get(card.id)
    assert after.lane == "done", f"approve did not publish: {after.lane}"
    assert _show(cfg, cfg.board.run_branch, f"work/{card.id}.txt"), (
        "the work is not on the run branch"
    )
    assert not tree.exists() and not git_ok(repo, "rev-parse", "--verify", card.branch)
    assert stranded(cfg) == []
    assert any("approved: looks right" in e.text for e in store.timeline(card.id))


def test_approve_folds_from_the_branch_when_the_tree_is_gone(repo: Path, store):
    cfg, card = _reviewed(repo, store)
    git(repo, "worktree", "remove", "--force", str(cfg.worktrees_dir / f"feat-{card.id}"))

    result = operator.approve(store, cfg, card.id)

    assert result.outcome == "done", result.lines
    assert _show(cfg, cfg.board.run_branch, f"work/{card.id}.txt"), (
        "the branch's work was not folded"
    )


def test_approve_with_nothing_to_publish_is_refused_and_changes_nothing(repo: Path, store):
    cfg, card = _reviewed(repo, store)
    git(repo, "worktree", "remove", "--force", str(cfg.worktrees_dir / f"feat-{card.id}"))
    git(repo, "branch", "-D", card.branch)
    before = _state(store)

    with pytest.raises(Refused, match="nothing to publish"):
        operator.approve(store, cfg, card.id)

    assert _state(store) == before, "a refused approve still wrote to the card"


def test_approve_pushes_and_records_the_pr(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_ok.py); review=operator holds the push until approve."""
    record = tmp_path / "pr.jsonl"
    cfg, card = _reviewed(repo, store, mode="push", pr_argv=pr_argv_ok(record))
    assert remote_sha(cfg, card.branch) is None, "the card was pushed before its review"

    result = operator.approve(store, cfg, card.id)

    assert result.outcome == "review" and result.pr_url
    assert store.get(card.id).pr_url == result.pr_url
    assert remote_sha(cfg, card.branch), "approve did not push the branch"
    with pytest.raises(Refused, match="already has its PR"):
        operator.approve(store, cfg, card.id)
    assert len(pr_calls(record)) == 1, "a second approve opened a second PR"


def test_approve_pushes_again_once_the_remote_accepts(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_ok.py); the refusal is a real pre-receive hook."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, coder=coder("coder_edit.sh"), mode="push", pr_argv=pr_argv_ok(record))
    hook = Path(git(repo, "remote", "get-url", "origin")) / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'frozen' >&2\nexit 1\n")
    hook.chmod(0o755)
    card = add_card(store, "Push later")
    end = run_drive(cfg, store, card.id)
    assert end.outcome == "blocked" and store.get(card.id).lane == "review", end
    hook.unlink()

    res = run_cli(repo, "approve", card.id, "--json")

    assert res.returncode == 0, res.stderr
    data = json.loads(res.stdout)
    assert data["outcome"] == "review" and data["card"]["pr_url"] == data["pr_url"] != ""
    after = store.get(card.id)
    assert after.blocked is None and after.pr_url, "the retried push did not clear the block"
    assert remote_sha(cfg, after.branch), "approve did not push the branch again"


def test_approve_after_a_requeue_by_someone_else_is_refused(repo: Path, store):
    cfg, card = _reviewed(repo, store)
    seen = card.version
    res = run_cli(repo, "requeue", card.id, "--reason", "wrong approach")
    assert res.returncode == 0, res.stderr
    run_before = git(repo, "rev-parse", cfg.board.run_branch)
    before = _state(store)

    with pytest.raises(Refused, match="expects review, got ready"):
        operator.approve(store, cfg, card.id, expect_version=seen)
    res = run_cli(repo, "approve", card.id)

    assert res.returncode == 1 and "expects review, got ready" in res.stderr
    assert _state(store) == before, "a refused approve changed the card"
    assert git(repo, "rev-parse", cfg.board.run_branch) == run_before, (
        "a requeued card was published"
    )


def test_approve_of_a_build_you_did_not_see_is_refused(repo: Path, store):
    """Requeued and rebuilt meanwhile: the card is in review again, but not the one you saw."""
    cfg, card = _reviewed(repo, store)
    seen = card.version
    actions.requeue(store, card.id, "again")
    store.update(card.id, Expect(lane="ready"), {"lane": "review"}, "loop")  # the rebuild
    before = _state(store)

    with pytest.raises(Conflict, match="changed since you looked"):
        operator.approve(store, cfg, card.id, expect_version=seen)

    assert _state(store) == before


def test_a_requeue_during_the_approves_push_is_not_overridden(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_requeue.py): while it runs, a real `board requeue` lands."""
    cfg, card = _reviewed(
        repo,
        store,
        mode="push",
        pr_argv=[sys.executable, script("pr_requeue.py"), str(repo), "{card}"],
    )

    with pytest.raises(Conflict):
        operator.approve(store, cfg, card.id)

    after = store.get(card.id)
    assert after.lane == "ready", f"the approve overrode the requeue: {after.lane}"
    assert after.pr_url == "", "the approve wrote its PR onto a requeued card"
    assert any("no longer" in e.text or "moved" in e.text or "is in ready" in e.text
               for e in store.timeline(card.id)), "the card does not say what happened"  # fmt: skip


def test_requeue_reason_is_in_the_next_brief(repo: Path, store):
    cfg, card = _reviewed(repo, store)
    actions.requeue(store, card.id, "use snake_case for the file name")
    cfg = configure(
        repo,
        coder=["sh", script("coder_brief.sh"), "{brief}", "{worktree}", "{card}"],
        review="operator",
    )

    end = run_drive(cfg, store, card.id)

    assert end.outcome == "review", end
    brief = (cfg.worktrees_dir / f"feat-{card.id}" / cfg.board.scratch[0] / "brief.md").read_text()
    assert "use snake_case for the file name" in brief, "the requeue reason is not in the brief"


def test_approve_refusals_change_nothing(repo: Path, store):
    cfg, card = _reviewed(repo, store)
    other = add_card(store, "Not built")
    before = _state(store)
    with pytest.raises(Refused, match="expects review"):
        operator.approve(store, cfg, other.id)
    with operator.card_lock(cfg, card.id, "a salvage of it"):
        with pytest.raises(Refused, match="a salvage of it"):
            operator.approve(store, cfg, card.id)
    assert _state(store) == before
    actions.hold(store, card.id, "wait")
    with pytest.raises(Refused, match="held"):
        operator.approve(store, cfg, card.id)


# ---------------------------------------------------------------------------------------------
# salvage


def _run_commits_touching(cfg, path: str) -> int:
    return len(git(cfg.root, "log", "--format=%H", cfg.board.run_branch, "--", path).split())


def test_salvage_of_a_stranded_branch_lands_its_commits_exactly_once(repo: Path, store):
    cfg = configure(repo, gate=gate("gate_pass.sh"))
    card, branch = _stranded_card(cfg, store)
    saved_at = git(repo, "rev-parse", branch)

    res = run_cli(repo, "stranded", "salvage", branch)

    assert res.returncode == 0, res.stderr
    after = store.get(card.id)
    assert after.lane == "done" and after.drive == "", after
    assert _show(cfg, cfg.board.run_branch, "rescued.py") == "done = 1"
    assert _show(cfg, cfg.board.run_branch, "notes.txt") == "saved work"
    assert _run_commits_touching(cfg, "notes.txt") == 1
    assert branch not in stranded(cfg), "the salvaged branch is still listed as stranded"
    assert store.tombstones() == {(branch, saved_at)}, "no host may fetch it back to salvage"
    tip = git(repo, "rev-parse", cfg.board.run_branch)

    again = run_cli(repo, "stranded", "salvage", branch)

    assert again.returncode != 0, "a second salvage of the same branch was accepted"
    assert git(repo, "rev-parse", cfg.board.run_branch) == tip, "the work landed twice"
    assert _run_commits_touching(cfg, "notes.txt") == 1
    assert not list(cfg.worktrees_dir.glob("feat-*")), "the salvage left a tree behind"
    drives = store.list_drives(card.id)
    assert drives[0].tier == "salvage" and drives[0].status == "passed"
    log = (cfg.root / drives[0].log).read_text()
    assert "all checks passed" in log, "the salvage's gate output is not in its drive log"


def test_salvage_with_a_red_gate_publishes_nothing_and_shows_the_tail(repo: Path, store):
    cfg = configure(repo, gate=gate("gate_fail.sh"))
    card, branch = _stranded_card(cfg, store)
    actions.hold(store, card.id, "parked")
    card = store.get(card.id)
    run_before = git(repo, "rev-parse", cfg.board.run_branch)

    res = run_cli(repo, "stranded", "salvage", branch)

    assert res.returncode == 1
    assert "GATE-RED: test_feature failed" in res.stdout, "the gate's tail was not shown"
    assert git(repo, "rev-parse", cfg.board.run_branch) == run_before, "a red salvage published"
    after = store.get(card.id)
    assert (after.lane, after.blocked) == (card.lane, card.blocked), "the card was not put back"
    assert stranded(cfg) == [branch], "the red salvage lost or added stranded branches"
    assert not list(cfg.worktrees_dir.glob("feat-*")), "the red salvage left its tree"
    assert any("GATE-RED" in e.text for e in store.timeline(card.id))


def test_salvage_force_publishes_over_a_red_gate_and_notes_it(repo: Path, store):
    cfg = configure(repo, gate=gate("gate_fail.sh"))
    card, branch = _stranded_card(cfg, store)

    result = operator.salvage(store, cfg, branch, force=True)

    assert result.published and result.forced and result.outcome == "done"
    assert _show(cfg, cfg.board.run_branch, "notes.txt") == "saved work"
    notes = [e.text for e in store.timeline(card.id) if e.kind == "comment"]
    assert any("--force over a red gate" in n and "GATE-RED" in n for n in notes), (
        "a forced fold was not marked on the card"
    )


def test_salvage_force_with_push_opens_a_draft_pr(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_ok.py); the push and the gate are real."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(
        repo, gate=gate("gate_fail.sh"), mode="push", pr_argv=pr_argv_ok(record, draft_item=True)
    )
    card, branch = _stranded_card(cfg, store)

    result = operator.salvage(store, cfg, branch, force=True)

    assert result.outcome == "review" and result.pr_url
    call = pr_calls(record)[0]
    assert "--draft" in call["argv"], "a forced salvage was not opened as a draft"
    after = store.get(card.id)
    assert after.pr_url == result.pr_url and after.lane == "review"
    pushed = remote_sha(cfg, f"feat/{card.id}-salvage")
    assert pushed, "the salvage branch was not pushed"
    assert branch not in stranded(cfg)


def test_salvage_of_a_cards_tree_commits_what_it_holds(repo: Path, store):
    cfg = configure(repo, gate=["sh", "-c", "test -f half.py && echo checked half.py"])
    card = add_card(store, "Kept tree")
    tree = make_tree(cfg, card, {"whole.py": "whole = 1\n"})
    (tree / "half.py").write_text("half = 1\n")
    actions.hold(store, card.id, "its drive stood aside")

    result = operator.salvage(store, cfg, card.id)

    assert result.outcome == "done", result.lines
    assert result.gate == "passed", "the gate did not run where the tree stands"
    assert _show(cfg, cfg.board.run_branch, "half.py") == "half = 1", (
        "the uncommitted file was lost"
    )
    assert _show(cfg, cfg.board.run_branch, "whole.py") == "whole = 1"
    assert not tree.exists() and stranded(cfg) == []
    assert store.get(card.id).lane == "done"


def test_salvage_refuses_while_a_drive_owns_the_card(repo: Path, store):
    cfg = configure(repo, gate=gate("gate_pass.sh"))
    card, branch = _stranded_card(cfg, store)
    claim(store, card.id)
    before, refs = _state(store), _refs(cfg)

    with pytest.raises(Refused, match="owns it"):
        operator.salvage(store, cfg, branch)

    assert _state(store) == before and _refs(cfg) == refs


def test_salvage_refuses_while_another_salvage_holds_the_card(repo: Path, store):
    cfg = configure(repo, gate=gate("gate_pass.sh"))
    card, branch = _stranded_card(cfg, store)
    before, refs = _state(store), _refs(cfg)

    with operator.card_lock(cfg, card.id, "a salvage of it"):
        res = run_cli(repo, "stranded", "salvage", branch)

    assert res.returncode == 1 and "a salvage of it" in res.stderr, res.stderr
    assert _state(store) == before and _refs(cfg) == refs


def test_salvage_refuses_when_there_is_nothing_to_publish(repo: Path, store):
    cfg = configure(repo, gate=gate("gate_pass.sh"))
    card, branch = _stranded_card(cfg, store)
    git(repo, "-c", "core.hooksPath=/dev/null", "branch", "-f", cfg.board.run_branch, branch)
    before, refs = _state(store), _refs(cfg)

    with pytest.raises(Refused, match="nothing to publish"):
        operator.salvage(store, cfg, branch)
    with pytest.raises(Refused, match=f"no tree to salvage.*{branch}"):
        operator.salvage(store, cfg, card.id)
    with pytest.raises(NotFound):
        operator.salvage(store, cfg, "stranded/feat-c-99/20260101T000000.000Z")

    assert _state(store) == before and _refs(cfg) == refs


def test_stop_ends_a_salvage_and_nothing_is_published(repo: Path, store, tmp_path):
    marker = tmp_path / "gate-started"
    cfg = configure(repo, gate=["sh", "-c", f"touch {marker}; sleep 1000"])
    card, branch = _stranded_card(cfg, store)
    run_before = git(repo, "rev-parse", cfg.board.run_branch)
    out: dict[str, object] = {}

    def go() -> None:
        try:
            out["result"] = operator.salvage(store, cfg, branch)
        except BoardError as exc:  # pragma: no cover - shown by the assertion below
            out["error"] = exc

    worker = threading.Thread(target=go, daemon=True)
    worker.start()
    wait_for(marker.exists, what="the salvage's gate to start")

    operator.stop(store, cfg, card.id, "not now")
    worker.join(20)

    result = out.get("result")
    assert result is not None and result.outcome == "stood-aside", out
    assert git(repo, "rev-parse", cfg.board.run_branch) == run_before, "a stopped salvage published"
    assert store.get(card.id).blocked.reason == "stopped: not now"
    assert branch in stranded(cfg), "the stranded branch was lost by a stopped salvage"


@pytest.mark.parametrize("via", ["boot", "sweep", "boot-died-mid-recovery"])
@pytest.mark.parametrize("held", [True, False], ids=["held-card", "free-card"])
def test_a_salvage_killed_9_gives_the_card_back_held_never_free_to_run(
    repo: Path, store, tmp_path, held: bool, via: str
):
    """`kill -9` of a salvage mid-gate: the loop's recovery puts the card back as it was
    (a held card keeps its hold) or, if it had no block, holds it; the work stays saved."""
    import os
    import signal
    import subprocess

    from board.core.loop import Loop

    from tests.support.repos import GIT_ENV

    marker = tmp_path / "gate-started"
    gate_pid = tmp_path / "gate-pid"
    cfg = configure(
        repo, gate=["sh", "-c", f"echo $$ > {gate_pid}; touch {marker}; exec sleep 1000"]
    )
    card, branch = _stranded_card(cfg, store)
    if held:
        actions.hold(store, card.id, "parked by the operator")
    card = store.get(card.id)
    run_before = git(repo, "rev-parse", cfg.board.run_branch)
    salvage = subprocess.Popen(
        [sys.executable, "-m", "board.cli", "stranded", "salvage", branch],
        cwd=repo, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        env={**os.environ, **GIT_ENV},
    )  # fmt: skip
    try:
        wait_for(marker.exists, 30, "the salvage to reach its gate")
        assert marker.exists(), "the salvage never reached its gate"
        assert store.get(card.id).lane == "working", "premise: the salvage owns the card"
        salvage.send_signal(signal.SIGKILL)
        salvage.wait(timeout=30)
    finally:
        if salvage.poll() is None:
            salvage.kill()
    pid = int(gate_pid.read_text())
    try:
        loop = Loop(cfg, store)
        if via == "boot-died-mid-recovery":
            # the loop dies after marking the row crashed, before the card is put back;
            # the next boot must still know what the card was
            def died(*args: object, **kw: object) -> bool:
                raise KeyboardInterrupt("the loop died mid-recovery")

            loop.recover_card = died  # type: ignore[method-assign]
            with pytest.raises(KeyboardInterrupt):
                loop.boot()
            assert store.get(card.id).lane == "working", "premise: the recovery did not run"
            loop = Loop(cfg, store)
        loop.sweep() if via == "sweep" else loop.boot()
    finally:
        kill_group_quietly(pid)
    after = store.get(card.id)
    assert after.lane == card.lane and after.drive == "", after
    assert after.blocked is not None, "a dead salvage left its card free for the loop to run"
    if held:
        assert after.blocked == card.blocked, "the card's hold was lost with its salvage"
    else:
        assert after.blocked.cls == "held" and "salvage" in after.blocked.reason
    assert git(repo, "rev-parse", cfg.board.run_branch) == run_before, "a killed salvage published"
    assert branch in stranded(cfg), "the stranded branch was lost with the salvage"
    assert {d.status for d in store.list_drives(card.id)} == {"crashed"}


def test_the_publish_dispatcher_sends_push_to_push(repo: Path, store, tmp_path):
    """The PR service is stubbed (pr_ok.py): the drive's publish edge in push mode."""
    record = tmp_path / "pr.jsonl"
    cfg = configure(repo, mode="push", pr_argv=pr_argv_ok(record))
    card = add_card(store, "Via the dispatcher")
    token = claim(store, card.id)
    tree = make_tree(cfg, card, {"d.py": "d = 1\n"})

    res = publish.publish(cfg, store, store.get(card.id), tree, token)

    assert res.outcome == "review" and store.get(card.id).pr_url
