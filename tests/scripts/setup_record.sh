#!/bin/sh
# A [tree] setup command: records what it was given in node_modules/setup.env (ignored by the
# test repositories' .gitignore, as a real install is) and, when given, in RECORD outside the
# tree; reads stdin to prove it has none; prints a line for the drive log.
# argv: [EXIT] [RECORD] [SLEEP]  (exits EXIT, 0 by default, after recording and sleeping)
mkdir -p node_modules
entry="card=$BOARD_CARD worktree=$BOARD_WORKTREE root=$BOARD_ROOT slot=$BOARD_SLOT cwd=$(pwd) stdin=$(cat | wc -c)"
echo "$entry" >> node_modules/setup.env
[ -n "$2" ] && echo "$entry" >> "$2"
echo "setup: installed for $BOARD_CARD"
[ -n "$3" ] && sleep "$3"
if [ -n "$1" ] && [ "$1" != 0 ]; then
  echo "setup: the lockfile does not match package.json" >&2
  exit "$1"
fi
exit 0
