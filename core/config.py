"""board.toml: every key has a default, and a bad file is refused naming file, line and key."""

from __future__ import annotations

import math
import posixpath
import re
from pathlib import Path

from board.core import cachedir, tomlcache
from board.core.errors import ConfigError
from board.core.failures import DEFAULT_RULES, Rule
from board.core.records import FACTORY, Frozen
from board.core.storeurl import store_url_problem
from board.core.tomlrules import MAX_SECONDS, RULE_DOC, RULE_EXAMPLE, line_of, parse_rules

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

CONFIG_NAME = "board.toml"
BOARD_DIR = ".board"  # beside board.toml: the store, logs, locks (caches: core/cachedir.py)

# The one declared schema. Each key is written here once, with its type, its default and
# what it means; the defaults of `Config`, the validation, the file `board init` writes
# and docs/configuration.md's key table are all derived from it (tests/test_config.py checks that
# they agree). Order is the order init writes.
_ARGV = "argv"
_ARGVS = "argvs"  # a list of argv lists: commands run in order
_STRLIST = "strlist"


class Key(Frozen):
    """One board.toml key: where it lives, its type and default, the Config attribute it
    fills, and one line of what it means."""

    __slots__ = __match_args__ = ("section", "name", "kind", "default", "attr", "doc", "choices")
    section: str
    name: str
    kind: Any  # str | int | bool | float (seconds) | "argv" | "strlist" | dict
    default: Any
    attr: str
    doc: str
    choices: tuple[str, ...]

    def __init__(
        self,
        section: str,
        name: str,
        kind: Any,
        default: Any,
        attr: str,
        doc: str,
        choices: tuple[str, ...] = (),
    ) -> None:
        set_ = object.__setattr__
        set_(self, "section", section)
        set_(self, "name", name)
        set_(self, "kind", kind)
        set_(self, "default", default)
        set_(self, "attr", attr)
        set_(self, "doc", doc)
        set_(self, "choices", choices)


