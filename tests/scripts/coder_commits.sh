#!/bin/sh
# A coder that ignores the brief and commits by itself.
# argv: WORKTREE CARD
mkdir -p "$1/work"
echo "work of $2" >> "$1/work/$2.txt"
git -C "$1" add -A work
git -C "$1" -c user.name=coder -c user.email=coder@example.com commit -q -m "coder's own commit"
echo "committed work/$2.txt myself"
exit 0
