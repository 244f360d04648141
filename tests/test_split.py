"""The timeout budget, the too-wide park, the decompose task and `board split` (seed 002).

Store-level: the real SQLite store, the real split functions, a real planner script and
the real `board` command line. The drive's side (which timeouts count) is in
tests/test_split_drive.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from board.core.cards import actions, split
from board.core.config import CoderSection, Config
from board.core.errors import Conflict, NotFound, Refused
from board.core.model import TERMINAL, Blocked
from board.core.records import replace
from board.core.store import Expect, SQLiteStore, Tx

from tests.support.paths import script
from tests.support.repos import run_cli
from tests.support.split import add, claim, end_drive, events, first_seq, state, tasks_for


@pytest.fixture
def conf(tmp_path: Path) -> Config:
    return Config(tmp_path, coder=CoderSection(timeout_split_after=2))


def planning(conf: Config, *argv: str) -> Config:
    """`conf` with [planner] argv = argv."""
    return replace(conf, planner=replace(conf.planner, argv=argv))


def time_out(st: SQLiteStore, conf: Config, card_id: str) -> str | None:
    """One counted coder timeout of one build, as the drive reports it, then the drive's end."""
    token = claim(st, card_id)
    reason = split.count_timeout(st, conf, st.get(card_id), token)
    end_drive(st, card_id, token)
    return reason


# the count ----------------------------------------------------------------------------------


def test_a_first_counted_timeout_is_counted_durably_and_not_parked(st, conf) -> None:
    card = add(st, "wide")
    assert time_out(st, conf, card.id) is None, "the first timeout parked the card"
    now = st.get(card.id)
    assert now.timeouts == 1, f"the count was not written to the store: {now}"
    assert now.blocked is None, "the first timeout blocked the card"
    assert tasks_for(st, card.id) == [], "a split was asked before the threshold"


def test_the_threshold_files_the_task_parks_the_card_then_releases_the_task(st, conf) -> None:
    card = add(st, "wide card", spec="do everything", surface=["src/**"])
    dependent = add(st, "needs wide", deps=[card.id])
    time_out(st, conf, card.id)
    token = claim(st, card.id)
    reason = split.count_timeout(st, conf, st.get(card.id), token)

    [task] = tasks_for(st, card.id)
    assert reason is not None, "the second counted timeout did not park the card"
    parked = st.get(card.id)
    assert parked.blocked == Blocked("too-wide", reason), f"not parked too-wide: {parked.blocked}"
    assert task.id in reason, f"the park reason does not name the task: {reason}"
    assert "NO split task" not in reason
    assert task.kind == "task" and task.assignee == conf.planner.name
    assert task.title == f"Split {card.id}: wide card"
    assert task.lane == "ready" and task.blocked is None, "the task was not released"
    assert split.ASKED_LABEL in parked.labels
    assert dependent.id in task.spec, "the task's spec does not list the card's dependents"
    steps = [
        task.spec.index(s)
        for s in ("1. Create the slices", "2. Repoint", f"3. Cancel {card.id}", "4. Mark")
    ]
    assert steps == sorted(steps), "the task's spec gives the steps out of the safe order"

    evs = events(st, card.id, task.id)
    ask = first_seq(evs, task.id, "created in backlog")
    park = first_seq(evs, card.id, "blocked too-wide")
    release = first_seq(evs, task.id, "lane backlog → ready")
    assert ask < park < release, "not in the order ask < park < release"
    # the drive still owns the card until its end edge, which keeps the block
    assert parked.lane == "working" and parked.drive == token
    end_drive(st, card.id, token)
    queue = [c.id for c in actions.ready_queue(st)]
    assert card.id not in queue, "a too-wide card is back in the queue to be rebuilt whole"
    assert task.id in [c.id for c in split.planner_queue(st, planning(conf, "p").planner)]


def test_zero_turns_the_budget_off(st, conf) -> None:
    off = replace(conf, coder=replace(conf.coder, timeout_split_after=0))
    card = add(st)
    for _ in range(3):
        token = claim(st, card.id)
        assert split.count_timeout(st, off, st.get(card.id), token) is None
        end_drive(st, card.id, token)
    assert st.get(card.id).labels == (), "timeouts were counted with timeout_split_after = 0"
    assert tasks_for(st, card.id) == []


