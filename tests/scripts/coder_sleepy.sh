#!/bin/sh
# A coder that edits, says so, then keeps working (sleeps) until killed.
# argv: WORKTREE CARD [PIDFILE]
[ -n "$3" ] && echo $$ >> "$3"
mkdir -p "$1/work"
echo "work of $2, unfinished" >> "$1/work/$2.txt"
echo "edited work/$2.txt"
sleep 1000
