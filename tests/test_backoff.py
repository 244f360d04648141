"""Failures that are not the card's fault, end to end: a real loop, a real repository, and a
coder script (tests/scripts/coder_script.py) that prints what the agent CLIs print when an
account hits its limit, the network drops or a login expires, and exits as they do.

A rate limit must not climb or count toward the timeout budget, and must pause its tier
board-wide until the reset; a blip retries the same rung; a dead login blocks `auth` and
pauses the tier until the operator acts; a spent count stays blocked; the gate's own output
is left alone. See docs/lifecycle.md, "Failures that are not the card's fault".
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from board.core import config
from board.core.cards import actions, waits
from board.core.loop import Loop
from board.core.store import Expect, SQLiteStore
from board.core.store.schema import CANDIDATE_COLUMNS, USAGE_COLUMNS
from board.core.store.sqlite import SCHEMA_VERSION

from tests.support.boards import make_board
from tests.support.loop import add_card, drive_one, events, show
from tests.support.paths import script
from tests.support.repos import run_cli
from tests.support.waiting import wait_for

RATE_429 = (
    'Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request '
    "would exceed your account's rate limit. Please try again later.\"}}"
)
TRY_IN = (
    "Stream disconnected before completion: Rate limit reached for organization org-x on "
    "tokens per min (TPM): Limit 250000, Used 250000, Requested 58487. Please try again in {s}s."
)
RESET = "API Error: Unable to connect to API (ECONNRESET)"
EXPIRED = (
    'API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"OAuth '
    'token has expired. Please obtain a new token or refresh your existing token."}} · Please '
    "run /login"
)


def scripted(tmp_path: Path, steps: list[Any], tier: str = "") -> list[str]:
    """The coder argv of one tier, playing `steps` (shared by every tier given the same
    tmp_path: one account, one call count)."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(steps))
    argv = [script("coder_script.py"), "{worktree}", "{card}", str(path), str(tmp_path / "calls")]
    return argv + ([tier] if tier else [])


def calls(tmp_path: Path) -> list[list[str]]:
    log = tmp_path / "calls" / "log"
    return [line.split() for line in log.read_text().splitlines()] if log.exists() else []


def run_until_idle(cfg: config.Config, timeout: float = 60) -> None:
    """`board run --until-idle`, in-process on its own store, with a deadline."""
    store = SQLiteStore(cfg.db_path)
    loop = Loop(cfg, store)
    thread = threading.Thread(target=loop.run, kwargs={"until_idle": True}, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        loop.request_stop("the test's deadline")
        thread.join(30)
        raise AssertionError(f"the loop was not idle after {timeout}s: {loop.idle_report()}")
    store.close()


def seconds_until(stamp: str) -> float:
    at = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return (at - datetime.now(UTC)).total_seconds()


def test_a_429_sends_the_card_back_to_ready_with_not_before_on_the_same_rung(
    tmp_path: Path,
) -> None:
    # call 1 fails as the card's own fault (climb to "high"); call 2 is a 429 on "high"
    steps = [{"print": "error: tests failed", "exit": 1}, {"print": RATE_429, "exit": 1}, "edit"]
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"low": scripted(tmp_path, steps, "low"), "high": scripted(tmp_path, steps, "high")},
        coder={"timeout_split_after": 2},
    )
    card = add_card(store, "feature", surface=["work/**"])
    card = store.update(card.id, Expect(version=card.version), {"timeouts": 1})  # was a label
    end = drive_one(cfg, store, card)
    assert end.outcome == "backed-off" and end.cls == "rate-limit", end
    after = store.get(card.id)
    assert after.lane == "ready" and after.blocked is None
    assert 40 < seconds_until(after.not_before) < 80, after.not_before  # 60 s ± jitter
    assert after.rung == "high" and after.tries == (("rate-limit", 1),)
    assert after.timeouts == 1, "the timeout budget changed"
    (pause,) = store.pauses()
    assert (pause.tier, pause.cls, pause.card) == ("high", "rate-limit", card.id)
    assert pause.until == after.not_before
    shown = json.loads(run_cli(cfg.root, "card", "show", card.id, "--json").stdout)
    assert shown["not_before"] == after.not_before
    # nothing lost: the half-done tree was saved, and the next build continues from it
    assert any("half-done" in (show(cfg, b, f"work/{card.id}.partial") or "") for b in _saved(cfg))
    # once the time has come, the next claim is the same rung, not the first
    _lapse(store, card.id)
    store.resume_tier("high")
    end = drive_one(cfg, store, store.get(card.id))
    assert [c[2] for c in calls(tmp_path)] == ["low", "high", "high"]
    assert end.outcome == "done", end
    done = store.get(card.id)
    assert not done.tries and not done.rung, done
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.partial"), "the resumed work was lost"
    store.close()


