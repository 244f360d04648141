"""Theme files (TOML) turned into Textual `Theme` objects at start.

The shipped themes live in the `board.themes` package, read from its directory (not
through importlib.resources, whose import the start would pay), so a plain `pip install .`
carries them; users add their own files in the directory named by `[tui] theme_dir` in
board.toml. A file is a flat table of the `Theme` fields plus an optional `[variables]`
table:

    name = "mine"            # optional: the file's stem otherwise
    dark = true
    primary = "#5fafff"      # required
    background = "#1c1c1c"
    [variables]
    block-cursor-background = "#005f87"

A broken user file is reported in one line and skipped; it never stops the app.

What tomllib makes of the files is kept in `themes.toml.cache`, in the repository's folder of
the user's cache directory (core/cachedir.py: never `.board/`, which a clone may bring),
with their exact text (core/tomlcache.py), so the start imports tomllib only when a file
changed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from board.core import tomlcache
from board.core.cachedir import Folder
from board.core.errors import ConfigError
from board.core.records import Record, field
from textual.color import Color, ColorParseError
from textual.theme import Theme

DEFAULT_THEME = "dark"
THEMES_CACHE = "themes.toml.cache"  # in the cache folder: what tomllib made of the themes
SHIPPED_ORDER = ("dark", "light", "high-contrast")

_COLOR_FIELDS = (
    "primary",
    "secondary",
    "warning",
    "error",
    "success",
    "accent",
    "foreground",
    "background",
    "surface",
    "panel",
    "boost",
)
_FLOAT_FIELDS = ("luminosity_spread", "text_alpha")
_BOOL_FIELDS = ("dark", "ansi")


class ThemeSet(Record):
    """The themes found at start, in switching order, and what went wrong loading any."""

    themes: dict[str, Theme] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return list(self.themes)

    def require(self, name: str) -> Theme:
        """The named theme, or a one-line refusal listing the ones there are."""
        try:
            return self.themes[name]
        except KeyError:
            raise ConfigError(
                f"unknown theme {name!r}: one of {', '.join(self.themes) or '(none)'}"
            ) from None


def _check_color(where: str, key: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{where}: {key}: expected a colour string, got {value!r}")
    try:
        Color.parse(value)
    except ColorParseError:
        raise ConfigError(f"{where}: {key}: not a colour: {value!r}") from None
    return value


def parse_theme(text: str, where: str, default_name: str) -> Theme:
    """Build a Theme from a TOML text; a bad key or value names the file and the key."""
    return _theme(_toml(text, where), where, default_name)


def _toml(text: str, where: str) -> dict[str, Any]:
    """tomllib's reading of a theme file, or ConfigError naming it."""
    import tomllib  # here: with the reading kept (`load_themes`), the start does without

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{where}: not valid TOML: {exc}") from None


def _theme(data: dict[str, Any], where: str, default_name: str) -> Theme:
    """The Theme a theme file's TOML `data` says; a bad key or value names file and key."""
    kwargs: dict[str, Any] = {}
    for key, value in data.items():
        if key == "name":
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"{where}: name: expected a non-empty string")
            kwargs["name"] = value.strip()
        elif key in _COLOR_FIELDS:
            kwargs[key] = _check_color(where, key, value)
        elif key in _FLOAT_FIELDS:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"{where}: {key}: expected a number, got {value!r}")
            kwargs[key] = float(value)
        elif key in _BOOL_FIELDS:
            if not isinstance(value, bool):
                raise ConfigError(f"{where}: {key}: expected true or false, got {value!r}")
            kwargs[key] = value
        elif key == "variables":
            if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
                raise ConfigError(f"{where}: variables: expected a table of strings")
            kwargs["variables"] = dict(value)
        else:
            raise ConfigError(f"{where}: {key}: unknown key")
    if "primary" not in kwargs:
        raise ConfigError(f"{where}: primary: a theme needs at least a primary colour")
    kwargs.setdefault("name", default_name)
    return Theme(**kwargs)


def _shipped() -> list[tuple[str, str, str]]:
    """(stem, where, text) for each theme file inside the installed `board.themes` package."""
    found = []
    import board.themes

    for entry in Path(board.themes.__file__).parent.iterdir():
        if entry.name.endswith(".toml") and entry.is_file():
            stem = entry.name[: -len(".toml")]
            found.append((stem, f"board.themes/{entry.name}", entry.read_text("utf-8")))
    rank = {name: i for i, name in enumerate(SHIPPED_ORDER)}
    found.sort(key=lambda item: (rank.get(item[0], len(rank)), item[0]))
    return found


def user_theme_dir(root: Path, theme_dir: str) -> Path | None:
    """The user's theme directory from config (relative to the repository root), if set."""
    if not theme_dir.strip():
        return None
    path = Path(theme_dir).expanduser()
    return path if path.is_absolute() else root / path


def load_themes(user_dir: Path | None = None, cache: Folder | None = None) -> ThemeSet:
    """Shipped themes first, then the user's (a user file may replace a shipped name).

    With `cache` (the repository's folder in the user's cache directory), tomllib's reading
    of every file is taken from there while each file holds the very text it was read from,
    and kept there when it was not."""
    result = ThemeSet()
    # (stem, where, text or None when unreadable, shipped, why unreadable)
    files: list[tuple[str, str, str | None, bool, str]] = [
        (stem, where, text, True, "") for stem, where, text in _shipped()
    ]
    if user_dir is not None and not user_dir.is_dir():
        result.problems.append(f"theme directory {user_dir} does not exist; using shipped themes")
    elif user_dir is not None:
        for path in sorted(user_dir.glob("*.toml")):
            try:
                files.append((path.stem, str(path), path.read_text(encoding="utf-8"), False, ""))
            except (OSError, UnicodeDecodeError) as exc:
                files.append((path.stem, str(path), None, False, f"{path}: cannot read: {exc}"))
    readable = [(where, text) for _stem, where, text, _shipped_, _why in files if text is not None]
    # every readable file's name and text, in order, each after its length: what a kept
    # reading must match exactly
    key = "".join(f"{len(where)}:{where}{len(text)}:{text}" for where, text in readable)
    kept = tomlcache.read(cache, THEMES_CACHE, key) if cache else None
    read: dict[str, Any] = {}
    for stem, where, text, shipped, why in files:
        if text is None:
            result.problems.append(why)
            continue
        try:
            data = kept.get(where) if kept is not None else None
            if type(data) is not dict:
                data = _toml(text, where)
            read[where] = data
            theme = _theme(data, where, stem)
        except ConfigError as exc:
            if shipped:  # a broken shipped theme is our bug: raise
                raise
            result.problems.append(exc.line())
            continue
        result.themes[theme.name] = theme
    if cache and kept is None and len(read) == len(readable):  # each file is TOML
        blob = tomlcache.dumps(key, read)
        if blob is not None:
            tomlcache.write(cache, THEMES_CACHE, blob)
    return result
