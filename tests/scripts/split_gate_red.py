#!/usr/bin/env python3
"""A gate that is always red, so the drive runs a fix round in the kept worktree."""

import sys

print("gate: 1 test failed", flush=True)
sys.exit(1)
