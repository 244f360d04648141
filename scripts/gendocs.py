"""The docs' generated blocks, made from the code that holds them, and the mkdocs hook that
refuses a stale one.

A table the code already keeps (board.toml's keys in `core/config/keyschema.py` `KEYS`, the coder
presets in `core/presets.py`, the TUI's keys in its `BINDINGS`) is written into its page
by this script, between `<!-- NAME: generated … -->` and `<!-- /NAME -->`, never by hand:
a table copied by hand drifts from the code within a week.

    .venv/bin/python scripts/gendocs.py           # rewrite every block in docs/
    .venv/bin/python scripts/gendocs.py --check   # exit 1 naming each stale block

It also writes core/config/sections.pyi, the type checker's view of the section records
that core/config/sections.py makes from KEYS at import (tests/test_config.py keeps it equal).

mkdocs.yml lists this file under `hooks`, so `mkdocs build` (and tests/test_docs.py, which
runs it) fails on a stale block too. It only reads the code it imports.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def config_keys() -> str:
    """Every board.toml key with its default and its meaning (core/config/keyschema.py KEYS)."""
    from board.core import config

    return config.key_table()


def coder_presets() -> str:
    """Each coder preset as `board init --coder NAME` writes it (core/presets.py)."""
    from board.core import presets

    return presets.readme_block()


def _key_shown(key: str) -> str:
    """One key as the help screen shows it: `?` for question_mark, `ctrl+p`, `enter`."""
    from textual.binding import Binding
    from textual.keys import format_key

    modifiers, name = Binding(key, "").parse_key()
    shown = format_key(name)
    shown = {"⏎": "enter"}.get(shown, shown)
    return "+".join([*modifiers, shown])


def _cell(text: str) -> str:
    """Text in a table cell: a `|` escaped, or it would end the cell."""
    return text.replace("|", "\\|")


def _code(text: str) -> str:
    """Code in a table cell. A `|` is written as an HTML entity: Python-Markdown keeps the
    backslash of `\\|` inside a code span."""
    return f"<code>{text.replace('|', '&#124;')}</code>" if "|" in text else f"`{text}`"


def _binding_rows(classes: list[Any]) -> list[str]:
    from board.tui.app import class_bindings  # its own and its board ancestors', as the app sees

    rows = ["| keys | id | what | more |", "|---|---|---|---|"]
    seen: set[str] = set()
    for cls in classes:
        for b in class_bindings(cls):
            ident = b.id or b.action
            if ident in seen:
                continue
            seen.add(ident)
            keys = " ".join(_code(_key_shown(k)) for k in b.key.split(","))
            what = _cell(b.description) if b.description else "—"
            rows.append(f"| {keys} | `{ident}` | {what} | {_cell(b.tooltip or '')} |")
    return rows


def tui_keys() -> str:
    """Every binding of `board tui`, screen by screen (the groups the keymap check uses),
    with the id `[tui.keys]` rebinds it by."""
    from board.tui.app import BoardApp, group_classes

    out = ["### Every screen", "", *_binding_rows([BoardApp])]
    for group, classes in group_classes().items():
        own = [cls for cls in classes if cls is not BoardApp]
        out += ["", f"### The {group} screen", "", *_binding_rows(own)]
    return "\n".join(out) + "\n"


# marker → (the page under docs/ that holds it, what makes it)
BLOCKS: dict[str, tuple[str, Callable[[], str]]] = {
    "keys": ("configuration.md", config_keys),
    "presets": ("agents.md", coder_presets),
    "bindings": ("operator.md", tui_keys),
}


def section_stubs() -> str:
    """core/config/sections.pyi: each section record's fields, from KEYS."""
    from board.core import config

    return config.stub_text()


# a file under the repository made whole from the code: its path → what makes it
FILES: dict[str, Callable[[], str]] = {"core/config/sections.pyi": section_stubs}


def file_problems(write: bool = False) -> list[str]:
    """One line per generated file that differs from what the code makes (rewritten with
    `write`)."""
    found = []
    for name, make in FILES.items():
        path = ROOT / name
        want = make()
        if path.is_file() and path.read_text(encoding="utf-8") == want:
            continue
        if write:
            path.write_text(want, encoding="utf-8")
        else:
            found.append(f"{name} is out of date (run .venv/bin/python scripts/gendocs.py)")
    return found


def _span(text: str, marker: str) -> tuple[int, int] | None:
    """Where the block's body starts (after its opening marker's line) and ends."""
    start = text.find(f"<!-- {marker}:")
    end = text.find(f"<!-- /{marker} -->")
    if start < 0 or end < 0:
        return None
    body = text.index("\n", start) + 1
    return (body, end) if body <= end else None


def problems(docs: Path = DOCS, write: bool = False) -> list[str]:
    """One line per block that is missing or differs from what the code makes; with
    `write`, a block that differs is rewritten instead (a missing one is still named)."""
    found = []
    for marker, (page, make) in BLOCKS.items():
        path = docs / page
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        span = _span(text, marker)
        if span is None:
            found.append(f"docs/{page}: no <!-- {marker}: … --> … <!-- /{marker} --> block")
            continue
        want = make()
        if text[span[0] : span[1]] == want:
            continue
        if write:
            path.write_text(text[: span[0]] + want + text[span[1] :], encoding="utf-8")
        else:
            found.append(
                f"docs/{page}: the {marker} block is out of date "
                "(run .venv/bin/python scripts/gendocs.py)"
            )
    return found


def on_pre_build(config: Any) -> None:
    """mkdocs hook: refuse to build from a stale generated block."""
    from mkdocs.exceptions import PluginError

    stale = problems(Path(config["docs_dir"]))
    if stale:
        raise PluginError("\n".join(stale))


def main(argv: list[str]) -> int:
    check = "--check" in argv
    found = problems(write=not check) + file_problems(write=not check)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
