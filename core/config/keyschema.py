"""board.toml's schema: every key written once, with its type, default and meaning, and
the record of each section made from it.

`KEYS` is the one place a key is written. The fields of each section's record
(`cfg.gate.argv`, `cfg.publish.mode`: core/config/sections.py), the validation
(core/config/tomlread.py), the file `board init` writes and docs/configuration.md's key table
(core/config/inittemplate.py) all come from it; tests/test_config.py checks that they agree.
"""

from __future__ import annotations

import keyword
from functools import partial

from board.core.failures import DEFAULT_RULES
from board.core.model import READERS, Price
from board.core.records import Frozen, field
from board.core.tomlrules import RULE_DOC

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any

CONFIG_NAME = "board.toml"
BOARD_DIR = ".board"  # beside board.toml: the store, logs, locks (caches: core/cachedir.py)

# The kinds a key's value may be, besides str, int, bool, float (seconds) and dict (a table
# of strings). Order in KEYS is the order init writes, section by section.
ARGV = "argv"
ARGVS = "argvs"  # a list of argv lists: commands run in order
STRLIST = "strlist"
USD = "usd"  # an amount of US dollars: a finite number, 0 or more (0: no limit)
TIERS = "tiers"  # [coder.tiers.NAME] tables, read into Tier records
RULES = "rules"  # [[failures.rules]] tables, read into Rule records (core/tomlrules.py)
PRICES = "prices"  # [usage.prices."<model>"] tables, read into Price records (core/usage.py)
TABLES = (TIERS, RULES)  # the keys read by their own readers, not as one value


class Key(Frozen, slots=True):
    """One board.toml key: where it lives, its type and default (as board.toml spells it),
    and one line of what it means. It is the field `name` of its section's record."""

    section: str
    name: str
    kind: Any  # str | int | bool | float (seconds) | dict | one of the kinds above
    default: Any
    doc: str
    choices: tuple[str, ...] = ()


class Tier(Frozen, slots=True):
    """One rung of the coder ladder: the argv to run, with {brief} {worktree} {card}, and
    the reader of what its agent spent (core/usage.py)."""

    name: str
    argv: tuple[str, ...]
    timeout_s: float = 0  # 0: use coder.timeout_s
    usage: str = "none"  # claude | codex | gemini | aider | none


# the fields `board card import gh` reads of each issue (`gh issue list --json` spells them)
GH_FIELDS = "number,title,body,labels,url,state"
# what `[import] on_done_argv` may name in its items: the issue, the card, the address
ON_DONE_FIELDS = ("number", "card", "url")
DEFAULT_TIER = ("my-agent", "--brief", "{brief}")  # the tier init writes, and the default
TIER_DOC = "a coder tier: its command ({brief} {worktree} {card}), one table per rung"

