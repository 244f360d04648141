"""Does the installed agent CLI still take the flags its tier gives it? Asked offline.

Agent CLIs rename and drop flags every few weeks: Codex 0.171 dropped `exec --full-auto`,
and every card on that tier blocked in turn before anyone looked. Each CLI answers
`--version` and `--help` (or a subcommand's, `codex exec --help`) with no login and no
network, so `board doctor` asks it whether every flag of the tier's argv is still offered,
before a card is spent on it. Only the presets' programs are asked: running an unknown
coder with `--help` may do anything that coder does with an argument it does not expect.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from board.core import presets, proc
from board.core.records import Record, field

PROBE_TIMEOUT_S = 60.0
_OPTION = re.compile(r"--?[A-Za-z0-9][A-Za-z0-9_-]*")
_VERSION = re.compile(r"\b(\d+\.\d+(?:\.\d+)?(?:[-.][0-9A-Za-z.]+)?)\b")
_SUBCOMMAND = re.compile(r"^[a-z][a-z0-9-]*$")


# A help text defines an option on an entry line: at most ENTRY_INDENT spaces in, then its
# forms, each a flag with maybe a value, joined by "," "/" "|" or a space before the next
# flag, then a gap and the description:
#   commander (claude)  "  -p, --print", "  --add-dir <directories...>", "  -d, --debug [filter]"
#   clap (codex)        "  -c, --config <key=value>", "      --oss"
#   yargs (gemini)      "  -m, --model   Model  [string]"
#   argparse (aider)    "  --message COMMAND, -m COMMAND, --msg COMMAND"
# Flags inside a description are not taken: those lines are indented deeper (claude wraps
# its descriptions to column 40, some of whose lines begin with a flag) or do not begin
# with one. `--[no-]x` gives --x and --no-x; claude's `--system-prompt[-file]` gives
# --system-prompt and --system-prompt-file.
ENTRY_INDENT = 8
_FLAG = re.compile(r"-{1,2}[A-Za-z0-9?][\w-]*")
_SUFFIX = re.compile(r"\[(-[\w-]+)\]")  # --name[-suffix]
_VALUE = re.compile(
    r"(?:=\S+|\[=[^\]]*\]|\s?<[^>]*>|\s?\[[^\]]*\]|\s[A-Z][A-Z0-9_.=-]*)(?:\.\.\.)?"
)
_SEP = re.compile(r"\s*[,/|]\s*|\s(?=-)")


def offered_flags(help_text: str) -> set[str]:
    """Every flag a program's `--help` defines, long and short forms alike."""
    found: set[str] = set()
    for raw in help_text.splitlines():
        line = re.sub(r"\x1b\[[0-9;]*m", "", raw).replace("\t", "    ")  # colour, tabs
        line = re.sub(r"--\[no-\]([\w-]+)", r"--\1 / --no-\1", line)
        body = line.lstrip(" ")
        if len(line) - len(body) > ENTRY_INDENT:
            continue
        pos = 0
        while m := _FLAG.match(body, pos):
            flag, pos = m.group(), m.end()
            found.add(flag)
            if s := _SUFFIX.match(body, pos):
                found.add(flag + s.group(1))
                pos = s.end()
            while v := _VALUE.match(body, pos):
                pos = v.end()
            sep = _SEP.match(body, pos)
            if not sep:
                break
            pos = sep.end()
    return found


def used_flags(argv: tuple[str, ...] | list[str]) -> list[str]:
    """The flags an argv passes, in order (`--x=1` as `--x`; `-`, `--` and values not)."""
    out = []
    for arg in argv[1:]:
        if not arg.startswith("-") or arg in ("-", "--") or " " in arg:
            continue
        flag = arg.split("=", 1)[0]
        if _OPTION.fullmatch(flag) and flag not in out:
            out.append(flag)
    return out


def preset_of(program: str) -> presets.Preset | None:
    """The preset whose program this is (by its file name), or None."""
    name = os.path.basename(program)
    return next((p for p in presets.PRESETS.values() if p.program == name), None)


def help_argv(argv: tuple[str, ...] | list[str]) -> list[str]:
    """How to ask for the help that covers the argv's flags: its subcommand's when the first
    argument is one (`codex exec --help`), else the program's."""
    if len(argv) > 1 and _SUBCOMMAND.match(argv[1]):
        return [argv[0], argv[1], "--help"]
    return [argv[0], "--help"]


def version_of(text: str) -> str:
    """The first version number in a `--version` answer ('' when none)."""
    for line in text.splitlines():
        if line.lower().startswith("warning"):
            continue  # codex's warning about its helper binaries comes first
        m = _VERSION.search(line)
        if m:
            return m.group(1)
    return ""


class Probe(Record):
    """What a CLI answered: its version, the flags of the argv it does not offer, and the
    help asked (for the message); `why` when it could not be asked at all."""

    program: str
    version: str = ""
    unknown: list[str] = field(default_factory=list)
    asked: str = ""
    why: str = ""

    @property
    def ok(self) -> bool:
        return not self.why and not self.unknown


def _ask(argv: list[str], cwd: Path, env: dict[str, str] | None) -> proc.Result:
    return proc.run(argv, cwd=cwd, timeout=PROBE_TIMEOUT_S, env=env)


def probe(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> Probe:
    """Ask the program of `argv` for its version and help; name the flags it does not offer."""
    found = Probe(argv[0])
    res = _ask([argv[0], "--version"], cwd, env)
    if res.missing:
        found.why = f"{argv[0]!r} could not be started"
        return found
    found.version = version_of(res.stdout + "\n" + res.stderr)
    ask = help_argv(argv)
    found.asked = " ".join([os.path.basename(ask[0]), *ask[1:]])
    res = _ask(ask, cwd, env)
    text = res.stdout + "\n" + res.stderr
    if res.timed_out or not text.strip():
        found.why = f"`{found.asked}` gave no help to read"
        return found
    offered = offered_flags(text)
    found.unknown = [f for f in used_flags(argv) if f not in offered]
    return found


def installed_version(program: str) -> str:
    """The version `program --version` prints ('' when it is not installed or says none)."""
    import shutil  # only a version asked for

    if shutil.which(program) is None:
        return ""
    res = proc.run([program, "--version"], timeout=PROBE_TIMEOUT_S)
    return version_of(res.stdout + "\n" + res.stderr) if not res.missing else ""
