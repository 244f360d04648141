#!/bin/sh
# A hostile coder: turns the tree's copied .env, and a new file, into symlinks to a FIFO
# nobody writes, so that any read of them that follows the link or blocks hangs forever.
# argv: WORKTREE FIFO
wt="$1"; fifo="$2"
[ -p "$fifo" ] || mkfifo "$fifo"
rm -f "$wt/.env"
ln -s "$fifo" "$wt/.env"
ln -s "$fifo" "$wt/notes.txt"
mkdir -p "$wt/work" && echo "work" > "$wt/work/done.txt"
echo "made the links"
exit 0
