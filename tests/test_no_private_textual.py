"""No module of the board reads or writes an underscore attribute of a Textual object, nor
imports a private Textual module: any of those may change or go in any Textual release
without a word (the board pinned Textual exactly for them). The same holds for
textual-serve, whose server `board web` subclasses (tui/web.py): its names count as
Textual's here. Found by walking the AST of
every module under tui/, and of the tests (support and benches included), against what
Textual's installed source defines.

The rule, so that it flags Textual's names and never the board's own:
- Textual's private names are the underscore names (not dunders) its source defines: a
  function or class attribute, an attribute it assigns (`self._x = ...`), a module-level
  name. A private module is one whose dotted name has such a part (`textual.widgets._toast`).
- In a class of the board that derives from a Textual class (found by importing tui/'s
  modules; in the tests, by its bases' names), `self._x`, `cls._x`, `super()._x` and a
  method `_x` are Textual's when a Textual class in its ancestry defines `_x` (in the tests,
  any Textual class): reading it reaches into Textual, defining it overrides Textual's.
- Anywhere else, `obj._x` (and a string "_x", as getattr or monkeypatch take it) is
  Textual's when Textual defines `_x` and the board's own code does not: where both do,
  the object's type is unknown here, and it is taken as the board's.

The tests may keep a use of Textual's internals for which Textual has no public way
(`TESTS_ALLOWED`, each with why); tui/ may keep none."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import textual
import textual_serve

from tests.support.paths import ROOT

# (file under the repository, Textual's name): why the test needs it. Each must still be
# used, so a stale entry fails too.
TESTS_ALLOWED: dict[tuple[str, str], str] = {
    ("tests/support/tui.py", "_compositor"): (
        "the composed screen's cells: Textual's only public copy is an SVG screenshot"
    ),
    ("tests/support/logs.py", "_compositor"): "the composed screen's cells (as above)",
    ("tests/support/stranded_tui.py", "_compositor"): "the composed screen's cells (as above)",
    ("tests/test_tui_preview.py", "_compositor"): "the composed screen's cells (as above)",
    ("tests/test_tui_stranded.py", "_compositor"): "the composed screen's cells (as above)",
}

SCOPES = ("tui", "tests")
FOREIGN = ("textual", "textual_serve")  # the packages whose private names are out of bounds


def is_private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__") and name != "_"


def sources(folder: str) -> list[Path]:
    """The modules to walk (not this one: it names Textual's names to check the rule)."""
    here = Path(__file__).resolve()
    return sorted(
        p for p in (ROOT / folder).rglob("*.py") if ".venv" not in p.parts and p.resolve() != here
    )


def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def defined_in_class(node: ast.ClassDef) -> set[str]:
    """The underscore names a class defines: its methods and class attributes, and what
    its methods assign to `self.` or `cls.`."""
    names = defined_in_body(node.body)
    for sub in ast.walk(node):
        if (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.ctx, ast.Store)
            and isinstance(sub.value, ast.Name)
            and sub.value.id in ("self", "cls")
        ):
            names.add(sub.attr)
    return {name for name in names if is_private(name)}


def defined_in_body(body: list[ast.stmt]) -> set[str]:
    """The names a module's or a class's body defines: functions, classes, assignments."""
    names: set[str] = set()
    for item in body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
        elif isinstance(item, ast.Assign):
            names.update(t.id for t in item.targets if isinstance(t, ast.Name))
    return names


def defined_at_top(tree: ast.Module) -> set[str]:
    return {name for name in defined_in_body(tree.body) if is_private(name)}