def _saved(cfg: config.Config) -> list[str]:
    from tests.support.loop import stranded_branches

    return stranded_branches(cfg)


def _lapse(store: SQLiteStore, card_id: str) -> None:
    """Move a card's not-before into the past, as time would."""
    from board.core.store import Expect

    card = store.get(card_id)
    store.update(card_id, Expect(version=card.version), {"not_before": "2020-01-01T00:00:00.000Z"})


def test_a_named_reset_pauses_the_tier_until_then_and_the_loop_goes_on_by_itself(
    tmp_path: Path,
) -> None:
    steps = [{"print": TRY_IN.format(s=3), "exit": 1, "card": "c-1"}, "edit"]
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": scripted(tmp_path, steps)},
        board={"max_concurrent": 1},
    )
    one = add_card(store, "one", surface=["work/**"], priority=0)
    two = add_card(store, "two", surface=["work/**"], priority=1)
    run_until_idle(cfg)
    assert store.get(one.id).lane == "done" and store.get(two.id).lane == "done"
    log = calls(tmp_path)
    assert log[0][1:] == [one.id, "exit", "1"], log
    first, second = _call_times(tmp_path)[:2]
    assert second - first >= 2.9, (
        f"a card of the paused tier was claimed {second - first:.1f}s later"
    )
    loop_log = (cfg.board_dir / "loop.log").read_text()
    assert "tier default is paused (rate-limit)" in loop_log
    assert '"event": "resume"' in loop_log
    assert not [e for e in events(store, one.id) if "climbing" in e]
    store.close()


def _call_times(tmp_path: Path) -> list[float]:
    return [float(x) for x in (tmp_path / "calls" / "times").read_text().split()]


def test_a_connection_reset_twice_then_success_is_done_on_the_same_rung(tmp_path: Path) -> None:
    steps = [{"print": RESET, "exit": 1}, {"print": RESET, "exit": 1}, "edit"]
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"low": scripted(tmp_path, steps, "low"), "high": scripted(tmp_path, steps, "high")},
        board={"max_concurrent": 1},
    )
    (cfg.root / "board.toml").write_text(
        (cfg.root / "board.toml").read_text().replace("max_backoff_s = 3600", "max_backoff_s = 0.3")
    )
    cfg = config.load(cfg.root)
    card = add_card(store, "flaky network", surface=["work/**"])
    run_until_idle(cfg)
    after = store.get(card.id)
    assert after.lane == "done", (after.lane, after.blocked)
    assert [c[2] for c in calls(tmp_path)] == ["low", "low", "low"], "a blip climbed the ladder"
    assert store.pauses() == [], "a blip paused the tier"
    store.close()


def test_an_expired_login_blocks_auth_pauses_the_tier_and_unblock_resumes_it(
    tmp_path: Path,
) -> None:
    steps = [{"print": EXPIRED, "exit": 1}, "edit"]
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": scripted(tmp_path, steps)},
        board={"max_concurrent": 1},
    )
    one = add_card(store, "one", surface=["work/**"], priority=0)
    two = add_card(store, "two", surface=["work/**"], priority=1)
    loop = Loop(cfg, store)
    loop.tick()
    loop.wait()
    blocked = store.get(one.id).blocked
    assert blocked is not None and blocked.cls == "auth", blocked
    assert "board unblock c-1" in blocked.reason and "board resume default" in blocked.reason
    (pause,) = store.pauses()
    assert (pause.tier, pause.cls, pause.until) == ("default", "auth", "")
    for _ in range(3):  # the other card of the tier is not burned on the dead login
        assert loop.tick() == []
    assert store.get(two.id).lane == "ready" and len(calls(tmp_path)) == 1
    status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
    assert [p["tier"] for p in status["paused"]] == ["default"]
    assert status["blocked"] == {"auth": 1}
    actions.unblock(store, one.id)  # the operator logged in again
    assert store.pauses() == []
    assert any("tier default resumed" in e for e in events(store, one.id))
    run_until_idle(cfg)
    assert store.get(one.id).lane == "done" and store.get(two.id).lane == "done"
    store.close()