KEYS: tuple[Key, ...] = (
    Key("board", "base", str, "main", "base", "the branch the board builds for (init detects it)"),
    Key("board", "run_branch", str, "board/run", "run_branch", "what fold publishes onto"),
    Key("board", "worktrees", str, ".worktrees", "worktrees", "where card trees live"),
    Key("board", "prefix", str, "c", "prefix", "card ids: <prefix>-<n>"),
    Key("board", "max_concurrent", int, 2, "max_concurrent", "drives at once"),
    Key("board", "loop_interval_s", float, 5, "loop_interval_s", "seconds between loop ticks"),
    Key("board", "scratch", _STRLIST, [".board-scratch"], "scratch",
        "never work, never committed; the brief is written in the first"),
    Key("board", "host_lease_s", float, 60, "host_lease_s",
        "a host silent this long is lost: its cards go back to ready"),
    Key("board", "self_heal_max", int, 2, "self_heal_max",
        "times the sweep clears a self-healing block per card"),
    Key("coder", "ladder", _STRLIST, ["default"], "ladder", "coder tiers, lowest first"),
    Key("coder", "timeout_s", float, 1800, "coder_timeout_s", "a coder's time limit"),
    Key("coder", "first_output_timeout_s", float, 120, "first_output_timeout_s",
        "a coder silent this long never reached its model (0: no check)"),
    Key("coder", "timeout_split_after", int, 2, "timeout_split_after",
        "counted timeouts before a card is parked too-wide (0: never)"),
    Key("gate", "format_argv", _ARGV, [], "gate_format_argv", "fix-ups run before the gate"),
    Key("gate", "argv", _ARGV, [], "gate_argv",
        "the repository's check; empty: no gate ({worktree} {card} {brief})"),
    Key("gate", "timeout_s", float, 900, "gate_timeout_s", "the gate's time limit"),
    Key("gate", "retries", int, 2, "gate_retries", "coder retries with a red gate's output"),
    Key("publish", "mode", str, "fold", "publish_mode", "fold (local, serial) or push (PRs)",
        ("fold", "push")),
    Key("publish", "review", str, "none", "review", "operator: built cards wait in review",
        ("none", "operator")),
    Key("publish", "remote", str, "origin", "remote", "the remote push and the base use"),
    Key("publish", "pr_argv", _ARGV, [], "pr_argv", "with push: the PR command (no shell)"),
    Key("publish", "run_on_remote", bool, False, "run_on_remote",
        "fold onto <remote>/<run_branch> (a board on several hosts): fetch, rebase, lease-push"),
    Key("publish", "timeout_s", float, 300, "publish_timeout_s",
        "time limit of a push, a PR command, a wait for the run lock"),
    Key("publish", "pr_state_argv", _ARGV, [], "pr_state_argv",
        "with push: prints the PR's state as gh pr view --json does; empty: no polling"),
    Key("publish", "poll_s", float, 60, "poll_s",
        "how often a PR in review is polled, and the base fetched in push mode"),
    Key("publish", "auto_merge", bool, False, "auto_merge",
        "merge a PR whose checks are all green and mergeable (merge_argv)"),
    Key("publish", "merge_argv", _ARGV, [], "merge_argv",
        "the merge command ({branch} {base} {pr_url} {merge_method})"),
    Key("publish", "merge_method", str, "squash", "merge_method", "squash, merge or rebase",
        ("squash", "merge", "rebase")),
    Key("tree", "setup", _ARGVS, [], "tree_setup",
        "commands run in order in every fresh tree before the coder, e.g. [[\"npm\", \"ci\"]] "
        "({worktree} {card}; env BOARD_ROOT, BOARD_SLOT)"),
    Key("tree", "copy", _STRLIST, [], "tree_copy",
        "ignored files copied from your checkout into each tree (.gitignore lines, with "
        ".worktreeinclude); never committed, saved or pushed"),
    Key("tree", "setup_timeout_s", float, 900, "setup_timeout_s",
        "each setup command's time limit"),
    Key("planner", "name", str, "planner", "planner_name", "who decompose tasks are for"),
    Key("planner", "argv", _ARGV, [], "planner_argv", "runs decompose tasks; empty: they wait"),
    Key("planner", "timeout_s", float, 1800, "planner_timeout_s", "the planner's time limit"),
    Key("failures", "max_backoff_s", float, 3600, "max_backoff_s",
        "the longest wait a back-off or a reset named in the output may set"),
    Key("tui", "theme", str, "dark", "theme", "dark, light, high-contrast or your own"),
    Key("tui", "theme_dir", str, "", "theme_dir", "a folder of your own theme files"),
    Key("tui", "keys", dict, {}, "keys", "rebound keys: binding id = key(s)"),
    Key("tui", "notify", str, "none", "notify",
        "beside the toast when a card needs you: none, bell or osc9 (a desktop notice)",
        ("none", "bell", "osc9")),
    Key("store", "url", str, "", "store_url",
        "a shared PostgreSQL store, postgresql://user@host:port/db (no password: PG* env or "
        "~/.pgpass); empty: SQLite at .board/board.db"),
    Key("store", "reconnect_s", float, 300, "reconnect_s",
        "how long board run keeps its drives going and retries while the store's server "
        "is unreachable, before it stops (0: stop at once)"),
)  # fmt: skip
DEFAULT_TIER = ("my-agent", "--brief", "{brief}")  # the tier init writes, and the default
TIER_KEYS: dict[str, tuple[Any, Any]] = {"argv": (_ARGV, None), "timeout_s": (float, 0)}
SCHEMA: dict[str, dict[str, tuple[Any, Any]]] = {}
for _k in KEYS:
    SCHEMA.setdefault(_k.section, {})[_k.name] = (_k.kind, _k.default)
_BY_ATTR = {k.attr: k for k in KEYS}
_BY_NAME = {(k.section, k.name): k.attr for k in KEYS}
_CHOICES = {(k.section, k.name): k.choices for k in KEYS if k.choices}
_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,9}$")


def _default(attr: str) -> Any:
    """A Config attribute's default, from KEYS (lists become tuples, tables are copied)."""
    value = _BY_ATTR[attr].default
    if isinstance(value, list):
        return tuple(tuple(v) if isinstance(v, list) else v for v in value)
    if isinstance(value, dict):
        return FACTORY  # a new table for each Config
    return value


# Every number in the schema is seconds. Bounds keep a typo from doing damage: 0 as the
# loop's interval spins a core; no timeout at all breaks invariant 3 (every child process
# has one); past a year, sleeps overflow and crash the loop.
MIN_INTERVAL_S = 0.05
_INTERVALS = {("board", "loop_interval_s")}
# where 0 has a documented meaning, kept: a tier's 0 means coder.timeout_s,
# first_output_timeout_s = 0 turns that check off, and reconnect_s = 0 waits for no
# server. Every other timeout must be above 0.
_ZERO_MEANS = {
    ("coder", "first_output_timeout_s"),
    ("tiers", "timeout_s"),
    ("store", "reconnect_s"),  # 0: board run stops at the first call the server fails
}


