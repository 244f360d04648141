#!/usr/bin/env python3
"""A coder for the real projects of tests/test_tree_projects.py: it makes the change the
card's spec names (`do: NAME`), as an agent that read the brief would.

argv: BRIEF WORKTREE. The changes:
- calc-right: a new module src/calc/mul.py and its test (green only where the tree's own
  code is imported: the operator's editable install has no calc.mul);
- calc-wrong: breaks add() in src/calc/__init__.py (red only where the tree's code is
  imported: the operator's checkout stays green);
- node-right: the local `greet` dependency (deps/greet) gains shout(), and src/shout.js
  uses it, with a test (green only where the tree's node_modules links the tree's deps/greet:
  a tree without node_modules finds the checkout's, by Node's walk up the parent folders).
"""

import re
import sys
from pathlib import Path

CHANGES = {
    "calc-right": {
        "src/calc/mul.py": "def mul(a, b):\n    return a * b\n",
        "tests/test_mul.py": (
            "from calc.mul import mul\n\n\ndef test_mul():\n    assert mul(3, 4) == 12\n"
        ),
    },
    "calc-wrong": {
        "src/calc/__init__.py": "def add(a, b):\n    return a - b\n",
    },
    "node-right": {
        "deps/greet/index.js": (
            "const greet = (name) => `Hello, ${name}`;\n"
            "module.exports = { greet, shout: (name) => greet(name).toUpperCase() };\n"
        ),
        "src/shout.js": "const { shout } = require('greet');\nmodule.exports = { shout };\n",
        "test/shout.test.js": (
            "const test = require('node:test');\n"
            "const assert = require('node:assert');\n"
            "const { shout } = require('../src/shout');\n"
            "test('shout', () => { assert.strictEqual(shout('bob'), 'HELLO, BOB'); });\n"
        ),
    },
}

brief, tree = Path(sys.argv[1]), Path(sys.argv[2])
match = re.search(r"do: ([a-z-]+)", brief.read_text(encoding="utf-8"))
if match is None or match.group(1) not in CHANGES:
    print("coder: the brief names no change I know", file=sys.stderr)
    sys.exit(3)
for name, text in CHANGES[match.group(1)].items():
    (tree / name).parent.mkdir(parents=True, exist_ok=True)
    (tree / name).write_text(text, encoding="utf-8")
    print(f"coder: wrote {name}", flush=True)