def module_name(path: Path, package_root: Path, package: str) -> str:
    parts = list(path.relative_to(package_root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join([package, *parts])


@cache
def textual_names() -> tuple[dict[tuple[str, str], frozenset[str]], frozenset[str]]:
    """({(module, class name): the underscore names that class defines}, every underscore
    name Textual defines anywhere: in a class, on any object it assigns to, at top level)."""
    by_class: dict[tuple[str, str], frozenset[str]] = {}
    every: set[str] = set()
    roots = [(Path(p.__file__).parent, p.__name__) for p in (textual, textual_serve)]
    for root, package, path in ((r, n, p) for r, n in roots for p in r.rglob("*.py")):
        tree = parse(path)
        module = module_name(path, root, package)
        every |= defined_at_top(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names = frozenset(defined_in_class(node))
                by_class[(module, node.name)] = by_class.get((module, node.name), names) | names
                every |= names
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                if is_private(node.attr):
                    every.add(node.attr)
    return by_class, frozenset(every)


def textual_ancestry_names(cls: type) -> frozenset[str] | None:
    """The underscore names the Textual classes among `cls`'s ancestors define, or None
    when it has no Textual ancestor."""
    by_class, _ = textual_names()
    found: set[str] | None = None
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] in FOREIGN:
            found = (found or set()) | by_class.get((klass.__module__, klass.__name__), set())
    return None if found is None else frozenset(found)


class Source:
    """One module of the board: its tree, and for each of its classes that derives from
    Textual the names it must not touch on itself (`classify`)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.rel = path.relative_to(ROOT).as_posix()
        self.tree = parse(path)
        self.module = None
        if self.rel.startswith("tui/"):
            self.module = importlib.import_module(module_name(path, ROOT / "tui", "board.tui"))
        self.textual_classes: dict[ast.ClassDef, frozenset[str]] = {}

    def classes(self) -> Iterator[ast.ClassDef]:
        return (node for node in ast.walk(self.tree) if isinstance(node, ast.ClassDef))

    def runtime_class(self, node: ast.ClassDef) -> type | None:
        """The class a tui/ module defines at its top level by this name, imported."""
        cls = getattr(self.module, node.name, None) if self.module else None
        if isinstance(cls, type) and cls.__module__ == getattr(self.module, "__name__", None):
            return cls
        return None

    def textual_imports(self) -> set[str]:
        """The names this module imports from Textual."""
        return {
            alias.asname or alias.name
            for node in ast.walk(self.tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in FOREIGN
            for alias in node.names
        }


def base_name(base: ast.expr) -> str:
    while isinstance(base, ast.Subscript):
        base = base.value
    if isinstance(base, ast.Attribute):
        return base.attr
    return base.id if isinstance(base, ast.Name) else ""


def classify(all_sources: tuple[Source, ...]) -> None:
    """Mark each class deriving from Textual. A class tui/ defines at top level is asked
    (its ancestry's Textual classes give the names); any other (the tests', one defined in
    a function) derives from Textual when a base is named as a Textual class, or as a class
    found deriving from one, anywhere in the board: its names are then any of Textual's."""
    _, every = textual_names()
    textualish: set[str] = set()
    for source in all_sources:
        textualish |= source.textual_imports()
        for node in source.classes():
            cls = source.runtime_class(node)
            names = textual_ancestry_names(cls) if cls is not None else None
            if names is not None:
                source.textual_classes[node] = names
                textualish.add(node.name)
    grew = True
    while grew:
        grew = False
        for source in all_sources:
            for node in source.classes():
                if node in source.textual_classes or source.runtime_class(node) is not None:
                    continue
                if any(base_name(base) in textualish for base in node.bases):
                    source.textual_classes[node] = every
                    textualish.add(node.name)
                    grew = True


@cache
def board_sources() -> tuple[Source, ...]:
    found = tuple(Source(path) for scope in SCOPES for path in sources(scope))
    classify(found)
    return found


@cache
def board_names() -> frozenset[str]:
    """The underscore names the board's own code defines (core/, board/, tui/, the tests),
    leaving out those its Textual-derived classes take from Textual."""
    names: set[str] = set()
    for folder in ("core", "board"):
        for path in sources(folder):
            tree = parse(path)
            names |= defined_at_top(tree)
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef):
                    names |= defined_in_class(node)
    for source in board_sources():
        names |= defined_at_top(source.tree)
        for node in ast.walk(source.tree):
            if isinstance(node, ast.ClassDef):
                names |= defined_in_class(node) - source.textual_classes.get(node, frozenset())
    return frozenset(names)


def uses(source: Source) -> Iterator[tuple[int, str, str]]:
    """(line, Textual's private name, how) for each use of one in `source`."""
    _, every = textual_names()
    theirs = every - board_names()
    on_own_self: set[int] = set()  # `self._x` in a class of the board's: checked here
    for node in source.classes():
        names = source.textual_classes.get(node)
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and on_self(sub.value):
                on_own_self.add(id(sub))
                if names is not None and sub.attr in names:
                    yield sub.lineno, sub.attr, f"{node.name}: {ast.unparse(sub)}"
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if names is not None and item.name in names:
                    yield item.lineno, item.name, f"{node.name} overrides Textual's {item.name}"
    for node in ast.walk(source.tree):
        if isinstance(node, ast.Attribute) and id(node) not in on_own_self:
            if node.attr in theirs:
                yield node.lineno, node.attr, ast.unparse(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value in theirs:
                yield node.lineno, node.value, f"the string {node.value!r}"
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            modules = [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                modules.append(node.module)
            for module in modules:
                parts = module.split(".")
                if parts[0] in FOREIGN and any(is_private(part) for part in parts):
                    yield node.lineno, module, f"imports the private module {module}"


def on_self(value: ast.expr) -> bool:
    """`self`, `cls` or `super()`: the object a class's own code reaches itself through."""
    if isinstance(value, ast.Name):
        return value.id in ("self", "cls")
    return (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "super"
    )


@cache
def found() -> dict[tuple[str, str], list[str]]:
    """{(file, Textual's name): where and how it is used}, over tui/ and the tests."""
    out: dict[tuple[str, str], list[str]] = {}
    for source in board_sources():
        for line, name, how in uses(source):
            out.setdefault((source.rel, name), []).append(f"{source.rel}:{line}: {how}")
    return out


def test_no_tui_module_touches_textuals_private_names() -> None:
    tui = [
        where for (rel, _), wheres in found().items() if rel.startswith("tui/") for where in wheres
    ]
    assert tui == [], "Textual's private API in tui/:\n" + "\n".join(sorted(tui))


def test_the_tests_touch_textuals_private_names_only_where_textual_has_no_public_way() -> None:
    uses_ = found()
    extra = [
        where
        for key, wheres in uses_.items()
        if key[0].startswith("tests/") and key not in TESTS_ALLOWED
        for where in wheres
    ]
    assert extra == [], "Textual's private API in the tests:\n" + "\n".join(sorted(extra))
    stale = [key for key in TESTS_ALLOWED if key not in uses_]
    assert stale == [], f"allowed, but no longer used (remove them): {stale}"


def test_the_rule_finds_textuals_names_and_not_the_boards() -> None:
    """The names the board was found using or defining: Textual's, and its own."""
    _, every = textual_names()
    for name in ("_driver", "_compositor", "_parse_cache", "_normalize_keymap", "_keymap"):
        assert name in every and name not in board_names(), name
    # textual-serve's, which tui/web.py must not reach for (its server's app maker, its
    # message loop, its AppService's process)
    for name in ("_make_app", "_process_messages", "_open_app_process"):
        assert name in every and name not in board_names(), name
    # the board's own, one of them also a Textual name (its Store's lock)
    for name in ("_theme_refresh_pending", "_lock", "_preload"):
        assert name in board_names(), name
