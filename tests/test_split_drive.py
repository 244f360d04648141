"""The timeout budget through the real drive: real worktrees, real coder processes that
time out after printing (they reached their model) or without printing (infra), and the
real store. Seed 002: what counts, the park, the operator's reset, the split.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from board.core import config, loop
from board.core.cards import actions, split
from board.core.config import Config
from board.core.drive import drive
from board.core.model import CardDraft
from board.core.records import replace
from board.core.store import Expect, SQLiteStore

from tests.support.paths import script
from tests.support.repos import run_cli
from tests.support.split import events, first_seq, tasks_for

CODER = script("split_coder.py")
TIMEOUT_S = 1.2  # a printing coder is killed here
FIRST_OUTPUT_S = 0.7  # a silent coder is killed here


def board_cfg(
    repo: Path,
    tiers: dict[str, str],
    *,
    split_after: int = 2,
    review: str = "none",
    gate: list[str] | None = None,
    gate_retries: int = 0,
) -> Config:
    """Write board.toml with one tier per (name, coder mode), lowest first, and load it."""
    overrides: dict[str, dict[str, Any]] = {
        "coder": {
            "ladder": list(tiers),
            "tiers": {
                name: {"argv": [sys.executable, CODER, mode]} for name, mode in tiers.items()
            },
            "timeout_s": TIMEOUT_S,
            "first_output_timeout_s": FIRST_OUTPUT_S,
            "timeout_split_after": split_after,
        },
        "gate": {"argv": gate or [], "retries": gate_retries},
        "publish": {"review": review},
    }
    config.write_default(repo, overrides)
    return config.load(repo)


def add(store: SQLiteStore, title: str = "wide card", **kw: Any) -> str:
    draft = CardDraft(title=title, spec="build all of it", lane="ready", **kw)
    return actions.add_card(store, draft).id


def run_once(cfg: Config, store: SQLiteStore, card_id: str) -> drive.DriveEnd:
    token = drive.claim(cfg, store, store.get(card_id))
    assert token, f"{card_id} could not be claimed: {store.get(card_id)}"
    return drive.run_drive(cfg, store, card_id, token)


def tiers_run(store: SQLiteStore, card_id: str) -> list[str]:
    return [d.tier for d in sorted(store.list_drives(card=card_id), key=lambda d: d.attempt)]


def test_three_rungs_a_then_b_then_the_park_naming_the_task(repo: Path, store) -> None:
    cfg = board_cfg(repo, {"a": "print-then-hang", "b": "print-then-hang", "c": "print-then-hang"})
    card = add(store, surface=["src/**"])
    after = add(store, "needs the wide card", deps=[card])
    end = run_once(cfg, store, card)

    assert tiers_run(store, card) == ["a", "b"], (
        f"the park waited for the ladder to run out: tiers run {tiers_run(store, card)}"
    )
    assert end.outcome == "parked" and end.cls == "too-wide", end
    [task] = tasks_for(store, card)
    now = store.get(card)
    assert now.lane == "ready" and now.drive == "", "the parked card was not given back"
    assert now.blocked is not None and now.blocked.cls == "too-wide"
    assert task.id in now.blocked.reason, f"the park does not name the task: {now.blocked}"
    assert task.lane == "ready" and task.assignee == cfg.planner.name
    assert after in task.spec, "the task's spec does not list the dependent"
    evs = events(store, card, task.id)
    ask = first_seq(evs, task.id, "created in backlog")
    park = first_seq(evs, card, "blocked too-wide")
    release = first_seq(evs, task.id, "lane backlog → ready")
    assert ask < park < release, "not in the order ask < park < release"
    queue = [c.id for c in actions.ready_queue(store)]
    assert card not in queue, "the parked card would be rebuilt whole"
    assert [c.id for c in split.planner_queue(store, cfg.planner)] == [], (
        "no planner: the task waits"
    )


def test_an_infra_timeout_is_never_counted(repo: Path, store) -> None:
    """R1: a coder that printed nothing never reached its model; it must not count."""
    cfg = board_cfg(repo, {"a": "silent-hang", "b": "silent-hang"}, split_after=1)
    card = add(store)
    end = run_once(cfg, store, card)
    now = store.get(card)
    assert end.cls == "dispatch-infra" and now.blocked and now.blocked.cls == "dispatch-infra"
    assert split.timeout_count(now) == 0, "an infra timeout was counted toward a split"
    assert tasks_for(store, card) == [], "an infra timeout asked for a split"
    # the operator fixes the infra; the first genuine timeout counts once and, at 2, parks not
    actions.unblock(store, card)
    cfg = board_cfg(repo, {"a": "print-then-hang"}, split_after=2)
    end = run_once(cfg, store, card)
    now = store.get(card)
    assert split.timeout_count(now) == 1, "the first genuine timeout was not counted as 1"
    assert now.blocked is not None and now.blocked.cls == "terminal", (
        f"the first genuine timeout after an infra block parked the card: {now.blocked}"
    )


def test_a_fix_round_timeout_is_never_counted_or_parked(repo: Path, store) -> None:
    """R2: a card that built once in this dispatch is not too wide; its fix round times out."""
    gate = [sys.executable, script("split_gate_red.py")]
    cfg = board_cfg(repo, {"a": "edit-then-hang"}, split_after=1, gate=gate, gate_retries=1)
    card = add(store)
    end = run_once(cfg, store, card)
    now = store.get(card)
    assert end.cls != "too-wide" and (now.blocked is None or now.blocked.cls != "too-wide"), (
        f"a fix-round timeout parked the card: {now.blocked}"
    )
    assert split.timeout_count(now) == 0, "a fix-round timeout was counted"
    assert tasks_for(store, card) == [], "a fix-round timeout asked for a split"
    log = "\n".join(c.text for c in store.timeline(card))
    assert "retry 1 of 1" in log, f"the coder never reached a fix round: {log}"


def test_a_build_reaching_review_clears_the_count(repo: Path, store) -> None:
    cfg = board_cfg(repo, {"a": "print-then-hang"}, review="operator")
    card = add(store)
    run_once(cfg, store, card)
    assert split.timeout_count(store.get(card)) == 1
    actions.unblock(store, card)  # a terminal block: unblocking it keeps the count
    assert split.timeout_count(store.get(card)) == 1, "unblocking a terminal block reset the count"
    cfg = board_cfg(repo, {"a": "edit"}, review="operator")
    end = run_once(cfg, store, card)
    assert end.outcome == "review", end
    assert split.timeout_count(store.get(card)) == 0, "the build reached review but kept its count"


def test_after_unblock_the_first_new_timeout_is_not_re_parked(repo: Path, store) -> None:
    """R5: the operator raises the timeout and unblocks (from another process)."""
    cfg = board_cfg(repo, {"a": "print-then-hang", "b": "print-then-hang"})
    card = add(store)
    assert run_once(cfg, store, card).outcome == "parked"
    res = run_cli(repo, "unblock", card)
    assert res.returncode == 0, res.stderr
    assert split.timeout_count(store.get(card)) == 0, "board unblock kept the too-wide count"
    cfg = board_cfg(repo, {"a": "print-then-hang"})  # one rung: one timeout, then a block
    end = run_once(cfg, store, card)
    now = store.get(card)
    assert end.cls == "terminal" and now.blocked is not None and now.blocked.cls == "terminal", (
        f"the first timeout after unblock re-parked the card: {now.blocked}"
    )
    assert split.timeout_count(now) == 1, "the first timeout after unblock was not counted"


def test_a_re_park_names_the_same_task_and_a_lost_label_files_no_duplicate(
    repo: Path, store
) -> None:
    cfg = board_cfg(repo, {"a": "print-then-hang", "b": "print-then-hang"})
    card = add(store)
    run_once(cfg, store, card)
    [task] = tasks_for(store, card)
    actions.unblock(store, card)
    labels = tuple(x for x in store.get(card).labels if x != split.ASKED_LABEL)
    store.update(card, Expect(), {"labels": labels})  # the decompose-asked write was lost
    end = run_once(cfg, store, card)
    assert end.outcome == "parked" and task.id in end.reason, end.reason
    assert len(tasks_for(store, card)) == 1, "the re-park filed a duplicate split task"
    assert split.ASKED_LABEL in store.get(card).labels, "the lost label was not healed"


def test_the_parked_card_is_split_by_the_planner_and_by_board_split(repo: Path, store) -> None:
    cfg = board_cfg(repo, {"a": "print-then-hang", "b": "print-then-hang"})
    planner = (sys.executable, script("split_planner.py"), "{card}", "split")
    cfg = replace(cfg, planner=replace(cfg.planner, argv=planner))
    card = add(store, surface=["src/**"])
    after = add(store, "needs the wide card", deps=[card])
    run_once(cfg, store, card)
    [task] = split.planner_queue(store, cfg.planner)
    token = drive.claim(cfg, store, task)
    assert token
    res = split.run_planner(store, cfg, store.get(task.id), token)
    assert res.outcome == "done", res
    assert store.get(card).lane == "cancelled", "the planner's split did not cancel the card"
    deps = store.get(after).deps
    assert card not in deps and len(deps) == 2, f"the dependent was not repointed: {deps}"
    slices = [store.get(d) for d in deps]
    assert all(s.lane == "ready" and s.surface == ("src/**",) for s in slices), slices
    ready = [c.id for c in actions.ready_queue(store)]
    assert after not in ready, "the dependent was released early"

    # a slice that is itself too wide is parked and split again, by hand this time
    run_once(cfg, store, slices[0].id)
    parked = store.get(slices[0].id)
    assert parked.blocked is not None and parked.blocked.cls == "too-wide"
    res2 = run_cli(repo, "split", slices[0].id, "--into", "half", "--into", "other half", "--json")
    assert res2.returncode == 0, res2.stderr
    out = json.loads(res2.stdout)
    assert out["card"]["lane"] == "cancelled"
    new = {s["id"] for s in out["slices"]}
    assert new <= set(store.get(after).deps) and slices[0].id not in store.get(after).deps


def test_the_loop_never_rebuilds_a_parked_card_tells_once_then_runs_the_planner(
    repo: Path, store
) -> None:
    cfg = board_cfg(repo, {"a": "print-then-hang", "b": "print-then-hang"})
    card = add(store, surface=["src/**"])
    after = add(store, "needs the wide card", deps=[card])
    lp = loop.Loop(cfg, store)
    assert lp.tick() == [card]
    assert lp.wait(30), "the drive did not end"
    [task] = tasks_for(store, card)
    drives = len(store.list_drives(card=card))
    for _ in range(2):  # no planner command: the task waits, the card stays parked
        assert lp.tick() == [], "the loop claimed a parked card or a planner task"
        lp.wait(30)
    now = store.get(card)
    assert now.blocked is not None and now.blocked.cls == "too-wide", (
        f"the sweep cleared the park and would rebuild the card whole: {now.blocked}"
    )
    assert len(store.list_drives(card=card)) == drives, "the parked card was rebuilt"
    told = [e.text for e in store.timeline(card) if "the operator is told" in e.text]
    assert len(told) == 1 and task.id in told[0], f"the operator was not told once: {told}"

    planner = (sys.executable, script("split_planner.py"), "{card}", "split")
    lp = loop.Loop(replace(cfg, planner=replace(cfg.planner, argv=planner)), store)
    assert lp.tick() == [task.id], "the planner task was not dispatched to the planner"
    assert lp.wait(60)
    assert store.get(task.id).lane == "done" and store.get(card).lane == "cancelled"
    deps = store.get(after).deps
    assert card not in deps and len(deps) == 2, f"the dependent was not repointed: {deps}"
