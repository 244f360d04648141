"""The stranded-work browser: every stranded/… branch and husk, its diff, one key to act.

A coder died, a drive was stopped, a card was cancelled: the board saved the tree to a
`stranded/<tree>/<stamp>` branch (or moved a husk aside) before removing it. This screen
is where the operator brings that work home or lets it go. Each key is one call into the
core verbs the CLI offers too (`ops.pick`, `ops.salvage`, `ops.discard`),
run in a worker and reported as one line, never a traceback.

Keys (each a Binding with an id, rebindable in board.toml `[tui.keys]`): `enter` the diff,
`p` cherry-pick onto a branch (asks which; the run branch by default, the base in push
mode), `S` salvage (publishes through the gate), `d` discard (asks, naming the branch and
its diffstat), `y` copy the recovery commands (OSC 52, and shown on screen), `o` the card,
`/` filter, `s`/`r` sort, `esc` back. After each verb the list is read again.

The package is laid out as posting groups a feature and as toolong separates I/O from
views. What reads and prepares has no Textual in it: `rows` (the row model, reading the
list, sorting and folding it), `verbs` (the recovery commands, a verb's result in words)
and `buffer` (the diff as it streams in). The views draw it: `table` (the list),
`diff_view` (the diff and its file list); the screens put them together: `browser` (the
list and its keys), `diff_screen` (one branch's diff), `target` (which branch to pick onto).

Everything that came from a coder or a user (branch names, titles, paths, diff lines) is
painted as plain text through `sanitize`: no markup, no escape sequence (invariant 5).
"""
