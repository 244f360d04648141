#!/bin/sh
# A coder that keeps writing numbered markers into its tree and never stops by itself. It
# ignores SIGPIPE, so it outlives a `board run` killed under it (its stdout's reader gone).
# Each marker is noted in LEDGER (outside the tree) only once it is in the tree: a marker in
# the ledger and on no saved branch is a marker lost.
# argv: WORKTREE CARD PIDFILE LEDGER
trap '' PIPE
echo $$ >> "$3"
mkdir -p "$1/work"
n=0
while :; do
    n=$((n + 1))
    echo "marker $n" >> "$1/work/markers.txt" 2>/dev/null || exit 0  # the tree went
    echo "$n" >> "$4"
    echo "wrote marker $n" 2>/dev/null
    sleep 0.01
done
