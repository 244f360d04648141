#!/bin/sh
# A coder that edits one file (work/<card>.txt) and exits 0.
# argv: WORKTREE CARD [PIDFILE]
wt="$1"; card="$2"
[ -n "$3" ] && echo $$ >> "$3"
mkdir -p "$wt/work"
echo "work of $card" >> "$wt/work/$card.txt"
echo "edited work/$card.txt"
[ -n "$CODER_SLEEP" ] && sleep "$CODER_SLEEP"
exit 0
