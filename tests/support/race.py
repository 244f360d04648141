"""Races of two kinds. `raced_in_review`: a card built by best-of-N candidates (issue 42)
with the real loop, coder and gate scripts, waiting in review with its rule's choice.
`WORKER`: the worker two OS processes run to race read-modify-writes on 20 cards, on either
store (a SQLite file path or a PostgreSQL URL as its first argument). With BOARD_TEST_NO_CAS set,
the store's version check is planted off, so a test can show what it guards. With a gate
directory as a fourth argument, the two start writing together: each marks itself ready
there and waits for the other, so a slow start under load cannot leave one finishing
before the other begins (and the race not run at all)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from board.core.loop import Loop
from board.core.model import Card

from tests.support.boards import Board, make_board
from tests.support.loop import add_card
from tests.support.paths import script


def raced_in_review(
    tmp_path: Path,
    sizes: str,
    n: int,
    before: Callable[..., None] | None = None,
    **publish: Any,
) -> tuple[Board, Card]:
    """A card raced by `n` candidates writing `sizes` lines (tests/scripts/coder_candidate.sh,
    judged by gate_candidate.sh), run by the loop as `board run --until-idle` runs it, and
    waiting in review (publish.review = "operator", and `publish`) with its rule's choice;
    `before(cfg, store, card)` runs before the race."""
    log = tmp_path / "coders.log"
    tier = [script("coder_candidate.sh"), "{worktree}", "{card}", sizes, str(log), "{brief}"]
    board = make_board(
        tmp_path,
        origin=True,
        tiers={"default": tier},
        gate=[script("gate_candidate.sh"), "{worktree}"],
        coder={"best_of": n},
        board={"max_concurrent": n},
        gate_opts={"retries": 0},
        publish={"review": "operator", **publish},
    )
    cfg, store = board.cfg, board.store
    card = add_card(store, "a raced feature", surface=["work/**"])
    if before is not None:
        before(cfg, store, card)
    assert Loop(cfg, store).run(until_idle=True) == 0
    assert store.get(card.id).lane == "review", [e.text for e in store.timeline(card.id)]
    return board, card


WORKER = r"""
import json, os, random, sys, time
from board.core.errors import Conflict
from board.core.model import Blocked
from board.core.store import Expect, SQLiteStore
from board.core.store.contract import Expect as BaseExpect

if os.environ.get("BOARD_TEST_NO_CAS"):  # the planted fault: the version check is off
    BaseExpect.check = lambda self, card: None

where, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if where.startswith("postgresql://"):
    from board.core.store.postgres import PostgresStore

    st = PostgresStore(where)
else:
    st = SQLiteStore(where)
if len(sys.argv) > 4:  # start together: both connected before either writes
    gate = sys.argv[4]
    open(os.path.join(gate, name), "w").close()
    deadline = time.monotonic() + 60
    while len(os.listdir(gate)) < 2 and time.monotonic() < deadline:
        time.sleep(0.002)
rng = random.Random(name)
accepted, refused = {}, []
for i in range(n):
    cid = f"c-{rng.randint(1, 20)}"
    card = st.get(cid)  # read, then write expecting what was read (compare-and-set)
    count = int(card.labels[0].split("=")[1]) if card.labels else 0
    changes = {"labels": (f"n={count + 1}",)}  # a read-modify-write: a lost update shows here
    if card.blocked is None:
        changes["blocked"] = Blocked("held", f"{name} {i}")
    else:
        changes.update(blocked=None, priority=rng.randint(0, 4))
    try:
        st.update(cid, Expect(version=card.version), changes, who=name)
        accepted[cid] = accepted.get(cid, 0) + 1
    except Conflict as exc:
        refused.append(str(exc))
print(json.dumps({"accepted": accepted, "refused": refused}))
"""
