#!/bin/sh
# A gate that is green only where setup ran (node_modules/setup.env), as a Node project's
# tests fail on `require` in a tree without node_modules.
[ -f node_modules/setup.env ] || { echo "gate: Cannot find module (no setup ran)"; exit 1; }
echo "gate: green"
exit 0
