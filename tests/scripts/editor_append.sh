#!/bin/sh
# An "editor" for the TUI's E: appends EDITOR_LINE to the file it is given and exits
# EDITOR_EXIT (default 0). argv: FILE
printf '%s\n' "${EDITOR_LINE:-edited in the editor}" >> "$1"
exit "${EDITOR_EXIT:-0}"