class Tier(Frozen):
    """One rung of the coder ladder: the argv to run, with {brief} {worktree} {card}."""

    __slots__ = __match_args__ = ("name", "argv", "timeout_s")
    name: str
    argv: tuple[str, ...]
    timeout_s: float  # 0: use coder.timeout_s

    def __init__(
        self,
        name: str,
        argv: tuple[str, ...],
        timeout_s: float = 0,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "argv", argv)
        set_(self, "timeout_s", timeout_s)


class Config(Frozen):
    """The parsed board.toml, with every default filled in (each default comes from KEYS)."""

    __slots__ = __match_args__ = (
        "root", "base", "run_branch", "worktrees", "prefix", "max_concurrent", "loop_interval_s",
        "scratch", "planner_name", "self_heal_max", "host_lease_s", "ladder", "tiers",
        "coder_timeout_s", "first_output_timeout_s", "timeout_split_after", "gate_format_argv",
        "gate_argv", "gate_timeout_s", "gate_retries", "publish_mode", "review", "remote",
        "pr_argv", "run_on_remote", "publish_timeout_s", "pr_state_argv", "poll_s", "auto_merge",
        "merge_argv", "merge_method", "tree_setup", "tree_copy", "setup_timeout_s",
        "planner_argv", "planner_timeout_s", "max_backoff_s",
        "failure_rules", "theme", "theme_dir", "keys", "notify", "store_url", "reconnect_s",
    )  # fmt: skip
    root: Path
    base: str
    run_branch: str
    worktrees: str
    prefix: str
    max_concurrent: int
    loop_interval_s: float
    scratch: tuple[str, ...]
    planner_name: str
    self_heal_max: int
    host_lease_s: float
    ladder: tuple[str, ...]
    tiers: dict[str, Tier]
    coder_timeout_s: float
    first_output_timeout_s: float
    timeout_split_after: int
    gate_format_argv: tuple[str, ...]
    gate_argv: tuple[str, ...]
    gate_timeout_s: float
    gate_retries: int
    publish_mode: str
    review: str
    remote: str
    pr_argv: tuple[str, ...]
    run_on_remote: bool
    publish_timeout_s: float
    pr_state_argv: tuple[str, ...]
    poll_s: float
    auto_merge: bool
    merge_argv: tuple[str, ...]
    merge_method: str
    tree_setup: tuple[tuple[str, ...], ...]
    tree_copy: tuple[str, ...]
    setup_timeout_s: float
    planner_argv: tuple[str, ...]
    planner_timeout_s: float
    max_backoff_s: float
    failure_rules: tuple[Rule, ...]  # [[failures.rules]] first, then these
    theme: str
    theme_dir: str
    keys: dict[str, str]
    notify: str
    store_url: str
    reconnect_s: float

    def __init__(
        self,
        root: Path,
        base: str = _default("base"),
        run_branch: str = _default("run_branch"),
        worktrees: str = _default("worktrees"),
        prefix: str = _default("prefix"),
        max_concurrent: int = _default("max_concurrent"),
        loop_interval_s: float = _default("loop_interval_s"),
        scratch: tuple[str, ...] = _default("scratch"),
        planner_name: str = _default("planner_name"),
        self_heal_max: int = _default("self_heal_max"),
        host_lease_s: float = _default("host_lease_s"),
        ladder: tuple[str, ...] = _default("ladder"),
        tiers: dict[str, Tier] = FACTORY,
        coder_timeout_s: float = _default("coder_timeout_s"),
        first_output_timeout_s: float = _default("first_output_timeout_s"),
        timeout_split_after: int = _default("timeout_split_after"),
        gate_format_argv: tuple[str, ...] = _default("gate_format_argv"),
        gate_argv: tuple[str, ...] = _default("gate_argv"),
        gate_timeout_s: float = _default("gate_timeout_s"),
        gate_retries: int = _default("gate_retries"),
        publish_mode: str = _default("publish_mode"),
        review: str = _default("review"),
        remote: str = _default("remote"),
        pr_argv: tuple[str, ...] = _default("pr_argv"),
        run_on_remote: bool = _default("run_on_remote"),
        publish_timeout_s: float = _default("publish_timeout_s"),
        pr_state_argv: tuple[str, ...] = _default("pr_state_argv"),
        poll_s: float = _default("poll_s"),
        auto_merge: bool = _default("auto_merge"),
        merge_argv: tuple[str, ...] = _default("merge_argv"),
        merge_method: str = _default("merge_method"),
        tree_setup: tuple[tuple[str, ...], ...] = _default("tree_setup"),
        tree_copy: tuple[str, ...] = _default("tree_copy"),
        setup_timeout_s: float = _default("setup_timeout_s"),
        planner_argv: tuple[str, ...] = _default("planner_argv"),
        planner_timeout_s: float = _default("planner_timeout_s"),
        max_backoff_s: float = _default("max_backoff_s"),
        failure_rules: tuple[Rule, ...] = DEFAULT_RULES,
        theme: str = _default("theme"),
        theme_dir: str = _default("theme_dir"),
        keys: dict[str, str] = _default("keys"),
        notify: str = _default("notify"),
        store_url: str = _default("store_url"),
        reconnect_s: float = _default("reconnect_s"),
    ) -> None:
        given = locals()  # every argument by name, stored in field order
        set_ = object.__setattr__
        for name in self.__match_args__:
            set_(self, name, given[name])
        if tiers is FACTORY:
            set_(self, "tiers", {})
        if keys is FACTORY:
            set_(self, "keys", {})

    @property
    def board_dir(self) -> Path:
        return self.root / BOARD_DIR

    @property
    def cache_folder(self) -> cachedir.Folder | None:
        """This repository's folder in the user's cache directory (never in `.board/`: a
        clone brings what its repository committed there); None when caching is off."""
        return cachedir.for_repo(self.root)

    @property
    def db_path(self) -> Path:
        return self.board_dir / "board.db"

    @property
    def logs_dir(self) -> Path:
        return self.board_dir / "logs"

    @property
    def worktrees_dir(self) -> Path:
        return (self.root / self.worktrees).resolve()

    def tier(self, name: str) -> Tier:
        return self.tiers[name]

    def rel(self, path: str | Path) -> str:
        """`path` relative to the repository root when it lies inside it, else as given:
        what logs, comments and drive rows show (short, and the same on every machine)."""
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)


