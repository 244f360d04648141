"""board.toml: defaults fill what is left out; bad files are refused naming file, line and key."""

from __future__ import annotations

from pathlib import Path

import pytest
from board.core import config, records
from board.core.errors import ConfigError

from tests.support.paths import ROOT


def parse(text: str) -> config.Config:
    return config.parse(Path("/r/board.toml"), text, Path("/r"))


def test_written_default_file_round_trips_with_every_key(tmp_path: Path) -> None:
    config.write_default(tmp_path)
    text = (tmp_path / "board.toml").read_text()
    for section, keys in config.SCHEMA.items():
        assert f"[{section}]" in text
        for key, (_, default) in keys.items():  # a table (a dict, the prices) as a header
            spelled = f"[{section}.{key}]" if isinstance(default, dict) else f"\n{key} = "
            assert spelled in text, f"{section}.{key} is not spelled out"
    cfg = config.load(tmp_path)
    assert (
        cfg.board.base == "main"
        and cfg.board.run_branch == "board/run"
        and cfg.board.max_concurrent == 2
    )
    assert (
        cfg.coder.timeout_split_after == 2
        and cfg.publish.mode == "fold"
        and cfg.publish.review == "none"
    )


def test_a_file_with_only_what_differs_is_valid() -> None:
    cfg = parse('[board]\nprefix = "bd"\n[gate]\nargv = ["pytest", "-q"]\n')
    assert cfg.board.prefix == "bd" and cfg.gate.argv == ("pytest", "-q")
    assert cfg.coder.timeout_s == 1800 and cfg.coder.ladder == ("default",)


