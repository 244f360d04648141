#!/bin/sh
# A gate that records what it was given (argv and the BOARD_* environment) and passes.
# argv: RECORD-FILE [ANY...]
out="$1"; shift
{
    echo "argv: $*"
    echo "BOARD_CARD=$BOARD_CARD"
    echo "BOARD_BRIEF=$BOARD_BRIEF"
    echo "BOARD_WORKTREE=$BOARD_WORKTREE"
} >> "$out"
echo "gate: recorded"
exit 0
