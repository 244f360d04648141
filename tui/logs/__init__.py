"""Live drive logs: the list of drives and the selected drive's log, followed as it grows.

Operators watch coders for hours, over SSH, through these logs. So the view
never waits on a file: `LogView` draws only the visible lines through the
line API (one `Strip` per row, an LRU cache of rendered lines), the index is
built from the end by a worker thread (`board.core.logs.LogFile.scan`), and a
watcher thread indexes appended bytes and tells the view, one pending notice
at a time, backing off while the app has not caught up. Every line is plain
`Text` run through `sanitize`: log content never becomes markup or a terminal
escape (invariant 5).

Laid out as toolong separates I/O from views: `drives` reads the drive list (no
Textual), `view` is the log view, `screen` puts the list and the view together.
"""
