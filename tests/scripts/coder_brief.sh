#!/bin/sh
# A coder that prints its brief (so the log holds it), then edits one file.
# argv: BRIEF WORKTREE CARD
cat "$1"
mkdir -p "$2/work"
echo "work of $3" >> "$2/work/$3.txt"
exit 0
