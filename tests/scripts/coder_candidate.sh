#!/bin/sh
# A best-of-N candidate (issue 42): writes work/<card>.txt with as many lines as its entry in
# SIZES gives ($BOARD_CANDIDATE picks the entry, from 1); an entry ending in `r` also writes
# work/RED, which gate_candidate.sh fails on. It logs "start K" and "end K" to LOG, and greps
# its brief for the candidate line; an entry ending in `@S` sleeps S seconds first, so it
# finishes late. Once its files are written it logs "wrote K" and its process group to
# LOG.pids; an entry ending in `~S` then sleeps S seconds (a slow candidate, stopped with its
# work on disk), one ending in `=W` first waits until W candidates have logged "wrote".
# argv: WORKTREE CARD SIZES (e.g. 3,1r,2@1 or 1=2,2~60,3~60) LOG BRIEF
wt="$1"; card="$2"; sizes="$3"; log="$4"; brief="$5"
k="${BOARD_CANDIDATE:?no BOARD_CANDIDATE}"
echo "start $k $(date +%s.%N)" >> "$log"
entry=$(echo "$sizes" | cut -d, -f"$k")
echo "$k $$" >> "$log.pids"
case "$entry" in *@*) sleep "${entry#*@}"; entry="${entry%@*}" ;; esac
after=0
case "$entry" in *~*) after="${entry#*~}"; entry="${entry%~*}" ;; esac
case "$entry" in *=*)
  want="${entry#*=}"; entry="${entry%=*}"; t=0
  while [ "$(grep -c '^wrote ' "$log")" -lt "$want" ] && [ "$t" -lt 600 ]; do
    sleep 0.1; t=$((t + 1))
  done ;;
esac
n=${entry%r}
mkdir -p "$wt/work"
: > "$wt/work/$card.txt"
i=1
while [ "$i" -le "$n" ]; do
  echo "candidate $k line $i" >> "$wt/work/$card.txt"
  i=$((i + 1))
done
[ "$entry" != "$n" ] && echo "red" > "$wt/work/RED"
grep -q "You are candidate $k of" "$brief" || echo "no candidate line in the brief" >> "$wt/work/$card.txt"
echo "wrote $k $(date +%s.%N)" >> "$log"
[ "$after" != 0 ] && sleep "$after"
[ -n "$CODER_SLEEP" ] && sleep "$CODER_SLEEP"
echo "end $k $(date +%s.%N)" >> "$log"
echo "candidate $k wrote $n line(s)"
exit 0
