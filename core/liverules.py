"""The live failure rules over a coder's every line, the default ones as one pattern: a speed
trick, fenced here.

Why: every line a coder prints is matched against the `live` failure rules
(core/failures.py, `classify_line`), 1,000 lines a second at 100 drives, and nearly none
matches. Tried one by one, the two default live rules were two searches a line, each
letting the interpreter go and taking it back: 40 µs of the loop's CPU a line at that load,
a tenth of the loop's CPU for the lines (bench_fleet's per-function figures,
docs/performance.md). Here the default live rules are one pattern that holds the
interpreter while it runs (they are ours, and quick on a line of LINE_CHARS): 26 µs. Only on
a hit are they tried one by one, in order.

What it keeps of trying each rule alone (tests/test_failures.py holds it to it, through
`failures.TOGETHER`): the first live rule of the step that matches, in the table's order,
with board.toml's own live rules before and among the defaults; board.toml's rules are still
tried alone, letting other threads run, under their time limit.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any, Protocol

    class LiveRule(Protocol):
        """What a rule of core/failures.py offers here (that module imports this one)."""

        @property
        def pattern(self) -> str: ...
        @property
        def live(self) -> bool: ...
        @property
        def steps(self) -> tuple[str, ...]: ...
        def search(self, text: str, concurrent: bool = True) -> Any: ...


class Plan:
    """One table's live rules of one step, and the defaults among them as one pattern."""

    def __init__(
        self, rules: Sequence[LiveRule], step: str, ours: frozenset[str], timeout: float
    ) -> None:
        self.rules = rules  # kept: the cache below is keyed by its identity
        # (where in `rules`, the rule): the caller gets its own rule back by the index
        self.live = tuple((i, r) for i, r in enumerate(rules) if r.live and step in r.steps)
        self.ours = ours
        self.timeout = timeout
        patterns = list(dict.fromkeys(r.pattern for _, r in self.live if r.pattern in ours))
        self.together = None
        if len(patterns) > 1:
            import regex  # as failures.Rule.regex

            self.together = regex.compile(
                "|".join(f"(?:{p})" for p in patterns), regex.IGNORECASE | regex.VERSION0
            )

    def first(self, text: str) -> int:
        """Where in the rules the first live rule that matches `text` (already cut to
        LINE_CHARS) is; -1 when none does."""
        hit: bool | None = None  # the defaults' one pattern, asked at the first default rule
        for i, rule in self.live:
            if rule.pattern in self.ours:
                if hit is None:
                    hit = self._any_of_ours(text)
                if not hit:
                    continue
                found = rule.search(text, concurrent=False)
            else:
                found = rule.search(text)
            if found is not None:
                return i
        return -1

    def _any_of_ours(self, text: str) -> bool:
        """Whether a default live rule may match; past the time limit (which a line of
        LINE_CHARS does not reach) the answer is yes, and each rule is tried alone."""
        if self.together is None:
            return True
        try:
            return self.together.search(text, timeout=self.timeout) is not None
        except TimeoutError:
            return True


# by the rules' identity: board.toml's rules are one tuple for the life of its Config, and
# hashing six rules a line would cost what is saved
_PLANS: dict[tuple[int, str], Plan] = {}


def plan(rules: Sequence[LiveRule], step: str, ours: frozenset[str], timeout: float) -> Plan:
    """The plan of `rules` for `step`, made once per table."""
    known = _PLANS.get((id(rules), step))
    if known is not None and known.rules is rules:
        return known
    made = Plan(rules, step, ours, timeout)
    if len(_PLANS) > 64:  # tables made and dropped (tests, a board.toml read again)
        _PLANS.clear()
    _PLANS[(id(rules), step)] = made
    return made
