"""board.toml: defaults fill what is left out; bad files are refused naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from board.core import config
from board.core.errors import ConfigError


def parse(text: str) -> config.Config:
    return config.parse(Path("/r/board.toml"), text, Path("/r"))


def test_written_default_file_round_trips_with_every_key(tmp_path: Path) -> None:
    config.write_default(tmp_path)
    text = (tmp_path / "board.toml").read_text()
    for section, keys in config.SCHEMA.items():
        assert f"[{section}]" in text
        for key, (kind, _) in keys.items():
            spelled = f"[{section}.{key}]" if kind is dict else f"\n{key} = "
            assert spelled in text, f"{section}.{key} is not spelled out"
    cfg = config.load(tmp_path)
    assert cfg.base == "main" and cfg.run_branch == "board/run" and cfg.max_concurrent == 2
    assert cfg.timeout_split_after == 2 and cfg.publish_mode == "fold" and cfg.review == "none"


def test_a_file_with_only_what_differs_is_valid() -> None:
    cfg = parse('[board]\nprefix = "bd"\n[gate]\nargv = ["pytest", "-q"]\n')
    assert cfg.prefix == "bd" and cfg.gate_argv == ("pytest", "-q")
    assert cfg.coder_timeout_s == 1800 and cfg.ladder == ("default",)


def test_empty_file_is_all_defaults() -> None:
    assert parse("").scratch == (".board-scratch",)


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[board]\nbase = "main"\nbogus = 1\n', "/r/board.toml:3: board.bogus: unknown key"),
        ("[nope]\nx = 1\n", "/r/board.toml:1: nope: unknown section"),
        ('[gate]\nretries = "two"\n', "/r/board.toml:2: gate.retries: expected an integer"),
        ("[coder]\n\ntimeout_s = -1\n", "/r/board.toml:3: coder.timeout_s: must not be negative"),
        ('[publish]\nmode = "yolo"\n', "publish.mode: must be one of fold, push"),
        ('[gate]\nargv = "pytest -q"\n', "gate.argv: expected a list of strings"),
        ('[board]\nprefix = "C 1"\n', "board.prefix"),
        ('[coder]\nladder = ["smart"]\n', "coder.ladder: names tier 'smart'"),
        ('[coder.tiers.x]\nargv = ["a"]\nshell = "yes"\n', "coder.tiers.x.shell: unknown key"),
        ("[board\n", "not valid TOML"),
        ("[board]\nmax_concurrent = true\n", "board.max_concurrent: expected an integer"),
    ],
)
def test_bad_config_is_refused_naming_file_line_and_key(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(text)
    assert needle in str(err.value)


def test_missing_config_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="run `board init`"):
        config.load(tmp_path)


def test_toml_syntax_error_names_the_line() -> None:
    with pytest.raises(ConfigError, match="line 2"):
        parse('[board]\nbase = "unterminated\n')
