#!/bin/sh
# A "shell" for the TUI's !: records where it ran and what the board told it, then exits
# (as an operator typing `exit`). Writes to $SHELL_RECORD.
{
    echo "pwd=$(pwd -P)"
    echo "card=$BOARD_CARD"
    echo "branch=$BOARD_BRANCH"
    echo "worktree=${BOARD_WORKTREE:-unset}"
} > "$SHELL_RECORD"
exit 3