def test_empty_file_is_all_defaults() -> None:
    assert parse("").board.scratch == (".board-scratch",)


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
        # values that would do damage if accepted
        ('[board]\nscratch = ["."]\n', "/r/board.toml:2: board.scratch: '.' is the tree itself"),
        ('[board]\nscratch = ["x", "a/.."]\n', "board.scratch: 'a/..' is the tree itself"),
        ('[board]\nscratch = [".."]\n', "board.scratch: '..' leads out of the tree"),
        ('[board]\nscratch = ["s/../../x"]\n', "board.scratch: 's/../../x' leads out"),
        ('[board]\nscratch = ["/r"]\n', "board.scratch: '/r' is absolute"),
        ('[board]\nscratch = [""]\n', "board.scratch: an entry is empty"),
        ('[board]\nscratch = [".git/x"]\n', "board.scratch: '.git/x' is git's own directory"),
        ("[board]\nscratch = []\n", "board.scratch: must name at least one directory"),
        (
            "[board]\nloop_interval_s = inf\n",
            "/r/board.toml:2: board.loop_interval_s: must be a finite",
        ),
        ("[board]\nloop_interval_s = nan\n", "board.loop_interval_s: must be a finite"),
        ("[coder]\ntimeout_s = inf\n", "coder.timeout_s: must be a finite"),
        ("[gate]\n\ntimeout_s = -inf\n", "/r/board.toml:3: gate.timeout_s: must be a finite"),
        ("[publish]\ntimeout_s = 1e300\n", "publish.timeout_s: must be at most 31536000"),
        ('[coder.tiers.a]\nargv = ["a"]\ntimeout_s = nan\n', "coder.tiers.a.timeout_s: must be a"),
        ("[board]\nloop_interval_s = 0\n", "board.loop_interval_s: must be at least 0.05"),
        ("[board]\nloop_interval_s = 0.001\n", "board.loop_interval_s: must be at least 0.05"),
        ("[coder]\ntimeout_s = 0\n", "coder.timeout_s: must be more than 0"),
        ("[gate]\ntimeout_s = 0\n", "gate.timeout_s: must be more than 0"),
        ("[planner]\ntimeout_s = 0.0\n", "planner.timeout_s: must be more than 0"),
        ("[store]\n\nreconnect_s = -5\n", "/r/board.toml:3: store.reconnect_s: must not be neg"),
        ('[store]\nreconnect_s = "5m"\n', "store.reconnect_s: expected a number, got '5m'"),
        ("[store]\nreconnect_s = inf\n", "store.reconnect_s: must be a finite"),
        # the money budgets: US dollars, 0 or more
        ("[budget]\n\ncard_usd = -0.5\n", "/r/board.toml:3: budget.card_usd: must be a finite"),
        ('[budget]\nday_usd = "$5"\n', "budget.day_usd: expected a number of US dollars, got '$5'"),
        ("[budget]\nday_usd = true\n", "budget.day_usd: expected a number of US dollars"),
        ("[budget]\ncard_usd = nan\n", "budget.card_usd: must be a finite number of 0 or more"),
        ('[budget]\nhard = "yes"\n', "budget.hard: expected true or false"),
    ],
)
def test_bad_config_is_refused_naming_file_line_and_key(text: str, needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(text)
    assert needle in str(err.value)


def test_zero_keeps_its_documented_meanings() -> None:
    """A tier's timeout_s = 0 means coder.timeout_s; first_output_timeout_s = 0 is off;
    store.reconnect_s = 0 waits for no server (board run stops at the first failed call)."""
    cfg = parse(
        "[coder]\nfirst_output_timeout_s = 0\n"
        '[coder.tiers.default]\nargv = ["a"]\ntimeout_s = 0\n'
        "[board]\nloop_interval_s = 0.05\n"
        "[store]\nreconnect_s = 0\n"
    )
    assert cfg.coder.first_output_timeout_s == 0 and cfg.coder.tiers["default"].timeout_s == 0
    assert cfg.board.loop_interval_s == 0.05
    assert cfg.store.reconnect_s == 0 and parse("").store.reconnect_s == 300


def test_the_money_budgets_are_off_by_default_and_read_as_dollars() -> None:
    """0 is no limit; an integer is read as dollars (no seconds' bounds: 0 is allowed)."""
    off = parse("").budget
    assert (off.card_usd, off.day_usd, off.hard) == (0.0, 0.0, False)
    on = parse("[budget]\ncard_usd = 2\nday_usd = 0.05\nhard = true\n").budget
    assert (on.card_usd, on.day_usd, on.hard) == (2.0, 0.05, True)
    assert isinstance(on.card_usd, float)


def test_scratch_entries_are_kept_as_plain_relative_names() -> None:
    """`./s/` names the same directory as `s`; the save compares git's paths with it."""
    assert parse('[board]\nscratch = ["./s/", "a/b"]\n').board.scratch == ("s", "a/b")


def test_missing_config_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="run `board init`"):
        config.load(tmp_path)


def test_toml_syntax_error_names_the_line() -> None:
    with pytest.raises(ConfigError, match="line 2"):
        parse('[board]\nbase = "unterminated\n')


def _fields() -> list[str]:
    """Every field under Config, as `section.name` (`root` alone is not a section's)."""
    out = []
    for name in records.fields(config.Config):
        name = name.rstrip("_")  # `import_`, the field of [import] (config.attr_of)
        section = config.RECORDS.get(name)
        out += [f"{name}.{f}" for f in records.fields(section)] if section else [name]
    return out


def _field(cfg: config.Config, key: config.Key) -> object:
    return getattr(getattr(cfg, config.attr_of(key.section)), key.name)


def test_every_key_is_one_field_of_one_section_and_nothing_else_is() -> None:
    """KEYS is the one place a key is written: each key is exactly one field of exactly one
    section record, each section record is a Config field named as its section, and no
    field (but the root) is anything but a key."""
    fields = _fields()
    keys = [f"{k.section}.{k.name}" for k in config.KEYS]
    assert len(set(keys)) == len(keys), "a key is written twice in KEYS"
    assert sorted(fields) == sorted(["root", *keys]), "a field that is no key, or the reverse"
    assert records.fields(config.Config) == (
        "root",
        *map(config.attr_of, config.SECTION_NAMES),
    )
    for section, record in config.RECORDS.items():
        assert record.__name__ == f"{section.capitalize()}Section"
        assert getattr(config, record.__name__) is record
        assert records.fields(record) == tuple(k.name for k in config.KEYS if k.section == section)


