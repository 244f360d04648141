"""Reading board.toml into a Config: every key has a default, and a bad file is refused
naming file, line and key."""

from __future__ import annotations

import math
import posixpath
import re
from pathlib import Path

from board.core import cachedir, tomlcache
from board.core.config.boardconfig import Config
from board.core.config.keyschema import (
    ARGV,
    ARGVS,
    BOARD_DIR,
    CHOICES,
    CONFIG_NAME,
    INT_BOUNDS,
    INTERVALS,
    KEYS,
    MIN_INTERVAL_S,
    ON_DONE_FIELDS,
    PRICE_KEYS,
    PRICES,
    SCHEMA,
    STRLIST,
    TIER_KEYS,
    USAGE_READERS,
    USD,
    ZERO_MEANS,
    Tier,
    attr_of,
    value_of,
)
from board.core.config.sections import RECORDS
from board.core.errors import ConfigError
from board.core.failures import Rule
from board.core.model import Price
from board.core.storeurl import store_url_problem
from board.core.tomlrules import MAX_SECONDS, line_of, parse_rules

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

_PREFIX_RE = re.compile(r"^[a-z][a-z0-9]{0,9}$")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)\}")  # `{number}` in an argv item


_KEY = {(k.section, k.name): k for k in KEYS}


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
        if kind == ARGVS:
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
        if kind in (ARGV, STRLIST):
            if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
                raise self.fail(section, key, f"expected a list of strings, got {raw!r}")
            if kind == ARGV and raw and not raw[0]:
                raise self.fail(section, key, "the program (first item) is empty")
            return tuple(raw)
        if kind is float:
            return self.seconds(section, key, raw)
        if kind == USD:
            if isinstance(raw, bool) or not isinstance(raw, (int, float)):
                raise self.fail(section, key, f"expected a number of US dollars, got {raw!r}")
            if not math.isfinite(raw) or raw < 0:
                raise self.fail(
                    section, key, f"must be a finite number of 0 or more (0: no limit), got {raw!r}"
                )
            return float(raw)
        if kind is bool:
            if not isinstance(raw, bool):
                raise self.fail(section, key, f"expected true or false, got {raw!r}")
            return raw
        if kind is int:
            if isinstance(raw, bool) or not isinstance(raw, int):
                raise self.fail(section, key, f"expected an integer, got {raw!r}")
            if raw < 0:
                raise self.fail(section, key, f"must not be negative, got {raw!r}")
            bounds = INT_BOUNDS.get((section[0], key))
            if bounds is not None and not bounds[0] <= raw <= bounds[1]:
                raise self.fail(
                    section, key, f"must be from {bounds[0]} to {bounds[1]}, got {raw!r}"
                )
            return raw
        if kind is str:
            if not isinstance(raw, str):
                raise self.fail(section, key, f"expected a string, got {raw!r}")
            choices = CHOICES.get((section[0], key))
            if choices and raw not in choices:
                raise self.fail(section, key, f"must be one of {', '.join(choices)}, got {raw!r}")
            return raw
        if kind == PRICES:
            return self.prices(section, key, raw)
        if kind is dict:
            if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
                raise self.fail(section, key, "expected a table of strings")
            return dict(raw)
        raise AssertionError(kind)  # pragma: no cover

    def prices(self, section: list[str], key: str, raw: Any) -> dict[str, Price]:
        """`[usage.prices."<model>"]`: each model's input, output and cached_input, in
        dollars per million tokens, all three given: a price half written would be a
        cost half guessed."""
        if not isinstance(raw, dict):
            raise self.fail(section, key, 'expected a table of models: [usage.prices."<model>"]')
        out = {}
        for model, body in raw.items():
            where = [*section, key, model]
            if not model.strip():
                raise self.fail([*section, key], None, "a model's name is empty")
            if not isinstance(body, dict):
                raise self.fail(
                    [*section, key], model, "expected a table: input, output, cached_input"
                )
            for name in body:
                if name not in PRICE_KEYS:
                    raise self.fail(
                        where, name, f"unknown key (a price has {', '.join(PRICE_KEYS)})"
                    )
            values = {}
            for name in PRICE_KEYS:
                if name not in body:
                    raise self.fail(
                        where,
                        None,
                        f"{name} is missing: give all of {', '.join(PRICE_KEYS)} "
                        "(dollars per million tokens)",
                    )
                value = body[name]
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise self.fail(where, name, f"expected a number of dollars, got {value!r}")
                if not math.isfinite(value) or value < 0:
                    raise self.fail(
                        where, name, f"must be a finite number, not negative, got {value!r}"
                    )
                values[name] = float(value)
            out[model] = Price(**values)
        return out

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
        if where in INTERVALS and raw < MIN_INTERVAL_S:
            raise self.fail(
                section,
                key,
                f"must be at least {MIN_INTERVAL_S:g} seconds (a shorter wait keeps a core "
                f"busy), got {raw!r}",
            )
        if raw == 0 and where not in INTERVALS and where not in ZERO_MEANS:
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
        key_ = _KEY[(section, key)]
        return value_of(key_, key_.default)

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
        tiers = get("coder", "tiers")  # the default tier (KEYS)
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
    if not get("import", "gh_argv"):
        raise reader.fail(["import"], "gh_argv", "is empty: board card import gh runs it")
    for item in get("import", "on_done_argv"):
        unknown = sorted(set(_PLACEHOLDER.findall(item)) - set(ON_DONE_FIELDS))
        if unknown:
            raise reader.fail(
                ["import"],
                "on_done_argv",
                f"has {{{unknown[0]}}}, which is none of "
                + ", ".join(f"{{{f}}}" for f in ON_DONE_FIELDS),
            )
    why = store_url_problem(get("store", "url"))
    if why:
        raise reader.fail(["store"], "url", why)
    why = notify_urls_problem(get("notify", "urls"))
    if why:
        raise reader.fail(["notify"], "urls", why)
    fixed: dict[tuple[str, str], Any] = {("board", "scratch"): scratch, ("tree", "copy"): copy}
    fixed[("coder", "tiers")] = tiers
    fixed[("failures", "rules")] = value_of(_KEY[("failures", "rules")], rules)
    filled: dict[str, dict[str, Any]] = {}
    for k in KEYS:
        where = (k.section, k.name)
        filled.setdefault(k.section, {})[k.name] = fixed[where] if where in fixed else get(*where)
    sections: dict[str, Any] = {attr_of(name): RECORDS[name](**v) for name, v in filled.items()}
    return Config((root or path.parent).resolve(), **sections)


