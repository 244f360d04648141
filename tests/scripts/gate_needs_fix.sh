#!/bin/sh
# Green only when every work file says "fixed".
for f in work/*.txt; do
  if ! grep -q fixed "$f"; then
    echo "GATE-RED: $f is not fixed"
    exit 1
  fi
done
echo "gate: fixed"
exit 0
