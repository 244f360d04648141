"""Failures that are not the card's fault: an ordered rule table, a reset time, a back-off.

A coder that hits a usage limit at 2 a.m. exits non-zero like a coder that wrote bad code,
but a stronger model cannot clear a rate limit, and climbing the ladder over it burns the
whole queue into `terminal` blocks (docs/lifecycle.md, "Failures that are not the card's
fault"). So the tail of a failed step's output is matched against rules, first match wins:
user rules from `[[failures.rules]]` before the defaults below. Plain data and text, no I/O.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta, tzinfo

from board.core import liverules
from board.core.records import Frozen

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)

# random and zoneinfo are imported where a back-off or a named zone is computed: every verb
# reads board.toml, which makes the rules, and few ever classify a failure
if TYPE_CHECKING:
    import random

    from regex import Match, Pattern

# what a rule may classify a failure as: the self-healing pair, the operator's `auth`, and
# `dispatch-infra` (the coder refused the argv board.toml gives it: no card's fault)
CLASSES: tuple[str, ...] = ("rate-limit", "transient", "auth", "dispatch-infra")
# the classes that block the card and pause its tier until the operator acts
OPERATOR_CLASSES: frozenset[str] = frozenset({"auth", "dispatch-infra"})
STEPS: tuple[str, ...] = ("coder", "gate", "push", "pr")
# test output often says "timed out" or "403" about the code under test, so a rule looks at
# the gate's output only when it says so
DEFAULT_STEPS: tuple[str, ...] = ("coder", "push", "pr")
TAIL_CHARS = 8000  # how much of a failed step's output the rules see (its end)
LINE_CHARS = 2000  # how much of one line a live rule sees
JITTER = 0.2  # ± this share of a computed back-off, so drives that failed together spread out


class Rule(Frozen):
    """One row of the table: a case-insensitive regex over the output's tail, the class it
    means, the steps and exit codes it applies to, how long to wait and how often to try,
    and whether it is matched on each line as the coder prints it (`live`: the coder is
    stopped at once, since it would only wait, e.g. for a login in a browser).
    No __slots__: `regex` is cached in the instance dict."""

    pattern: str
    cls: str
    steps: tuple[str, ...] = DEFAULT_STEPS
    exit_codes: tuple[int, ...] = ()  # empty: any exit (aider exits 0 on a failed call)
    backoff_s: float = 60.0
    max_attempts: int = 5
    live: bool = False

    @functools.cached_property
    def regex(self) -> Pattern[str]:
        """The pattern compiled when a failure is first classified, not when the rule is
        made: every verb reads board.toml, which makes the rules, and most never classify
        (the defaults' alternations take milliseconds to compile). board.toml's own rules
        are checked as regexes when it is read (tomlrules.parse_rules). Compiled by the
        `regex` package, which matches under a time limit and lets other threads run."""
        import regex  # only classifying needs it

        return regex.compile(self.pattern, regex.IGNORECASE | regex.VERSION0)

    def search(self, text: str, concurrent: bool = True) -> Match[str] | None:
        """The rule's first match in `text`, or None; a rule that runs past RULE_TIMEOUT_S
        (a pattern that backtracks without end) is skipped from then on, and named once
        through `slow_rules`. `concurrent`: other threads run while it matches (a pattern
        of board.toml's may take its whole time limit)."""
        if self.pattern in _SLOW:
            return None
        try:
            return self.regex.search(text, timeout=RULE_TIMEOUT_S, concurrent=concurrent)
        except TimeoutError:
            if self.pattern not in _SLOW:  # set.add and list.append hold under the GIL
                _SLOW.add(self.pattern)
                _UNTOLD.append(self)
            return None

    def applies(self, step: str, exit_code: int | None) -> bool:
        if step not in self.steps:
            return False
        return not self.exit_codes or exit_code in self.exit_codes


# The defaults. Each pattern names what the agent CLIs and their APIs print; the messages
# they were written against are the rows of tests/test_failures.py, each with its source.
_STATUS = r"(?:error|status|code|http)\W{0,4}"  # a status code only where it reads as one
_RATE = (
    r"rate[ _-]?limit|" + _STATUS + r"429|\b429 too many|too many requests|quota|usage limit"
    r"|overloaded|capacity|resource[ _]exhausted|(?:hour|day|daily|week|weekly|session) limit"
    r"|hit your (?:usage |session )?limit|limiting requests"
)
_TRANSIENT = (
    r"connection (?:reset|refused|error|closed|failed)|econnreset|econnrefused|etimedout"
    r"|timed? ?out (?:while )?connecting|connect(?:ion)? timed? ?out|request timed out"
    r"|unable to connect|could not resolve host|getaddrinfo|enotfound|name or service not known"
    r"|temporar(?:il)?y unavailable|service unavailable|bad gateway|gateway time-?out"
    r"|" + _STATUS + r"50[234]\b|no healthy upstream|upstream connect error"
    r"|stream disconnected|network error|socket hang up|fetch failed|error sending request"
)
_AUTH = (
    _STATUS + r"40[13]\b|\b40[13] (?:unauthori[sz]ed|forbidden)|unauthori[sz]ed|permission_denied"
    r"|permission was denied|not logged in|log ?in required|please (?:run )?/login|run /login"
    r"|log ?in again|sign(?:ing)? in again|invalid (?:api[ _-]?key|x-api-key|authentication"
    r"|credentials)|(?:missing|check your) api[ _-]?key|api[ _-]?key (?:not valid|is invalid)"
    r"|authentication[ _](?:error|method)|authenticate you|no auth credentials|invalid_grant"
    r"|credentials are not valid|set an auth method"
    r"|(?:token|credentials?|session) (?:has |have )?expired|expired (?:token|credentials)"
    r"|no api keys? (?:were |was )?(?:provided|found|set)|open this url in your browser"
)
# an agent that waits for a human to log in (a browser, a key): matched as it prints, so the
# coder is stopped at once instead of at its timeout
_LOGIN_WAIT = (
    r"open (?:this|the following) url in your browser|finish (?:logging in )?in (?:the|your) "
    r"browser|waiting (?:up to \d+ \w+ )?for you to (?:finish|log ?in|sign ?in|authori[sz]e)"
    r"|no api keys? (?:were |was )?(?:provided|found|set)|please (?:run )?/login"
    r"|set an auth method|not logged in\W+please"
)
# the coder refused its own command line: the argv in board.toml is wrong (a flag renamed or
# dropped by the CLI), not the card. Each CLI's parser says it its own way: clap ("unexpected
# argument '--x' found", exit 2), commander ("unknown option '--x'"), yargs ("Unknown
# arguments: x"), argparse ("unrecognized arguments: --x", exit 2)
_USAGE = (
    r"unexpected argument '|unknown option '|unknown (?:arguments?|options?|flags?)\s*:"
    r"|unrecognized (?:arguments?|options?)\s*:|unrecognized option '|no such option\s*:"
    r"|invalid option -- |error: invalid value '.*' for '"
)
# an agent that waits for the network to come back (Codex, after its reconnects) would wait
# until its timeout: stopped at once, it backs off like any blip
_NETWORK_WAIT = r"reconnecting\W{0,6}waiting for network"
DEFAULT_RULES: tuple[Rule, ...] = (
    Rule(_LOGIN_WAIT, "auth", ("coder",), backoff_s=0, max_attempts=1, live=True),
    Rule(_NETWORK_WAIT, "transient", ("coder",), backoff_s=15, max_attempts=5, live=True),
    Rule(_RATE, "rate-limit", backoff_s=60, max_attempts=10),
    Rule(_AUTH, "auth", backoff_s=0, max_attempts=1),
    Rule(_USAGE, "dispatch-infra", ("coder",), (1, 2), backoff_s=0, max_attempts=1),
    Rule(_TRANSIENT, "transient", backoff_s=15, max_attempts=5),
)


RULE_TIMEOUT_S = 0.5  # the longest one rule may take over one output (a tail is 8000 chars)
_SLOW: set[str] = set()  # patterns that ran past it: skipped for the life of the process
_UNTOLD: list[Rule] = []


def slow_rules() -> list[Rule]:
    """The rules skipped since the last call, for the caller to name once."""
    told = []
    while _UNTOLD:
        told.append(_UNTOLD.pop(0))
    return told


class Failure(Frozen, slots=True):
    """A failed step classified: the rule that matched, and the line it matched in."""

    rule: Rule
    line: str

    @property
    def cls(self) -> str:
        return self.rule.cls


def classify_line(rules: Sequence[Rule], step: str, line: str) -> Failure | None:
    """The first `live` rule of `step` that matches one line as it is printed (the exit is
    not known yet, so a rule's exit codes are not asked). Every line a coder prints comes
    here: the default live rules are tried as one pattern (core/liverules.py)."""
    text = line[:LINE_CHARS]
    if TOGETHER:
        at = liverules.plan(rules, step, _DEFAULT_PATTERNS, RULE_TIMEOUT_S).first(text)
        found = rules[at] if at >= 0 else None
    else:  # each rule alone: what the plan is held equal to
        live = (r for r in rules if r.live and step in r.steps)
        found = next((r for r in live if r.search(text) is not None), None)
    return Failure(found, line.strip()[:300]) if found is not None else None


TOGETHER = True  # False: every live rule tried alone (tests/test_failures.py)
_DEFAULT_PATTERNS: frozenset[str] = frozenset(rule.pattern for rule in DEFAULT_RULES)


def classify(
    rules: Iterable[Rule], step: str, output: str, exit_code: int | None = None
) -> Failure | None:
    """The first rule that applies to `step` and matches the tail of `output`; None keeps
    today's behaviour (climb, then `terminal`)."""
    tail = output[-TAIL_CHARS:]
    for rule in rules:
        if not rule.applies(step, exit_code):
            continue
        m = rule.search(tail)
        if m is not None:
            start = tail.rfind("\n", 0, m.start()) + 1
            end = tail.find("\n", m.end())
            line = tail[start : end if end >= 0 else len(tail)].strip()
            return Failure(rule, line[:300])
    return None


# ---------------------------------------------------------------------------------------------
# when to try again

# The patterns below are compiled at first use (re's own cache), not at import: every verb
# reads board.toml, which imports this module, and few ever look for a reset time.
# "Retrying in 4 seconds… (attempt 4/10)" is the CLI's own back-off, not the server's word,
# so only "try again / retry / reset(s) / available in|after" name a time
_UNIT = r"(?:ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)"
_IN = (
    r"(?:try again|\bretry|resets?|available)\s+(?:in|after)\s+"
    r"(?P<parts>(?:\d+(?:\.\d+)?\s*" + _UNIT + r"\b[\s,]*(?:and\s+)?)+)"
)
_PART = r"(\d+(?:\.\d+)?)\s*(" + _UNIT + r")\b"
_COMPACT = (
    r"(?:try again|\bretry|resets?|available)\s+(?:in|after)\s+((?:\d+(?:\.\d+)?(?:ms|h|m|s))+)\b"
)
_RETRY_AFTER = r"retry[-_ ]after[\"']?\s*[:=]\s*[\"']?(\d+(?:\.\d+)?)"
_RESET_WORD = r"(?:try again|retry|resets?|reset_?at|resetsAt|available|until)\W{1,6}(?:at\W{1,3})?"
_ISO = (
    _RESET_WORD + r"(\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)"
)
# Claude Code's "usage limit reached|1755615600" and stream-json's "resetsAt":1774447200
_EPOCH = r"(?:\||" + _RESET_WORD + r")(1\d{9}|1\d{12})(?![\d.])"
_CLOCK = (
    r"(?:resets?|try again|available)\s+(?:at\s+)?"
    r"(?P<h>\d{1,2})(?::(?P<m>\d{2}))?\s*(?P<ap>am|pm)?(?:\s*\((?P<tz>[^)]+)\))?"
)


def _to_seconds(n: str, unit: str) -> float:
    u = unit.lower()
    if u.startswith(("ms", "milli")):
        return float(n) / 1000
    if u.startswith("d"):
        return float(n) * 86400
    if u.startswith("h"):
        return float(n) * 3600
    if u.startswith("m"):
        return float(n) * 60
    return float(n)


def _seconds_in(text: str) -> float | None:
    """ "try again in 1m 30s", "retry after 20 seconds", "resets in 5h", "in 1.5s"."""
    m = re.search(_IN, text, re.IGNORECASE)
    if m is not None:
        return sum(
            _to_seconds(n, unit) for n, unit in re.findall(_PART, m.group("parts"), re.IGNORECASE)
        )
    m = re.search(_RETRY_AFTER, text, re.IGNORECASE)
    if m is not None:
        return float(m.group(1))
    m = re.search(_COMPACT, text, re.IGNORECASE)  # Gemini's "reset after 8h44m7s"
    if m is not None:
        return sum(
            _to_seconds(n, unit) for n, unit in re.findall(r"(\d+(?:\.\d+)?)(ms|h|m|s)", m.group(1))
        )
    return None


def reset_at(text: str, now: datetime) -> datetime | None:
    """When the output says the limit lifts: "try again in 37s", `Retry-After: 120`, an
    epoch or ISO time after a reset word, "resets 3pm (Europe/Warsaw)". None when it names
    no time still ahead (a timestamp in a log line is not a reset)."""
    tail = text[-TAIL_CHARS:]
    secs = _seconds_in(tail)
    candidates = [now + timedelta(seconds=secs)] if secs is not None else []
    for m in re.finditer(_ISO, tail, re.IGNORECASE):
        try:
            at = datetime.fromisoformat(m.group(1).replace(" ", "T").replace("Z", "+00:00"))
        except ValueError:
            continue
        candidates.append(at if at.tzinfo else at.replace(tzinfo=UTC))
    for m in re.finditer(_EPOCH, tail, re.IGNORECASE):
        value = int(m.group(1))
        candidates.append(datetime.fromtimestamp(value / 1000 if value > 10**11 else value, UTC))
    clock = _clock_time(tail, now)
    if clock is not None:
        candidates.append(clock)
    return next((at for at in candidates if at > now), None)


def _clock_time(text: str, now: datetime) -> datetime | None:
    """ "resets 3pm", "reset at 5pm (Europe/Warsaw)", "resets 3:30am (Asia/Calcutta)": the
    next such time after `now`, in the zone named (UTC when none is, or it is unknown)."""
    m = re.search(_CLOCK, text, re.IGNORECASE)
    if m is None:
        return None
    hour = int(m.group("h"))
    minute = int(m.group("m") or 0)
    ap = (m.group("ap") or "").lower()
    if not ap and m.group("m") is None:
        return None  # a bare number is not a clock time
    if ap == "pm" and hour < 12:
        hour += 12
    if ap == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    zone: tzinfo = UTC
    if m.group("tz"):
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError  # only a reset named with its zone

        try:
            zone = ZoneInfo(m.group("tz").strip())
        except (ZoneInfoNotFoundError, ValueError):
            zone = UTC
    local = now.astimezone(zone)
    at = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if at <= local:
        at += timedelta(days=1)
    return at.astimezone(UTC)


def backoff(rule: Rule, n: int, cap: float, rng: random.Random | None = None) -> float:
    """The n-th wait (n from 1) with no reset named: `backoff_s` doubled each time, ± jitter,
    capped at `cap` (which wins over everything)."""
    base = max(rule.backoff_s, 0.0) * math.pow(2, max(n - 1, 0))
    import random  # only a back-off draws its jitter

    r = (rng or random).uniform(-JITTER, JITTER)
    return max(0.0, min(cap, base * (1 + r)))


def wait_until(
    rule: Rule, output: str, n: int, now: datetime, cap: float, rng: random.Random | None = None
) -> datetime:
    """When to try again: the reset the output names (at most `cap` away), else the back-off."""
    named = reset_at(output, now)
    if named is not None:
        return min(named, now + timedelta(seconds=cap))
    return now + timedelta(seconds=backoff(rule, n, cap, rng))


def stamp(at: datetime) -> str:
    """ISO UTC with milliseconds, as the store writes its times (sortable as text)."""
    at = at.astimezone(UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond // 1000:03d}Z"


def parse_stamp(text: str) -> datetime | None:
    if not text:
        return None
    try:
        at = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return at if at.tzinfo else at.replace(tzinfo=UTC)


def limit_for(rules: Sequence[Rule], cls: str, default: int) -> int:
    """How many tries a class gets per card: the first rule of that class says; a class no
    rule produces (merge-conflict, a drive's internal error) has `default` (self_heal_max)."""
    for rule in rules:
        if rule.cls == cls:
            return rule.max_attempts
    return default