KEYS: tuple[Key, ...] = (
    Key("board", "base", str, "main", "the branch the board builds for (init detects it)"),
    Key("board", "run_branch", str, "board/run", "what fold publishes onto"),
    Key("board", "worktrees", str, ".worktrees", "where card trees live"),
    Key("board", "prefix", str, "c", "card ids: <prefix>-<n>"),
    Key(
        "board",
        "max_concurrent",
        int,
        2,
        "drives building at once (one built and waiting to publish frees its slot)",
    ),
    Key(
        "board",
        "loop_interval_s",
        float,
        5,
        "seconds between loop ticks; a write to the store (a card added, edited, unblocked) "
        "wakes the loop within 0.2 s",
    ),
    Key("board", "scratch", STRLIST, [".board-scratch"],
        "never work, never committed; the brief is written in the first"),
    Key("board", "host_lease_s", float, 60,
        "a host silent this long is lost: its cards go back to ready"),
    Key("board", "self_heal_max", int, 2,
        "times the sweep clears a self-healing block per card"),
    Key("coder", "ladder", STRLIST, ["default"], "coder tiers, lowest first"),
    Key("coder", "timeout_s", float, 1800, "a coder's time limit"),
    Key("coder", "first_output_timeout_s", float, 120,
        "a coder silent this long never reached its model (0: no check)"),
    Key("coder", "timeout_split_after", int, 2,
        "counted timeouts before a card is parked too-wide (0: never)"),
    Key("coder", "best_of", int, 1,
        "candidates of a card's rung built at once, the gate judging (1 to 16; 1: one drive)"),
    Key("coder", "best_of_rule", str, "smallest-green",
        "which green candidate folds: smallest-green (the fewest changed lines, ties to the "
        "first finished) or first-green (the first, the rest stopped and saved)",
        ("smallest-green", "first-green")),
    Key("gate", "format_argv", ARGV, [], "fix-ups run before the gate"),
    Key("gate", "argv", ARGV, [],
        "the repository's check; empty: no gate ({worktree} {card} {brief})"),
    Key("gate", "timeout_s", float, 900, "the gate's time limit"),
    Key("gate", "retries", int, 2, "coder retries with a red gate's output"),
    Key("publish", "mode", str, "fold", "fold (local, serial) or push (PRs)",
        ("fold", "push")),
    Key("publish", "review", str, "none", "operator: built cards wait in review",
        ("none", "operator")),
    Key("publish", "remote", str, "origin", "the remote push and the base use"),
    Key("publish", "pr_argv", ARGV, [], "with push: the PR command (no shell)"),
    Key("publish", "run_on_remote", bool, False,
        "fold onto <remote>/<run_branch> (a board on several hosts): fetch, rebase, lease-push"),
    Key("publish", "timeout_s", float, 300,
        "time limit of a push, a PR command, a wait for the run lock"),
    Key("publish", "pr_state_argv", ARGV, [],
        "with push: prints the PR's state as gh pr view --json does; empty: no polling"),
    Key("publish", "poll_s", float, 60,
        "how often a PR in review is polled, and the base fetched in push mode"),
    Key("publish", "auto_merge", bool, False,
        "merge a PR whose checks are all green and mergeable (merge_argv)"),
    Key("publish", "merge_argv", ARGV, [],
        "the merge command ({branch} {base} {pr_url} {merge_method})"),
    Key("publish", "merge_method", str, "squash", "squash, merge or rebase",
        ("squash", "merge", "rebase")),
    Key("tree", "setup", ARGVS, [],
        "commands run in order in every fresh tree before the coder, e.g. [[\"npm\", \"ci\"]] "
        "({worktree} {card}; env BOARD_ROOT, BOARD_SLOT)"),
    Key("tree", "copy", STRLIST, [],
        "ignored files copied from your checkout into each tree (.gitignore lines, with "
        ".worktreeinclude); never committed, saved or pushed"),
    Key("tree", "setup_timeout_s", float, 900,
        "each setup command's time limit"),
    Key("planner", "name", str, "planner", "who decompose tasks are for"),
    Key("planner", "argv", ARGV, [], "runs decompose tasks; empty: they wait"),
    Key("planner", "timeout_s", float, 1800, "the planner's time limit"),
    Key("failures", "max_backoff_s", float, 3600,
        "the longest wait a back-off or a reset named in the output may set"),
    Key("tui", "theme", str, "dark", "dark, light, high-contrast or your own"),
    Key("tui", "theme_dir", str, "", "a folder of your own theme files"),
    Key("tui", "keys", dict, {}, "rebound keys: binding id = key(s)"),
    Key("tui", "notify", str, "none",
        "beside the toast when a card needs you: none, bell or osc9 (a desktop notice)",
        ("none", "bell", "osc9")),
    Key("notify", "argv", ARGV, [],
        "run by board run once per notice, no shell ({kind} {card} {class} {text}), e.g. "
        '["notify-send", "board", "{text}"]; empty: none'),
    Key("notify", "urls", STRLIST, [],
        "Apprise URLs each notice is sent to (ntfy://, slack://, tgram://, mailto://…); "
        "needs pip install 'board[notify]'"),
    Key("notify", "timeout_s", float, 10,
        "the argv's time limit (an Apprise URL keeps its own: 4s to connect, 4s to read)"),
    Key("web", "max_sessions", int, 4,
        "browser sessions board web serves at once, each its own app process (1 to 64)"),
    Key("store", "url", str, "",
        "a shared PostgreSQL store, postgresql://user@host:port/db (no password: PG* env or "
        "~/.pgpass); empty: SQLite at .board/board.db"),
    Key("store", "reconnect_s", float, 300,
        "how long board run keeps its drives going and retries while the store's server "
        "is unreachable, before it stops (0: stop at once)"),
    Key("usage", "prices", PRICES, {},
        'dollars per million tokens by model, [usage.prices."<model>"] input, output, '
        "cached_input: a cost from tokens where the agent reports none (never guessed)"),
    Key("budget", "card_usd", USD, 0.0,
        "a card whose attempts together spent this much (US$) is blocked over-budget before "
        "its next attempt (0: no limit)"),
    Key("budget", "day_usd", USD, 0.0,
        "past this spend in a UTC day (US$) board run claims nothing more until the next "
        "day or board resume budget (0: no limit)"),
    Key("budget", "hard", bool, False,
        "a drive running when a money budget is passed is stopped, its work saved, instead "
        "of finishing"),
    Key("import", "gh_argv", ARGV, ["gh", "issue", "list", "--json", GH_FIELDS],
        "board card import gh: prints the issues as gh issue list --json does (no shell); "
        "--label, --milestone, --limit and --state all are added"),
    Key("import", "on_done_argv", ARGV, [],
        "with fold: run once when an imported card ends done ({number} {card} {url}), e.g. "
        "gh issue close {number}; empty: nothing"),
    Key("import", "timeout_s", float, 120, "time limit of gh_argv and of on_done_argv"),
    # the tables, read by their own readers: last, as init writes them and the docs list them
    Key("coder", "tiers", TIERS, {"default": {"argv": list(DEFAULT_TIER)}}, TIER_DOC),
    Key("failures", "rules", RULES, [], RULE_DOC),
)  # fmt: skip
TIER_KEYS: dict[str, tuple[Any, Any]] = {
    "argv": (ARGV, None),
    "timeout_s": (float, 0),
    "usage": (str, "none"),
}
USAGE_READERS = READERS  # a tier's `usage`: the reader of what its agent spent
PRICE_KEYS = ("input", "output", "cached_input")
# the plain keys of each section, by name: (kind, default)
SCHEMA: dict[str, dict[str, tuple[Any, Any]]] = {}
for _k in KEYS:
    SCHEMA.setdefault(_k.section, {})
    if _k.kind not in TABLES:
        SCHEMA[_k.section][_k.name] = (_k.kind, _k.default)
