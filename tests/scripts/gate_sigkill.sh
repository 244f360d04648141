#!/bin/sh
# A gate killed by a signal (an OOM kill, say): no verdict.
echo "gate: starting"
kill -9 $$
