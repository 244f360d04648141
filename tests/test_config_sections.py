"""A function takes the section of board.toml it needs: one that reads a single section of
the Config and nothing else of it (not the root, not another section, not the Config
handed on) takes that section's record (`run_gate(gate: GateSection, …)`), so what it
depends on is in its signature. Checked over the source of core/, tui/ and board/."""

from __future__ import annotations

import ast

from board.core import config

from tests.support.paths import ROOT

CONFIG_TYPES = {"Config", "config.Config"}


def one_section_only(source: str) -> list[str]:
    """`function(param) → section` for each function whose Config parameter is read only
    as one section's fields."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        params = node.args.posonlyargs + node.args.args + node.args.kwonlyargs
        for param in params:
            if param.annotation is None or ast.unparse(param.annotation) not in CONFIG_TYPES:
                continue
            read: set[str] = set()
            named = attributes = 0
            for sub in ast.walk(node):
                if isinstance(sub, ast.Name) and sub.id == param.arg:
                    named += 1
                elif (
                    isinstance(sub, ast.Attribute)
                    and isinstance(sub.value, ast.Name)
                    and sub.value.id == param.arg
                ):
                    attributes += 1
                    read.add(sub.attr)
            whole = named - attributes  # the Config itself, handed on or kept
            if whole == 0 and len(read) == 1 and read <= set(config.SECTION_NAMES):
                found.append(f"{node.name}({param.arg}) reads only {param.arg}.{read.pop()}")
    return found


def test_a_function_that_reads_one_section_takes_that_section() -> None:
    found = []
    for top in ("core", "tui", "board"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if path.parent.name == "config" and path.parent.parent.name == "core":
                continue
            rel = path.relative_to(ROOT)
            found += [f"{rel}: {line}" for line in one_section_only(path.read_text())]
    assert found == [], "\n".join(found)


def test_the_check_sees_a_function_that_should_take_its_section() -> None:
    """The check can fail: a function reading only cfg.gate is named; one that also reads
    the root, another section, or hands the Config on is not."""
    source = (
        "def run(cfg: Config, tree: Path) -> None:\n"
        "    print(cfg.gate.argv, cfg.gate.timeout_s)\n"
        "def rooted(cfg: Config) -> None:\n"
        "    print(cfg.root, cfg.gate.argv)\n"
        "def both(cfg: config.Config) -> None:\n"
        "    print(cfg.board.base, cfg.gate.argv)\n"
        "def handed(cfg: Config) -> None:\n"
        "    other(cfg, cfg.gate.argv)\n"
    )
    assert one_section_only(source) == ["run(cfg) reads only cfg.gate"]
