"""`board doctor`: is this repository ready for the board? One line per check."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from board.cli.show import visible

if TYPE_CHECKING:
    from board.cli.commands import Context, Subparsers
    from board.core.ops.doctor import Check


def register(sub: Subparsers) -> None:
    """Add `board doctor` to the CLI's subparsers."""
    p = sub.add_parser(
        "doctor",
        help="is this repository ready: git, the store, the coders, a fresh tree's setup and gate",
        description=(
            "Checks git, the base and run branches, the store, the ignored folders, that git "
            "tracks nothing in .board/, each tier's program, the files [tree] copy names, and "
            "(push mode) the remote and the PR command; then makes a throwaway tree at the "
            "start point, copies, runs [tree] setup and the gate there (which must be green), "
            "asks a Python gate's interpreter whether it imports the project from the tree "
            "(not the checkout, through an editable install), and removes the tree. Exits 1 "
            "when a check fails."
        ),
    )
    p.add_argument(
        "--json", action="store_true", help="print the checks as JSON (see docs/trees.md)"
    )
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.ops import doctor  # here: building the parser does not pay for it

    def show(check: Check) -> None:
        if not args.json:
            for line in doctor.check_lines(check):
                ctx.out(visible(line))

    with _stop_is_interrupt():
        checks = doctor.diagnose(ctx.root, on_check=show)
    if args.json:
        ctx.emit_json(doctor.report(checks))
    else:
        ctx.out(doctor.summary(checks))
    return 0 if doctor.passed(checks) else 1


@contextmanager
def _stop_is_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP (a closed terminal) end the doctor as Ctrl-C does: its child is
    killed and its throwaway tree removed, not left behind."""
    import signal

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    kept = {s: signal.signal(s, interrupt) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, handler in kept.items():
            signal.signal(s, handler)
