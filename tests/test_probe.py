"""Reading a CLI's --help for the flags it offers (core/ops/probe.py): each help format the
four agent CLIs print, as their parsers write it (commander, clap, yargs, argparse). The
real programs' helps are read in tests/test_agents_real.py."""

from __future__ import annotations

import pytest
from board.core.ops import probe

HELP = """\
Usage: x [options]

Options:
  -p, --print                           Print response and exit
  --allowedTools, --allowed-tools <tools...>
      Comma or space-separated list of tool names to allow (e.g. "Bash(git *)
  --system-prompt[-file] <prompt>       The system prompt
                                        --permission-prompt-tool is not an option here
  -c, --config <key=value>
      --oss
          Use open-source provider
  -m, --model                     Model  [string]
  --message COMMAND, -m COMMAND, --msg COMMAND
  --gui, --no-gui, --browser, --no-browser
  --[no-]color                  Colour the output
"""


@pytest.mark.parametrize(
    "flag",
    ["-p", "--print", "--allowedTools", "--allowed-tools", "--system-prompt",
     "--system-prompt-file", "-c", "--config", "--oss", "-m", "--model", "--message",
     "--msg", "--gui", "--no-gui", "--browser", "--no-browser", "--color", "--no-color"],
)  # fmt: skip
def test_every_form_of_an_option_line_is_read(flag: str) -> None:
    assert flag in probe.offered_flags(HELP)


def test_a_flag_named_in_a_description_is_not_offered() -> None:
    assert "--permission-prompt-tool" not in probe.offered_flags(HELP)


def test_the_flags_an_argv_uses_and_the_help_that_covers_them() -> None:
    argv = ["codex", "exec", "--sandbox", "workspace-write", "--x=1", "-", "a prompt", "-q"]
    assert probe.used_flags(argv) == ["--sandbox", "--x", "-q"]
    assert probe.help_argv(argv) == ["codex", "exec", "--help"]
    assert probe.help_argv(["claude", "-p", "do it"]) == ["claude", "--help"]
    assert probe.help_argv(["aider", "Read the task"]) == ["aider", "--help"]


def test_a_version_is_read_past_a_warning() -> None:
    text = 'WARNING: proceeding, even though ... dir "/tmp"\ncodex-cli 0.171.0\n'
    assert probe.version_of(text) == "0.171.0"
    assert probe.version_of("2.1.332 (Claude Code)") == "2.1.332"


def test_init_coder_list_shows_the_tested_version_beside_the_one_on_path() -> None:
    from board.core import presets

    found = {"claude": presets.PRESETS["claude"].tested, "codex": "0.172.3", "aider": ""}
    text = presets.listing(found)
    tested = {p.name: p.tested for p in presets.PRESETS.values()}
    assert f"Claude Code (tested with {tested['claude']}; the same on PATH)" in text
    assert f"Codex CLI (tested with {tested['codex']}; 0.172.3 on PATH)" in text
    assert "Aider (tested with 0.86.2; not installed (aider is not on PATH))" in text
    assert all(p.tested for p in presets.PRESETS.values()), "a preset names no tested version"
