#!/usr/bin/env python3
"""A stand-in for a failing PR service: prints an error like `gh` does and exits 1.

Only the PR service is stubbed in the tests; git, the remote and the board are real.
"""

import sys

print("Creating pull request...")
print("GraphQL: Resource not accessible by integration (createPullRequest)", file=sys.stderr)
sys.exit(1)
