"""The plain forms of `board card list` are read without argparse (board.cli.entry's
`quick.card_list_args`): for every command line it either declines, and argparse reads it as
always, or gives exactly the Namespace argparse gives. Checked over a corpus of command
lines built from tricky pieces (abbreviations, `--lane=`, values that look like options,
repeats, `--`, `-h`, unicode, bytes that were not UTF-8), against the real parser.
"""

from __future__ import annotations

import contextlib
import io
import itertools
from pathlib import Path

import pytest

from board.cli import parsing
from board.cli import quick as fast
from tests.support.procs import python_child
from tests.support.repos import make_repo

# the pieces command lines are made of: after `card list`, and before it
TAIL = (
    "--lane",
    "ready",
    "done",
    "--lane=ready",
    "--lane=",
    "--lane=-x",
    "--lane=a=b",
    "--json",
    "--json=1",
    "--lan",
    "--lan=ready",
    "--js",
    "--jso",
    "-h",
    "--help",
    "--",
    "",
    "-x",
    "-1",
    "x y",
    "-x y",
    "é",
    "\udcff",
    "card",
    "list",
    "-C",
    "d",
)
HEAD = (
    (),
    ("-C", "d"),
    ("-C", "-d"),
    ("-C", ""),
    ("-C", "\udcff"),
    ("-Cd",),
    ("-C=d",),
    ("-C",),
    ("-C", "d", "-C", "e"),
    ("--",),
    ("-h",),
)
VERBS = (("card", "list"), ("card", "lis"), ("card", "show"), ("card",), ("list", "card"), ())


