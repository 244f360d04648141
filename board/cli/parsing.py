"""The `board` command line's parser: every verb's arguments and help, built only in part.

Apart from `board.cli.commands` so a command line that needs no parser (the plain forms of
`board card list`, read by `commands._card_list_args`) does not import argparse, whose
objects and help formatter are a good part of a verb's start.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, cast

from board.cli.commands import (
    _simple,
    cmd_card_add,
    cmd_card_edit,
    cmd_card_import,
    cmd_card_list,
    cmd_card_show,
    cmd_init,
)
from board.core.model import KINDS, LANES, PRIORITY_DEFAULT
from board.core.safetext import sanitize


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the card as JSON")


_VERB_HELP = {
    "ready": "move a backlog card to ready (it needs a title and a spec)",
    "hold": "block a card by hand (class held); the loop never clears it",
    "unblock": "clear a card's block so the queue can take it again",
    "requeue": "send a card back to ready; the reason goes into the next brief",
    "cancel": "cancel a card: dependents are rewired, its trees saved then removed",
    "done": "mark a card done by hand: its trees are saved then removed",
}


class _Parser(argparse.ArgumentParser):
    """argparse that refuses in one line, like every other refusal (not usage + error)."""

    def error(self, message: str) -> NoReturn:
        verb = self.prog.removeprefix("board").strip()
        option = re.match(r"argument (-[^/:\s]+).*: expected one argument$", message)
        if option:  # `--onto -x`: argparse took the value for an option
            message += f" (a value that starts with '-' is written {option[1]}=VALUE)"
        where = f"{verb}: " if verb else ""
        self.exit(2, f"board: {where}{sanitize(message)}; see `{self.prog} --help`\n")


class _Rebuild(Exception):
    """The command line named a verb that was not built: parse again with every verb."""


class _Unbuilt:
    """A verb that was not asked for: it takes its declarations (arguments, defaults, its
    own verbs) and keeps none of them, since building a parser costs a verb ~1 ms and the
    `board` parser has some thirty. Parsing with it means the verb was guessed wrong:
    `_Rebuild`, and `main` builds every verb."""

    def __init__(self) -> None:
        self._actions: list[argparse.Action] = []

    def add_subparsers(self, **kwargs: Any) -> argparse._SubParsersAction[Any]:
        verbs = _Verbs(option_strings=[], prog="", parser_class=_Parser)
        verbs.none = True
        self._actions.append(verbs)  # ops finds `board stranded`'s verbs here
        return verbs

    def parse_known_args(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise _Rebuild

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """add_argument, set_defaults and the rest: nothing is kept."""
        return lambda *args, **kwargs: self


class _Verbs(argparse._SubParsersAction):
    """The verbs of the command line, each listed (so help and a mistyped verb read as with
    every verb built), but only the one the command line names (`only`) built in full."""

    only: str | None = None  # None: every verb built
    none: bool = False  # the verbs of an `_Unbuilt` verb: none built

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if not self.none and self.only in (None, name):
            return super().add_parser(name, **kwargs)
        if "help" in kwargs:  # what argparse lists for the verb in `board --help`
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), kwargs["help"]))
        unbuilt = _Unbuilt()
        self._name_parser_map[name] = unbuilt  # never parsed: see parse_known_args
        return cast(argparse.ArgumentParser, unbuilt)


def _built(parser: argparse.ArgumentParser) -> bool:
    """Whether `parser` is a verb's real parser (not an `_Unbuilt` stand-in)."""
    return not isinstance(parser, _Unbuilt)