def test_board_resume_lifts_a_pause_by_hand(tmp_path: Path) -> None:
    steps = [{"print": EXPIRED, "exit": 1}, "edit"]
    cfg, store = make_board(tmp_path, origin=True, tiers={"default": scripted(tmp_path, steps)})
    card = add_card(store, "one", surface=["work/**"])
    drive_one(cfg, store, card)
    assert [p.tier for p in store.pauses()] == ["default"]
    res = run_cli(cfg.root, "resume", "nope")
    assert res.returncode != 0 and "no tier 'nope'" in res.stderr
    assert [p.tier for p in store.pauses()] == ["default"], "a refused resume changed something"
    res = run_cli(cfg.root, "resume", "default")
    assert "tier default resumed" in res.stdout and store.pauses() == []
    store.close()


def test_spent_tries_stay_blocked_with_their_class_and_the_sweep_leaves_them(
    tmp_path: Path,
) -> None:
    cfg, store = make_board(
        tmp_path, origin=True, tiers={"default": scripted(tmp_path, [{"print": RESET, "exit": 1}])}
    )
    text = (
        (cfg.root / "board.toml").read_text().replace("max_backoff_s = 3600", "max_backoff_s = 0.2")
    )
    text += '\n[[failures.rules]]\npattern = "econnreset"\nclass = "transient"\nmax_attempts = 2\n'
    (cfg.root / "board.toml").write_text(text)
    cfg = config.load(cfg.root)
    card = add_card(store, "never connects", surface=["work/**"])
    run_until_idle(cfg)
    after = store.get(card.id)
    assert after.blocked is not None and after.blocked.cls == "transient", after.blocked
    assert "max_attempts (2) are spent" in after.blocked.reason
    assert len(calls(tmp_path)) == 3, "two back-offs, then the third failure blocks"
    for _ in range(3):
        Loop(cfg, store).sweep()
    again = store.get(card.id)
    assert again.blocked is not None and again.blocked.cls == "transient", "the sweep cleared it"
    told = [e for e in events(store, card.id) if "the operator is told" in e]
    assert len(told) == 1, told
    actions.unblock(store, card.id)  # the operator acts: the count starts over
    assert waits.tries(store.get(card.id), "transient") == 0
    store.close()


def test_a_gate_printing_connection_refused_stays_gate_red(tmp_path: Path) -> None:
    gate = tmp_path / "gate.sh"
    gate.write_text(
        "#!/bin/sh\necho 'E   ConnectionRefusedError: [Errno 111] Connection refused'\n"
        "echo 'FAILED tests/test_client.py::test_connect'\nexit 1\n"
    )
    gate.chmod(0o755)
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": scripted(tmp_path, ["edit"])},
        gate=[str(gate)],
        gate_opts={"retries": 0},
    )
    card = add_card(store, "client", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "blocked" and end.cls == "gate-red", end
    assert store.pauses() == []
    store.close()


def test_a_night_in_miniature_ends_with_every_card_done(tmp_path: Path) -> None:
    """20 cards, two tiers sharing one account; the 5th call hits the limit with a 5 s reset.
    Before the rules, that card climbed and (at the top) blocked `terminal`; now every card
    ends done with no operator."""
    limit = {"print": "You've hit your usage limit. Try again in 5 seconds.", "exit": 1}
    steps = ["edit"] * 4 + [limit] + ["edit"]
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={
            "fast": scripted(tmp_path, steps, "fast"),
            "strong": scripted(tmp_path, steps, "strong"),
        },
        board={"max_concurrent": 2},
    )
    cards = [add_card(store, f"card {n}", surface=[f"work/c-{n}.*"]) for n in range(1, 21)]
    run_until_idle(cfg, timeout=240)
    lanes = {c.id: store.get(c.id).lane for c in cards}
    assert set(lanes.values()) == {"done"}, lanes
    assert not [e for c in cards for e in events(store, c.id) if "terminal" in e]
    log = calls(tmp_path)
    assert [c for c in log if c[3] == "exit"] == [log[4]], "one limit hit, on the 5th call"
    assert {c[2] for c in log} == {"fast"}, "a rate limit climbed to the strong tier"
    times = _call_times(tmp_path)
    early = [t - times[4] for t in times[5:] if t - times[4] < 4.9]
    assert len(early) <= 1, (
        f"claimed during the pause (only a drive already started may call): {early}"
    )
    store.close()


