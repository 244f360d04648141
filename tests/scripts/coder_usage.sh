#!/bin/sh
# A coder CLI that no longer knows a flag board.toml gives it, as codex 0.171 with
# --full-auto: clap's usage error, exit 2.
echo "error: unexpected argument '--full-auto' found" >&2
echo "" >&2
echo "  tip: to pass '--full-auto' as a value, use '-- --full-auto'" >&2
echo "" >&2
echo "Usage: codex exec [OPTIONS] [PROMPT]" >&2
echo "" >&2
echo "For more information, try '--help'." >&2
exit 2
