#!/bin/sh
# A coder that prints its brief (so the log holds it), writes TEXT to work/<card>.txt
# (replacing it) and exits EXIT: one rung of a ladder that does well or badly.
# argv: BRIEF WORKTREE CARD TEXT EXIT
cat "$1"
mkdir -p "$2/work"
printf '%s\n' "$4" > "$2/work/$3.txt"
echo "wrote work/$3.txt; exiting $5"
exit "$5"
