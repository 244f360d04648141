#!/bin/sh
echo "GATE-RED: test_feature failed (expected 2, got 3)"
exit 1
