"""Pull requests follow the forge, against a STAND-IN forge (tests/standins/forge.py: a hosted
PR service cannot run here). It is a real executable backed by a JSON state file the test
edits; its "merge" squashes the branch onto main in the real bare origin, as a forge would.
Git, the remote, the loop and the store are real.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from board.core import config
from board.core.loop import Loop
from board.core.poller import ForgePoller
from board.core.publish import forge
from board.core.store import Expect, SQLiteStore

from tests.support.boards import make_board
from tests.support.loop import add_card, drive_one, events
from tests.support.paths import STANDINS
from tests.support.repos import git
from tests.support.waiting import wait_for

FORGE = str(STANDINS / "forge.py")


def coder(tmp_path: Path) -> list[str]:
    """Edits work/<card>.txt; records what work/ held and the brief, per call."""
    path = tmp_path / "coder.py"
    path.write_text(
        "import json, os, sys\n"
        "wt, card, brief, out = sys.argv[1:5]\n"
        "work = os.path.join(wt, 'work')\n"
        "os.makedirs(work, exist_ok=True)\n"
        "n = len([x for x in os.listdir(out) if x.startswith(card)])\n"
        "record = {'work': sorted(os.listdir(work)), 'brief': open(brief).read()}\n"
        "with open(os.path.join(out, f'{card}.{n}.json'), 'w') as fh:\n"
        "    fh.write(json.dumps(record))\n"
        "open(os.path.join(work, card + '.txt'), 'a').write(f'{card} call {n}\\n')\n"
        "print('edited')\n"
    )
    out = tmp_path / "seen"
    out.mkdir(exist_ok=True)
    return [sys.executable, str(path), "{worktree}", "{card}", "{brief}", str(out)]


def seen(tmp_path: Path, card: str, n: int = 0) -> dict[str, Any]:
    return json.loads((tmp_path / "seen" / f"{card}.{n}.json").read_text())


def board(tmp_path: Path, **publish: Any) -> tuple[config.Config, SQLiteStore, Path]:
    state = tmp_path / "forge.json"
    settings = {
        "mode": "push",
        "pr_argv": [FORGE, "create", str(state), "--head", "{branch}"],
        "pr_state_argv": [FORGE, "view", str(state), "{branch}"],
        "poll_s": 0.2,
        **publish,
    }
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": coder(tmp_path)}, publish=settings
    )
    return cfg, store, state


def forge_state(state: Path) -> dict[str, Any]:
    return json.loads(state.read_text())


def edit_forge(path: Path, branch: str, **fields: Any) -> None:
    data = forge_state(path)
    data[branch].update(fields)
    path.write_text(json.dumps(data))


def in_review(cfg: config.Config, store: SQLiteStore, title: str, **kw: Any) -> Any:
    card = add_card(store, title, surface=["work/**"], **kw)
    end = drive_one(cfg, store, card)
    assert end.outcome == "review", end
    card = store.get(card.id)
    assert card.pr_url, "no PR was opened"
    return card


class Running:
    """`board run` in-process on its own store, stopped at the end of the test."""

    def __init__(self, cfg: config.Config) -> None:
        self.store = SQLiteStore(cfg.db_path)
        self.loop = Loop(cfg, self.store)
        self.thread = threading.Thread(target=self.loop.run, daemon=True)

    def __enter__(self) -> Loop:
        self.thread.start()
        return self.loop

    def __exit__(self, *exc: object) -> None:
        self.loop.request_stop("the test is over")
        self.thread.join(60)
        self.store.close()


def test_a_merge_on_the_forge_is_done_within_one_poll_and_its_dependent_builds_on_it(
    tmp_path: Path,
) -> None:
    cfg, store, state = board(tmp_path)
    first = in_review(cfg, store, "the dependency")
    second = add_card(store, "the dependent", surface=["work/**"], deps=[first.id])
    origin = tmp_path / "origin.git"
    with Running(cfg):
        time.sleep(0.5)
        assert store.get(second.id).lane == "ready", "the dependent started before the merge"
        git(
            tmp_path, FORGE, "merge", str(state), first.branch, str(origin), "main"
        ) if False else None
        import subprocess

        subprocess.run(
            [FORGE, "merge", str(state), first.branch, str(origin), "main"],
            check=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        merged = forge_state(state)[first.branch]["mergeCommit"]["oid"]
        wait_for(lambda: store.get(first.id).lane == "done", 10, "the merged card done")
        wait_for(lambda: store.get(second.id).lane == "review", 30, "the dependent built")
    done = store.get(first.id)
    assert done.pr_state == "MERGED" and done.pr_polled_at
    assert any(merged in e for e in events(store, first.id)), "the merge commit is not recorded"
    assert f"{first.id}.txt" in seen(tmp_path, second.id)["work"], (
        "the dependent's tree did not hold the dependency's merged code"
    )
    store.close()


def test_a_pr_closed_without_a_merge_blocks_pr_closed_and_keeps_the_branch(
    tmp_path: Path,
) -> None:
    cfg, store, state = board(tmp_path)
    card = in_review(cfg, store, "closed on the forge")
    tip = git(cfg.root, "rev-parse", card.branch)
    edit_forge(state, card.branch, state="CLOSED")
    (result,) = ForgePoller(cfg, store, lambda *a, **k: None, threading.Event()).poll_prs()
    after = store.get(card.id)
    assert result.outcome == "closed" and after.blocked is not None
    assert after.blocked.cls == "pr-closed" and after.lane == "ready"
    assert git(cfg.root, "rev-parse", card.branch) == tip, "the branch moved"
    assert git(tmp_path / "origin.git", "rev-parse", card.branch) == tip, "the pushed branch went"
    store.close()


def test_changes_requested_requeue_with_the_review_and_push_to_the_same_pr(
    tmp_path: Path,
) -> None:
    cfg, store, state = board(tmp_path)
    card = in_review(cfg, store, "reviewed")
    first_push = git(tmp_path / "origin.git", "rev-parse", card.branch)
    review = {
        "state": "CHANGES_REQUESTED",
        "body": "Please rename x to width.",
        "author": {"login": "ana"},
    }
    edit_forge(state, card.branch, reviewDecision="CHANGES_REQUESTED", reviews=[review])
    poller = ForgePoller(cfg, store, lambda *a, **k: None, threading.Event())
    (result,) = poller.poll_prs()
    assert result.outcome == "changes-requested"
    assert store.get(card.id).lane == "ready"
    end = drive_one(cfg, store, store.get(card.id))
    assert end.outcome == "review", end
    assert "Please rename x to width." in seen(tmp_path, card.id, 1)["brief"]
    after = store.get(card.id)
    assert after.pr_url == card.pr_url
    assert after.reviews_seen == 1 and after.labels == card.labels, "counted among the labels"
    creates = [
        c
        for c in map(json.loads, Path(f"{state}.calls").read_text().splitlines())
        if c[0] == "create"
    ]
    assert len(creates) == 1, "a second PR was opened"
    assert git(tmp_path / "origin.git", "rev-parse", card.branch) != first_push, "not pushed again"
    # the same review, still on the forge, is not acted on twice
    store.update(card.id, Expect(version=after.version), {"pr_polled_at": ""})
    (again,) = poller.poll_prs()
    assert again.outcome == "open" and store.get(card.id).lane == "review"
    store.close()


def test_auto_merge_merges_only_when_green_mergeable_and_not_held(tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    cfg, store, state = board(
        tmp_path,
        auto_merge=True,
        merge_argv=[
            FORGE,
            "merge",
            str(tmp_path / "forge.json"),
            "{branch}",
            str(origin),
            "{base}",
        ],
    )
    card = in_review(cfg, store, "auto")
    poller = ForgePoller(cfg, store, lambda *a, **k: None, threading.Event())

    def poll_again() -> forge.Poll:
        now = store.get(card.id)
        if now.pr_polled_at:
            store.update(card.id, Expect(version=now.version), {"pr_polled_at": ""})
        (result,) = poller.poll_prs()
        return result

    assert "no checks reported" in poll_again().line  # unknown is never green
    edit_forge(state, card.branch, statusCheckRollup=[{"name": "ci", "status": "IN_PROGRESS"}])
    assert "not all green (ci)" in poll_again().line
    edit_forge(
        state,
        card.branch,
        statusCheckRollup=[{"name": "ci", "conclusion": "SUCCESS"}],
        mergeable="CONFLICTING",
    )
    assert "mergeable is CONFLICTING" in poll_again().line
    edit_forge(state, card.branch, mergeable="MERGEABLE")
    held = store.get(card.id)
    store.update(card.id, Expect(version=held.version), {"labels": (*held.labels, "merge-hold")})
    assert "merge-hold" in poll_again().line
    assert forge_state(state)[card.branch]["state"] == "OPEN"
    held = store.get(card.id)
    store.update(card.id, Expect(version=held.version), {"labels": ()})
    assert poll_again().outcome == "merge-ran"
    assert poll_again().outcome == "merged" and store.get(card.id).lane == "done"
    store.close()


def test_auto_merge_blocks_gate_red_naming_the_failed_check(tmp_path: Path) -> None:
    cfg, store, state = board(tmp_path, auto_merge=True, merge_argv=[FORGE, "merge"])
    card = in_review(cfg, store, "red")
    edit_forge(
        state,
        card.branch,
        statusCheckRollup=[
            {"name": "lint", "conclusion": "SUCCESS"},
            {"name": "tests (3.12)", "conclusion": "FAILURE"},
        ],
    )
    (result,) = ForgePoller(cfg, store, lambda *a, **k: None, threading.Event()).poll_prs()
    blocked = store.get(card.id).blocked
    assert result.outcome == "red" and blocked is not None and blocked.cls == "gate-red"
    assert "tests (3.12)" in blocked.reason
    store.close()


def test_red_checks_without_auto_merge_are_shown_not_acted_on(tmp_path: Path) -> None:
    cfg, store, state = board(tmp_path)
    card = in_review(cfg, store, "red but manual")
    edit_forge(state, card.branch, statusCheckRollup=[{"name": "ci", "conclusion": "FAILURE"}])
    (result,) = ForgePoller(cfg, store, lambda *a, **k: None, threading.Event()).poll_prs()
    assert result.outcome == "open" and "not green: ci" in result.line
    assert store.get(card.id).blocked is None and store.get(card.id).lane == "review"
    store.close()


def test_a_hung_forge_is_killed_at_its_timeout_while_claims_go_on(tmp_path: Path) -> None:
    cfg, store, state = board(tmp_path, timeout_s=4)
    card = in_review(cfg, store, "slow forge")
    edit_forge(state, card.branch, hang=60)
    with Running(cfg) as loop:
        wait_for(lambda: Path(f"{state}.calls").read_text().count('"view"') >= 1, 10, "a poll")
        started = time.monotonic()
        other = add_card(store, "claimed meanwhile", surface=["work/**"])
        loop.wake.set()
        wait_for(lambda: store.get(other.id).lane == "review", 30, "a claim during the hang")
        assert time.monotonic() - started < 4, "the claim waited for the hung forge"
        log = cfg.board_dir / "loop.log"
        wait_for(lambda: "timed out after 4s" in log.read_text(), 15, "the poll's timeout")
    assert store.get(card.id).lane == "review" and store.get(card.id).blocked is None
    store.close()


def test_a_429_from_the_forge_backs_polling_off_and_blocks_nothing(tmp_path: Path) -> None:
    cfg, store, state = board(tmp_path)
    card = in_review(cfg, store, "rate limited forge")
    edit_forge(
        state, card.branch, fail=["HTTP 429: Too Many Requests (https://api.github.com/graphql)", 1]
    )
    lines: list[tuple[str, dict[str, Any]]] = []
    poller = ForgePoller(cfg, store, lambda event, **k: lines.append((event, k)), threading.Event())
    (result,) = poller.poll_prs()
    assert result.outcome == "failed" and result.failure is not None
    assert result.failure.cls == "rate-limit"
    assert poller.wait_until is not None
    assert [e for e, _ in lines] == ["poll", "forge-backoff"]
    now = store.get(card.id)
    store.update(card.id, Expect(version=now.version), {"pr_polled_at": ""})
    assert poller.poll_prs() == [], "polled again during the back-off"
    assert store.get(card.id).blocked is None and store.get(card.id).lane == "review"
    store.close()


def test_a_forge_answer_nested_100000_deep_is_a_logged_poll_and_a_merge_after_it_is_done(
    tmp_path: Path,
) -> None:
    """Such an answer killed the poll thread with a RecursionError: the card stayed in review
    after the forge said MERGED, and nothing said why."""
    cfg, store, state = board(tmp_path)
    path = cfg.root / "board.toml"
    path.write_text(path.read_text().replace("max_backoff_s = 3600", "max_backoff_s = 0.5"))
    cfg = config.load(cfg.root)
    card = in_review(cfg, store, "hostile forge")
    edit_forge(state, card.branch, raw="[" * 100_000 + "]" * 100_000)
    with Running(cfg) as loop:
        wait_for(
            lambda: any("nested too deep" in x for x in _loop_lines(cfg)),
            timeout=30,
            what="the unreadable answer logged",
        )
        data = forge_state(state)
        del data[card.branch]["raw"]
        data[card.branch].update(state="MERGED", mergedAt="2026-12-01T00:00:00Z")
        state.write_text(json.dumps(data))
        wait_for(lambda: store.get(card.id).lane == "done", timeout=30, what="done after MERGED")
        assert loop.poller is not None
    said = [x for x in _loop_lines(cfg) if "nested too deep" in x]
    assert said and "forge-backoff" in "\n".join(_loop_lines(cfg)), said
    store.close()


def _loop_lines(cfg: config.Config) -> list[str]:
    path = cfg.board_dir / "loop.log"
    return path.read_text().splitlines() if path.exists() else []
