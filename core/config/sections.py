"""One record per board.toml section (`cfg.board`, `cfg.coder`, `cfg.gate` …), each made
from KEYS by core/config/keyschema.py: a key's name is its field, written nowhere else.

A function that needs one section takes that section's record (the gate runner a
GateSection, publishing a PublishSection); core/config/sections.pyi tells the type checker
their fields, and is generated from KEYS too (scripts/gendocs.py; tests/test_config.py keeps
it equal).
"""

from __future__ import annotations

from board.core.config.keyschema import SECTION_NAMES, section_record

RECORDS = {name: section_record(name) for name in SECTION_NAMES}  # by section, in KEYS' order
globals().update({record.__name__: record for record in RECORDS.values()})
