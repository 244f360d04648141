"""Pull requests follow the forge: merged → done, closed → blocked, changes requested →
requeue, green → merge (opt-in).

With `publish.mode = "push"` a card waits in `review` once its PR opens; on a board of
fifty cards nobody notices each merge and types `board done`, and dependents wait on a PR
that merged hours ago. So the loop polls each PR (`publish.pr_state_argv`, e.g. `gh pr
view {branch} --json …`, no shell, a timeout, its own process group) and drives the edge
itself. It reads `gh pr view --json`'s field names; a field that is missing is unknown,
never green. A forge call that fails goes through the failure rules and never blocks a
card (docs/lifecycle.md, "Pull requests").
"""

from __future__ import annotations

import json
from typing import Any

from board.core import failures, proc
from board.core.cards import actions, waits
from board.core.config import Config
from board.core.errors import BoardError
from board.core.git import gitutil
from board.core.model import Blocked, Card
from board.core.records import Frozen, Record, field
from board.core.store import Expect, Store

WHO = "board"
HOLD_LABEL = "merge-hold"
GREEN = {"SUCCESS", "NEUTRAL", "SKIPPED"}
RED = {"FAILURE", "TIMED_OUT", "CANCELLED", "ACTION_REQUIRED", "ERROR", "STARTUP_FAILURE"}


class Check(Frozen):
    name: str
    verdict: str  # its conclusion, or its state while it has none


class Review(Frozen):
    state: str
    body: str
    author: str = ""


class PrState(Frozen):
    """What the state command said, by `gh pr view --json`'s names; '' is unknown."""

    state: str = ""
    merged_at: str = ""
    merge_commit: str = ""
    mergeable: str = ""
    checks: tuple[Check, ...] | None = None  # None: the field was missing (unknown)
    review_decision: str = ""
    reviews: tuple[Review, ...] = ()
    url: str = ""

    def checks_green(self) -> tuple[bool, str]:
        """(all green, the first check that is red or not finished); no checks field, or
        an empty one, is not green: unknown is never taken for green."""
        if not self.checks:
            return False, "no checks reported"
        for check in self.checks:
            if check.verdict not in GREEN:
                return False, check.name
        return True, ""

    def failed_check(self) -> str:
        for check in self.checks or ():
            if check.verdict in RED:
                return check.name
        return ""


MAX_STATE_BYTES = 4 * 1024 * 1024  # a PR's state is a few KB; more is not an answer
# an answer that cannot be read backs polling off as a blip would (capped by max_backoff_s)
UNREADABLE = failures.Rule("unreadable", "transient", ("pr",), (), 60, 5)


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _author(value: Any) -> str:
    return _text(value.get("login")) if isinstance(value, dict) else ""


