"""Lane rules, blocks, dependencies and the ready queue, against the real stores: each test
runs on the SQLite file and on a PostgreSQL database (the `backends` mark, tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from board.core.cards import actions
from board.core.errors import Conflict, NotFound, Refused
from board.core.model import Blocked, CardDraft
from board.core.store import Expect, Store

pytestmark = pytest.mark.backends()


def add(st: Store, title: str = "t", spec: str = "s", ready: bool = True, **kw) -> str:
    draft = CardDraft(title=title, spec=spec, lane="ready" if ready else "backlog", **kw)
    return actions.add_card(st, draft).id


def snapshot(st: Store) -> list:
    return [(c, st.timeline(c.id)) for c in st.list_cards()]


def test_ids_are_short_and_sequential(st: Store) -> None:
    assert [add(st) for _ in range(3)] == ["c-1", "c-2", "c-3"]


def test_backlog_to_ready_needs_a_spec(st: Store) -> None:
    cid = add(st, spec="", ready=False)
    with pytest.raises(Refused, match="needs a spec"):
        actions.ready(st, cid)
    assert st.get(cid).lane == "backlog"
    with pytest.raises(Refused, match="needs a spec before it is ready"):
        add(st, spec="  ", ready=True)


def test_empty_title_is_refused_and_nothing_is_written(st: Store) -> None:
    before = snapshot(st)
    for title in ("", "   "):
        with pytest.raises(Refused, match="needs a title"):
            add(st, title=title)
    assert snapshot(st) == before


def test_done_and_cancelled_are_terminal(st: Store, tmp_path: Path) -> None:
    a, b = add(st), add(st)
    actions.cancel(st, None, a)
    actions.done(st, None, b)
    for cid, lane in ((a, "cancelled"), (b, "done")):
        before = st.get(cid)
        for verb in (
            lambda cid=cid: actions.ready(st, cid),
            lambda cid=cid: actions.hold(st, cid, "r"),
            lambda cid=cid: actions.requeue(st, cid, "r"),
            lambda cid=cid: actions.cancel(st, None, cid),
            lambda cid=cid: actions.done(st, None, cid),
        ):
            with pytest.raises(Refused):
                verb()
        assert st.get(cid) == before, f"a {lane} card was changed"


def test_hold_needs_a_reason_and_unblock_clears_it(st: Store) -> None:
    cid = add(st)
    for reason in (None, "", "  "):
        with pytest.raises(Refused, match="needs a reason"):
            actions.hold(st, cid, reason)
    card = actions.hold(st, cid, "waiting on vendor")
    assert card.blocked == Blocked("held", "waiting on vendor")
    assert actions.ready_queue(st) == []
    assert actions.unblock(st, cid).blocked is None
    assert [c.id for c in actions.ready_queue(st)] == [cid]
    with pytest.raises(Refused, match="is not blocked"):
        actions.unblock(st, cid)


def test_a_block_can_never_have_an_empty_reason(st: Store) -> None:
    cid = add(st)
    with pytest.raises(Refused):
        actions.block(st, cid, "terminal", "")
    with pytest.raises(Refused):
        st.update(cid, Expect(), {"blocked": Blocked("terminal", " ")})
    assert st.get(cid).blocked is None


def test_queue_is_priority_then_age_skipping_blocked_and_open_deps(st: Store) -> None:
    low = add(st, priority=3)
    urgent_old = add(st, priority=0)
    urgent_new = add(st, priority=0)
    blocked = add(st, priority=0)
    actions.hold(st, blocked, "no")
    waiting = add(st, priority=0, deps=[low])
    assert [c.id for c in actions.ready_queue(st)] == [urgent_old, urgent_new, low]
    actions.done(st, None, low)
    assert waiting in [c.id for c in actions.ready_queue(st)]


def test_dependency_on_itself_or_a_cycle_is_refused_with_the_cycle_named(st: Store) -> None:
    a = add(st)
    b = add(st, deps=[a])
    c = add(st, deps=[b])
    with pytest.raises(Refused, match=f"{a} → {a}"):
        actions.set_deps(st, a, [a])
    with pytest.raises(Refused, match=f"dependency cycle: {a} → {c} → {b} → {a}"):
        actions.set_deps(st, a, [c])
    assert st.get(a).deps == ()


def test_unknown_dependency_is_refused(st: Store) -> None:
    with pytest.raises(NotFound, match="c-99"):
        add(st, deps=["c-99"])
    assert st.list_cards() == []


def test_cancel_rewires_open_dependents_onto_its_open_deps(st: Store) -> None:
    a = add(st)
    b = add(st, deps=[a])
    c = add(st, deps=[b])
    started = add(st, deps=[b])
    st.update(started, Expect(lane="ready"), {"lane": "working"})
    actions.cancel(st, None, b)
    assert st.get(c).deps == (a,), "C → B → A did not become C → A"
    assert st.get(started).deps == (b,), "a started dependent was rewired"
    said = [e.text for e in st.timeline(c)]
    assert any(f"{b} was cancelled; now waits on {a}" in t for t in said), said


def test_cancel_with_no_open_deps_frees_the_dependent(st: Store) -> None:
    a = add(st)
    b = add(st, deps=[a])
    actions.done(st, None, a)
    c = add(st, deps=[b])
    actions.cancel(st, None, b)
    assert st.get(c).deps == ()
    assert c in [x.id for x in actions.ready_queue(st)]


def test_refused_write_says_what_it_found(st: Store) -> None:
    cid = add(st)
    with pytest.raises(Conflict, match=f"{cid}: expects working, got ready"):
        st.update(cid, Expect(lane="working"), {"lane": "review"})
    v = st.get(cid).version
    actions.hold(st, cid, "r")
    with pytest.raises(Conflict, match=f"expects version {v}, got {v + 1}"):
        st.update(cid, Expect(version=v), {"priority": 1})
    with pytest.raises(Conflict, match="expects drive d-1, got no drive"):
        st.update(cid, Expect(drive="d-1"), {"lane": "review"})


def test_every_change_appends_to_the_timeline(st: Store) -> None:
    cid = add(st)
    actions.hold(st, cid, "r")
    actions.unblock(st, cid)
    st.add_comment(cid, "looks good", "alice")
    kinds = [(e.kind, e.who) for e in st.timeline(cid)]
    assert kinds == [("event", "operator")] * 3 + [("comment", "alice")]


def test_hostile_text_is_stored_byte_for_byte(st: Store) -> None:
    title = "[bold red]x[/] [@click=app.quit]q[/] \x1b]52;c;aGk=\x07 \x1b[2J \x00\x01\x7f ünï"
    spec = "s" * (1024 * 1024) + "\x1b[31m"
    cid = add(st, title=title, spec=spec)
    actions.hold(st, cid, title)
    card = st.get(cid)
    assert card.title == title and card.spec == spec and card.blocked.reason == title


def test_requeue_records_its_reason_for_the_next_brief(st: Store) -> None:
    cid = add(st)
    st.update(cid, Expect(lane="ready"), {"lane": "review"})
    actions.requeue(st, cid, "tests are missing")
    card = st.get(cid)
    assert card.lane == "ready"
    assert [e.text for e in st.timeline(cid) if e.kind == "requeue"] == ["tests are missing"]


def test_unknown_card_is_not_found(st: Store) -> None:
    for verb in (actions.ready, actions.unblock):
        with pytest.raises(NotFound, match="no card 'c-404'"):
            verb(st, "c-404")


def test_bad_priority_and_kind_are_refused(st: Store) -> None:
    with pytest.raises(Refused, match="priority"):
        add(st, priority=9)
    with pytest.raises(Refused, match="kind"):
        add(st, kind="epic")
    assert st.list_cards() == []


def test_unblock_of_a_too_wide_park_drops_the_timeout_count(st: Store) -> None:
    # the count lives in Card.timeouts (it was a `budget:timeout=N` label)
    cid = add(st, labels=["keep"])
    st.update(cid, Expect(), {"timeouts": 2})
    actions.block(st, cid, "too-wide", "parked for split c-9")
    unblocked = actions.unblock(st, cid)
    assert unblocked.labels == ("keep",) and unblocked.timeouts == 0
    other = add(st)
    st.update(other, Expect(), {"timeouts": 1})
    actions.block(st, other, "gate-red", "red")
    assert actions.unblock(st, other).timeouts == 1