def test_a_card_moved_under_its_drive_is_neither_counted_nor_parked(st, conf) -> None:
    card = add(st)
    time_out(st, conf, card.id)
    token = claim(st, card.id)
    actions.requeue(st, card.id, "operator took it back")  # the card is no longer the drive's
    before = state(st)
    with pytest.raises(Conflict):
        split.count_timeout(st, conf, st.get(card.id), token)
    assert state(st) == before, "a drive counted or parked a card that was moved under it"
    claim(st, card.id)  # a new drive owns it now; the old drive's late timeout is not its own
    before = state(st)
    with pytest.raises(Conflict):
        split.count_timeout(st, conf, st.get(card.id), token)
    assert state(st) == before, "a stale drive counted or parked the card of a newer drive"


def test_a_fix_round_on_a_published_card_is_never_counted(st, conf) -> None:
    card = add(st)
    for _ in range(3):
        token = claim(st, card.id)
        st.update(card.id, Expect(drive=token), {"pr_url": "https://example/pr/1"})
        assert split.count_timeout(st, conf, st.get(card.id), token) is None, (
            "a fix round on a card with an open PR was parked (its split would close the PR)"
        )
        end_drive(st, card.id, token)
    assert split.timeout_count(st.get(card.id)) == 0, "a fix round's timeout was counted"


def test_a_build_reaching_review_clears_the_count(st, conf) -> None:
    card = add(st)
    time_out(st, conf, card.id)
    assert split.timeout_count(st.get(card.id)) == 1
    split.clear_count(st, card.id)
    assert split.timeout_count(st.get(card.id)) == 0, "a build got through but the count stayed"
    assert time_out(st, conf, card.id) is None, "the count was not reset at review"


# operator reset -----------------------------------------------------------------------------


def test_after_unblock_the_first_new_timeout_is_a_real_attempt(st, conf, tmp_path) -> None:
    card = add(st)
    time_out(st, conf, card.id)
    assert time_out(st, conf, card.id) is not None
    # the operator raises the timeout and unblocks, from another process's connection
    other = SQLiteStore(tmp_path / "board.db")
    actions.unblock(other, card.id)
    other.close()
    assert split.timeout_count(st.get(card.id)) == 0, "unblock of a too-wide park kept the count"
    assert time_out(st, conf, card.id) is None, "the first timeout after unblock re-parked"
    assert split.timeout_count(st.get(card.id)) == 1


def test_requeue_of_a_too_wide_card_also_drops_the_count(st, conf) -> None:
    card = add(st)
    time_out(st, conf, card.id)
    time_out(st, conf, card.id)
    actions.requeue(st, card.id, "retry with a longer timeout")
    assert split.timeout_count(st.get(card.id)) == 0, "requeue left the count at the threshold"
    assert time_out(st, conf, card.id) is None, "the first timeout after requeue re-parked"


def test_other_blocks_keep_their_count(st, conf) -> None:
    card = add(st)
    time_out(st, conf, card.id)
    for cls in ("dispatch-infra", "transient", "held"):
        actions.block(st, card.id, cls, "something else")
        actions.unblock(st, card.id)
        assert split.timeout_count(st.get(card.id)) == 1, f"unblocking a {cls} block reset it"
    assert time_out(st, conf, card.id) is not None, "the kept count did not reach the park"


# the ask ------------------------------------------------------------------------------------


def test_a_repeat_ask_returns_the_same_open_task(st, conf) -> None:
    card = add(st, "wide")
    first = split.request_decomposition(st, conf, card)
    again = split.request_decomposition(st, conf, card.id)
    assert first is not None and again is not None
    assert again.id == first.id, "a repeat ask filed a second task"
    assert first.lane == "backlog", "the ask released its own task (the park must come first)"
    assert len(tasks_for(st, card.id)) == 1


def test_a_lost_label_write_never_files_a_duplicate(st, conf) -> None:
    card = add(st, "wide")
    task = split.request_decomposition(st, conf, card)
    assert task is not None
    lost = tuple(x for x in st.get(card.id).labels if x != split.ASKED_LABEL)
    st.update(card.id, Expect(), {"labels": lost})  # the label write never landed
    again = split.request_decomposition(st, conf, card)
    assert again is not None and again.id == task.id, "a lost label filed a duplicate task"
    assert split.ASKED_LABEL in st.get(card.id).labels, "the lost label was not healed"
    assert len(tasks_for(st, card.id)) == 1


def test_a_re_park_names_the_open_task_without_a_duplicate(st, conf) -> None:
    card = add(st, "wide")
    time_out(st, conf, card.id)
    first = time_out(st, conf, card.id)
    [task] = tasks_for(st, card.id)
    actions.unblock(st, card.id)
    lost = tuple(x for x in st.get(card.id).labels if x != split.ASKED_LABEL)
    st.update(card.id, Expect(), {"labels": lost})
    time_out(st, conf, card.id)
    second = time_out(st, conf, card.id)
    assert first and second and task.id in second, f"the re-park does not name {task.id}"
    assert len(tasks_for(st, card.id)) == 1, "the re-park filed a duplicate task"


