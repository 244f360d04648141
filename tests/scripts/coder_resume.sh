#!/bin/sh
# A coder in two sittings: the first writes "part 1" to work/<card>.txt and then works on
# (sleeps) until it is stopped; a later one finds part 1 in its tree, adds "part 2" and
# exits 0. A later sitting that does not find part 1 exits 3: its work was lost.
# argv: WORKTREE CARD
wt="$1"; card="$2"; f="$wt/work/$card.txt"
mkdir -p "$wt/work"
if grep -qx "part 1" "$f" 2>/dev/null; then
    echo "part 2" >> "$f"
    echo "continued from part 1"
    exit 0
fi
if [ -e "$wt/../.$card.first-sitting-done" ]; then
    echo "coder: part 1 is not in this tree: the stopped work was lost"
    exit 3
fi
echo "part 1" > "$f"
touch "$wt/../.$card.first-sitting-done"
echo "wrote part 1; working on"
sleep 60
exit 0
