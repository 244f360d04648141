"""Nothing a repository carries is trusted as the board's own (issue 39).

A clone brings whatever its repository committed, `.board/` included. The board's caches
(board.toml's and the themes' TOML readings, the saves' stats and the listing's rows) live
in the user's cache directory (core/cachedir.py), never in `.board/`: here a real clone of
an origin that commits forged caches in `.board/` runs the coder its board.toml names, and
a forged stats file committed beside them neither renames a save's card in the listing nor
hands an open card's only save to `stranded prune`. The caches are on (`kept_caches`), as
an operator's are, so each verb also reads and writes its own.
"""

from __future__ import annotations

import json
import marshal
import subprocess
import sys
import tomllib
from binascii import crc32
from pathlib import Path

from board.core import config
from board.core.git import naming, saves, worktrees

from tests.support.loop import edit_tier, read_pids, write_config
from tests.support.repos import git, make_repo, run_cli


def forged_reading(text: str, data: object) -> bytes:
    """A kept TOML reading as core/tomlcache.py lays it out (magic, CRC-32, marshal's
    (Python, text, data)): all an attacker needs is board.toml's text and a likely Python."""
    payload = marshal.dumps((sys.version, text, data))
    return b"board.toml cache 1\n" + crc32(payload).to_bytes(4, "big") + payload


def ok(res: subprocess.CompletedProcess[str]) -> str:
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_a_clone_runs_the_coder_board_toml_names_whatever_its_board_dir_holds(
    tmp_path: Path, kept_caches: Path
) -> None:
    real_ran, forged_ran = tmp_path / "real-coder-ran", tmp_path / "forged-coder-ran"
    # upstream: board.toml names the real coder; beside it, a kept reading of that very text
    # naming another, and one for the themes
    (tmp_path / "up").mkdir()
    up = make_repo(tmp_path / "up", init="cli").root
    write_config(up, tiers={"default": edit_tier(real_ran)})
    text = (up / "board.toml").read_text()
    data = tomllib.loads(text)
    data["coder"]["tiers"]["default"]["argv"] = edit_tier(forged_ran)
    forged = forged_reading(text, data)
    (up / ".board" / "board.toml.cache").write_bytes(forged)
    (up / ".board" / "themes.toml.cache").write_bytes(forged_reading("", {}))
    git(up, "add", "-f", "board.toml", ".board/board.toml.cache", ".board/themes.toml.cache")
    git(up, "commit", "-q", "-m", "the board, and its caches")
    git(up, "push", "-q", "origin", "main")

    # a fresh clone, set up and run as an operator would
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(tmp_path / "up" / "origin.git"), str(clone))
    assert (clone / ".board" / "board.toml.cache").read_bytes() == forged
    ok(run_cli(clone, "init"))
    ok(run_cli(clone, "card", "add", "a feature", "--spec", "build it", "--ready"))
    ok(run_cli(clone, "run", "--until-idle", "--quiet", timeout=180))
    assert not forged_ran.exists(), "the coder a kept reading in .board/ named was run"
    assert len(read_pids(real_ran)) == 1, "board.toml's coder did not run once"
    shown = json.loads(ok(run_cli(clone, "card", "show", "c-1", "--json")))
    assert shown["lane"] == "done", shown

    # the clone's caches are in the user's cache directory; .board/ is as the clone brought it
    cfg = config.load(clone)
    assert list(cfg.coder.tiers["default"].argv) == edit_tier(real_ran)
    folder = cfg.cache_folder
    assert folder is not None and Path(folder.path).parent == kept_caches
    assert Path(folder.path, "board.toml.cache").is_file()
    assert (clone / ".board" / "board.toml.cache").read_bytes() == forged
    assert git(clone, "status", "--porcelain", "--", ".board") == ""


def test_a_forged_stats_file_in_the_clone_renames_no_save_and_prunes_nothing(
    tmp_path: Path, kept_caches: Path
) -> None:
    """A stats file committed in `.board/` naming an open card's save as a cancelled card's,
    with another diffstat: the listing shows what the save's trailer says, and prune (which
    deletes the saves of done and cancelled cards) leaves it."""
    repo = make_repo(tmp_path, init="cli").root
    ok(run_cli(repo, "card", "add", "open work", "--spec", "s", "--ready"))
    ok(run_cli(repo, "card", "add", "dropped", "--spec", "s", "--ready"))
    ok(run_cli(repo, "cancel", "c-2", "--reason", "not needed"))
    cfg = config.load(repo)
    tree = worktrees.create_worktree(cfg, "c-1")
    (tree / "app.py").write_text("the only copy of c-1's work\n")
    saved = worktrees.discard_worktree(cfg, tree, why="test").saved
    assert saved is not None
    stats = saves.stats_file(cfg)
    assert stats is not None and stats.is_file(), "the save kept no stats line"
    assert not (repo / ".board" / naming.STATS_FILE).exists()

    forged = (
        f"{saved.commit}\tfeat-c-2\tc-2\t99\t999\t9999\t{naming.KIND_ATTEMPT}\t{saved.branch}\n"
    )
    (repo / ".board" / naming.STATS_FILE).write_text(forged)
    git(repo, "add", "-f", f".board/{naming.STATS_FILE}")
    git(repo, "commit", "-q", "-m", "the stats file")

    for _ in range(2):  # once making the rows, once from the rows kept
        listed = json.loads(ok(run_cli(repo, "stranded", "list", "--json")))
        [row] = [x for x in listed if x["branch"] == saved.branch]
        assert (row["card"], row["kind"], row["files"], row["insertions"], row["deletions"]) == (
            "c-1",
            "saved",
            1,
            1,
            1,
        ), row
    out = ok(run_cli(repo, "stranded", "prune", "--yes"))
    assert out.startswith("nothing to prune"), out
    assert git(repo, "rev-parse", saved.branch) == saved.commit, "c-1's only save was deleted"
    assert (repo / ".board" / naming.STATS_FILE).read_text() == forged