def test_the_type_checker_reads_the_sections_as_keys_make_them() -> None:
    """core/config/sections.pyi is made from KEYS too (scripts/gendocs.py)."""
    stub = (ROOT / "core" / "config" / "sections.pyi").read_text()
    assert stub == config.stub_text(), "core/config/sections.pyi is stale: run scripts/gendocs.py"


def test_one_schema_gives_the_defaults_the_validation_the_template_and_the_docs() -> None:
    """Every default is written once, in config.KEYS: the Config fields, the file `board
    init` writes, and the key table of docs/configuration.md all come from it and must agree."""
    fields = set(_fields()) - {"root"}
    assert fields == {f"{k.section}.{k.name}" for k in config.KEYS}, (
        "a key without a Config field, or the reverse"
    )
    defaults = config.Config(root=Path("/r"))
    written = parse(config.template())
    from_nothing = parse("")
    for k in config.KEYS:
        want = _field(defaults, k)
        assert _field(written, k) == want, f"the template's {k.section}.{k.name} differs"
        assert _field(from_nothing, k) == want, f"{k.section}.{k.name}'s default differs"
    assert written.coder.tiers["default"].argv == config.DEFAULT_TIER
    page = (ROOT / "docs" / "configuration.md").read_text()
    table = page.split("<!-- keys:", 1)[1].split("-->", 1)[1].split("<!-- /keys -->")[0]
    assert table.strip() == config.key_table().strip(), "docs/configuration.md's key table is stale"
    for k in config.KEYS:  # a value of the wrong type is refused for every key
        bad = '"text"' if k.kind is not str else "3"
        with pytest.raises(ConfigError, match=rf"{k.section}\.{k.name}"):
            parse(f"[{k.section}]\n{k.name} = {bad}\n")


@pytest.mark.parametrize(
    ("line", "needle"),
    [
        ('worktrees = ".."', "leads out of the repository"),
        ('worktrees = "../elsewhere"', "leads out of the repository"),
        ('worktrees = "."', "is the repository itself"),
        ('worktrees = "./"', "is the repository itself"),
        ('worktrees = ".git"', "git's own directory"),
        ('worktrees = ".git/trees"', "git's own directory"),
        ('worktrees = "/tmp/trees"', "is absolute"),
        ('worktrees = ".board/trees"', "the board's own directory"),
        ('run_branch = "bad..name"', "not a branch name: it holds '..'"),
        ('run_branch = "board/run.lock"', "ends with '.lock'"),
        ('base = "-main"', "not a branch name: it starts with '-'"),
        ('base = "ma in"', "it holds ' '"),
    ],
)
def test_settings_that_would_do_damage_are_refused_with_file_line_and_key(
    line: str, needle: str
) -> None:
    """`worktrees = ".."` made the sweep offer to remove the repository's siblings, and
    `run_branch = "bad..name"` left the loop idling on git's error at every tick."""
    key = line.split(" ", 1)[0]
    with pytest.raises(ConfigError, match=rf"board\.toml:2: board\.{key}: ") as caught:
        parse(f"[board]\n{line}\n")
    assert needle in str(caught.value), caught.value


def test_every_verb_refuses_a_board_toml_with_a_damaging_setting(tmp_path: Path) -> None:
    from tests.support.repos import make_repo, run_cli

    repo = make_repo(tmp_path, init="cli").root
    path = repo / "board.toml"
    path.write_text(path.read_text().replace('worktrees = ".worktrees"', 'worktrees = ".."'))
    for verb in (("run", "--once"), ("status",), ("card", "list"), ("doctor",)):
        res = run_cli(repo, *verb)
        assert res.returncode != 0, verb
        assert "board.worktrees: '..' leads out of the repository" in res.stderr + res.stdout
    assert not (tmp_path / ".trash").exists()
