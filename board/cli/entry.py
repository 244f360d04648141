"""`board ARGS`: read the command line, run the verb, say a refusal in one line.

Apart from the verbs (`commands.py`) and the parser (`parsing.py`, which names the verbs'
handlers) so that no import goes in a circle. The plain forms of `card list` are read
without argparse, and the program leaves without the interpreter's teardown after one:
both tricks are fenced in `quick.py`; anything else goes to the parser.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from board.cli import quick
from board.cli.commands import Context
from board.core.errors import BoardError
from board.core.safetext import sanitize

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    import argparse


def main(argv: Sequence[str] | None = None) -> int:
    """Run the verb `argv` (default: the process's arguments) names; the exit code."""
    given = sys.argv[1:] if argv is None else list(argv)
    args = quick.card_list_args(given)
    if args is None:
        from board.cli import parsing

        return _run(given, parsing.parse(given))
    code = _run(given, args)
    if argv is None and code == 0:  # the `board` program listed cards: nothing left to do
        quick.leave(code)
    return code


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


__all__ = ["main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
