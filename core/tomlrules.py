"""`[[failures.rules]]` as board.toml holds them, and where a key sits in the file.

tomllib gives no line numbers for values, and a refusal must name the file, the line and
the key; so the lines are found here, by reading the text. Kept apart from core/config/, which
reads every other key, so that neither grows past what one can read at once.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

from board.core.errors import ConfigError
from board.core.failures import CLASSES, DEFAULT_STEPS, STEPS, Rule

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

MAX_SECONDS = 365 * 24 * 3600


def line_of(text: str, section: list[str], key: str | None) -> int | None:
    """Best-effort line number of `key` inside `[section]` (tomllib gives none for values)."""
    header = ".".join(section)
    current = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        m = re.match(r"^\[+\s*([^\]]+?)\s*\]+", line)
        if m:
            current = m.group(1).replace('"', "").replace(" ", "")
            if key is None and current == header:
                return number
            continue
        if key is not None and current == header:
            m = re.match(r'^"?([A-Za-z0-9_\-]+)"?\s*=', line)
            if m and m.group(1) == key:
                return number
    return None


RULE_EXAMPLE = (
    "[[failures.rules]]",
    'pattern = "credit balance is too low"',
    'class = "auth"',
)
RULE_KEYS = ("pattern", "class", "steps", "exit_codes", "backoff_s", "max_attempts", "live")
RULE_DOC = (
    "[[failures.rules]]: pattern (a regex, any case), class (rate-limit, transient, auth, "
    "dispatch-infra), optional steps, exit_codes, backoff_s, max_attempts, live (matched on "
    "each line as the coder prints it, which stops it); checked before the defaults"
)


def parse_rules(path: Path, text: str, raw: Any) -> tuple[Rule, ...]:
    """`[[failures.rules]]`, in order; each refusal names the rule's own line."""
    if not isinstance(raw, list) or not all(isinstance(r, dict) for r in raw):
        line = line_of(text, ["failures"], "rules")
        where = f"{path}:{line}" if line else str(path)
        raise ConfigError(f"{where}: failures.rules: expected [[failures.rules]] tables")
    out = []
    for index, body in enumerate(raw):

        def fail(key: str | None, why: str, index: int = index) -> ConfigError:
            line = rule_line(text, index, key)
            where = f"{path}:{line}" if line else str(path)
            name = f"failures.rules[{index + 1}]" + (f".{key}" if key else "")
            return ConfigError(f"{where}: {name}: {why}")

        for key in body:
            if key not in RULE_KEYS:
                raise fail(key, f"unknown key (a rule has {', '.join(RULE_KEYS)})")
        pattern = body.get("pattern")
        if not isinstance(pattern, str) or not pattern.strip():
            raise fail("pattern" if "pattern" in body else None, "needs a pattern (a regex)")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise fail("pattern", f"not a valid regex: {exc}") from None
        cls = body.get("class")
        if cls not in CLASSES:
            raise fail(
                "class" if "class" in body else None,
                f"class must be one of {', '.join(CLASSES)}, got {cls!r}",
            )
        steps = body.get("steps", list(DEFAULT_STEPS))
        if (
            not isinstance(steps, list)
            or not steps
            or not all(isinstance(x, str) and x in STEPS for x in steps)
        ):
            raise fail("steps", f"must be a list of {', '.join(STEPS)}, got {steps!r}")
        codes = body.get("exit_codes", [])
        if not isinstance(codes, list) or not all(
            isinstance(c, int) and not isinstance(c, bool) for c in codes
        ):
            raise fail("exit_codes", f"must be a list of whole numbers, got {codes!r}")
        backoff = body.get("backoff_s", 60)
        if isinstance(backoff, bool) or not isinstance(backoff, (int, float)):
            raise fail("backoff_s", f"expected a number of seconds, got {backoff!r}")
        if not math.isfinite(backoff) or not 0 <= backoff <= MAX_SECONDS:
            raise fail("backoff_s", f"must be 0 to {MAX_SECONDS} seconds, got {backoff!r}")
        tries = body.get("max_attempts", 5)
        if isinstance(tries, bool) or not isinstance(tries, int) or tries < 1:
            raise fail("max_attempts", f"must be a whole number of at least 1, got {tries!r}")
        live = body.get("live", False)
        if not isinstance(live, bool):
            raise fail("live", f"expected true or false, got {live!r}")
        out.append(Rule(pattern, cls, tuple(steps), tuple(codes), float(backoff), tries, live))
    return tuple(out)


def rule_line(text: str, index: int, key: str | None) -> int | None:
    """The line of the `index`-th `[[failures.rules]]` (or of `key` inside it)."""
    seen = -1
    inside = False
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if line.startswith("["):
            inside = re.match(r"^\[\[\s*failures\s*\.\s*rules\s*\]\]", line) is not None
            if inside:
                seen += 1
                if seen == index and key is None:
                    return number
            continue
        if inside and seen == index and key is not None:
            m = re.match(r'^"?([A-Za-z0-9_\-]+)"?\s*=', line)
            if m and m.group(1) == key:
                return number
    return line_of(text, ["failures"], "rules")
