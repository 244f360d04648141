"""The rows a schema migration rewrites, beside the tables it adds (schema.py's MIGRATIONS).

Version 5 makes the board's own state data. Before it, the board kept its counts of a card
among the card's labels, words next to the operator's own (`tries:<class>=N`, `rung=<tier>`,
`told=<class>:<hash>`, `budget:timeout=N`, `reviews-seen=N`), and a lane move only as the
words `lane A → B`
of a timeline line, which the flow screen read back with a regex (and so also counted a
block reason that quoted those words). An older store opened by this board has, in the
migration's one transaction: each such label moved into the card's card_state row (the
operator's labels, and any label not of exactly those forms, stay where they were), and a
lane_moves row for each lane change its timeline lines record. Those lines were written by
the board's own `describe_changes`, so reading them once here is reading our own format;
the flow screen then shows the same figures as before the upgrade.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

from board.core.model import LANES
from board.core.store.schema import SCHEMA_VERSION, STATE_COLS

if TYPE_CHECKING:
    from typing import Any

    Conn = Any  # a DB-API connection (sqlite3's, psycopg's)

# the labels the board wrote before version 5, and the card_state field each one fills
TRIES = "tries:"  # tries:<class>=N
RUNG = "rung="
TOLD = "told="
BUDGET = "budget:timeout="
REVIEWS = "reviews-seen="

_LANE = "|".join(re.escape(lane) for lane in LANES)
# a lane change inside a timeline line, as `describe_changes` wrote it before version 5: at
# the line's start or after another change's "; " (the regex the flow screen used then)
OLD_MOVE = re.compile(rf"(?:^|; )lane ({_LANE}) → ({_LANE})(?=;|$)")


def _count(text: str) -> int | None:
    return int(text) if text.isascii() and text.isdigit() else None


def split_labels(labels: list[str]) -> tuple[list[str], dict[str, Any]]:
    """The labels the operator keeps, and the counts the board's own labels among `labels`
    held (tries, rung, told, timeouts, reviews_seen; only those found). A label is the
    board's only in exactly the form the board wrote it, and only its first of a kind
    counts, as the board read them (`Card.label_value`): any other stays a label, so
    nothing is lost."""
    kept: list[str] = []
    tries: dict[str, int] = {}
    state: dict[str, Any] = {}
    for label in labels:
        if not _taken(label, tries, state):
            kept.append(label)
    if tries:
        state["tries"] = tries
    return kept, state


_COUNTS = ((BUDGET, "timeouts"), (REVIEWS, "reviews_seen"))
_TEXTS = ((RUNG, "rung"), (TOLD, "told"))


def _taken(label: str, tries: dict[str, int], state: dict[str, Any]) -> bool:
    """True when `label` is one of the board's, its value now in `tries` or `state`."""
    if label.startswith(TRIES):
        cls, eq, raw = label[len(TRIES) :].partition("=")
        n = _count(raw)
        if not cls or not eq or n is None or cls in tries:
            return False
        tries[cls] = n
        return True
    for prefix, name in _COUNTS:
        if label.startswith(prefix):
            n = _count(label[len(prefix) :])
            if n is None or name in state:
                return False
            state[name] = n
            return True
    for prefix, name in _TEXTS:
        if label.startswith(prefix):
            value = label[len(prefix) :]
            if not value or name in state:
                return False
            state[name] = value
            return True
    return False


def to_v5(conn: Conn, param: str) -> None:
    """The board's labels into card_state, the timeline's lane moves into lane_moves."""

    def q(sql: str) -> str:
        return sql if param == "?" else sql.replace("?", param)

    for card, raw in conn.execute("SELECT id, labels FROM cards ORDER BY seq").fetchall():
        try:
            labels = json.loads(raw)
        except (TypeError, ValueError, RecursionError):
            continue  # a corrupt row is named when it is read; nothing here to move
        if not isinstance(labels, list) or not all(isinstance(x, str) for x in labels):
            continue
        kept, state = split_labels(labels)
        if not state:
            continue
        conn.execute(
            q(f"INSERT INTO card_state ({STATE_COLS}) VALUES (?, ?, ?, ?, ?, ?)"),
            (
                card,
                json.dumps(state.get("tries", {})),
                state.get("rung", ""),
                state.get("told", ""),
                state.get("timeouts", 0),
                state.get("reviews_seen", 0),
            ),
        )
        conn.execute(q("UPDATE cards SET labels = ? WHERE id = ?"), (json.dumps(kept), card))
    events = conn.execute(
        "SELECT card, at, who, text FROM events WHERE kind = 'event' ORDER BY seq"
    ).fetchall()
    for card, at, who, text in events:
        for old, new in OLD_MOVE.findall(text):
            conn.execute(
                q("INSERT INTO lane_moves (card, at, who, old, new) VALUES (?, ?, ?, ?, ?)"),
                (card, at, who, old, new),
            )


# the rows each version's migration rewrites, after its tables are made: ROWS[n] takes a
# store from n to n + 1, as schema.MIGRATIONS[n] does
ROWS = {4: to_v5}


def upgrade_rows(conn: Conn, version: Any, param: str) -> None:
    """Every row step from `version` (as meta held it, already checked by
    `schema.migrations`) to the current schema, in order."""
    for step in range(int(version), SCHEMA_VERSION):
        if step in ROWS:
            ROWS[step](conn, param)