def notify_urls_problem(urls: tuple[str, ...]) -> str:
    """'' when `[notify] urls` can be sent to; else why not, in words that never repeat a
    URL (one may hold a token: a Slack webhook's, a Telegram bot's). Apprise is an optional
    extra: a URL without it would fail every send of a night unseen, so it is refused here,
    at load, by whether the package can be found (it is not imported: that costs a verb's
    start a quarter of a second)."""
    if not urls:
        return ""
    for n, url in enumerate(urls, start=1):
        scheme, sep, rest = url.partition("://")
        if not sep or not scheme or not rest.strip() or not scheme.replace("+", "").isalnum():
            return f"URL {n} is not an Apprise URL (scheme://…, e.g. ntfy://my-topic)"
    import importlib.util  # only a board that names notice URLs

    try:
        found = importlib.util.find_spec("apprise") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        return "needs Apprise, which is not installed: pip install 'board[notify]'"
    return ""


def _tier(reader: _Reader, name: str, body: Any) -> Tier:
    section = ["coder", "tiers", name]
    if not isinstance(body, dict):
        raise reader.fail(["coder", "tiers"], name, "expected a table")
    for key in body:
        if key not in TIER_KEYS:
            raise reader.fail(section, key, "unknown key")
    if "argv" not in body:
        raise reader.fail(section, None, "a tier needs argv")
    argv = reader.value(section, "argv", ARGV, body["argv"])
    if not argv:
        raise reader.fail(section, "argv", "must not be empty")
    timeout = reader.value(section, "timeout_s", float, body.get("timeout_s", 0))
    meter = reader.value(section, "usage", str, body.get("usage", "none"))
    if meter not in USAGE_READERS:
        raise reader.fail(
            section, "usage", f"must be one of {', '.join(USAGE_READERS)}, got {meter!r}"
        )
    return Tier(name, argv, timeout, meter)


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
