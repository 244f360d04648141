#!/bin/sh
# A coder whose first try is wrong; given a red gate's output in the brief, it fixes it.
# argv: BRIEF WORKTREE CARD
mkdir -p "$2/work"
if grep -q "GATE-RED" "$1"; then
  echo "fixed" > "$2/work/$3.txt"
  echo "fixing what the gate said"
else
  echo "draft" > "$2/work/$3.txt"
  echo "first draft"
fi
exit 0
