"""The command line's start-up tricks, fenced: each saves a measured share of what an
operator waits for on `board card list` (docs/performance.md, "The command line"), and each
is held equal to the plain path by a test (tests/test_cli_fast.py). Nothing else in the
command line reads arguments without argparse or leaves without the interpreter's teardown.

- `card_list_args`: the plain forms of `card list` read without argparse (building the
  parser, gettext and locale were a third of the listing's start).
- `leave`: the process ends at once after a listing that succeeded.
"""

from __future__ import annotations

import os
import sys
from types import SimpleNamespace

from board.cli.commands import cmd_card_list

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    import argparse


def card_list_args(argv: list[str]) -> argparse.Namespace | None:
    """The Namespace argparse builds for the plain forms of `board [-C DIR] card list
    [--lane LANE | --lane=LANE] [--json]`: each option at most once and spelled in full,
    each value neither empty nor starting with '-'. Reading them needs no parser (argparse
    and building it were a third of the listing's start); anything else, `--help` and every
    mistake included, returns None and goes to argparse, which reads and refuses it as
    always (tests/test_cli_fast.py holds the two to the same answers)."""
    directory: str | None = None
    if argv[:1] == ["-C"]:
        if len(argv) < 2 or not plain(argv[1]):
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
        elif arg == "--lane" and lane is None and i + 1 < len(rest) and plain(rest[i + 1]):
            lane = rest[i + 1]
            i += 2
        elif arg.startswith("--lane=") and lane is None and plain(arg[len("--lane=") :]):
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


def plain(value: str) -> bool:
    """A value argparse takes as it is, whatever follows: not empty, not an option's look."""
    return value != "" and not value.startswith("-")


def leave(code: int) -> None:
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
