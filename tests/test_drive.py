"""The drive against real git, real coder scripts and real gates: every path ends explained.

Each test names the loss or defect it guards against; timeouts are fractions of a second.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from board.core import records
from board.core.cards import actions
from board.core.drive import drive
from board.core.git import stranded
from board.core.model import Card
from board.core.store import SQLiteStore

from board.cli import entry as cli
from tests.support.boards import make_board
from tests.support.loop import (
    add_card,
    comments,
    drive_one,
    edit_tier,
    events,
    read_pids,
    run_branch_log,
    show,
    stranded_branches,
)
from tests.support.paths import script
from tests.support.procs import group_members
from tests.support.repos import git
from tests.support.waiting import wait_for


def _close(store: SQLiteStore) -> None:
    store.close()


# ---------------------------------------------------------------------------------------------
# the happy path


def test_a_clean_build_is_committed_by_the_board_and_folded(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "add c-1's work", surface=["work/**"])
    end = drive_one(cfg, store, card)

    after = store.get(card.id)
    assert end.outcome == "done", f"the build did not publish: {end}"
    assert after.lane == "done" and after.drive == "", "the folded card is not done/released"
    assert run_branch_log(cfg)[-1] == f"{card.id}: add c-1's work"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "work of c-1"
    author = git(cfg.root, "log", "-1", "--format=%an <%ae>|%cn", cfg.board.run_branch)
    assert author == "board <board@localhost>|board", "the commit is not the board's own"
    assert show(cfg, cfg.board.run_branch, ".board-scratch/brief.md") is None, (
        "the brief was committed"
    )
    assert not (cfg.worktrees_dir / "feat-c-1").exists(), "the published tree was not reaped"
    assert stranded_branches(cfg) == [], "a published tree was saved as if it held lost work"
    assert git(cfg.root, "branch", "--list", "feat/c-1") == "", "the folded branch lingers"
    log = (cfg.root / ".board" / "logs" / card.id / "1.log").read_text().splitlines()
    assert any(line.endswith(" edited work/c-1.txt") for line in log), "coder output not logged"
    assert all(line[:4].isdigit() and line[23] == "Z" for line in log), "a log line has no stamp"
    row = store.get_drive(end.token)
    assert row.status == "passed" and row.pgid == 0
    _close(store)


def test_the_brief_says_edit_only_and_promises_a_gate_only_when_one_is_set(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_brief.sh"), "{brief}", "{worktree}", "{card}"]},
    )
    card = add_card(store, "brief me", surface=["work/**"], acceptance="work file exists")
    actions.hold(store, card.id, "not yet")
    actions.requeue(store, card.id, "REQUEUE-REASON: use the new API")
    drive_one(cfg, store, card)
    log = (cfg.root / ".board" / "logs" / card.id / "1.log").read_text()
    assert "Do NOT commit, do NOT push, and do NOT open a pull request" in log
    assert "the board commits what you leave" in log
    assert "REQUEUE-REASON: use the new API" in log, "the operator's requeue reason is missing"
    assert "work file exists" in log and "`work/**`" in log, "acceptance or surface missing"
    assert "gate" not in log.split("## Rules", 1)[1].lower(), "the brief promised a gate"

    text = drive.brief_text(
        records.replace(cfg.gate, argv=("make", "check")),
        store.get(card.id),
        tree=cfg.root,
        branch="feat/c-1",
        tier="default",
        attempt=2,
        gate_output="GATE-RED: boom",
        gate_round=1,
    )
    assert "`make check`" in text and "GATE-RED: boom" in text
    assert "push the branch" not in text.lower()
    _close(store)


def test_a_coder_that_commits_by_itself_is_handled_not_broken(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_commits.sh"), "{worktree}", "{card}"]},
    )
    card = add_card(store, "self-committer", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"the coder's own commit broke the drive: {end.reason}"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "work of c-1"
    log = run_branch_log(cfg)
    assert log[-1] == "c-1: self-committer" and "coder's own commit" not in log, (
        "the coder's commit was published as-is instead of through the board's commit"
    )
    assert any("folded into it" in c for c in comments(store, card.id)), "not said on the card"
    _close(store)


# ---------------------------------------------------------------------------------------------
# edits behind index bits (issue 15): git status does not see them, the board must


def _tracked(repo: Path) -> None:
    (repo / "work").mkdir()
    (repo / "work" / "tracked.txt").write_text("base\n")


@pytest.mark.parametrize("bit", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_behind_an_index_bit_is_committed_and_folded(tmp_path: Path, bit: str) -> None:
    coder = [script("coder_hidden.sh"), "{worktree}", "{card}", bit, "0"]
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": coder}, setup=_tracked)
    card = add_card(store, "hidden edit", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"the edit behind {bit} was not seen: {end.reason}"
    assert (
        show(cfg, cfg.board.run_branch, "work/tracked.txt") == f"base\nedited by c-1, behind {bit}"
    ), f"the card reached done without the edit behind {bit}"
    _close(store)


@pytest.mark.parametrize("bit", ["--assume-unchanged", "--skip-worktree"])
def test_an_edit_behind_an_index_bit_is_saved_when_the_coder_fails(
    tmp_path: Path, bit: str
) -> None:
    coder = [script("coder_hidden.sh"), "{worktree}", "{card}", bit, "1"]
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": coder}, setup=_tracked)
    card = add_card(store, "hidden edit, failed", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "blocked", end
    saved = stranded_branches(cfg)
    assert len(saved) == 1, f"the failed tree's hidden edit was not saved: {saved}"
    assert show(cfg, saved[0], "work/tracked.txt") == f"base\nedited by c-1, behind {bit}", (
        f"the edit behind {bit} was destroyed with its tree"
    )
    assert not (cfg.worktrees_dir / "feat-c-1").exists()
    _close(store)


def test_a_published_tree_names_the_ignored_files_its_removal_deleted_in_the_drive_log(
    tmp_path: Path,
) -> None:
    """No save, so no save comment: the drive's log says what went (ignored: not work)."""
    coder = [
        "sh",
        "-c",
        'mkdir -p "$0/work" "$0/node_modules/pkg"; echo w > "$0/work/$1.txt"; '
        'echo "module.exports = 1" > "$0/node_modules/pkg/index.js"',
        "{worktree}",
        "{card}",
    ]
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": coder},
        setup=lambda repo: (repo / ".gitignore").write_text("node_modules/\n"),
    )
    card = add_card(store, "with build output", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", end
    assert stranded_branches(cfg) == [], "ignored files were taken for work"
    log = (cfg.root / ".board" / "logs" / card.id / "1.log").read_text()
    assert "deleted 1 ignored file (19 bytes): node_modules/" in log, log[-600:]
    _close(store)


# ---------------------------------------------------------------------------------------------
# seed 003: the surface harvest


def test_a_lockfile_outside_the_surface_is_dropped_only_after_the_tree_is_saved(
    tmp_path: Path,
) -> None:
    def setup(repo: Path) -> None:
        (repo / "package-lock.json").write_text('{"lockfileVersion": 3}\n')

    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_lockfile.sh"), "{worktree}", "{card}"]},
        setup=setup,
    )
    card = add_card(store, "surface harvest", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", end.reason
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "work of c-1"
    assert show(cfg, cfg.board.run_branch, "package-lock.json") == '{"lockfileVersion": 3}', (
        "a change outside the surface was published"
    )
    assert show(cfg, cfg.board.run_branch, "notes-c-1.txt") is None
    saved = stranded_branches(cfg)
    assert len(saved) == 1, f"the tree was not saved before the drop: {saved}"
    assert "rewritten" in (show(cfg, saved[0], "package-lock.json") or ""), (
        "the discarded lockfile change was destroyed, not saved"
    )
    assert show(cfg, saved[0], "notes-c-1.txt") == "scribbles", "the untracked note was lost"
    said = "\n".join(comments(store, card.id))
    assert "package-lock.json" in said and "notes-c-1.txt" in said, "drops were not named"
    assert saved[0] in said, "the card does not name the branch holding the dropped work"
    assert end.harvest.discarded == ["package-lock.json"]
    _close(store)


def test_in_surface_matches_directories_and_globs() -> None:
    assert drive.in_surface("src/a/b.py", ["src"])
    assert drive.in_surface("src/a/b.py", ["src/"])
    assert drive.in_surface("src/a/b.py", ["src/**"])
    assert drive.in_surface("src/a.py", ["./src/*.py"])
    assert not drive.in_surface("srcx/a.py", ["src"])
    assert not drive.in_surface("package-lock.json", ["work/**", "src"])


# ---------------------------------------------------------------------------------------------
# failures: climb, block, dispatch-infra


def test_a_failing_coder_climbs_one_rung_then_blocks_terminal_with_its_log_tail(
    tmp_path: Path,
) -> None:
    fail = [script("coder_fail.sh"), "{worktree}", "{card}"]
    cfg, store = make_board(tmp_path, origin=True, tiers={"a": fail, "b": fail})
    card = add_card(store, "doomed", surface=["work/**"])
    end = drive_one(cfg, store, card)
    after = store.get(card.id)
    assert end.outcome == "blocked" and after.blocked is not None
    assert after.blocked.cls == "terminal", after.blocked
    assert after.lane == "ready" and after.drive == "", "a blocked card stayed working"
    assert "exited 1" in after.blocked.reason and "top rung (b)" in after.blocked.reason
    rows = store.list_drives(card.id)
    assert sorted(r.tier for r in rows) == ["a", "b"], "it did not climb exactly one rung"
    said = "\n".join(comments(store, card.id))
    assert "climbing to tier b" in said and "coder: cannot finish c-1" in said, (
        "the failure left no reason or log tail on the card"
    )
    kinds = {b.branch: b.kind for b in stranded.list_stranded(cfg)}
    assert sorted(kinds.values()) == ["attempt", "saved"], (
        f"expected the first rung's attempt and the blocked tree saved, got {kinds}"
    )
    for branch in kinds:
        assert (show(cfg, branch, "work/c-1.txt") or "").count("half-done") == 1, (
            "each rung starts fresh: a save holds one rung's work"
        )
    assert not (cfg.worktrees_dir / "feat-c-1").exists()
    _close(store)


def _rung(text: str, exit_code: int) -> list[str]:
    return [script("coder_rung.sh"), "{brief}", "{worktree}", "{card}", text, str(exit_code)]


def _listed(cfg, capsys: pytest.CaptureFixture[str]) -> list[dict]:
    """`board stranded list --json`, run as the operator runs it."""
    assert cli.main(["-C", str(cfg.root), "stranded", "list", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("how", ["the coder dies", "the gate stays red"])
def test_a_failed_rung_leaves_its_work_on_an_attempt_branch_and_the_next_rung_builds_the_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str
) -> None:
    """Nothing a coder made is thrown away: a climb saves the failed attempt, marked so."""
    if how == "the coder dies":
        tiers = {"a": _rung("first rung's work", 1), "b": _rung("fixed", 0)}
        gate = None
    else:  # green only for "fixed": rung a's draft is red, and stays red on its retry
        tiers = {"a": _rung("first rung's draft", 0), "b": _rung("fixed", 0)}
        gate = [script("gate_needs_fix.sh")]
    cfg, store = make_board(tmp_path, origin=True, tiers=tiers, gate=gate)
    card = add_card(store, "two rungs", surface=["work/**"])
    end = drive_one(cfg, store, card)

    assert end.outcome == "done", f"the second rung did not build the card: {end}"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "fixed"
    listed = _listed(cfg, capsys)
    assert len(listed) == 1, f"the failed attempt's work was thrown away when {how}: {listed}"
    item = listed[0]
    first = "first rung's work" if how == "the coder dies" else "first rung's draft"
    assert item["kind"] == "attempt" and item["card"] == card.id, item
    assert show(cfg, item["branch"], "work/c-1.txt") == first, (
        f"the failed attempt's work was thrown away when {how}"
    )
    message = git(cfg.root, "log", "-1", "--format=%B", item["branch"])
    assert "kind=attempt" in message, f"the kind is not in the save's trailer: {message}"
    rows = sorted(store.list_drives(card.id), key=lambda r: r.attempt)
    second_log = (cfg.root / rows[-1].log).read_text()
    assert "## Earlier attempts" in second_log and item["branch"] in second_log, (
        "the next rung's brief does not name the failed attempt's branch"
    )
    assert any(item["branch"] in c for c in comments(store, card.id)), "not said on the card"
    assert not (cfg.worktrees_dir / "feat-c-1").exists()
    _close(store)


def test_a_missing_coder_blocks_dispatch_infra_without_climbing(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"a": [str(tmp_path / "no-such-coder"), "{brief}"], "b": edit_tier()},
    )
    card = add_card(store, "no coder", surface=["work/**"])
    end = drive_one(cfg, store, card)
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "dispatch-infra", after.blocked
    assert "could not be started" in after.blocked.reason
    assert len(store.list_drives(card.id)) == 1, "an infra failure climbed the ladder"
    assert end.outcome == "blocked"
    _close(store)


def test_a_silent_coder_is_killed_at_first_output_timeout_leaving_no_process(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={
            "a": [script("coder_silent.sh"), "{worktree}", "{card}", str(pids)],
            "b": edit_tier(),
        },
        coder={"first_output_timeout_s": 0.3},
    )
    card = add_card(store, "silent", surface=["work/**"])
    drive_one(cfg, store, card)
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "dispatch-infra", after.blocked
    assert "printed nothing" in after.blocked.reason
    assert len(store.list_drives(card.id)) == 1, "a pre-first-output timeout climbed"
    (pgid,) = read_pids(pids)
    assert group_members(pgid) == [], f"the coder's group survived: {group_members(pgid)}"
    _close(store)


def test_a_coder_timeout_after_output_climbs_and_kills_the_whole_group(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    hang = [script("coder_hang.sh"), "{worktree}", "{card}", str(pids)]
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"a": hang, "b": hang}, coder={"timeout_s": 0.5}
    )
    card = add_card(store, "hangs", surface=["work/**"])
    end = drive_one(cfg, store, card)
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "terminal", after.blocked
    assert "timed out" in after.blocked.reason
    assert end.attempts == 2, "a timeout after output did not climb"
    leaders = read_pids(pids)
    assert len(leaders) == 2
    for pgid in leaders:
        assert group_members(pgid) == [], (
            f"a process of the coder's group {pgid} outlived its timeout (grandchild on stdout)"
        )
    _close(store)