SECTION_NAMES: tuple[str, ...] = tuple(SCHEMA)  # in the order of KEYS


def attr_of(section: str) -> str:
    """The Config field of a section: its name, but for a Python keyword (`[import]` is
    `cfg.import_`), which no attribute can be spelled as."""
    return f"{section}_" if keyword.iskeyword(section) else section


CHOICES = {(k.section, k.name): k.choices for k in KEYS if k.choices}

# An int key with bounds of its own, (low, high): a best_of of 0 would build nothing, and one
# of 100 is a typo that would start a hundred coders on one card; a max_sessions of 0 would
# serve nobody, and each session is a whole app process.
INT_BOUNDS = {("coder", "best_of"): (1, 16), ("web", "max_sessions"): (1, 64)}

# Every number in the schema is seconds. Bounds keep a typo from doing damage: 0 as the
# loop's interval spins a core; no timeout at all breaks invariant 3 (every child process
# has one); past a year, sleeps overflow and crash the loop.
MIN_INTERVAL_S = 0.05
INTERVALS = {("board", "loop_interval_s")}
# where 0 has a documented meaning, kept: a tier's 0 means coder.timeout_s,
# first_output_timeout_s = 0 turns that check off, and reconnect_s = 0 waits for no
# server. Every other timeout must be above 0.
ZERO_MEANS = {
    ("coder", "first_output_timeout_s"),
    ("tiers", "timeout_s"),
    ("store", "reconnect_s"),  # 0: board run stops at the first call the server fails
}

# The type of a section record's field, by its key's kind: what the signature and
# core/config/sections.pyi (the type checker's view of the made classes) say.
ANNOTATIONS: dict[Any, str] = {
    str: "str",
    int: "int",
    bool: "bool",
    float: "float",
    USD: "float",
    dict: "dict[str, str]",
    ARGV: "tuple[str, ...]",
    STRLIST: "tuple[str, ...]",
    ARGVS: "tuple[tuple[str, ...], ...]",
    TIERS: "dict[str, Tier]",
    RULES: "tuple[Rule, ...]",
    PRICES: "dict[str, Price]",
}


def value_of(key: Key, raw: Any) -> Any:
    """A key's value as its record holds it, from what board.toml says (lists become
    tuples, a tier table a Tier, rules are followed by the defaults)."""
    if key.kind == TIERS:
        return {
            n: Tier(n, tuple(b["argv"]), b.get("timeout_s", 0), b.get("usage", "none"))
            for n, b in raw.items()
        }
    if key.kind == PRICES:
        return {m: p if isinstance(p, Price) else Price(**p) for m, p in raw.items()}
    if key.kind == RULES:
        return (*raw, *DEFAULT_RULES)
    if key.kind is dict:
        return dict(raw)
    if isinstance(raw, list):
        return tuple(tuple(v) if isinstance(v, list) else v for v in raw)
    return raw


def section_record(section: str) -> type[Frozen]:
    """The record of one board.toml section: a frozen record (core/records.py) whose fields
    are that section's keys in KEYS, in order, each with its default. Made here rather than
    written out, so a key is written once: a key added to KEYS is a field at once."""
    keys = tuple(k for k in KEYS if k.section == section)
    cls_name = f"{section.capitalize()}Section"
    namespace: dict[str, Any] = {
        "__annotations__": {k.name: ANNOTATIONS[k.kind] for k in keys},
        "__module__": "board.core.config.sections",
        "__qualname__": cls_name,
        "__doc__": f"[{section}] of board.toml, every key with its default (from KEYS).",
    }
    for k in keys:  # a table is made afresh for each record, as a dataclass's factory does
        fresh = k.kind in (dict, TIERS, PRICES)
        namespace[k.name] = (
            field(default_factory=partial(value_of, k, k.default))
            if fresh
            else value_of(k, k.default)
        )
    make: Any = type(Frozen)  # the records' metaclass, as a class statement calls it
    made: type[Frozen] = make(cls_name, (Frozen,), namespace, slots=True)
    return made