def _verb_named(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """The verb `argv` names when that is plain to see (only `-C DIR` before it), and the
    word after it (the verb's own verb, as `list` in `card list`), so only those are built;
    None when it is not (`--help`, no verb, anything unusual): then every verb is, and
    argparse reads the command line as it always has."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-C":
            i += 2
        elif arg.startswith("-C") and not arg.startswith("-C="):
            i += 1
        elif arg.startswith("-"):
            return None, None
        else:
            after = argv[i + 1] if i + 1 < len(argv) else "-"
            return arg, None if after.startswith("-") else after
    return None, None


def _init_arguments(p: argparse.ArgumentParser) -> None:
    """`board init`'s options; its --coder help names the presets, so they are imported
    only when init's parser is built."""
    from board.core import presets

    p.add_argument(
        "--base",
        help="the branch the board builds for (default: the remote's default branch, "
        "else the branch checked out now)",
    )
    p.add_argument("--prefix", help="card id prefix (default c)")
    p.add_argument(
        "--coder",
        action="append",
        metavar="NAME",
        help="write a headless tier for an agent CLI (repeatable, first = first rung): "
        f"{', '.join(presets.PRESETS)}; `--coder list` shows them",
    )
    p.add_argument(
        "--store",
        metavar="URL",
        help="keep the board in PostgreSQL (postgresql://user@host:port/db, no password: "
        "PGPASSWORD or ~/.pgpass), shared by every clone that names it; default: "
        ".board/board.db",
    )


def build_parser(only: str | None = None, only_card: str | None = None) -> argparse.ArgumentParser:
    """Every verb's arguments and help, or (`only`) just that verb's, with every verb still
    listed; of `card`'s own verbs, likewise only `only_card` when given. Only declared here:
    each verb module's handler imports the core modules it works with when it runs, so
    building this costs little."""
    parser = _Parser(
        prog="board",
        description=(
            "Run coding agents over one git repository, card by card, and never lose their "
            "work. Verbs change the store (.board/board.db, or PostgreSQL at [store] url); "
            "`board tui` shows it live."
        ),
    )
    parser.add_argument("-C", dest="directory", default=None, help="run as if started in DIR")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", action=_Verbs)
    assert isinstance(sub, _Verbs)
    sub.only = only
    sub.required = True

    p = sub.add_parser("init", help="set up board.toml, the store and the run branch here")
    if _built(p):
        _init_arguments(p)
    p.set_defaults(func=cmd_init, needs_init=False)

    card = sub.add_parser("card", help="add, list and show cards")
    csub = card.add_subparsers(dest="card_verb", metavar="CARD_VERB", action=_Verbs)
    assert isinstance(csub, _Verbs)
    csub.only = only_card if only == "card" else None
    csub.required = True
    p = csub.add_parser("add", help="add a card (backlog, or ready with --ready)")
    p.add_argument("title")
    p.add_argument("--spec", help="what to build")
    p.add_argument("--spec-file", help="read the spec from a file, or - for stdin")
    p.add_argument("--acceptance", help="how to tell it is done")
    p.add_argument("--ready", action="store_true", help="put it straight in ready")
    p.add_argument("--dep", action="append", metavar="ID", help="a card this one waits on")
    p.add_argument("--surface", action="append", metavar="GLOB", help="files it may touch")
    p.add_argument("--label", action="append", metavar="LABEL")
    p.add_argument("--priority", type=int, default=PRIORITY_DEFAULT, help="0 (urgent) to 4")
    p.add_argument("--kind", choices=KINDS, default="feature")
    p.add_argument("--assignee")
    p.add_argument(
        "--best-of",
        type=int,
        metavar="N",
        help="build it with N candidates at once, the gate judging (1 to 16; "
        "default: the board's [coder] best_of)",
    )
    p.add_argument(
        "--race",
        metavar="TIER,TIER,…",
        help="build it with one candidate per named tier of [coder.tiers] instead (1 to 16 "
        "names, a tier may repeat)",
    )
    _add_json(p)
    p.set_defaults(func=cmd_card_add)
    p = csub.add_parser(
        "edit",
        help="change a card not yet started (backlog or ready)",
        description="Change a card not yet started (backlog or ready). Refused, changing "
        "nothing, when the loop claimed it meanwhile.",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--title", help="a new title (one line)")
    p.add_argument("--spec", help="a new spec")
    p.add_argument("--spec-file", help="read the new spec from a file, or - for stdin")
    p.add_argument("--acceptance", help="how to tell it is done")
    p.add_argument("--ready", action="store_true", help="move it to ready (it needs a spec)")
    p.add_argument("--dep", action="append", metavar="ID", help="add a card it waits on")
    p.add_argument("--no-dep", action="append", metavar="ID", help="no longer wait on ID")
    p.add_argument("--surface", action="append", metavar="GLOB", help="add files it may touch")
    p.add_argument("--no-surface", action="append", metavar="GLOB", help="take a glob away")
    p.add_argument("--label", action="append", metavar="LABEL", help="add a label")
    p.add_argument("--no-label", action="append", metavar="LABEL", help="take a label away")
    p.add_argument("--priority", type=int, help="0 (urgent) to 4")
    p.add_argument("--kind", choices=KINDS)
    p.add_argument("--assignee")
    p.add_argument(
        "--best-of",
        type=int,
        metavar="N",
        help="build it with N candidates at once, the gate judging (1 to 16)",
    )
    p.add_argument(
        "--no-best-of",
        action="store_true",
        help="drop its own best of: the board's [coder] best_of counts again",
    )
    p.add_argument(
        "--race",
        metavar="TIER,TIER,…",
        help="build it with one candidate per named tier of [coder.tiers] (1 to 16 names)",
    )
    p.add_argument("--no-race", action="store_true", help="drop its race of tiers")
    p.add_argument(
        "--version",
        type=int,
        metavar="N",
        help="refuse unless the card is still at version N (as `card show --json` showed it)",
    )
    _add_json(p)
    p.set_defaults(func=cmd_card_edit)
    p = csub.add_parser("list", help="list cards")
    p.add_argument("--lane", help=f"only this lane ({', '.join(LANES)})")
    p.add_argument("--json", action="store_true", help="print a JSON array of cards")
    p.set_defaults(func=cmd_card_list)
    p = csub.add_parser("show", help="show a card with its timeline")
    p.add_argument("id")
    _add_json(p)
    p.set_defaults(func=cmd_card_show)
    p = csub.add_parser(
        "import",
        help="add and update cards from GitHub issues (gh) or JSON Lines (FILE, - for stdin)",
        description="Add and update cards from where the work is tracked: `gh` runs [import] "
        "gh_argv (gh issue list --json), a FILE (or - for stdin) holds one card per JSON line "
        "with the fields card show --json names, plus key. Importing again updates the cards "
        "not yet started and adds new ones, never twice; an issue closed upstream cancels its "
        "card while it is in backlog or ready. A bad record is refused naming it, and nothing "
        "of the import is written.",
    )
    p.add_argument("source", metavar="gh|FILE|-")
    p.add_argument("--label", action="append", metavar="L", help="gh: only issues with label L")
    p.add_argument("--milestone", metavar="M", help="gh: only issues of milestone M")
    p.add_argument(
        "--limit", type=int, metavar="N", help="gh: at most N issues (default 1000; gh's is 30)"
    )
    p.add_argument(
        "--scope",
        metavar="NAME",
        help="FILE: what its keys belong to (default: the file's name; stdin for -)",
    )
    p.add_argument("--ready", action="store_true", help="new cards go straight to ready")
    _add_json(p)
    p.set_defaults(func=cmd_card_import)
    from board.cli import deps

    deps.register_card(csub)

    for verb, text in _VERB_HELP.items():
        p = sub.add_parser(verb, help=text, description=text)
        p.add_argument("id", metavar="ID")
        p.add_argument("--reason", help="why (required for hold)")
        _add_json(p)
        p.set_defaults(func=_simple(verb))

    from board.cli import demo, doctor, logs, ops, run, status, stranded, tui, web

    for module in (stranded, logs, run, status, doctor, ops, tui, web, demo):
        module.register(sub)
    return parser


def parse(argv: list[str]) -> argparse.Namespace:
    """`argv` read by argparse, building only the verb it names when that is plain to see."""
    try:
        verb, then = _verb_named(argv)
        return build_parser(only=verb, only_card=then).parse_args(argv)
    except _Rebuild:  # the verb was guessed wrong: read the command line with every verb
        return build_parser().parse_args(argv)
