#!/bin/sh
# A coder that prints nothing and hangs (it never reached its model).
# argv: WORKTREE CARD PIDFILE
echo $$ >> "$3"
sleep 1000 &
exec sleep 1000
