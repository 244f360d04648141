#!/bin/sh
# A coder that edits inside its surface, rewrites a tracked lockfile outside it (as
# `npm install` does) and leaves an untracked note outside it.
# argv: WORKTREE CARD
mkdir -p "$1/work"
echo "work of $2" >> "$1/work/$2.txt"
echo '{"lockfileVersion": 99, "rewritten": true}' > "$1/package-lock.json"
echo "scribbles" > "$1/notes-$2.txt"
echo "edited work/$2.txt; ran npm install"
exit 0
