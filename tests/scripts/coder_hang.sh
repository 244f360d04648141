#!/bin/sh
# A coder that prints, then sleeps forever with a grandchild holding stdout open.
# argv: WORKTREE CARD PIDFILE
echo $$ >> "$3"
echo "thinking about $2"
sleep 1000 &
sleep 1000
