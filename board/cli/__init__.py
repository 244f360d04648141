"""The `board` command line: the operator's verbs over the core, one clear line when refused.

`main` (in `commands.py`) reads the plain forms of `card list` itself; for anything else
`parsing.py` builds the parser from each verb module's `register(sub)`: `run`, `stranded`,
`logs`, `ops` (split, stop, approve, salvage, resolve), `tui`, and the demo.
The command line sits above both the core and the TUI: it may import either; neither
imports it.
"""

from board.cli.entry import main

__all__ = ["main"]
