#!/bin/sh
# coder_candidate.sh, then what it spent in aider's words (a tier read with usage = "aider"):
# candidate K costs $0.0K, so each candidate's cost on its drive row is its own.
# argv: as coder_candidate.sh's
sh "$(dirname "$0")/coder_candidate.sh" "$@" || exit $?
k="${BOARD_CANDIDATE:?no BOARD_CANDIDATE}"
echo "Tokens: ${k}00 sent, 50 received. Cost: \$0.0${k} message, \$0.0${k} session."
exit 0
