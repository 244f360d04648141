"""`board init --coder NAME`, and gate and setup discovery.

Each preset is run against a STAND-IN of its CLI (tests/standins/agent_cli.py, put on PATH
under the real program's name: the real CLIs need accounts and a network). The stand-in
records how it was called, so the test proves the argv is the preset's (the flags each
CLI's docs give for a headless run), that stdin is /dev/null (nothing can wait on it), that
the brief it is pointed at exists, and that its CLI's rate-limit message backs off instead
of climbing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from board.core import config, discover, presets, proc
from board.core.ops import probe
from board.core.store import Expect, SQLiteStore

from tests.support import agents
from tests.support.loop import add_card, drive_one
from tests.support.paths import ROOT, STANDINS
from tests.support.repos import make_repo, run_cli

STANDIN = STANDINS / "agent_cli.py"


@pytest.fixture
def standins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A bin directory with a stand-in under each preset's program name, first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for p in presets.PRESETS.values():
        (bin_dir / p.program).symlink_to(STANDIN)
    state = tmp_path / "standin"
    state.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("STANDIN_DIR", str(state))
    monkeypatch.setenv("STANDIN_FLAGS_DIR", str(_real_flags(tmp_path / "flags")))
    return state


def _real_flags(where: Path) -> Path:
    """Each preset program's flags as the REAL program's --help lists them (the help the
    preset's argv needs, e.g. `codex exec --help`): the stand-in refuses any other, so a
    preset can never pass here with a flag the real CLI refuses."""
    where.mkdir()
    for p in presets.PRESETS.values():
        program = agents.real_agent(p.program)
        ask = probe.help_argv([str(program), *p.argv[1:]])
        res = proc.run(ask, cwd=where, timeout=120)
        offered = probe.offered_flags(res.stdout + "\n" + res.stderr)
        assert offered, f"{' '.join(ask)} listed no flags"
        (where / f"{p.program}.flags").write_text("\n".join(sorted(offered)) + "\n")
    return where


def _calls(state: Path) -> list[dict]:
    path = state / "calls.jsonl"
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_each_preset_runs_its_cli_headless_and_backs_off_on_its_limit(
    tmp_path: Path, standins: Path, name: str
) -> None:
    repo = make_repo(tmp_path, init="").root
    res = run_cli(repo, "init", "--coder", name)
    assert res.returncode == 0, res.stderr
    assert "not installed" not in res.stdout, "the stand-in was not found on PATH"
    cfg = config.load(repo)
    preset = presets.PRESETS[name]
    assert cfg.coder.ladder == (name,) and cfg.coder.tiers[name].argv == preset.argv
    store = SQLiteStore(cfg.db_path)
    card = add_card(store, "a task", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "backed-off" and end.cls == "rate-limit", end
    (call,) = _calls(standins)
    brief = call["brief"]
    expected = [a.replace("{brief}", brief) for a in preset.argv[1:]]
    assert call["argv"] == expected, f"{name} was not called with its preset's argv"
    assert call["stdin"] == "/dev/null", f"{name}'s stdin is {call['stdin']}: it could wait on it"
    assert call["brief_exists"], "the brief it was pointed at does not exist"
    assert Path(call["cwd"]).resolve() == Path(brief).resolve().parent.parent
    # when the limit lifts, the same tier builds it
    card = store.get(card.id)
    store.update(card.id, Expect(version=card.version), {"not_before": ""})
    store.resume_tier(name)
    end = drive_one(cfg, store, store.get(card.id))
    assert end.outcome == "done", end
    store.close()


def test_a_preset_cli_exit_code_is_read_by_its_rule(
    tmp_path: Path, standins: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Gemini CLI exits 41 on an authentication failure (its FatalAuthenticationError)."""
    monkeypatch.setenv("STANDIN_MODE", "auth")
    repo = make_repo(tmp_path, init="").root
    run_cli(repo, "init", "--coder", "gemini")
    cfg = config.load(repo)
    store = SQLiteStore(cfg.db_path)
    end = drive_one(cfg, store, add_card(store, "a task", surface=["work/**"]))
    assert end.outcome == "blocked" and end.cls == "auth", end
    store.close()


def test_init_coder_adds_to_an_existing_board_toml_changing_nothing_else(
    tmp_path: Path, standins: Path
) -> None:
    repo = make_repo(tmp_path, init="cli").root  # board init done: the default tier
    path = repo / "board.toml"
    before = path.read_text()
    res = run_cli(repo, "init", "--coder", "claude", "--coder", "aider")
    assert res.returncode == 0, res.stderr
    after = path.read_text()
    assert after.startswith(before), "init changed what was there"
    assert "added [coder.tiers.claude]" in res.stdout and "added [coder.tiers.aider]" in res.stdout
    assert "the ladder is unchanged (default)" in res.stdout
    cfg = config.load(repo)
    assert cfg.coder.ladder == ("default",) and {"claude", "aider"} <= set(cfg.coder.tiers)
    again = run_cli(repo, "init", "--coder", "claude")
    assert "kept [coder.tiers.claude]" in again.stdout and path.read_text() == after


def test_init_coder_refuses_an_unknown_preset_and_lists_them(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root
    res = run_cli(repo, "init", "--coder", "gpt-engineer")
    assert res.returncode != 0 and "no coder preset 'gpt-engineer'" in res.stderr
    assert not (repo / "board.toml").exists(), "a refused init wrote board.toml"
    listing = run_cli(repo, "init", "--coder", "list").stdout
    for p in presets.PRESETS.values():
        assert p.name in listing and p.docs in listing


def test_init_says_in_one_line_when_a_preset_program_is_not_installed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root
    env_path = os.environ["PATH"]
    os.environ["PATH"] = "/usr/bin:/bin"
    try:
        res = run_cli(repo, "init", "--coder", "codex")
    finally:
        os.environ["PATH"] = env_path
    lines = [x for x in res.stdout.splitlines() if "codex is not installed" in x]
    assert len(lines) == 1 and "dispatch-infra" in lines[0], res.stdout
    assert config.load(repo).coder.tiers["codex"].argv == presets.PRESETS["codex"].argv


# gate discovery ------------------------------------------------------------------------


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "repo"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    root.mkdir(exist_ok=True)
    return root


@pytest.mark.parametrize(
    ("files", "argv", "why"),
    [
        ({"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
         ("python3", "-m", "pytest", "-q"), "pyproject.toml configures pytest"),
        ({"pyproject.toml": "[tool.pytest.ini_options]\n", "uv.lock": ""},
         ("uv", "run", "pytest", "-q"), "uv.lock"),
        ({"setup.cfg": "[tool:pytest]\ntestpaths = t\n"},
         ("python3", "-m", "pytest", "-q"), "setup.cfg configures pytest"),
        ({"pytest.ini": "[pytest]\n"}, ("python3", "-m", "pytest", "-q"), "pytest.ini"),
        ({"tests/test_app.py": "def test(): pass\n"},
         ("python3", "-m", "pytest", "-q"), "tests/ holds test_*.py"),
        ({"package.json": '{"scripts": {"test": "vitest run"}}', "pnpm-lock.yaml": ""},
         ("pnpm", "test"), "pnpm-lock.yaml says pnpm"),
        ({"package.json": '{"scripts": {"test": "jest"}}', "yarn.lock": ""},
         ("yarn", "test"), "yarn.lock"),
        ({"package.json": '{"scripts": {"test": "jest"}}'}, ("npm", "test"), "no lockfile: npm"),
        ({"Cargo.toml": "[package]\nname = 'x'\n"}, ("cargo", "test"), "Cargo.toml"),
        ({"go.mod": "module x\n"}, ("go", "test", "./..."), "go.mod"),
        ({"Makefile": "all:\n\tcc x.c\n\ntest: all\n\t./run-tests\n", "go.mod": "module x\n"},
         ("make", "test"), "Makefile has a `test` target"),
    ],
)  # fmt: skip
def test_gate_discovery_finds_each_kind(
    tmp_path: Path, files: dict[str, str], argv: tuple[str, ...], why: str
) -> None:
    found, _ = discover.discover(_tree(tmp_path, files))
    assert found is not None and found.argv == argv and why in found.why, found


@pytest.mark.parametrize(
    "files",
    [
        {},
        {"README.md": "hi\n"},
        {"package.json": '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'},
        {"Makefile": "TEST := 1\nbuild:\n\tcc x.c\n"},
        {"pyproject.toml": "[project]\nname = 'x'\n", "tests/README": "no tests yet\n"},
    ],
)
def test_gate_discovery_finds_nothing_where_there_is_nothing(
    tmp_path: Path, files: dict[str, str]
) -> None:
    assert discover.discover(_tree(tmp_path, files)) == (None, [])


def test_init_writes_the_gate_it_found_and_says_why(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root
    (repo / "Cargo.toml").write_text("[package]\nname = 'x'\n")
    res = run_cli(repo, "init")
    assert "gate: cargo test — Cargo.toml: a Rust crate" in res.stdout, res.stdout
    assert config.load(repo).gate.argv == ("cargo", "test")


def test_init_with_nothing_found_leaves_the_gate_empty_and_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root
    res = run_cli(repo, "init")
    assert "gate: none found" in res.stdout and "set [gate] argv" in res.stdout
    assert config.load(repo).gate.argv == ()


def test_an_existing_gate_is_never_overwritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="cli").root  # init done, gate empty
    text = (repo / "board.toml").read_text()
    gate = text.index("\nargv = []", text.index("[gate]"))  # not format_argv's
    text = text[:gate] + '\nargv = ["./check.sh"]' + text[gate + len("\nargv = []") :]
    (repo / "board.toml").write_text(text)
    (repo / "go.mod").write_text("module x\n")
    res = run_cli(repo, "init")
    assert config.load(repo).gate.argv == ("./check.sh",)
    assert "gate:" not in res.stdout, "an existing gate was offered a replacement"


def test_the_agents_page_shows_each_preset_as_it_is() -> None:
    page = (ROOT / "docs" / "agents.md").read_text()
    start = page.index("<!-- presets:")
    block = page[page.index("\n", start) + 1 : page.index("<!-- /presets -->")]
    assert block == presets.readme_block(), "docs/agents.md's presets differ from core/presets.py"


# setup discovery -----------------------------------------------------------------------

PKG = '{"scripts": {"test": "node --test"}, "dependencies": {"greet": "file:deps/greet"}}'
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0"
{extras}
[tool.pytest.ini_options]
testpaths = ["tests"]
"""
VENV = "{worktree}/.board-scratch/venv"
VENV_PY = f"{VENV}/bin/python"


def _setup(root: Path) -> discover.Setup | None:
    gate, _ = discover.discover(root)
    return discover.tree_setup(root, gate, ".board-scratch")


@pytest.mark.parametrize(
    ("files", "argvs", "why"),
    [
        ({"pyproject.toml": "[tool.pytest.ini_options]\n", "uv.lock": ""},
         (("uv", "sync", "--frozen"),), "uv.lock: a fresh tree has no environment"),
        ({"pyproject.toml": "[tool.poetry]\nname = 'x'\n", "poetry.lock": ""},
         (("poetry", "install"),), "poetry.lock"),
        ({"package.json": PKG, "package-lock.json": "{}"},
         (("npm", "ci"),), "package-lock.json: a fresh tree has no node_modules"),
        ({"package.json": PKG, "pnpm-lock.yaml": ""},
         (("pnpm", "install", "--frozen-lockfile"),), "pnpm-lock.yaml"),
        ({"package.json": PKG, "yarn.lock": ""},
         (("yarn", "install", "--frozen-lockfile"),), "yarn.lock"),
        ({"package.json": PKG, "bun.lockb": ""},
         (("bun", "install", "--frozen-lockfile"),), "bun.lockb"),
        ({"package.json": PKG, "bun.lock": ""},
         (("bun", "install", "--frozen-lockfile"),), "bun.lock"),
        ({"package.json": PKG},
         (("npm", "install", "--no-package-lock"),), "no lockfile"),
        ({"uv.lock": "", "pyproject.toml": "[project]\nname = 'x'\n", "package.json": PKG,
          "package-lock.json": "{}"},
         (("uv", "sync", "--frozen"), ("npm", "ci")), "uv.lock"),
        ({"Makefile": "test:\n\t./t\n", "package.json": PKG, "yarn.lock": ""},
         (("yarn", "install", "--frozen-lockfile"),), "yarn.lock"),
    ],
)  # fmt: skip
def test_setup_discovery_installs_from_each_lockfile(
    tmp_path: Path, files: dict[str, str], argvs: tuple[tuple[str, ...], ...], why: str
) -> None:
    found = _setup(_tree(tmp_path, files))
    assert found is not None and found.argvs == argvs and why in found.why, found
    assert found.gate is None, "a lockfile's own tool keeps the gate found"


@pytest.mark.parametrize(
    "files",
    [
        {"Cargo.toml": "[package]\nname = 'x'\n"},
        {"go.mod": "module x\n"},
        {"package.json": '{"scripts": {"test": "node --test"}}'},  # nothing to install
        {"tests/test_app.py": "def test(): pass\n"},  # nothing declared: python3 on PATH
        {"Makefile": "test:\n\tpytest\n", "pyproject.toml": PYPROJECT.format(extras="")},
        {},
    ],
)
def test_setup_discovery_writes_none_where_nothing_is_installed(
    tmp_path: Path, files: dict[str, str]
) -> None:
    assert _setup(_tree(tmp_path, files)) is None


@pytest.mark.parametrize(
    ("extras", "target"),
    [
        ('[project.optional-dependencies]\ntest = ["pytest"]\ndev = ["ruff"]\n', ".[test]"),
        ('[project.optional-dependencies]\ndocs = ["x"]\ntesting = ["pytest"]\n', ".[testing]"),
        ('[project.optional-dependencies]\ndev = ["pytest"]\n', ".[dev]"),
        ('[project.optional-dependencies]\ndocs = ["sphinx"]\n', "."),
        ("", "."),
    ],
)
def test_a_python_package_without_a_lockfile_gets_a_venv_of_the_trees_own(
    tmp_path: Path, extras: str, target: str
) -> None:
    files = {"pyproject.toml": PYPROJECT.format(extras=extras), ".gitignore": "*.egg-info/\n"}
    found = _setup(_tree(tmp_path, files))
    assert found is not None, "no setup for an installable package"
    assert found.argvs == (
        ("python3", "-m", "venv", VENV),
        (VENV_PY, "-m", "pip", "install", "-q", "-e", target, "pytest"),
    )
    assert found.gate is not None and found.gate.argv == (VENV_PY, "-m", "pytest", "-q")
    assert "the gate tests the tree's code, not your checkout's" in found.why
    assert found.notes == (), "a .gitignore naming *.egg-info/ was not read"


def test_a_venv_setup_follows_the_scratch_name_and_setup_py(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"setup.py": "from setuptools import setup\nsetup()\n",
                            "requirements-dev.txt": "pytest\n",
                            "tests/test_x.py": "def test(): pass\n"})  # fmt: skip
    gate, _ = discover.discover(root)
    found = discover.tree_setup(root, gate, "tmp/scratch/")
    assert found is not None and found.argvs == (
        ("python3", "-m", "venv", "{worktree}/tmp/scratch/venv"),
        ("{worktree}/tmp/scratch/venv/bin/python", "-m", "pip", "install", "-q", "-e", ".",
         "-r", "requirements-dev.txt", "pytest"),
    )  # fmt: skip
    assert "setup.py: an installable package" in found.why
    assert any("egg-info" in note for note in found.notes), "setuptools' egg-info unnamed"
    assert found.excludes == ("*.egg-info/",), "init would not exclude setuptools' egg-info"


def test_requirements_alone_get_a_venv_and_no_install_of_the_project(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"requirements.txt": "requests\n", "requirements-test.txt": "x\n",
                            "tests/test_x.py": "def test(): pass\n"})  # fmt: skip
    found = _setup(root)
    assert found is not None and found.argvs[1] == (
        VENV_PY, "-m", "pip", "install", "-q", "-r", "requirements.txt",
        "-r", "requirements-test.txt", "pytest",
    )  # fmt: skip
    assert "-e" not in found.argvs[1] and found.notes == ()
    assert found.gate is not None and found.gate.argv[0] == VENV_PY


def test_a_hatchling_package_needs_no_egg_info_note(tmp_path: Path) -> None:
    text = PYPROJECT.format(extras="").replace("setuptools.build_meta", "hatchling.build")
    found = _setup(_tree(tmp_path, {"pyproject.toml": text}))
    assert found is not None and found.notes == ()


def test_node_modules_not_ignored_is_named(tmp_path: Path) -> None:
    found = _setup(_tree(tmp_path, {"package.json": PKG, "package-lock.json": "{}"}))
    assert found is not None and any("node_modules" in n for n in found.notes), found
    (tmp_path / "repo" / ".gitignore").write_text("/node_modules\n")
    again = _setup(tmp_path / "repo")
    assert again is not None and again.notes == ()


def test_init_writes_the_setup_it_found_and_says_why(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root  # its .gitignore names node_modules/
    (repo / "package.json").write_text(PKG)
    (repo / "package-lock.json").write_text("{}")
    res = run_cli(repo, "init")
    assert res.returncode == 0, res.stderr
    assert "setup: npm ci — package-lock.json: a fresh tree has no node_modules" in res.stdout
    assert "gate: npm test" in res.stdout and "note:" not in res.stdout, res.stdout
    cfg = config.load(repo)
    assert cfg.tree.setup == (("npm", "ci"),) and cfg.gate.argv == ("npm", "test")


def test_init_writes_a_venv_setup_and_its_gate(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root
    extras = '[project.optional-dependencies]\ntests = ["pytest"]\n'
    (repo / "pyproject.toml").write_text(PYPROJECT.format(extras=extras))
    res = run_cli(repo, "init")
    assert res.returncode == 0, res.stderr
    assert f"gate: {VENV_PY} -m pytest -q — pyproject.toml configures pytest" in res.stdout
    assert f"setup: python3 -m venv {VENV}, then {VENV_PY} -m pip" in res.stdout, res.stdout
    assert "note: pip install -e with setuptools makes a *.egg-info" in res.stdout
    assert "init adds *.egg-info/ to .git/info/exclude" in res.stdout
    cfg = config.load(repo)
    assert cfg.gate.argv == (VENV_PY, "-m", "pytest", "-q")
    assert cfg.tree.setup[1][-3:] == ("-e", ".[tests]", "pytest")
    excluded = (repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert ".board-scratch/" in excluded and "*.egg-info/" in excluded, excluded


def test_init_with_no_setup_found_says_so(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="").root
    (repo / "go.mod").write_text("module x\n")
    res = run_cli(repo, "init")
    assert "setup: none" in res.stdout and "[tree] setup stays empty" in res.stdout
    assert config.load(repo).tree.setup == ()


def test_an_existing_tree_setup_is_never_overwritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="cli").root  # init done, [tree] setup empty
    (repo / "package.json").write_text(PKG)
    (repo / "package-lock.json").write_text("{}")
    res = run_cli(repo, "init")
    want = "setup: empty in board.toml; found npm ci (package-lock.json: a fresh tree has"
    assert want in res.stdout and "set [tree] setup to use it" in res.stdout, res.stdout
    assert config.load(repo).tree.setup == (), "an empty [tree] setup was filled in"

    text = (repo / "board.toml").read_text()
    text = text.replace("\nsetup = []\n", '\nsetup = [["./prepare.sh"]]\n', 1)
    (repo / "board.toml").write_text(text)
    res = run_cli(repo, "init")
    assert res.returncode == 0, res.stderr
    assert config.load(repo).tree.setup == (("./prepare.sh",),)
    assert "setup:" not in res.stdout, "an existing setup was offered a replacement"
    assert (repo / "board.toml").read_text() == text, "init changed an existing board.toml"


def test_an_existing_board_hears_of_a_venv_setup_and_the_gate_it_goes_with(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path, init="cli").root  # init done before the package was there
    (repo / "pyproject.toml").write_text(PYPROJECT.format(extras=""))
    res = run_cli(repo, "init")
    assert f"gate: empty in board.toml; found {VENV_PY} -m pytest -q" in res.stdout, res.stdout
    assert f"setup: empty in board.toml; found python3 -m venv {VENV}" in res.stdout

    text = (repo / "board.toml").read_text()
    gate = text.index("\nargv = []", text.index("[gate]"))
    text = text[:gate] + '\nargv = ["python3", "-m", "pytest", "-q"]' + text[gate + 10 :]
    (repo / "board.toml").write_text(text)
    res = run_cli(repo, "init")
    assert "gate: empty" not in res.stdout
    assert f"note: with that setup, [gate] argv would be {VENV_PY} -m pytest -q" in res.stdout
    assert config.load(repo).gate.argv == ("python3", "-m", "pytest", "-q")
    assert config.load(repo).tree.setup == ()
