#!/bin/sh
# A coder that edits a tracked file and hides the edit behind an index bit (as some tools
# do with `git update-index --assume-unchanged` or `--skip-worktree`), then exits EXIT.
# argv: WORKTREE CARD BIT EXIT
echo "edited by $2, behind $3" >> "$1/work/tracked.txt"
git -C "$1" update-index "$3" work/tracked.txt
echo "edited work/tracked.txt and marked it $3"
exit "$4"