def test_a_counted_timeout_that_parks_the_card_ends_the_drive_without_climbing(
    tmp_path: Path,
) -> None:
    hang = [script("coder_hang.sh"), "{worktree}", "{card}", str(tmp_path / "pids")]
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"a": hang, "b": hang, "c": hang},
        coder={"timeout_s": 0.4, "timeout_split_after": 2},
    )
    card = add_card(store, "too wide", surface=["work/**"])
    end = drive_one(cfg, store, card)
    after = store.get(card.id)
    assert end.outcome == "parked", end
    assert after.blocked is not None and after.blocked.cls == "too-wide"
    assert after.lane == "ready" and after.drive == "", "the parked card stayed working"
    assert sorted(r.tier for r in store.list_drives(card.id)) == ["a", "b"], (
        "the drive climbed past the park"
    )
    assert not (cfg.worktrees_dir / "feat-c-1").exists()
    _close(store)


# ---------------------------------------------------------------------------------------------
# gates


def test_a_red_gate_feeds_its_output_into_the_retry_brief(tmp_path: Path) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_fix.sh"), "{brief}", "{worktree}", "{card}"]},
        gate=[script("gate_needs_fix.sh")],
    )
    card = add_card(store, "fix me", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"the retry did not get the gate's output: {end.reason}"
    assert show(cfg, cfg.board.run_branch, "work/c-1.txt") == "fixed"
    rows = store.list_drives(card.id)
    assert len(rows) == 2 and {r.tier for r in rows} == {"default"}, "a gate retry climbed"
    said = "\n".join(comments(store, card.id))
    assert "retry 1 of 1" in said and "GATE-RED: work/c-1.txt is not fixed" in said
    _close(store)


def test_a_gate_red_after_its_retries_blocks_gate_red_at_the_top(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True, gate=[script("gate_fail.sh")])
    card = add_card(store, "always red", surface=["work/**"])
    end = drive_one(cfg, store, card)
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "gate-red", after.blocked
    assert "stayed red after 1 retries" in after.blocked.reason
    assert end.attempts == 2
    assert "GATE-RED: test_feature failed" in "\n".join(comments(store, card.id))
    assert run_branch_log(cfg) == ["initial"], "a red build was published"
    _close(store)


def test_a_gate_killed_by_a_signal_is_not_red(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True, gate=[script("gate_sigkill.sh")])
    card = add_card(store, "oom gate", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", f"a signal-killed gate was treated as red: {end.reason}"
    assert any("killed by signal 9" in e and "not red" in e for e in events(store, card.id))
    _close(store)


# ---------------------------------------------------------------------------------------------
# stand aside (invariant 4) and stranded work (invariant 1)


def _drive_in_thread(cfg, store, card: Card) -> tuple[threading.Thread, list]:
    token = drive.claim(cfg, store, card)
    assert token
    out: list = []
    t = threading.Thread(target=lambda: out.append(drive.Drive(cfg, store, card.id, token).run()))
    t.start()
    return t, out


def test_a_card_held_under_its_drive_is_not_published_and_its_work_survives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "held mid-build", surface=["work/**"])
    tree = cfg.worktrees_dir / "feat-c-1"
    monkeypatch.setenv("CODER_SLEEP", "0.6")  # the coder edits, then keeps going a moment
    t, out = _drive_in_thread(cfg, store, card)
    wait_for(lambda: (tree / "work" / "c-1.txt").exists(), what="the coder's edit")
    actions.hold(store, card.id, "operator wants a look")
    t.join(30)
    monkeypatch.delenv("CODER_SLEEP")
    (end,) = out
    after = store.get(card.id)
    assert end.outcome == "stood-aside", f"the drive acted on a held card: {end}"
    assert after.lane == "ready" and after.blocked.cls == "held", "the hold was not kept"
    assert run_branch_log(cfg) == ["initial"], "a held card was published"
    assert (tree / "work" / "c-1.txt").read_text() == "work of c-1\n", "the held work is gone"
    assert any("stood aside" in e for e in events(store, card.id)), "no note of the stand-aside"

    # the next fresh build saves the held tree before building over it
    actions.unblock(store, card.id)
    end2 = drive_one(cfg, store, store.get(card.id))
    assert end2.outcome == "done"
    saved = stranded_branches(cfg)
    assert len(saved) == 1 and show(cfg, saved[0], "work/c-1.txt") == "work of c-1", (
        "the fresh build destroyed the held tree's work"
    )
    _close(store)


def test_a_hold_landing_while_a_climb_is_prepared_keeps_the_failed_attempt(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail = [script("coder_fail.sh"), "{worktree}", "{card}"]
    cfg, store = make_board(tmp_path, origin=True, tiers={"a": fail, "b": fail})
    card = add_card(store, "held during climb", surface=["work/**"])
    real_comment = drive.Drive._comment

    def comment_then_hold(self, text: str, tail: str = "") -> None:
        real_comment(self, text, tail)
        if "climbing" in text:  # between the climb's first re-read and the removal
            actions.hold(store, card.id, "hold landed mid-climb")

    monkeypatch.setattr(drive.Drive, "_comment", comment_then_hold)
    end = drive_one(cfg, store, card)
    assert end.outcome == "stood-aside", end
    tree = cfg.worktrees_dir / "feat-c-1"
    assert (tree / "work" / "c-1.txt").exists(), (
        "the failed attempt was removed after the card was held"
    )
    assert len(store.list_drives(card.id)) == 1, "a retry was dispatched on a held card"
    assert store.get(card.id).blocked.cls == "held"
    _close(store)


def test_a_hold_landing_before_the_coder_starts_runs_no_coder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held after the fresh tree is made, before the coder starts: no coder runs."""
    pids = tmp_path / "pids"
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": edit_tier(pids)})
    card = add_card(store, "held before its coder", surface=["work/**"])
    real_write = drive.write_brief

    def write_then_hold(cfg_: object, tree: Path, text: str) -> Path:
        path = real_write(cfg_, tree, text)
        actions.hold(store, card.id, "hold landed before the coder")
        return path

    monkeypatch.setattr(drive, "write_brief", write_then_hold)
    end = drive_one(cfg, store, card)
    assert end.outcome == "stood-aside", end
    assert read_pids(pids) == [], "a coder was started for a held card"
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "held", after
    _close(store)


def test_a_hold_landing_after_the_format_runs_no_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Held while the formatter ran: the gate does not start, the built work is kept."""
    gate_ran = tmp_path / "gate-ran"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": edit_tier()},
        gate=["sh", "-c", f"touch {gate_ran}; echo gate: all checks passed"],
    )
    card = add_card(store, "held before its gate", surface=["work/**"])
    real_format = drive.Drive._format

    def format_then_hold(self: drive.Drive) -> None:
        real_format(self)
        actions.hold(store, card.id, "hold landed during the format")

    monkeypatch.setattr(drive.Drive, "_format", format_then_hold)
    end = drive_one(cfg, store, card)
    assert end.outcome == "stood-aside", end
    assert not gate_ran.exists(), "the gate ran for a held card"
    tree = cfg.worktrees_dir / "feat-c-1"
    assert (tree / "work" / "c-1.txt").exists(), "the built work was not kept"
    assert store.get(card.id).blocked.cls == "held"
    _close(store)


def test_a_fresh_build_that_cannot_save_an_old_tree_blocks_stranded_work_and_runs_no_coder(
    tmp_path: Path,
) -> None:
    pids = tmp_path / "pids"
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": edit_tier(pids)})
    card = add_card(store, "stranded", surface=["work/**"])
    # an old tree of the card under another name (a slug): only the fresh build's sweep of
    # every tree the card owns reaches it, not create_worktree's own save of its path
    old = cfg.worktrees_dir / "feat-c-1-old"
    git(cfg.root, "worktree", "add", "-q", "-b", "feat/c-1-old", str(old), "main")
    nested = old / "vendor"
    nested.mkdir()
    git(nested, "init", "-q")
    (nested / "precious.txt").write_text("only copy\n")
    end = drive_one(cfg, store, card)
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "stranded-work", after.blocked
    assert read_pids(pids) == [], "a coder was dispatched over unsaved stranded work"
    assert (nested / "precious.txt").read_text() == "only copy\n", "the stranded work was lost"
    assert end.outcome == "blocked"
    _close(store)
