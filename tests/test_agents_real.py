"""The presets against the REAL agent CLIs, at the versions tests/support/agents.py pins.

The presets were written from the CLIs' documentation and tested against stand-ins that
took any flag, so nothing caught Codex 0.171 dropping `exec --full-auto`: every card on
that tier blocked `terminal` in turn. Here each preset's argv runs the real program, with
HOME an empty directory and no API key, in a real board: it must get past its argument
parsing, and what it says without a login (or without a network: this machine has none)
must be classified as it is (never the card's fault), its tier paused where a login is
missing. The stand-ins stay for what needs a real model (a successful edit, a rate limit);
tests/test_presets.py holds them to the real programs' flags.

Under CI=true an agent that cannot be installed is a failure, never a silent skip.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from board.core import config, presets
from board.core.cards import waits
from board.core.ops import probe
from board.core.store import SQLiteStore

from tests.support.agents import real_agent as real
from tests.support.loop import add_card, drive_one, write_config
from tests.support.repos import make_repo, run_cli

KEYS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
    "CODEX_API_KEY",
    "GEMINI_API_KEY",
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "OPENROUTER_API_KEY",
    "AIDER_MODEL",
)
# what each real program does here with no login and no network, and the class the board
# must give it (a backed-off transient: Codex reaches for the network before any login)
EXPECTED = {
    "claude": ("blocked", "auth", "Not logged in"),
    "gemini": ("blocked", "auth", "Please set an Auth method"),
    "aider": ("blocked", "auth", "not able to authenticate you"),
    "codex": ("backed-off", "transient", "waiting for network"),
}


@pytest.fixture
def no_login(monkeypatch: pytest.MonkeyPatch) -> None:
    """No API key of any agent (HOME is already an empty directory of the test's own)."""
    for key in KEYS:
        monkeypatch.delenv(key, raising=False)


def _board(tmp_path: Path, name: str, argv: list[str]) -> tuple[config.Config, SQLiteStore]:
    repo = make_repo(tmp_path, init="").root
    res = run_cli(repo, "init", "--coder", name)
    assert res.returncode == 0, res.stderr
    cfg = write_config(
        repo,
        tiers={name: argv},
        usage={name: presets.PRESETS[name].usage},  # its output read as the preset reads it
        coder={"timeout_s": 120, "first_output_timeout_s": 60, "timeout_split_after": 1},
    )
    return cfg, SQLiteStore(cfg.db_path)


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_each_preset_gets_past_the_real_programs_arguments_and_its_no_login_is_not_the_cards(
    tmp_path: Path, no_login: None, name: str
) -> None:
    program = real(name)
    preset = presets.PRESETS[name]
    cfg, store = _board(tmp_path, name, [str(program), *preset.argv[1:]])
    card = add_card(store, "a task", surface=["work/**"])
    began = time.monotonic()
    end = drive_one(cfg, store, card)
    took = time.monotonic() - began
    log = (cfg.logs_dir / card.id / "1.log").read_text()
    outcome, cls, words = EXPECTED[name]
    assert end.cls != "dispatch-infra", f"{name} refused the preset's argv:\n{log[-2000:]}"
    assert (end.outcome, end.cls) == (outcome, cls), f"{end.outcome} {end.cls}:\n{log[-2000:]}"
    assert words.lower() in log.lower(), f"{name} did not say {words!r}:\n{log[-2000:]}"
    assert took < 60, f"{name} ran {took:.0f}s before the board saw it waits for the operator"
    assert {d.tier for d in store.list_drives() if d.card == card.id} == {name}, "it climbed"
    if cls == "auth":
        pause = waits.active_pause(store.pauses(), name)
        assert pause is not None and pause.cls == "auth", "the tier was not paused"
    after = store.get(card.id)
    assert not [x for x in after.labels if x.startswith("budget:")], "it counted toward too-wide"
    store.close()


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_a_made_up_flag_is_named_by_doctor_and_blocks_dispatch_infra(
    tmp_path: Path, no_login: None, name: str
) -> None:
    program = real(name)
    preset = presets.PRESETS[name]
    argv = [str(program), *preset.argv[1:], "--made-up-flag"]
    asked = probe.probe(argv, tmp_path)
    assert asked.unknown == ["--made-up-flag"], asked
    assert asked.version == preset.tested, f"probe read {asked.version!r}"
    assert probe.probe([str(program), *preset.argv[1:]], tmp_path).ok, "the preset itself"
    cfg, store = _board(tmp_path, name, argv)
    res = run_cli(cfg.root, "doctor", timeout=600)
    line = next(x for x in res.stdout.splitlines() if x[6:].startswith(f"tier:{name}:"))
    assert line.startswith("FAIL") and "does not offer --made-up-flag" in line, line
    assert preset.tested in line, f"doctor does not name {name}'s version: {line}"
    card = add_card(store, "a task", surface=["work/**"])
    end = drive_one(cfg, store, card)
    log = (cfg.logs_dir / card.id / "1.log").read_text()
    assert (end.outcome, end.cls) == ("blocked", "dispatch-infra"), f"{end.cls}:\n{log[-1500:]}"
    assert "made-up-flag" in store.get(card.id).blocked.reason
    pause = waits.active_pause(store.pauses(), name)
    assert pause is not None and pause.cls == "dispatch-infra", "the tier was not paused"
    store.close()


def test_the_real_aider_waiting_for_a_browser_login_is_stopped_within_seconds(
    tmp_path: Path, no_login: None
) -> None:
    """Aider with no model named and no key offers an OpenRouter login and waits 5 minutes
    for a browser (a board.toml whose tier dropped the preset's --model, or an older one):
    the live rule stops it as it says so, blocked `auth`, its tier paused."""
    program = real("aider")
    argv = [str(program), *(a for a in presets.PRESETS["aider"].argv[1:] if a != "sonnet")]
    argv.remove("--model")
    cfg, store = _board(tmp_path, "aider", argv)
    card = add_card(store, "a task", surface=["work/**"])
    began = time.monotonic()
    end = drive_one(cfg, store, card)
    took = time.monotonic() - began
    log = (cfg.logs_dir / card.id / "1.log").read_text()
    assert "No LLM model was specified and no API keys were provided" in log, log[-1500:]
    assert (end.outcome, end.cls) == ("blocked", "auth"), f"{end.cls}:\n{log[-1500:]}"
    assert took < 30, f"aider waited {took:.0f}s for a browser before the board stopped it"
    pause = waits.active_pause(store.pauses(), "aider")
    assert pause is not None and pause.cls == "auth"
    store.close()
