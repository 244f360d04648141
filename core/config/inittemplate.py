"""The text board.toml is written as: the file `board init` writes, the tables init adds,
docs/configuration.md's key table and core/config/sections.pyi, each made from KEYS."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from board.core.config.keyschema import (
    ANNOTATIONS,
    CONFIG_NAME,
    DEFAULT_TIER,
    KEYS,
    RULES,
    SECTION_NAMES,
    TIER_DOC,
    TIERS,
    USAGE_READERS,
)
from board.core.failures import Rule
from board.core.tomlrules import RULE_DOC, RULE_EXAMPLE

if TYPE_CHECKING:
    from typing import Any


def _toml(obj: dict[str, Any]) -> str:
    """TOML text of `obj`. tomli_w is imported here: only the verbs that write board.toml
    (init and its helpers) need it, and every verb loads this module."""
    import tomli_w  # only init writes TOML

    return tomli_w.dumps(obj)


def default_document() -> dict[str, Any]:
    """The full board.toml that `board init` writes, as data: every default spelled out."""
    doc: dict[str, Any] = {}
    for k in KEYS:
        if k.kind == RULES:  # none by default: the template shows an example as comments
            continue
        value = k.default
        doc.setdefault(k.section, {})[k.name] = _copy(value)
    return doc


def _copy(value: Any) -> Any:
    """A default's own copy (its lists and tables too): what init writes is never KEYS."""
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    return value


def template(overrides: dict[str, dict[str, Any]] | None = None) -> str:
    """The text `board init` writes: every key with its default (or override) and, above
    it, one comment line of what it means."""
    doc = default_document()
    for section, values in (overrides or {}).items():
        doc.setdefault(section, {}).update(values)
    out = [_HEADER.rstrip("\n"), ""]
    docs = {(k.section, k.name): k.doc for k in KEYS}
    for section, body in doc.items():
        plain = {key: v for key, v in body.items() if not isinstance(v, dict)}
        tables = {key: v for key, v in body.items() if isinstance(v, dict)}
        out.append(f"[{section}]")
        for key, value in plain.items():
            if (section, key) in docs:
                out.append(f"# {docs[(section, key)]}")
            out.append(_toml({key: value}).rstrip("\n"))
        if section == "failures":
            out += [f"# {RULE_DOC}", *(f"# {x}" for x in RULE_EXAMPLE)]
        out.append("")
        for key, value in tables.items():
            doc_line = docs.get((section, key)) or (TIER_DOC if key == "tiers" else "")
            if doc_line:
                out.append(f"# {doc_line}")
            out.append(_toml({section: {key: value}}).rstrip("\n"))
            if (section, key) == ("usage", "prices") and not value:
                out += [f"# {x}" for x in PRICE_EXAMPLE]
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def rules_text(rules: list[dict[str, Any]], comment: str = "") -> str:
    """`[[failures.rules]]` tables, as board.toml holds them."""
    head = f"# {comment}\n" if comment else ""
    return head + _toml({"failures": {"rules": rules}})


def tier_text(name: str, argv: list[str], comment: str = "", usage: str = "none") -> str:
    """One `[coder.tiers.NAME]` table, as board.toml holds it (`usage` written when the
    tier has a reader of what its agent spent)."""
    head = f"# {comment}\n" if comment else ""
    body: dict[str, Any] = {"argv": argv, **({"usage": usage} if usage != "none" else {})}
    return head + _toml({"coder": {"tiers": {name: body}}})


def rule_table(rule: Rule) -> dict[str, Any]:
    """A rule as its `[[failures.rules]]` table says it (what init writes for a preset)."""
    return {
        "pattern": rule.pattern,
        "class": rule.cls,
        "steps": list(rule.steps),
        "exit_codes": list(rule.exit_codes),
        "backoff_s": rule.backoff_s,
        "max_attempts": rule.max_attempts,
        **({"live": True} if rule.live else {}),
    }


def write_default(root: Path, overrides: dict[str, dict[str, Any]] | None = None) -> Path:
    """Write board.toml with every default, optionally overriding some keys."""
    path = root / CONFIG_NAME
    path.write_text(template(overrides), encoding="utf-8")
    return path


def _inline(value: Any) -> str:
    """A default as docs/configuration.md shows it, on one line (TOML's inline form)."""
    import json  # only the docs' table needs it

    return "{}" if isinstance(value, dict) else json.dumps(value)


def key_table() -> str:
    """docs/configuration.md's table of board.toml keys (tests/test_config.py keeps them equal)."""
    rows = ["| key | default | what it means |", "|---|---|---|"]
    for k in KEYS:
        if k.kind not in (TIERS, RULES):  # the tables have rows of their own, below
            rows.append(f"| `{k.section}.{k.name}` | `{_inline(k.default)}` | {k.doc} |")
    tier = _inline(list(DEFAULT_TIER))
    rows.append(f"| `coder.tiers.NAME.argv` | `{tier}` (tier `default`) | {TIER_DOC} |")
    rows.append("| `coder.tiers.NAME.timeout_s` | `0` | the tier's limit (0: `coder.timeout_s`) |")
    readers = ", ".join(USAGE_READERS)
    rows.append(
        f'| `coder.tiers.NAME.usage` | `"none"` | the reader of what its agent spent '
        f"({readers}; the presets set theirs) |"
    )
    where = 'the defaults (see "Failures that are not the card\'s fault")'
    rows.append(f"| `failures.rules` | {where} | {RULE_DOC} |")
    return "\n".join(rows) + "\n"


# a price as board.toml spells it; the figures are the operator's to look up, never ours
PRICE_EXAMPLE = (
    "e.g. (your provider's current prices for the model your agent names):",
    '[usage.prices."claude-sonnet-4-5"]',
    "input = 3.0",
    "output = 15.0",
    "cached_input = 0.3",
)

_HEADER = (
    "# board.toml: every key is shown with its default; a file holding only what\n"
    "# differs is valid too. Argv lists are never passed to a shell.\n\n"
)


def stub_text() -> str:
    """core/config/sections.pyi: the section records as the type checker reads them (it
    cannot run section_record), made from KEYS (tests/test_config.py keeps them equal)."""
    out = [
        "# Generated from KEYS (core/config/keyschema.py) by scripts/gendocs.py: do not edit.",
        "# The type checker's view of core/config/sections.py, whose classes are made at import.",
        "",
        "from board.core.config.keyschema import Tier",
        "from board.core.failures import Rule",
        "from board.core.model import Price",
        "from board.core.records import Frozen",
        "",
        "RECORDS: dict[str, type[Frozen]]",
    ]
    for section in SECTION_NAMES:
        keys = [k for k in KEYS if k.section == section]
        out += ["", f"class {section.capitalize()}Section(Frozen):"]
        out += [f"    {k.name}: {ANNOTATIONS[k.kind]}" for k in keys]
        out.append("    def __init__(")
        out.append("        self,")
        for k in keys:
            out.append(f"        {k.name}: {ANNOTATIONS[k.kind]} = ...,")
        out.append("    ) -> None: ...")
    return "\n".join(out) + "\n"
