#!/bin/sh
# git, except that `git diff --patch` begins SLOW_GIT_DELAY seconds late: a stand-in for a
# diff that git takes long to start writing (a new file of a million lines), so a test can
# see what the diff view shows before git's first byte. Everything else runs at once.
for arg in "$@"; do
    if [ "$arg" = "--patch" ]; then
        sleep "${SLOW_GIT_DELAY:-1}"
        break
    fi
done
exec "$REAL_GIT" "$@"
