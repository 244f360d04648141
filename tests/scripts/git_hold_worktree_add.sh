#!/bin/sh
# git, except that `git worktree add` first creates $GIT_HOLD_STARTED and waits (at most
# 20s) for $GIT_HOLD_UNTIL to exist: a test takes the store's write lock there, after the
# claim and before the coder starts. Everything else is git as it is.
if [ "$1" = "worktree" ] && [ "$2" = "add" ] && [ -n "$GIT_HOLD_UNTIL" ] \
    && [ ! -e "$GIT_HOLD_UNTIL" ]; then
    : > "$GIT_HOLD_STARTED"
    i=0
    while [ ! -e "$GIT_HOLD_UNTIL" ] && [ "$i" -lt 2000 ]; do
        sleep 0.01
        i=$((i + 1))
    done
fi
exec "$REAL_GIT" "$@"
