#!/bin/sh
# A coder that copies the value of API_TOKEN from the tree's .env into a tracked file, as a
# careless agent "hard-codes the config". argv: WORKTREE
wt="$1"
token=$(sed -n 's/^API_TOKEN=//p' "$wt/.env")
echo "TOKEN = '$token'" >> "$wt/app.py"
echo "wrote the token into app.py"
exit 0
