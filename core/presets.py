"""Coder presets: the agent CLIs people run headless, with the flags each documents.

A first run that waits on a prompt, a permission dialog or a login page burns the night,
so each preset is the CLI's documented non-interactive form: the brief is handed over as
a file to read, edits are allowed and nothing else (no commits, no pushes: the board
makes the one commit), and the board runs it with no stdin. Each preset also names the
failure rules its CLI needs beyond the defaults (core/failures.py), which `board init
--coder NAME` writes as `[[failures.rules]]`. Plain data.
"""

from __future__ import annotations

from typing import Any

from board.core.failures import Rule
from board.core.records import Frozen

PROMPT = (
    "Read the task in {brief} and do what it says in this directory. Edit files only: "
    "do not commit, push or create branches; the board commits your changes."
)


class Preset(Frozen, slots=True):
    """One agent CLI: its program, the argv of a headless run, the rules it needs, and
    where its flags are documented."""

    name: str
    title: str
    argv: tuple[str, ...]
    docs: str
    why: str  # one line: what the flags do
    rules: tuple[Rule, ...] = ()
    tested: str = ""  # the CLI's version tests/test_agents_real.py runs this argv against
    excludes: tuple[str, ...] = ()  # what the CLI writes in the tree: init adds it to info/exclude
    usage: str = "none"  # the reader of what it spent (core/usage.py), from its output format
    usage_docs: str = ""  # where that output format is documented

    @property
    def program(self) -> str:
        return self.argv[0]

    def tier_table(self) -> dict[str, Any]:
        """The `[coder.tiers.NAME]` table `board init --coder NAME` writes."""
        return {"argv": list(self.argv), "usage": self.usage}


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
                "stream-json",
                "--verbose",
            ),
            "https://docs.anthropic.com/en/docs/claude-code/cli-reference",
            "-p prints and exits; acceptEdits approves file edits and nothing else asks "
            "(a tool that would ask is refused, not waited on); git commit and push denied; "
            "stream-json (which -p needs --verbose for) carries the result's cost, tokens "
            "and turns, and the drive log shows its messages as text",
            (
                # a 500 from the API (the defaults take 502-504 only)
                Rule(r"api error:? \(?5\d\d\b", "transient", ("coder",), (), 15, 5),
            ),
            tested="2.1.332",
            usage="claude",
            usage_docs="https://docs.anthropic.com/en/docs/claude-code/headless",
        ),
        Preset(
            "codex",
            "Codex CLI",
            (
                "codex",
                "exec",
                "--json",
                "--sandbox",
                "workspace-write",
                "--skip-git-repo-check",
                PROMPT,
            ),
            "https://github.com/openai/codex/blob/main/docs/exec.md",
            "exec never asks for approval; --sandbox workspace-write lets it edit the "
            "workspace and nothing outside it (--full-auto is gone since 0.171); exits 1 "
            "when a turn fails; --json prints events whose turns carry the tokens (no "
            "cost: set [usage.prices] for its model, named with -m)",
            (
                # its ChatGPT-plan limit: "You've hit your usage limit … try again in 2 days …"
                Rule(r"you've hit your usage limit", "rate-limit", ("coder",), (), 600, 10),
            ),
            tested="0.171.0",
            usage="codex",
            usage_docs="https://github.com/openai/codex/blob/main/docs/exec.md#json-output-mode",
        ),
        Preset(
            "aider",
            "Aider",
            (
                "aider",
                "--model",
                "sonnet",
                "--message-file",
                "{brief}",
                "--yes-always",
                "--no-auto-commits",
                "--no-dirty-commits",
                "--no-gitignore",
                "--no-show-model-warnings",
                "--no-check-update",
                "--no-show-release-notes",
                "--analytics-disable",
                "--no-stream",
            ),
            "https://aider.chat/docs/scripting.html",
            "--message-file runs one message and exits; --yes-always answers every question; "
            "no commits of its own. --model names the model (change it to yours): with none "
            "and no key, aider offers an OpenRouter login and waits 5 minutes for a browser. "
            "--no-gitignore: it does not edit .gitignore (init excludes .aider* in "
            ".git/info/exclude); --no-show-model-warnings: a missing key's warning does not "
            "open a browser. It exits 0 even when its calls failed, so its messages are "
            "matched on a run that changed nothing",
            (
                Rule(r"provider timed out without returning", "transient", ("coder",), (), 15, 5),
                Rule(r"servers are down or overloaded", "transient", ("coder",), (), 30, 5),
            ),
            tested="0.86.2",
            excludes=(".aider*",),
            usage="aider",
            usage_docs="https://github.com/Aider-AI/aider/blob/v0.86.2/aider/coders/base_coder.py",
        ),
        Preset(
            "gemini",
            "Gemini CLI",
            (
                "gemini",
                "-p",
                PROMPT,
                "--approval-mode",
                "auto_edit",
                "--skip-trust",
                "--output-format",
                "stream-json",
            ),
            "https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md",
            "-p runs headless; auto_edit approves edits and a tool that would ask is not "
            "run; --skip-trust, since a headless run in an untrusted folder stops; "
            "stream-json's result carries the tokens per model (no cost: set "
            "[usage.prices])",
            (
                # its documented exit code 41: FatalAuthenticationError
                Rule(r"^", "auth", ("coder",), (41,), 0, 1),
            ),
            tested="0.61.0",
            usage="gemini",
            usage_docs="https://github.com/google-gemini/gemini-cli/blob/main/docs/cli/headless.md#output-formats",
        ),
    )
}


def preset(name: str) -> Preset | None:
    return PRESETS.get(name)


def listing(installed: dict[str, str] | None = None) -> str:
    """What `board init --coder list` prints: each preset, the CLI version its argv was
    tested with, and the version on PATH (`installed`, by preset name) when it differs."""
    lines = []
    for p in PRESETS.values():
        found = (installed or {}).get(p.name, "")
        have = ""
        if installed is not None:
            have = (
                f"; not installed ({p.program} is not on PATH)"
                if not found
                else f"; {found} on PATH"
                if found != p.tested
                else "; the same on PATH"
            )
        lines.append(f"{p.name:<8} {p.title} (tested with {p.tested}{have})")
        lines.append(f"         {' '.join(_shown(a) for a in p.argv)}")
        lines.append(f"         {p.why}")
        lines.append(f"         flags: {p.docs}")
    return "\n".join(lines)


def _shown(arg: str) -> str:
    return repr(arg) if (" " in arg or not arg) else arg


def readme_block() -> str:
    """docs/agents.md's table of presets (tests/test_presets.py keeps them equal)."""
    import json  # only the docs' table

    out = []
    for p in PRESETS.values():
        out.append(
            f"**{p.title}** (`--coder {p.name}`, tested with {p.tested}, flags: {p.docs}): {p.why}."
            f' What it spent is read by `usage = "{p.usage}"`, from the format at {p.usage_docs}.'
        )
        out.append("")
        out.append("```toml")
        out.append(f"[coder.tiers.{p.name}]")
        out.append(f"argv = {json.dumps(list(p.argv), ensure_ascii=False)}")
        out.append(f"usage = {json.dumps(p.usage)}")
        out.append("```")
        out.append("")
    return "\n".join(out)
