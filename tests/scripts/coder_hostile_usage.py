"""A coder whose output is hostile to the usage readers: lines that look like what its
reader reads and are not (aider's `Cost: $1.2.3`, a token count too big for any column,
Claude's `modelUsage` entry that is no object, a tool result whose text is a number, a
model named over several lines), then 200 KB more output, far past what a pipe holds, and
a last line; it edits work/<card>.txt and exits 0.

argv: WORKTREE CARD READER (aider | claude)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HOSTILE = {
    "aider": [
        "Model: evil\x1b[31m with whole edit format",
        "Tokens: 1.2.3k sent, 5 received. Cost: $1.2.3 message, $1..2 session.",
        "Tokens: "
        + "9" * 400
        + " sent, 5 received. Cost: $"
        + "9" * 400
        + " message, $0.01 session.",
    ],
    "claude": [
        json.dumps({"type": "system", "subtype": "init", "model": "m\nboard: forged [red]line"}),
        json.dumps(
            {
                "type": "user",
                "message": {
                    "content": [{"type": "tool_result", "is_error": True, "content": [{"text": 5}]}]
                },
            }
        ),
        json.dumps(
            {
                "type": "result",
                "modelUsage": {"x": 5},
                "usage": {"input_tokens": 10**30},
                "total_cost_usd": 1e308,
            }
        ),
    ],
}


def main() -> int:
    worktree, card, reader = sys.argv[1:4]
    out = sys.stdout
    for line in HOSTILE[reader]:
        out.write(line + "\n")
    for i in range(2000):  # 200 KB: the pipe fills unless the board reads on
        out.write(f"more output {i:05d} " + "." * 82 + "\n")
    out.write("the last line of the coder\n")
    out.flush()
    path = Path(worktree) / "work" / f"{card}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"work of {card}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
