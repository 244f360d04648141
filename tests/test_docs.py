"""The docs site builds, its generated tables are the code's, and the README stays a front
page whose links lead somewhere.

The site is `docs/` under mkdocs-material (mkdocs.yml). `mkdocs build --strict` fails on a
link to a page or an anchor that is not there, and its hook (scripts/gendocs.py) on a
generated table that differs from the code, so a rename that leaves a page behind fails
here. Under CI=true a missing mkdocs is a failure (the test extra installs it), not a skip.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.support.paths import ROOT
from tests.support.repos import run_cli

DOCS = ROOT / "docs"
README_LIMIT = 12 * 1024  # issue 40: what board is, the picture, two commands, a first run


def gendocs() -> ModuleType:
    """scripts/gendocs.py, imported from its file (scripts/ is not a package)."""
    spec = importlib.util.spec_from_file_location("gendocs", ROOT / "scripts" / "gendocs.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    missing = [m for m in ("mkdocs", "material") if importlib.util.find_spec(m) is None]
    if missing:
        why = f"{', '.join(missing)} not installed (pip install -e '.[test]')"
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"the docs must build under CI=true: {why}", pytrace=False)
        pytest.skip(why)
    return subprocess.run(
        # no -q: mkdocs then drops the warnings --strict counts, and a broken link passes
        [sys.executable, "-m", "mkdocs", "build", "--strict"]
        + ["--config-file", str(config), "--site-dir", str(site)],
        cwd=config.parent,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=240,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},  # material's banner, not ours
    )


def test_the_docs_site_builds_with_strict(tmp_path: Path) -> None:
    res = mkdocs_build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert res.returncode == 0, f"mkdocs build --strict failed:\n{res.stdout}{res.stderr}"
    for page in ("operator", "configuration", "agents", "performance", "changelog"):
        assert (tmp_path / "site" / page / "index.html").is_file(), f"no {page} page built"
    changelog = (tmp_path / "site" / "changelog" / "index.html").read_text()
    assert "0.1.0" in changelog, "the changelog page does not hold CHANGELOG.md"


def _copy_of_the_site(tmp_path: Path) -> Path:
    """mkdocs.yml, docs/, CHANGELOG.md and scripts/ copied, to break one of them safely."""
    import shutil

    root = tmp_path / "copy"
    shutil.copytree(DOCS, root / "docs")
    shutil.copytree(ROOT / "scripts", root / "scripts")
    for name in ("mkdocs.yml", "CHANGELOG.md"):
        shutil.copy(ROOT / name, root / name)
    return root


def test_a_broken_link_or_a_stale_table_fails_the_build(tmp_path: Path) -> None:
    """The build is the check only if it can fail: a link to an anchor no page has, and a
    generated table edited by hand, each stop it."""
    root = _copy_of_the_site(tmp_path)
    page = root / "docs" / "failures.md"
    text = page.read_text()
    page.write_text(text + "\nSee [the keys](operator.md#no-such-section).\n")
    res = mkdocs_build(root / "mkdocs.yml", tmp_path / "site1")
    assert res.returncode != 0 and "no-such-section" in res.stdout + res.stderr, res.stderr
    page.write_text(text)

    keys = root / "docs" / "operator.md"
    keys.write_text(keys.read_text().replace("| `app.quit` | quit |", "| `app.quit` | leave |"))
    res = mkdocs_build(root / "mkdocs.yml", tmp_path / "site2")
    assert res.returncode != 0 and "bindings block is out of date" in res.stderr, res.stderr


def test_the_generated_tables_are_the_codes() -> None:
    """The keys of board.toml (KEYS), the presets and the TUI's bindings, each as
    scripts/gendocs.py makes it from the code, are what the pages hold."""
    assert gendocs().problems(DOCS) == []


def test_every_binding_id_is_on_the_keys_page() -> None:
    """Every id `[tui.keys]` accepts is listed, so an operator can find any key to rebind."""
    from board.tui.app import all_binding_ids

    page = (DOCS / "operator.md").read_text()
    block = page[page.index("<!-- bindings:") : page.index("<!-- /bindings -->")]
    listed = set(re.findall(r"\| `([a-z_.]+)`(?= \|)", block))
    assert all_binding_ids() <= listed, sorted(all_binding_ids() - listed)


def _verbs_in_help(repo: Path, *verb: str) -> list[str]:
    """The verbs `board [VERB] --help` lists, as the real command line prints them."""
    res = run_cli(repo, *verb, "--help")
    assert res.returncode == 0, res.stderr
    return re.findall(r"^    ([a-z]+)(?:\s|$)", res.stdout, flags=re.M)


def test_the_operators_guide_names_every_verb(tmp_path: Path) -> None:
    """The verbs block of the operator's guide names each verb and sub-verb the command
    line has: a verb added without its line in the guide fails here."""
    page = (DOCS / "operator.md").read_text()
    block = page[page.index("## Verbs") :]
    block = block[block.index("```\n") + 4 :]
    block = block[: block.index("```")]
    named = {
        tuple(words)
        for line in block.splitlines()
        for m in re.finditer(r"board ((?:card |stranded )?)([a-z|]+)", line)
        for words in [[*m.group(1).split(), v] for v in m.group(2).split("|")]
    }
    top = _verbs_in_help(tmp_path)
    assert {"init", "run", "card", "stranded", "tui"} <= set(top), top
    wanted = {(v,) for v in top if v not in ("card", "stranded")}
    wanted |= {("card", v) for v in _verbs_in_help(tmp_path, "card")}
    wanted |= {("stranded", v) for v in _verbs_in_help(tmp_path, "stranded")}
    assert wanted - named == set(), f"verbs missing from docs/operator.md: {wanted - named}"


def test_the_readme_is_a_front_page_whose_links_lead_somewhere() -> None:
    """At most 12 KB; every relative link and image is a file in the repository (the
    README is not part of the site, so mkdocs does not check it)."""
    text = (ROOT / "README.md").read_text()
    assert len(text.encode()) <= README_LIMIT, f"README.md is {len(text.encode())} bytes"
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [t for t in targets if "://" not in t]
    assert "docs/getting-started.md" in local and "docs/board.svg" in local, local
    assert [t for t in local if not (ROOT / t).exists()] == []


def test_getting_started_gives_the_readme_set_up_commands() -> None:
    """Both set-up commands read the same in the README and the getting-started page."""

    def commands(text: str) -> list[str]:
        lines = text.splitlines()
        return [lines[i + 1] for i, line in enumerate(lines) if re.match(r"# [12]\. ", line)]

    readme = commands((ROOT / "README.md").read_text())
    assert len(readme) == 2, readme
    assert commands((DOCS / "getting-started.md").read_text()) == readme
