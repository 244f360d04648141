"""board.toml: its schema (keyschema.py: KEYS, Key, Tier, and sections.py: one record per
section made from KEYS), its reading (tomlread.py: into a Config, or a ConfigError naming
file, line and key) and its text (inittemplate.py: the file `board init` writes, the docs'
key table). `from board.core.config import Config, load` reads as it always did."""

from __future__ import annotations

from board.core.config.boardconfig import Config
from board.core.config.keyschema import (
    BOARD_DIR,
    CONFIG_NAME,
    DEFAULT_TIER,
    KEYS,
    MIN_INTERVAL_S,
    SCHEMA,
    SECTION_NAMES,
    TIER_DOC,
    TIER_KEYS,
    Key,
    Tier,
    attr_of,
)
from board.core.config.sections import RECORDS
from board.core.config.tomlread import bad_branch_name, load, parse
from board.core.errors import ConfigError  # what load and parse raise

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

    from board.core.config.inittemplate import (
        default_document,
        key_table,
        rule_table,
        rules_text,
        stub_text,
        template,
        tier_text,
        write_default,
    )
    from board.core.config.sections import (
        BoardSection,
        BudgetSection,
        CoderSection,
        FailuresSection,
        GateSection,
        ImportSection,
        PlannerSection,
        PublishSection,
        StoreSection,
        TreeSection,
        TuiSection,
    )
else:  # the records are made at import (sections.py); named here as the type checker names them
    globals().update({record.__name__: record for record in RECORDS.values()})

# board.toml's text is for `board init` and the docs: its module is imported when one of
# these is first asked for, not at every verb's start
_TEXT = frozenset(
    (
        "default_document",
        "key_table",
        "rule_table",
        "rules_text",
        "stub_text",
        "template",
        "tier_text",
        "write_default",
    )
)


def __getattr__(name: str) -> Any:
    if name in _TEXT:
        from board.core.config import inittemplate  # the template is for init, not every verb

        return getattr(inittemplate, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BOARD_DIR",
    "CONFIG_NAME",
    "DEFAULT_TIER",
    "KEYS",
    "MIN_INTERVAL_S",
    "RECORDS",
    "SCHEMA",
    "SECTION_NAMES",
    "TIER_DOC",
    "TIER_KEYS",
    "BoardSection",
    "BudgetSection",
    "CoderSection",
    "Config",
    "ConfigError",
    "FailuresSection",
    "GateSection",
    "ImportSection",
    "Key",
    "PlannerSection",
    "PublishSection",
    "StoreSection",
    "Tier",
    "TreeSection",
    "TuiSection",
    "attr_of",
    "bad_branch_name",
    "default_document",
    "key_table",
    "load",
    "parse",
    "rule_table",
    "rules_text",
    "stub_text",
    "template",
    "tier_text",
    "write_default",
]