def _toml(obj: dict[str, Any]) -> str:
    """TOML text of `obj`. tomli_w is imported here: only the verbs that write board.toml
    (init and its helpers) need it, and every verb loads this module."""
    import tomli_w

    return tomli_w.dumps(obj)


def default_document() -> dict[str, Any]:
    """The full board.toml that `board init` writes, as data: every default spelled out."""
    doc: dict[str, Any] = {}
    for k in KEYS:
        value = k.default
        doc.setdefault(k.section, {})[k.name] = (
            list(value)
            if isinstance(value, list)
            else dict(value)
            if isinstance(value, dict)
            else value
        )
    doc["coder"]["tiers"] = {"default": {"argv": list(DEFAULT_TIER)}}
    return doc


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
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def rules_text(rules: list[dict[str, Any]], comment: str = "") -> str:
    """`[[failures.rules]]` tables, as board.toml holds them."""
    head = f"# {comment}\n" if comment else ""
    return head + _toml({"failures": {"rules": rules}})


def tier_text(name: str, argv: list[str], comment: str = "") -> str:
    """One `[coder.tiers.NAME]` table, as board.toml holds it."""
    head = f"# {comment}\n" if comment else ""
    return head + _toml({"coder": {"tiers": {name: {"argv": argv}}}})


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
    import json

    return "{}" if isinstance(value, dict) else json.dumps(value)


TIER_DOC = "a coder tier: its command ({brief} {worktree} {card}), one table per rung"


def key_table() -> str:
    """docs/configuration.md's table of board.toml keys (tests/test_config.py keeps them equal)."""
    rows = ["| key | default | what it means |", "|---|---|---|"]
    for k in KEYS:
        rows.append(f"| `{k.section}.{k.name}` | `{_inline(k.default)}` | {k.doc} |")
    tier = _inline(list(DEFAULT_TIER))
    rows.append(f"| `coder.tiers.NAME.argv` | `{tier}` (tier `default`) | {TIER_DOC} |")
    rows.append("| `coder.tiers.NAME.timeout_s` | `0` | the tier's limit (0: `coder.timeout_s`) |")
    where = 'the defaults (see "Failures that are not the card\'s fault")'
    rows.append(f"| `failures.rules` | {where} | {RULE_DOC} |")
    return "\n".join(rows) + "\n"