def test_once_the_split_closed_a_re_park_says_plainly_nothing_was_filed(st, conf) -> None:
    card = add(st, "wide")
    time_out(st, conf, card.id)
    time_out(st, conf, card.id)
    [task] = tasks_for(st, card.id)
    actions.cancel(st, None, task.id, reason="not splitting it")
    assert split.request_decomposition(st, conf, card) is None, "a closed split was returned"
    actions.unblock(st, card.id)
    time_out(st, conf, card.id)
    before = {c.id: c for c in st.list_cards()}
    reason = time_out(st, conf, card.id)
    assert reason is not None
    assert "NO split task was filed" in reason, f"the re-park claims a split: {reason}"
    assert f"board split {card.id}" in reason and "board unblock" in reason, (
        f"the re-park does not say what to do: {reason}"
    )
    assert len(tasks_for(st, card.id)) == 1, "a task was filed for a closed split"
    assert st.get(task.id) == before[task.id], "the re-park released or changed the closed task"


def test_a_decompose_task_never_gets_a_decompose_task_of_its_own(st, conf) -> None:
    card = add(st, "wide")
    time_out(st, conf, card.id)
    time_out(st, conf, card.id)
    [task] = tasks_for(st, card.id)
    assert split.request_decomposition(st, conf, task) is None
    reason = time_out(st, conf, task.id)
    reason = time_out(st, conf, task.id)
    assert reason is not None and "NO split task was filed" in reason
    assert tasks_for(st, task.id) == [], "a decompose task was filed for a decompose task"


# board split --------------------------------------------------------------------------------


def wide_with_dependents(st: SQLiteStore) -> dict[str, str]:
    base = add(st, "base")
    card = add(st, "wide", spec="all of it", surface=["src/**", "docs/*"], deps=[base.id])
    waits_backlog = add(st, "waits (backlog)", ready=False, deps=[card.id])
    waits_ready = add(st, "waits (ready)", deps=[card.id, base.id])
    finished = add(st, "finished", deps=[card.id])
    st.update(finished.id, Expect(), {"lane": "done"})
    return {
        "base": base.id,
        "card": card.id,
        "backlog": waits_backlog.id,
        "ready": waits_ready.id,
        "done": finished.id,
    }


def test_split_leaves_dependents_on_the_slices_and_the_card_cancelled(st, conf) -> None:
    ids = wide_with_dependents(st)
    task = split.request_decomposition(st, conf, ids["card"])
    assert task is not None
    res = split.split(st, conf, ids["card"], ["the API", "the docs"], [["src/api/**"], []])
    a, b = (st.get(s.id) for s in res.slices)
    assert st.get(ids["card"]).lane == "cancelled", "the split card was not cancelled"
    assert st.get(ids["card"]).blocked is None
    assert (a.lane, b.lane) == ("ready", "ready"), "the slices were not marked ready"
    assert a.surface == ("src/api/**",), "a slice given its own surface did not keep it"
    assert b.surface == ("src/**", "docs/*"), "a slice did not inherit the card's surface"
    assert a.deps == (ids["base"],) == b.deps, "a slice does not wait on what the card waited on"
    assert "all of it" in a.spec and "the API" in a.spec, "a slice lost the card's spec context"
    for key in ("backlog", "ready"):
        deps = set(st.get(ids[key]).deps)
        assert ids["card"] not in deps, f"{ids[key]} still waits on the cancelled card"
        assert {a.id, b.id} <= deps, f"{ids[key]} does not wait on the slices: {deps}"
    assert ids["base"] in st.get(ids["ready"]).deps, "repointing dropped another dependency"
    assert st.get(ids["done"]).deps == (ids["card"],), "a closed dependent was rewritten"
    assert set(res.repointed) == {ids["backlog"], ids["ready"]}
    assert st.get(task.id).lane == "done", "the open split task was left for a planner to redo"
    assert res.task_closed == task.id


