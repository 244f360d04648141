"""Benchmark: what a claim and a transition cost on PostgreSQL (loopback) against SQLite.

The same work on both stores in the same run: N ready cards (default 300), each claimed
through the real `claim` (a drive row, then one compare-and-set transaction that moves the
card to working under the drive's token), then M transitions per card (default 3, each a
compare-and-set hold or unblock through `actions`, one write transaction and a timeline
event). PostgreSQL is a throwaway cluster started here (tests/support/pg_cluster.py: the machine's
server binaries, on a free loopback port, as `postgres` when run as root, fsync on) unless
--url names one; SQLite is a file in a temporary directory (WAL, as `board init` makes it).

Reported per store: median and 95th-percentile latency of a claim and of a transition,
throughput, and the PostgreSQL / SQLite ratio of each median. Loopback hides the network,
so the PostgreSQL figures are its floor: over a LAN, add a round trip (about 4 per claim,
3 per transition) to each.

    .venv/bin/python tests/bench/bench_store.py [--cards 300] [--transitions 3] [--url URL]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core import config  # noqa: E402
from board.core.cards import actions  # noqa: E402
from board.core.drive.claim import claim  # noqa: E402
from board.core.model import CardDraft  # noqa: E402
from board.core.store import SQLiteStore, Store  # noqa: E402
from board.core.store.postgres import PostgresStore  # noqa: E402

from tests.support.pg_cluster import Cluster  # noqa: E402


def timed(call: Callable[[], object]) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def run(store: Store, root: Path, cards: int, transitions: int) -> dict[str, list[float]]:
    """Claims, then transitions, on `cards` fresh ready cards: the seconds each took."""
    cfg = config.Config(root=root)
    made = [
        actions.add_card(store, CardDraft(title=f"card {i}", spec="s", lane="ready"))
        for i in range(cards)
    ]
    claims, moves = [], []
    for card in made:
        claims.append(timed(lambda card=card: claim(cfg, store, card, owner_pid=1)))
    for i in range(transitions):
        for card in made:
            if i % 2 == 0:
                moves.append(timed(lambda c=card.id: actions.hold(store, c, "bench")))
            else:
                moves.append(timed(lambda c=card.id: actions.unblock(store, c)))
    lost = [c.id for c in store.list_cards() if c.lane != "working"]
    if lost:
        raise SystemExit(f"claims lost: {lost[:5]}")
    return {"claim": claims, "transition": moves}


def ms(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cards", type=int, default=300)
    parser.add_argument("--transitions", type=int, default=3)
    parser.add_argument(
        "--url", help="an existing, empty PostgreSQL database (default: a throwaway)"
    )
    args = parser.parse_args()
    cluster = None
    with tempfile.TemporaryDirectory(prefix="bench-store-") as tmp:
        root = Path(tmp)
        (root / ".board").mkdir()
        try:
            url = args.url
            if url is None:
                cluster = Cluster(durable=True)  # fsync on, as SQLite's commits are
                cluster.start()
                url = cluster.url(cluster.create_db())
            stores: dict[str, Store] = {
                "sqlite": SQLiteStore(root / ".board" / "board.db", create=True),
                "postgres": PostgresStore(url, create=True),
            }
            results = {}
            for name, store in stores.items():
                start = time.perf_counter()
                results[name] = run(store, root, args.cards, args.transitions)
                results[name]["wall"] = [time.perf_counter() - start]
                store.close()
        finally:
            if cluster is not None:
                cluster.stop()
    print(f"{args.cards} cards, a claim each, then {args.transitions} transitions each")
    heads = ("claim p50", "claim p95", "move p50", "move p95")
    print(f"{'':10} " + " ".join(f"{h:>10}" for h in heads) + f" {'ops/s':>8}")
    for name, got in results.items():
        ops = len(got["claim"]) + len(got["transition"])
        print(
            f"{name:10} {ms(got['claim'], 0.5):8.2f}ms {ms(got['claim'], 0.95):8.2f}ms "
            f"{ms(got['transition'], 0.5):8.2f}ms {ms(got['transition'], 0.95):8.2f}ms "
            f"{ops / sum(got['claim'] + got['transition']):8.0f}"
        )
    for what in ("claim", "transition"):
        lite = statistics.median(results["sqlite"][what])
        pg = statistics.median(results["postgres"][what])
        print(f"postgres / sqlite, median {what}: {pg / lite:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
