#!/bin/sh
# The gate of the best-of-N tests: red when the tree holds work/RED. argv: WORKTREE
if [ -e "$1/work/RED" ]; then
  echo "GATE-RED: work/RED is there"
  exit 1
fi
echo "gate: green"
exit 0
