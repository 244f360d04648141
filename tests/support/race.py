"""The worker two OS processes run to race read-modify-writes on 20 cards, on either store
(a SQLite file path or a PostgreSQL URL as its first argument). With BOARD_TEST_NO_CAS set,
the store's version check is planted off, so a test can show what it guards."""

WORKER = r"""
import json, os, random, sys
from board.core.errors import Conflict
from board.core.model import Blocked
from board.core.store import Expect, SQLiteStore
from board.core.store.base import Expect as BaseExpect

if os.environ.get("BOARD_TEST_NO_CAS"):  # the planted fault: the version check is off
    BaseExpect.check = lambda self, card: None

where, name, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
if where.startswith("postgresql://"):
    from board.core.store.postgres import PostgresStore

    st = PostgresStore(where)
else:
    st = SQLiteStore(where)
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
