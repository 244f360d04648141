#!/bin/sh
# A coder whose card needs the previous card's code: card c-N appends "step N" to
# work/chain.txt, and exits 3 when step N-1 is not already there (its dependency's work is
# missing from the tree it was given).
# argv: WORKTREE CARD
wt="$1"; card="$2"; n="${card##*-}"
mkdir -p "$wt/work"
if [ "$n" -gt 1 ] && ! grep -qx "step $((n - 1))" "$wt/work/chain.txt" 2>/dev/null; then
    echo "coder: work/chain.txt lacks step $((n - 1)): the dependency's code is not here"
    exit 3
fi
echo "step $n" >> "$wt/work/chain.txt"
echo "appended step $n"
exit 0