def argparse_reads(argv: list[str]) -> dict[str, object] | None:
    """What argparse makes of `argv` as `main` calls it, or None when it refuses (or helps)."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(parsing.parse(argv))
        except SystemExit:
            return None


def corpus() -> list[list[str]]:
    out = []
    for head, verbs in itertools.product(HEAD, VERBS):
        for n in range(4):
            for tail in itertools.product(TAIL, repeat=n):
                if n == 3 and (head not in ((), ("-C", "d")) or verbs != ("card", "list")):
                    continue  # three pieces after the plain heads only: enough, and quick
                out.append([*head, *verbs, *tail])
    return out


def test_the_quick_reading_is_argparse_s_or_declines() -> None:
    taken = 0
    for argv in corpus():
        quick = fast.card_list_args(list(argv))
        if quick is None:
            continue
        taken += 1
        assert vars(quick) == argparse_reads(argv), argv
    # the check compares something: the plain forms are all taken
    assert taken >= 100


@pytest.mark.parametrize(
    "argv",
    [
        ["card", "list"],
        ["card", "list", "--json"],
        ["card", "list", "--lane", "ready"],
        ["card", "list", "--lane=ready", "--json"],
        ["card", "list", "--json", "--lane", "done"],
        ["-C", "d", "card", "list"],
        ["-C", "d", "card", "list", "--lane", "working", "--json"],
        ["card", "list", "--lane", "no-such-lane"],  # refused by the verb, as before
        ["card", "list", "--lane", "é"],
        ["card", "list", "--lane", "\udcff"],  # refused by main's UTF-8 check, as before
    ],
)
def test_the_plain_forms_are_read_without_argparse(argv: list[str]) -> None:
    quick = fast.card_list_args(list(argv))
    assert quick is not None
    assert vars(quick) == argparse_reads(argv)


@pytest.mark.parametrize(
    "argv",
    [
        ["card", "list", "--lan", "ready"],  # an abbreviation argparse accepts
        ["card", "list", "--js"],
        ["card", "list", "--lane="],
        ["card", "list", "--lane", "-x"],
        ["card", "list", "--lane=-x"],
        ["card", "list", "--lane", "a", "--lane", "b"],
        ["card", "list", "--json", "--json"],
        ["card", "list", "--json=1"],
        ["card", "list", "-h"],
        ["card", "list", "--"],
        ["card", "list", "extra"],
        ["card", "list", "--lane"],
        ["-C"],
        ["-C", "-d", "card", "list"],
        ["-Cd", "card", "list"],
        ["card", "list", "-C", "d"],
        ["card", "lis"],
    ],
)
def test_anything_else_goes_to_argparse(argv: list[str]) -> None:
    assert fast.card_list_args(list(argv)) is None


def test_a_refusal_reads_the_same_either_way(tmp_path: Path) -> None:
    """The verb's own refusals and main's checks come after the reading: a quick reading
    reaches them with the same arguments, so they say the same (the real `board`)."""
    root = make_repo(tmp_path, init="cli").root
    lane_argv = ["card", "list", "--lane", "nope"]
    where_argv = ["-C", "nowhere", "card", "list"]
    assert fast.card_list_args(lane_argv) is not None
    assert fast.card_list_args(where_argv) is not None
    lane = python_child(["-m", "board.cli", *lane_argv], cwd=root)
    assert lane.returncode == 1 and lane.stdout == ""
    assert lane.stderr == (
        "board: unknown lane 'nope': one of backlog, ready, working, review, done, cancelled\n"
    )
    where = python_child(["-m", "board.cli", *where_argv], cwd=root)
    assert where.returncode == 2
    assert where.stderr == "board: -C nowhere: does not exist\n"
    # and argparse's own readings are untouched: an abbreviation it takes, a value it refuses
    abbrev = python_child(["-m", "board.cli", "card", "list", "--lan", "ready"], cwd=root)
    assert abbrev.returncode == 0, abbrev.stderr
    dash = python_child(["-m", "board.cli", "card", "list", "--lane", "-x"], cwd=root)
    assert dash.returncode == 2
    assert dash.stderr == (
        "board: card list: argument --lane: expected one argument (a value that starts with "
        "'-' is written --lane=VALUE); see `board card list --help`\n"
    )


# the child runs the command line as the `board` program does (main() reads sys.argv), or
# as a caller in the same process does (main(argv): never ends the process)
AS_PROGRAM = (
    "import atexit, sys\n"
    "atexit.register(print, 'teardown ran', file=sys.stderr)\n"
    "from board.cli import main\n"
    "as_program = sys.argv.pop(1) == 'program'\n"
    "sys.exit(main() if as_program else main(sys.argv[1:]))\n"
)


def test_the_program_leaves_at_once_after_a_listing_with_every_line_out(tmp_path: Path) -> None:
    """After a quick `card list` that succeeded, the `board` program ends without the
    interpreter's teardown (atexit handlers, freeing every module) once its output is
    flushed: the same output and exit code as a caller of main(argv) sees, which the
    interpreter tears down as usual."""
    root = make_repo(tmp_path, init="cli").root
    for i in range(40):
        res = python_child(["-m", "board.cli", "card", "add", f"card {i}", "--spec", "s"], cwd=root)
        assert res.returncode == 0, res.stderr
    for argv, code in (
        (["card", "list"], 0),
        (["card", "list", "--json"], 0),
        (["card", "list", "--lane", "backlog"], 0),
        (["card", "list", "--lane", "nope"], 1),
        (["-C", "nowhere", "card", "list"], 2),
    ):
        program = python_child(["-c", AS_PROGRAM, "program", *argv], cwd=root)
        caller = python_child(["-c", AS_PROGRAM, "caller", *argv], cwd=root)
        assert program.returncode == caller.returncode == code, program.stderr
        assert program.stdout == caller.stdout, argv
        assert caller.stderr.endswith("teardown ran\n")
        # a refusal ends as always (what it left open is closed by the teardown:
        # tests/test_refusals.py's schema refusal leaves no SQLite -wal or -shm file)
        skipped = "teardown ran\n" if code == 0 else ""
        assert program.stderr == caller.stderr.removesuffix(skipped), argv
    listing = python_child(["-c", AS_PROGRAM, "program", "card", "list"], cwd=root)
    assert [line.split()[0] for line in listing.stdout.splitlines()] == [
        f"c-{i}" for i in range(1, 41)
    ]
    # any other verb (and a form argparse reads) ends as it always has
    other = python_child(["-c", AS_PROGRAM, "program", "card", "list", "--lan", "ready"], cwd=root)
    assert other.returncode == 0 and other.stderr == "teardown ran\n"