def parse_state(text: str) -> PrState:
    """Read the state command's JSON; ValueError names what is wrong. A forge's output is
    input: past MAX_STATE_BYTES, or nested past what the parser can follow (a RecursionError
    killed the poll thread), it is refused like any other bad answer."""
    if len(text) > MAX_STATE_BYTES:
        raise ValueError(
            f"the PR state command printed {len(text)} characters, over {MAX_STATE_BYTES}"
        )
    try:
        data = json.loads(text)
    except RecursionError:
        raise ValueError("the PR state command printed JSON nested too deep to read") from None
    except ValueError as exc:
        raise ValueError(f"the PR state command printed no JSON object ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError("the PR state command printed JSON that is not an object")
    checks: tuple[Check, ...] | None = None
    rollup = data.get("statusCheckRollup")
    if isinstance(rollup, list):
        checks = tuple(
            Check(
                _text(c.get("name")) or _text(c.get("context")) or "a check",
                (_text(c.get("conclusion")) or _text(c.get("state")) or "PENDING").upper(),
            )
            for c in rollup
            if isinstance(c, dict)
        )
    raw_reviews = data.get("reviews")
    reviews = tuple(
        Review(_text(r.get("state")).upper(), _text(r.get("body")), _author(r.get("author")))
        for r in (raw_reviews if isinstance(raw_reviews, list) else [])
        if isinstance(r, dict)
    )
    merge_commit = data.get("mergeCommit")
    return PrState(
        state=_text(data.get("state")).upper(),
        merged_at=_text(data.get("mergedAt")),
        merge_commit=_text(merge_commit.get("oid")) if isinstance(merge_commit, dict) else "",
        mergeable=_text(data.get("mergeable")).upper(),
        checks=checks,
        review_decision=_text(data.get("reviewDecision")).upper(),
        reviews=reviews,
        url=_text(data.get("url")),
    )


class Poll(Record):
    """What one poll of one card did, for the loop's log."""

    card: str
    outcome: str  # merged | closed | changes-requested | merge-ran | red | open | failed | moved
    line: str
    failure: failures.Failure | None = None
    merged: bool = False
    details: dict[str, Any] = field(default_factory=dict)


def argv_for(cfg: Config, argv: tuple[str, ...], card: Card) -> list[str]:
    return gitutil.argv_with(
        argv,
        branch=card.branch,
        base=cfg.board.base,
        pr_url=card.pr_url,
        merge_method=cfg.publish.merge_method,
    )


def _run(cfg: Config, argv: list[str], card: Card) -> proc.Result:
    env = {"BOARD_CARD": card.id, "BOARD_BRANCH": card.branch, "BOARD_BASE": cfg.board.base}
    return proc.run(argv, cwd=cfg.root, timeout=cfg.publish.timeout_s, env=env)


def _failed(cfg: Config, card: Card, what: str, res: proc.Result) -> Poll:
    tail = (res.stdout + "\n" + res.stderr).strip()
    if res.timed_out:
        why = f"timed out after {cfg.publish.timeout_s:g}s and was killed"
    elif res.missing:
        why = "could not be started"
    else:
        why = f"exited {res.returncode}"
    line = f"{what} for {card.id} {why}: {tail.splitlines()[-1] if tail else '(no output)'}"
    found = failures.classify(cfg.failures.rules, "pr", tail, res.returncode)
    return Poll(card.id, "failed", line, failure=found)


def poll(cfg: Config, store: Store, card: Card) -> Poll:
    """Ask the forge about one card in review and take the edge it says; a card moved
    meanwhile is left alone (every write expects `review` and the version read)."""
    res = _run(cfg, argv_for(cfg, cfg.publish.pr_state_argv, card), card)
    if not res.ok:
        return _failed(cfg, card, "the PR state command", res)
    try:
        state = parse_state(res.stdout)
    except ValueError as exc:
        line = f"{card.id}: {exc}"
        return Poll(card.id, "failed", line, failure=failures.Failure(UNREADABLE, line))
    stamp = failures.stamp(waits.now())
    try:
        card = store.update(
            card.id,
            Expect(lane="review", version=card.version),
            {"pr_state": state.state or "UNKNOWN", "pr_polled_at": stamp},
            WHO,
        )
    except BoardError as exc:
        return Poll(card.id, "moved", exc.line())
    if state.state == "MERGED":
        oid = state.merge_commit
        reason = f"its PR merged on the forge{f' as {oid}' if oid else ''} ({card.pr_url})"
        actions.done(store, cfg, card.id, who=WHO, reason=reason)
        return Poll(card.id, "merged", reason, merged=True, details={"merge_commit": oid})
    if state.state == "CLOSED":
        reason = (
            f"its PR was closed without a merge ({card.pr_url}); the branch {card.branch} and "
            "its trees are kept: reopen it and `board unblock`, or `board requeue` to rebuild"
        )
        store.update(
            card.id,
            Expect(lane="review", version=card.version),
            {"blocked": Blocked("pr-closed", reason), "lane": "ready"},
            WHO,
        )
        return Poll(card.id, "closed", reason)
    asked = [r for r in state.reviews if r.state == "CHANGES_REQUESTED"]
    seen = card.reviews_seen  # how many had been acted on (a requeue each)
    if state.review_decision == "CHANGES_REQUESTED" and len(asked) > seen:
        text = "\n\n".join(
            f"{r.author or 'a reviewer'} asked for changes:\n{r.body or '(no text)'}"
            for r in asked[seen:]
        )
        store.update(
            card.id,
            Expect(lane="review", version=card.version),
            {"reviews_seen": len(asked)},
            WHO,
        )
        actions.requeue(store, card.id, reason=f"review on {card.pr_url}:\n\n{text}", who=WHO)
        return Poll(card.id, "changes-requested", f"changes requested on {card.pr_url}")
    if cfg.publish.auto_merge:
        return _auto_merge(cfg, store, card, state)
    green, waiting = state.checks_green()
    return Poll(card.id, "open", f"open; checks {'green' if green else 'not green: ' + waiting}")


def _auto_merge(cfg: Config, store: Store, card: Card, state: PrState) -> Poll:
    red = state.failed_check()
    if red:
        reason = (
            f"the check {red!r} failed on {card.pr_url}; with auto_merge on, a red check "
            "blocks the card: fix it, push, and `board unblock`"
        )
        store.update(
            card.id,
            Expect(lane="review", version=card.version),
            {"blocked": Blocked("gate-red", reason)},
            WHO,
        )
        return Poll(card.id, "red", reason)
    green, waiting = state.checks_green()
    if HOLD_LABEL in card.labels:
        return Poll(card.id, "open", f"not merged: it has the {HOLD_LABEL} label")
    if not green:
        return Poll(card.id, "open", f"not merged: checks not all green ({waiting})")
    if state.mergeable != "MERGEABLE":
        return Poll(card.id, "open", f"not merged: mergeable is {state.mergeable or 'unknown'}")
    res = _run(cfg, argv_for(cfg, cfg.publish.merge_argv, card), card)
    if not res.ok:
        return _failed(cfg, card, "the merge command", res)
    store.add_event(card.id, f"merged by the board (auto_merge, {cfg.publish.merge_method})", WHO)
    return Poll(card.id, "merge-ran", "the merge command ran; the next poll sees the merge")


def fetch_base(cfg: Config) -> proc.Result:
    """`git fetch <remote> <base>` with a timeout: in push mode trees start from
    `<remote>/<base>`, which only a fetch brings up to date (a dependency's merge)."""
    return gitutil.git(
        cfg.root,
        "fetch",
        "--quiet",
        cfg.publish.remote,
        f"+refs/heads/{cfg.board.base}:refs/remotes/{cfg.publish.remote}/{cfg.board.base}",
        check=False,
        timeout=cfg.publish.timeout_s,
    )