def test_the_dependent_is_released_only_once_the_slices_land(st, conf) -> None:
    ids = wide_with_dependents(st)
    split.split(st, conf, ids["card"], ["one", "two"])
    queue = {c.id for c in actions.ready_queue(st)}
    assert ids["ready"] not in queue, "the dependent was released before any slice landed"
    st.update(ids["base"], Expect(), {"lane": "done"})
    slices = [c for c in st.list_cards() if f"split-from={ids['card']}" in c.labels]
    for s in slices:
        assert ids["ready"] not in {c.id for c in actions.ready_queue(st)}
        st.update(s.id, Expect(), {"lane": "done"})
    assert ids["ready"] in {c.id for c in actions.ready_queue(st)}, (
        "the dependent was never released after its slices landed"
    )


def released_early(tx: Tx, card_id: str, dependents: list[str]) -> list[str]:
    """Dependents the queue could claim now although no slice has landed."""
    cards = {c.id: c for c in tx.all_cards()}
    lanes = {cid: c.lane for cid, c in cards.items()}
    return [d for d in dependents if actions.claimable(cards[d], lanes)]


def test_no_step_of_the_split_releases_a_dependent_or_readies_a_slice_early(st, conf) -> None:
    """Each intermediate state is checked: the wrong order (cancel before repoint) fails here."""
    ids = wide_with_dependents(st)
    st.update(ids["base"], Expect(), {"lane": "done"})  # so only the card holds them back
    seen: list[str] = []

    def observe(step: str, tx: Tx) -> None:
        seen.append(step)
        early = released_early(tx, ids["card"], [ids["ready"]])
        assert not early, f"after step {step!r} the dependents {early} were released early"
        card_open = tx.get(ids["card"]).lane not in TERMINAL
        ready_slices = [
            c.id
            for c in tx.all_cards()
            if f"split-from={ids['card']}" in c.labels and c.lane == "ready"
        ]
        assert not (card_open and ready_slices), (
            f"after step {step!r} slices {ready_slices} were ready while {ids['card']} "
            "still claimed their files"
        )

    split.split(st, conf, ids["card"], ["one", "two"], _observe=observe)
    assert seen == list(split.STEPS), f"the steps ran in the order {seen}"


def test_a_split_that_fails_part_way_changes_nothing_and_says_so(st, conf) -> None:
    ids = wide_with_dependents(st)
    before = state(st)

    def fail_at_cancel(step: str, tx: Tx) -> None:
        if step == "repoint":
            raise OSError("disk went away")

    with pytest.raises(Refused) as info:
        split.split(st, conf, ids["card"], ["one", "two"], _observe=fail_at_cancel)
    line = info.value.line()
    assert "step 2 (repoint)" in line and "nothing was changed" in line, line
    assert "disk went away" in line
    assert state(st) == before, "a split that failed part-way left some of its steps done"


@pytest.mark.parametrize(
    ("titles", "surfaces", "match"),
    [
        ([], None, "at least one slice"),
        (["ok", "  "], None, "a slice needs a title"),
        (["a", "b"], [["x"]], "1 surfaces for 2 slices"),
        (["a"], [[""]], "empty surface glob"),
    ],
)
def test_split_refuses_bad_input_and_changes_nothing(st, conf, titles, surfaces, match) -> None:
    ids = wide_with_dependents(st)
    before = state(st)
    with pytest.raises(Refused, match=match):
        split.split(st, conf, ids["card"], titles, surfaces)
    assert state(st) == before, "a refused split changed the store"


def test_split_refuses_a_card_it_cannot_split_and_changes_nothing(st, conf) -> None:
    ids = wide_with_dependents(st)
    before = state(st)
    with pytest.raises(NotFound, match="no card 'c-99'"):
        split.split(st, conf, "c-99", ["a"])
    with pytest.raises(Refused, match="is done; a done card cannot be split"):
        split.split(st, conf, ids["done"], ["a"])
    assert state(st) == before
    token = claim(st, ids["card"])
    before = state(st)
    with pytest.raises(Refused, match="is working under drive"):
        split.split(st, conf, ids["card"], ["a"])
    assert state(st) == before, "a card being built was split under its drive"
    # parked too-wide while its drive ends: the split may go ahead, the drive stands aside
    actions.block(st, ids["card"], "too-wide", "parked", Expect(drive=token))
    res = split.split(st, conf, ids["card"], ["a"])
    assert res.card.lane == "cancelled" and res.card.drive == ""
    with pytest.raises(Conflict):
        end_drive(st, ids["card"], token)


# the command line and the planner -----------------------------------------------------------


