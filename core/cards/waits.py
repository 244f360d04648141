"""Why a ready card is not claimed yet: its own back-off, its tier's pause, its retry count.

A failure that is not the card's fault (docs/lifecycle.md, "Failures that are not the
card's fault") sends the card back to `ready` with a not-before time, and a rate limit or
a dead login pauses its tier board-wide: drives share one account, so the next card of
that tier would only hit the same wall. The claim, `board status` and the card screen all
ask here, so they say the same thing.

The count of tries is one per card and class (`tries:<class>=N`, a label, so a restart
does not refund it), shared by the drive's back-offs and the sweep's self-healing; the
rung a back-off left the card on is a label too (`rung=<tier>`), so the retry is the same
rung and not a climb. The operator's unblock or requeue clears both.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

from board.core.config import Config
from board.core.failures import parse_stamp
from board.core.model import Card, Pause
from board.core.store import Store

TRIES_LABEL = "tries:"
RUNG_LABEL = "rung="


def now() -> datetime:
    return datetime.now(UTC)


def tries(card: Card, cls: str) -> int:
    """How often this card has already failed (or been healed) with class `cls`."""
    raw = card.label_value(f"{TRIES_LABEL}{cls}=")
    try:
        return max(0, int(raw)) if raw is not None else 0
    except ValueError:
        return 0


def with_tries(labels: Sequence[str], cls: str, n: int) -> tuple[str, ...]:
    key = f"{TRIES_LABEL}{cls}="
    return (*(x for x in labels if not x.startswith(key)), f"{key}{n}")


def wait_class(card: Card) -> str:
    """The class a waiting card backed off for: the one it has tries of (a rate limit
    first, since it is the one that pauses a tier); '' when it has none."""
    have = [
        x[len(TRIES_LABEL) :].split("=", 1)[0] for x in card.labels if x.startswith(TRIES_LABEL)
    ]
    for cls in ("rate-limit", "transient", *have):
        if cls in have:
            return cls
    return ""


def rung(cfg: Config, card: Card) -> str:
    """The tier the card's next build starts on: the rung a back-off left it on, else the
    ladder's first (a rung no longer in the ladder counts as the first)."""
    tier = card.label_value(RUNG_LABEL)
    return tier if tier in cfg.ladder else cfg.ladder[0]


def with_rung(cfg: Config, labels: Sequence[str], tier: str) -> tuple[str, ...]:
    rest = tuple(x for x in labels if not x.startswith(RUNG_LABEL))
    return rest if tier == cfg.ladder[0] else (*rest, f"{RUNG_LABEL}{tier}")


def cleared(labels: Sequence[str]) -> tuple[str, ...]:
    """The labels without the counts and the rung: what the operator's unblock, requeue or
    a published build leaves."""
    return tuple(x for x in labels if not x.startswith((TRIES_LABEL, RUNG_LABEL)))


def active_pause(pauses: Sequence[Pause], tier: str, at: datetime | None = None) -> Pause | None:
    """The tier's pause if it still holds at `at` (no `until`: until the operator acts)."""
    at = at or now()
    for pause in pauses:
        if pause.tier != tier:
            continue
        until = parse_stamp(pause.until)
        if not pause.until or (until is not None and until > at):
            return pause
    return None


def not_before(card: Card, at: datetime | None = None) -> datetime | None:
    """The card's own not-before time if it is still in the future."""
    when = parse_stamp(card.not_before)
    if when is None or when <= (at or now()):
        return None
    return when


def waiting(cfg: Config, store: Store, card: Card, pauses: Sequence[Pause] | None = None) -> str:
    """Why a ready, unblocked card is not claimable yet for a back-off or a pause; '' if not."""
    at = now()
    when = not_before(card, at)
    if when is not None:
        return f"not before {card.not_before} (a retry after a failure that was not its own)"
    tier = rung(cfg, card)
    pause = active_pause(store.pauses() if pauses is None else pauses, tier, at)
    if pause is not None:
        until = f"until {pause.until}" if pause.until else "until the operator acts"
        return f"tier {tier} is paused ({pause.cls}) {until}: {pause.reason}"
    return ""


def resume_tiers_of(store: Store, card: Card) -> list[str]:
    """The operator unblocked an `auth` card: the login is taken to be fixed, so the auth
    pause of its tier (the tier of its last drive, or the pause it caused) lifts.
    Returns the tiers resumed."""
    drives = store.list_drives(card.id, limit=1)
    last = drives[0].tier if drives else ""
    tiers = {p.tier for p in store.pauses() if p.cls == "auth" and p.card == card.id}
    tiers |= {p.tier for p in store.pauses() if p.cls == "auth" and p.tier == last}
    return [tier for tier in sorted(tiers) if store.resume_tier(tier, "auth")]