_HEADER = (
    "# board.toml: every key is shown with its default; a file holding only what\n"
    "# differs is valid too. Argv lists are never passed to a shell.\n\n"
)


class _Reader:
    def __init__(self, path: Path, text: str) -> None:
        self.path = path
        self.text = text

    def fail(self, section: list[str], key: str | None, why: str) -> ConfigError:
        name = ".".join([*section, key] if key else section)
        line = line_of(self.text, section, key)
        where = f"{self.path}:{line}" if line else str(self.path)
        return ConfigError(f"{where}: {name}: {why}")

    def value(self, section: list[str], key: str, kind: Any, raw: Any) -> Any:
        if kind == _ARGVS:
            if not isinstance(raw, list) or not all(
                isinstance(cmd, list) and all(isinstance(x, str) for x in cmd) for cmd in raw
            ):
                raise self.fail(
                    section,
                    key,
                    f'expected a list of argv lists (e.g. [["npm", "ci"]]), got {raw!r}',
                )
            for n, cmd in enumerate(raw, start=1):
                if not cmd or not cmd[0]:
                    raise self.fail(section, key, f"command {n}: the program (first item) is empty")
            return tuple(tuple(cmd) for cmd in raw)
        if kind in (_ARGV, _STRLIST):
            if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
                raise self.fail(section, key, f"expected a list of strings, got {raw!r}")
            if kind == _ARGV and raw and not raw[0]:
                raise self.fail(section, key, "the program (first item) is empty")
            return tuple(raw)
        if kind is float:
            return self.seconds(section, key, raw)
        if kind is bool:
            if not isinstance(raw, bool):
                raise self.fail(section, key, f"expected true or false, got {raw!r}")
            return raw
        if kind is int:
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise self.fail(section, key, f"expected an integer, got {raw!r}")
            if raw < 0:
                raise self.fail(section, key, f"must not be negative, got {raw!r}")
            return raw
        if kind is str:
            if not isinstance(raw, str):
                raise self.fail(section, key, f"expected a string, got {raw!r}")
            choices = _CHOICES.get((section[0], key))
            if choices and raw not in choices:
                raise self.fail(section, key, f"must be one of {', '.join(choices)}, got {raw!r}")
            return raw
        if kind is dict:
            if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
                raise self.fail(section, key, "expected a table of strings")
            return dict(raw)
        raise AssertionError(kind)  # pragma: no cover

    def seconds(self, section: list[str], key: str, raw: Any) -> float:
        """A number of seconds: finite, not negative, inside the bounds above."""
        if isinstance(raw, bool) or not isinstance(raw, (int, float)):
            raise self.fail(section, key, f"expected a number, got {raw!r}")
        if not math.isfinite(raw):
            raise self.fail(section, key, f"must be a finite number of seconds, got {raw!r}")
        if raw < 0:
            raise self.fail(section, key, f"must not be negative, got {raw!r}")
        if raw > MAX_SECONDS:
            raise self.fail(section, key, f"must be at most {MAX_SECONDS} (a year), got {raw!r}")
        where = (section[0] if len(section) == 1 else section[1], key)
        if where in _INTERVALS and raw < MIN_INTERVAL_S:
            raise self.fail(
                section,
                key,
                f"must be at least {MIN_INTERVAL_S:g} seconds (a shorter wait keeps a core "
                f"busy), got {raw!r}",
            )
        if raw == 0 and where not in _INTERVALS and where not in _ZERO_MEANS:
            raise self.fail(
                section, key, "must be more than 0: every child process runs with a timeout"
            )
        return float(raw)

    def worktrees(self, raw: str) -> None:
        """The trees' folder holds what the sweep may remove: one that names the checkout, a
        place outside it or git's own directory would put the repository's siblings (or
        its history) in the sweep's way."""
        norm = posixpath.normpath(raw.strip())
        why = ""
        if raw.strip().startswith("/"):
            why = f"{raw!r} is absolute: the trees live inside the repository"
        elif norm == ".":
            why = f"{raw!r} is the repository itself"
        elif norm == ".." or norm.startswith("../"):
            why = f"{raw!r} leads out of the repository"
        elif norm.split("/")[0] == ".git":
            why = f"{raw!r} is git's own directory"
        elif norm.split("/")[0] == BOARD_DIR:
            why = f"{raw!r} is the board's own directory"
        if why:
            raise self.fail(["board"], "worktrees", why)

    def scratch(self, raw: tuple[str, ...]) -> tuple[str, ...]:
        """Scratch directories never count as work, so one that names the whole tree (or
        a place outside it) would silently turn every save off: refuse those."""
        if not raw:
            raise self.fail(
                ["board"], "scratch", "must name at least one directory: the brief is written there"
            )
        clean = []
        for entry in raw:
            name = entry.strip()
            norm = posixpath.normpath(name) if name else ""
            parts = norm.split("/")
            why = ""
            if not name:
                why = "an entry is empty"
            elif name.startswith("/"):
                why = f"{entry!r} is absolute: scratch lies inside each tree"
            elif norm == ".":
                why = f"{entry!r} is the tree itself: nothing in it would ever be saved"
            elif ".." in name.split("/"):
                why = f"{entry!r} leads out of the tree"
            elif parts[0] == ".git":
                why = f"{entry!r} is git's own directory"
            if why:
                raise self.fail(["board"], "scratch", why)
            clean.append(norm)
        return tuple(clean)

    def copy_patterns(self, raw: tuple[str, ...]) -> tuple[str, ...]:
        """`[tree] copy` lines are .gitignore lines matched inside the checkout: one that
        leads out of it, or is empty, would copy nothing a reader could predict."""
        for entry in raw:
            line = entry.strip()
            why = ""
            if not line or line.startswith("#"):
                why = f"{entry!r} is empty or a comment: give a path or a glob"
            elif line.startswith("!"):
                why = f"{entry!r} is a negation: list only what to copy"
            elif ".." in line.strip("/").split("/"):
                why = f"{entry!r} leads out of the checkout"
            elif line.strip("/").split("/")[0] == ".git":
                why = f"{entry!r} is git's own directory"
            if why:
                raise self.fail(["tree"], "copy", why)
        return tuple(e.strip() for e in raw)