def test_a_forge_rate_limit_on_the_pr_command_blocks_rate_limit_not_terminal(
    tmp_path: Path,
) -> None:
    pr = tmp_path / "pr.sh"
    # GitHub's API answers a spent limit with a 403 and this message (seen, e.g., in
    # https://github.com/mikepenz/release-changelog-builder-action/issues/948); gh prints
    # the status and the message
    pr.write_text(
        "#!/bin/sh\necho 'HTTP 403: API rate limit exceeded for user ID 66129609.' >&2\nexit 1\n"
    )
    pr.chmod(0o755)
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": scripted(tmp_path, ["edit"])},
        publish={"mode": "push", "pr_argv": [str(pr)]},
    )
    card = add_card(store, "via a PR", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "blocked" and end.cls == "rate-limit", end
    store.close()


def test_a_store_made_before_back_offs_is_migrated_when_opened(tmp_path: Path) -> None:
    """A version-1 store (no not_before, no pauses, no heartbeats) opens as version 2,
    its cards intact: an upgrade must not strand a board."""
    import sqlite3

    cfg, store = make_board(tmp_path, origin=True)
    card = add_card(store, "old card", surface=["work/**"])
    store.close()
    conn = sqlite3.connect(cfg.db_path)
    conn.executescript(
        "ALTER TABLE cards DROP COLUMN not_before; ALTER TABLE cards DROP COLUMN pr_state; "
        "ALTER TABLE cards DROP COLUMN pr_polled_at; DROP TABLE pauses; DROP TABLE loops; "
        "ALTER TABLE cards DROP COLUMN best_of; ALTER TABLE cards DROP COLUMN race; "
        "DROP INDEX cards_source; ALTER TABLE cards DROP COLUMN source; "
        "ALTER TABLE cards DROP COLUMN source_url; DROP TABLE notices; "
        + "".join(
            f"ALTER TABLE drives DROP COLUMN {c}; "
            for c, _kind in (*USAGE_COLUMNS, *CANDIDATE_COLUMNS)
        )
        + "UPDATE meta SET value = '1' WHERE key = 'schema';"
    )
    conn.close()
    store = SQLiteStore(cfg.db_path)
    assert store.get(card.id).title == "old card" and store.get(card.id).not_before == ""
    assert store.pauses() == [] and store.loops() == []
    (version,) = (
        sqlite3.connect(cfg.db_path)
        .execute("SELECT value FROM meta WHERE key = 'schema'")
        .fetchone()
    )
    assert version == str(SCHEMA_VERSION)  # migrated all the way, not only past back-offs
    store.close()


def test_board_status_names_the_loop_by_its_heartbeat(tmp_path: Path) -> None:
    cfg, store = make_board(tmp_path, origin=True)
    status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
    assert status["loop"] is None and status["drives"] == [] and status["paused"] == []
    assert status["lanes"]["ready"] == 0
    assert "loop: not running" in run_cli(cfg.root, "status").stdout
    loop = Loop(cfg, SQLiteStore(cfg.db_path))
    thread = threading.Thread(target=loop.run, daemon=True)
    thread.start()
    try:
        beat = wait_for(lambda: store.loops(), what="the loop's heartbeat")
        status = json.loads(run_cli(cfg.root, "status", "--json").stdout)
        assert status["loop"]["pid"] == beat[0].pid and status["loop"]["stale"] is False
        assert set(status["loop"]) >= {"pid", "host", "started_at", "heartbeat_at"}
    finally:
        loop.request_stop("test over")
        thread.join(30)
    assert store.loops() == [], "a clean stop left its heartbeat behind"
    store.close()
