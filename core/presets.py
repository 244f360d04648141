"""Coder presets: the agent CLIs people run headless, with the flags each documents.

A first run that waits on a prompt, a permission dialog or a login page burns the night,
so each preset is the CLI's documented non-interactive form: the brief is handed over as
a file to read, edits are allowed and nothing else (no commits, no pushes: the board
makes the one commit), and the board runs it with no stdin. Each preset also names the
failure rules its CLI needs beyond the defaults (core/failures.py), which `board init
--coder NAME` writes as `[[failures.rules]]`. Plain data.
"""

from __future__ import annotations

from board.core.failures import Rule
from board.core.records import Frozen

PROMPT = (
    "Read the task in {brief} and do what it says in this directory. Edit files only: "
    "do not commit, push or create branches; the board commits your changes."
)


class Preset(Frozen):
    """One agent CLI: its program, the argv of a headless run, the rules it needs, and
    where its flags are documented."""

    __slots__ = __match_args__ = ("name", "title", "argv", "docs", "why", "rules")
    name: str
    title: str
    argv: tuple[str, ...]
    docs: str
    why: str  # one line: what the flags do
    rules: tuple[Rule, ...]

    def __init__(
        self,
        name: str,
        title: str,
        argv: tuple[str, ...],
        docs: str,
        why: str,
        rules: tuple[Rule, ...] = (),
    ) -> None:
        set_ = object.__setattr__
        set_(self, "name", name)
        set_(self, "title", title)
        set_(self, "argv", argv)
        set_(self, "docs", docs)
        set_(self, "why", why)
        set_(self, "rules", rules)

    @property
    def program(self) -> str:
        return self.argv[0]


PRESETS: dict[str, Preset] = {
    p.name: p
    for p in (
        Preset(
            "claude",
            "Claude Code",
            (
                "claude",
                "-p",
                PROMPT,
                "--permission-mode",
                "acceptEdits",
                "--disallowedTools",
                "Bash(git commit:*),Bash(git push:*)",
                "--output-format",
                "text",
            ),
            "https://docs.anthropic.com/en/docs/claude-code/cli-reference",
            "-p prints and exits; acceptEdits approves file edits and nothing else asks "
            "(a tool that would ask is refused, not waited on); git commit and push denied",
            (
                # a 500 from the API (the defaults take 502-504 only)
                Rule(r"api error:? \(?5\d\d\b", "transient", ("coder",), (), 15, 5),
            ),
        ),
        Preset(
            "codex",
            "Codex CLI",
            ("codex", "exec", "--full-auto", "--skip-git-repo-check", PROMPT),
            "https://github.com/openai/codex/blob/main/docs/exec.md",
            "exec never asks for approval; --full-auto lets it edit the workspace (its "
            "sandbox keeps it there); exits 1 when a turn fails",
            (
                # its ChatGPT-plan limit: "You've hit your usage limit … try again in 2 days …"
                Rule(r"you've hit your usage limit", "rate-limit", ("coder",), (), 600, 10),
            ),
        ),
        Preset(
            "aider",
            "Aider",
            (
                "aider",
                "--message-file",
                "{brief}",
                "--yes-always",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-check-update",
                "--no-show-release-notes",
                "--analytics-disable",
                "--no-stream",
            ),
            "https://aider.chat/docs/scripting.html",
            "--message-file runs one message and exits; --yes-always answers every question; "
            "no commits of its own. It exits 0 even when its calls failed, so its messages "
            "are matched on a run that changed nothing",
            (
                Rule(r"provider timed out without returning", "transient", ("coder",), (), 15, 5),
                Rule(r"servers are down or overloaded", "transient", ("coder",), (), 30, 5),
            ),
        ),
        Preset(
            "gemini",
            "Gemini CLI",
            ("gemini", "-p", PROMPT, "--approval-mode", "auto_edit", "--skip-trust"),
            "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md",
            "-p runs headless; auto_edit approves edits and a tool that would ask is not "
            "run; --skip-trust, since a headless run in an untrusted folder stops",
            (
                # its documented exit code 41: FatalAuthenticationError
                Rule(r"^", "auth", ("coder",), (41,), 0, 1),
            ),
        ),
    )
}


def preset(name: str) -> Preset | None:
    return PRESETS.get(name)


def listing() -> str:
    """What `board init --coder list` prints."""
    lines = []
    for p in PRESETS.values():
        lines.append(f"{p.name:<8} {p.title}: {' '.join(_shown(a) for a in p.argv)}")
        lines.append(f"         {p.why}")
        lines.append(f"         flags: {p.docs}")
    return "\n".join(lines)


def _shown(arg: str) -> str:
    return repr(arg) if (" " in arg or not arg) else arg


def readme_block() -> str:
    """The README's table of presets (tests/test_presets.py keeps them equal)."""
    import json

    out = []
    for p in PRESETS.values():
        out.append(f"**{p.title}** (`--coder {p.name}`, flags: {p.docs}): {p.why}.")
        out.append("")
        out.append("```toml")
        out.append(f"[coder.tiers.{p.name}]")
        out.append(f"argv = {json.dumps(list(p.argv), ensure_ascii=False)}")
        out.append("```")
        out.append("")
    return "\n".join(out)