def bad_branch_name(name: str) -> str:
    """Why git would refuse `name` as a branch (`git check-ref-format --branch`), or ''.
    Checked when board.toml is read: a loop that idles on git's error at every tick tells
    the operator nothing."""
    if name.startswith("-"):
        return "it starts with '-'"
    if name == "@" or "@{" in name:
        return "it is '@' or holds '@{'"
    if name.startswith("/") or name.endswith("/") or "//" in name:
        return "it has an empty part between slashes"
    if ".." in name:
        return "it holds '..'"
    if name.endswith("."):
        return "it ends with '.'"
    bad = next((c for c in name if ord(c) < 0x20 or ord(c) == 0x7F or c in " ~^:?*[\\"), "")
    if bad:
        return f"it holds {bad!r}"
    for part in name.split("/"):
        if part.startswith("."):
            return f"its part {part!r} starts with '.'"
        if part.endswith(".lock"):
            return f"its part {part!r} ends with '.lock'"
    return ""


def parse(
    path: Path, text: str, root: Path | None = None, cache: cachedir.Folder | None = None
) -> Config:
    """Parse and validate the text of a board.toml; raise ConfigError naming file, line and key.
    With `cache` (the repository's folder in the user's cache directory, never `.board/`),
    tomllib's answer for this exact text is taken from there when it is kept, and kept there
    once it reads as a valid board.toml when it was not (core/tomlcache.py)."""
    data = tomlcache.read(cache, tomlcache.NAME, text) if cache else None
    if data is not None:
        return _validated(path, text, root, data)
    import tomllib  # here: its import is a fifth of a quick verb's start

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    kept = tomlcache.dumps(text, data) if cache else None  # before anything reads it
    cfg = _validated(path, text, root, data)
    if cache and kept:
        tomlcache.write(cache, tomlcache.NAME, kept)
    return cfg