def test_board_split_on_the_command_line(repo: Path) -> None:
    def board(*args: str):
        return run_cli(repo, *args)

    card = json.loads(
        board("card", "add", "wide", "--spec", "s", "--surface", "src/**", "--json").stdout
    )
    dep = json.loads(board("card", "add", "after", "--dep", card["id"], "--json").stdout)
    before = board("card", "list", "--json").stdout
    res = board("split", card["id"], "--surface", "x", "--into", "a")
    assert res.returncode != 0 and "--surface belongs to a slice" in res.stderr
    res = board("split", card["id"], "--into", "   ")
    assert res.returncode == 1 and res.stderr.count("\n") == 1, res.stderr
    assert "a slice needs a title" in res.stderr
    assert board("card", "list", "--json").stdout == before, "a refused split changed cards"

    res = board(
        "split", card["id"], "--into", "api", "--into", "ui", "--surface", "src/ui/**", "--json"
    )
    assert res.returncode == 0, res.stderr
    out = json.loads(res.stdout)
    assert out["card"]["lane"] == "cancelled"
    assert [s["surface"] for s in out["slices"]] == [["src/**"], ["src/ui/**"]], (
        "a --surface did not go to the slice named just before it"
    )
    assert out["repointed"] == [dep["id"]]
    shown = json.loads(board("card", "show", dep["id"], "--json").stdout)
    assert shown["deps"] == [s["id"] for s in out["slices"]]
    res = board("split", card["id"], "--into", "again")
    assert res.returncode == 1 and "is cancelled" in res.stderr


def parked_task(repo: Path, conf: Config, st: SQLiteStore) -> tuple[str, str, str]:
    card = add(st, "wide", surface=["src/**"])
    dep = add(st, "after", deps=[card.id])
    time_out(st, conf, card.id)
    time_out(st, conf, card.id)
    [task] = tasks_for(st, card.id)
    return card.id, dep.id, task.id


def test_the_planner_runs_the_split_in_the_repository_root(repo: Path, cfg, store) -> None:
    conf = planning(cfg, sys.executable, script("split_planner.py"), "{card}", "split")
    card, dep, task = parked_task(repo, conf, store)
    assert split.for_planner(conf.planner, store.get(task)), "the split task is not the planner's"
    assert not split.for_planner(conf.planner, store.get(card)), (
        "a feature was given to the planner"
    )
    assert [c.id for c in split.planner_queue(store, conf.planner)] == [task]
    assert split.planner_queue(store, planning(conf).planner) == [], (
        "without a planner command the task must wait for the operator"
    )
    token = claim(store, task)
    res = split.run_planner(store, conf, store.get(task), token)
    assert res.outcome == "done", res
    assert store.get(task).lane == "done", "the planner split the card but its task stayed open"
    assert store.get(card).lane == "cancelled"
    deps = store.get(dep).deps
    assert card not in deps and len(deps) == 2, f"the dependent was not repointed: {deps}"
    log = (repo / res.log).read_text()
    assert f"planning the split of {card} in {repo}\n" in log, "not run in the repository root"
    assert store.get_drive(token).status == "passed"


def test_a_planner_that_does_not_split_blocks_its_task_with_the_reason(
    repo: Path, cfg, store
) -> None:
    conf = planning(cfg, sys.executable, script("split_planner.py"), "{card}", "fail")
    card, _, task = parked_task(repo, conf, store)
    token = claim(store, task)
    res = split.run_planner(store, conf, store.get(task), token)
    now = store.get(task)
    assert res.outcome == "blocked" and now.lane == "ready" and now.drive == ""
    assert now.blocked is not None and now.blocked.cls == "terminal"
    assert "exited 1" in now.blocked.reason and f"{card} is not split" in now.blocked.reason
    assert "cannot decide" in now.blocked.reason, "the planner's last words were not kept"
    assert store.get(card).blocked is not None, "the card lost its park"

    missing = planning(conf, str(repo / "no-such-planner"))
    actions.unblock(store, task)
    token = claim(store, task)
    split.run_planner(store, missing, store.get(task), token)
    blocked = store.get(task).blocked
    assert blocked is not None and blocked.cls == "dispatch-infra", blocked


def test_a_planner_task_held_while_it_runs_keeps_the_operators_hold(repo: Path, cfg, store) -> None:
    conf = planning(cfg, sys.executable, script("split_planner.py"), "{card}", "held")
    _, _, task = parked_task(repo, conf, store)
    token = claim(store, task)
    res = split.run_planner(store, conf, store.get(task), token)
    now = store.get(task)
    assert res.outcome == "stood-aside", res
    assert now.blocked == Blocked("held", "operator: wait for the design review"), (
        f"the planner's end replaced the operator's hold: {now.blocked}"
    )
    assert now.lane == "ready" and now.drive == "", "the held task was not given back"
