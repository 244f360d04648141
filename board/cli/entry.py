"""`board ARGS`: read the command line, run the verb, say a refusal in one line.

Apart from the verbs (`commands.py`) and the parser (`parsing.py`, which names the verbs'
handlers) so that no import goes in a circle. The plain forms of `card list` are read here
without argparse (`_card_list_args`); anything else goes to the parser.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

from board.cli.commands import Context, cmd_card_list
from board.core.errors import BoardError
from board.core.safetext import sanitize

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    import argparse


def main(argv: Sequence[str] | None = None) -> int:
    """Run the verb `argv` (default: the process's arguments) names; the exit code."""
    given = sys.argv[1:] if argv is None else list(argv)
    args = _card_list_args(given)
    if args is None:
        from board.cli import parsing

        return _run(given, parsing.parse(given))
    code = _run(given, args)
    if argv is None and code == 0:  # the `board` program listed cards: nothing left to do
        _leave(code)
    return code


def _leave(code: int) -> None:
    """End the process now with `code`, once what it printed is flushed, skipping the
    interpreter's teardown: freeing every module and collecting their cycles was a tenth
    of a card listing's instructions. Only after a `card list` that succeeded: it writes
    nothing, has closed its store, and starts no thread nor registers anything to run at
    exit. A refusal ends as always, since what it left open (a store refused while being
    opened) is closed by the teardown, which removes SQLite's -wal and -shm files. When the
    output cannot be flushed (a closed pipe), this returns and the interpreter ends as it
    always has, saying so."""
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        return
    os._exit(code)


def _run(given: list[str], args: argparse.Namespace) -> int:
    """The verb `args` names, run; its exit code, a refusal said in one line."""
    bad = next((a for a in given if not _encodes(a)), None)
    if bad is not None:
        print(f"board: an argument is not valid UTF-8: {_raw(bad)}", file=sys.stderr)
        return 2
    if args.directory is not None and not Path(args.directory).is_dir():
        what = "is not a directory" if Path(args.directory).exists() else "does not exist"
        print(f"board: -C {sanitize(args.directory)}: {what}", file=sys.stderr)
        return 2
    start = Path(args.directory) if args.directory else Path.cwd()
    ctx = Context(start, json_out=getattr(args, "json", False))
    try:
        return int(args.func(args, ctx) or 0)
    except BoardError as exc:
        # a refusal may quote what the operator typed (a hostile branch name): shown, not obeyed
        print(f"board: {sanitize(exc.line())}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("board: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # one line for the operator; the trace only when asked for
        if os.environ.get("BOARD_DEBUG"):
            raise
        print(
            f"board: internal error: {type(exc).__name__}: {sanitize(str(exc))} "
            "(BOARD_DEBUG=1 shows more)",
            file=sys.stderr,
        )
        return 70
    finally:
        ctx.close()


def _encodes(arg: str) -> bool:
    """False for an argument holding bytes that were not UTF-8 (Python keeps them as
    surrogates, which the store cannot write)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _raw(arg: str) -> str:
    """An argument as the bytes the operator typed, escaped: '\\xff' for a stray byte."""
    try:
        return ascii(arg.encode("utf-8", "surrogateescape"))[1:]
    except UnicodeEncodeError:
        return ascii(arg)


def _card_list_args(argv: list[str]) -> argparse.Namespace | None:
    """The Namespace argparse builds for the plain forms of `board [-C DIR] card list
    [--lane LANE | --lane=LANE] [--json]`: each option at most once and spelled in full,
    each value neither empty nor starting with '-'. Reading them needs no parser (argparse
    and building it were a third of the listing's start); anything else, `--help` and every
    mistake included, returns None and goes to argparse, which reads and refuses it as
    always (tests/test_cli_fast.py holds the two to the same answers)."""
    directory: str | None = None
    if argv[:1] == ["-C"]:
        if len(argv) < 2 or not _plain(argv[1]):
            return None
        directory, argv = argv[1], argv[2:]
    if argv[:2] != ["card", "list"]:
        return None
    lane: str | None = None
    as_json = False
    rest = argv[2:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg == "--json" and not as_json:
            as_json = True
            i += 1
        elif arg == "--lane" and lane is None and i + 1 < len(rest) and _plain(rest[i + 1]):
            lane = rest[i + 1]
            i += 2
        elif arg.startswith("--lane=") and lane is None and _plain(arg[len("--lane=") :]):
            lane = arg[len("--lane=") :]
            i += 1
        else:
            return None
    args = SimpleNamespace(
        directory=directory,
        verb="card",
        card_verb="list",
        lane=lane,
        json=as_json,
        func=cmd_card_list,
    )
    return args  # type: ignore[return-value]  # read as argparse's: by attribute


def _plain(value: str) -> bool:
    """A value argparse takes as it is, whatever follows: not empty, not an option's look."""
    return value != "" and not value.startswith("-")


__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