def _validated(path: Path, text: str, root: Path | None, data: dict[str, Any]) -> Config:
    """The Config that tomllib's reading `data` of `text` says, or ConfigError."""
    reader = _Reader(path, text)
    values: dict[tuple[str, str], Any] = {}
    tiers: dict[str, Tier] = {}
    rules: tuple[Rule, ...] = ()
    for section, body in data.items():
        if section not in SCHEMA:
            raise reader.fail([section], None, "unknown section")
        if not isinstance(body, dict):
            raise reader.fail([], section, "expected a table")
        schema = SCHEMA[section]
        for key, raw in body.items():
            if section == "failures" and key == "rules":
                rules = parse_rules(path, text, raw)
                continue
            if section == "coder" and key == "tiers":
                if not isinstance(raw, dict):
                    raise reader.fail(["coder"], "tiers", "expected a table of tiers")
                for tier_name, tier_body in raw.items():
                    tiers[tier_name] = _tier(reader, tier_name, tier_body)
                continue
            if key not in schema:
                raise reader.fail([section], key, "unknown key")
            kind, _ = schema[key]
            values[(section, key)] = reader.value([section], key, kind, raw)

    def get(section: str, key: str) -> Any:
        if (section, key) in values:
            return values[(section, key)]
        kind, default = SCHEMA[section][key]
        if isinstance(default, dict):
            return dict(default)
        return _default(_BY_NAME[(section, key)]) if isinstance(default, list) else default

    prefix = get("board", "prefix")
    if not _PREFIX_RE.match(prefix):
        raise reader.fail(
            ["board"], "prefix", f"must be 1-10 lowercase letters/digits, got {prefix!r}"
        )
    for key in ("base", "run_branch", "worktrees"):
        if not get("board", key).strip():
            raise reader.fail(["board"], key, "must not be empty")
    for key in ("base", "run_branch"):
        why = bad_branch_name(get("board", key))
        if why:
            raise reader.fail(["board"], key, f"{get('board', key)!r} is not a branch name: {why}")
    reader.worktrees(get("board", "worktrees"))
    scratch = reader.scratch(get("board", "scratch"))
    copy = reader.copy_patterns(get("tree", "copy"))
    if get("board", "max_concurrent") < 1:
        raise reader.fail(["board"], "max_concurrent", "must be at least 1")
    if get("board", "base") == get("board", "run_branch"):
        raise reader.fail(["board"], "run_branch", "must differ from base")
    ladder = get("coder", "ladder")
    if not ladder:
        raise reader.fail(["coder"], "ladder", "must name at least one tier")
    if not tiers and "tiers" not in data.get("coder", {}):
        tiers = {"default": Tier("default", DEFAULT_TIER)}
    for name in ladder:
        if name not in tiers:
            raise reader.fail(
                ["coder"], "ladder", f"names tier {name!r}, which has no [coder.tiers.{name}]"
            )
    if get("publish", "run_on_remote") and not get("publish", "remote"):
        raise reader.fail(["publish"], "run_on_remote", "needs a remote (publish.remote)")
    if get("publish", "auto_merge") and not get("publish", "merge_argv"):
        raise reader.fail(["publish"], "auto_merge", "needs merge_argv (the merge command)")
    if get("publish", "mode") == "push" and not get("publish", "remote"):
        raise reader.fail(["publish"], "remote", "push needs a remote")
    why = store_url_problem(get("store", "url"))
    if why:
        raise reader.fail(["store"], "url", why)
    filled = {k.attr: get(k.section, k.name) for k in KEYS}
    filled.update(prefix=prefix, scratch=scratch, ladder=ladder, tree_copy=copy)
    return Config(
        root=(root or path.parent).resolve(),
        tiers=tiers,
        failure_rules=rules + DEFAULT_RULES,
        **filled,
    )


def _tier(reader: _Reader, name: str, body: Any) -> Tier:
    section = ["coder", "tiers", name]
    if not isinstance(body, dict):
        raise reader.fail(["coder", "tiers"], name, "expected a table")
    for key in body:
        if key not in TIER_KEYS:
            raise reader.fail(section, key, "unknown key")
    if "argv" not in body:
        raise reader.fail(section, None, "a tier needs argv")
    argv = reader.value(section, "argv", _ARGV, body["argv"])
    if not argv:
        raise reader.fail(section, "argv", "must not be empty")
    timeout = reader.value(section, "timeout_s", float, body.get("timeout_s", 0))
    return Tier(name, argv, timeout)


def load(root: Path) -> Config:
    """Read `<root>/board.toml`; a missing file says what to run."""
    path = root / CONFIG_NAME
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"no {CONFIG_NAME} in {root}: run `board init` first") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return parse(path, text, root, cachedir.for_repo(root))
