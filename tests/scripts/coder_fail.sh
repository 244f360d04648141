#!/bin/sh
# A coder that leaves a half-done edit and exits 1.
# argv: WORKTREE CARD [PIDFILE]
[ -n "$3" ] && echo $$ >> "$3"
mkdir -p "$1/work"
echo "half-done by a failing coder (pid $$)" >> "$1/work/$2.txt"
echo "coder: cannot finish $2"
exit 1
