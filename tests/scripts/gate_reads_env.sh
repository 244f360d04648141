#!/bin/sh
# A gate that reads the tree's .env as a project's tests do: red without it or without
# API_TOKEN in it. It never prints the value.
[ -f .env ] || { echo "gate: .env is missing"; exit 1; }
grep -q '^API_TOKEN=' .env || { echo "gate: no API_TOKEN in .env"; exit 1; }
echo "gate: read API_TOKEN from .env"
exit 0
