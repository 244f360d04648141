"""tomllib's answer for board.toml is kept in the user's cache directory (core/tomlcache.py,
core/cachedir.py) so a quick verb need not import tomllib; it is used only for the very text
it came from, only when the file is the user's own, never from `.board/`, and anything wrong
with it means tomllib reads the file, as without it. These tests edit the file behind the
cache's back (same size, same time stamps), corrupt and forge the cache, put one in
`.board/`, open the cache to others, turn it off, and check every read still says what the
file says.
"""

from __future__ import annotations

import marshal
import os
import stat
import sys
from binascii import crc32
from pathlib import Path

import pytest
from board.core import cachedir, config, tomlcache
from board.core.errors import ConfigError

from tests.support.procs import python_child


def board_toml(root: Path, prefix: str) -> Path:
    path = root / "board.toml"
    path.write_text(f'[board]\nprefix = "{prefix}"\n[gate]\nargv = ["make", "test"]\n')
    return path


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BOARD_CACHE_DIR", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    (repo / ".board").mkdir(parents=True)
    board_toml(repo, "aa")
    return repo


def folder_of(root: Path) -> Path:
    """The repository's folder in the user's cache directory."""
    folder = cachedir.for_repo(root)
    assert folder is not None
    return Path(folder.path)


def cache_of(root: Path) -> Path:
    return folder_of(root) / tomlcache.NAME


def blob_of(text: str, data: object, python: str = sys.version) -> bytes:
    """A cache file's bytes as tomlcache writes them, holding whatever it is given."""
    payload = marshal.dumps((python, text, data))
    return b"board.toml cache 1\n" + crc32(payload).to_bytes(4, "big") + payload


def forge(root: Path, text: str, data: object, python: str = sys.version) -> None:
    """A cache file as tomlcache writes it, holding whatever it is given."""
    folder_of(root).mkdir(mode=0o700, parents=True, exist_ok=True)
    cache_of(root).write_bytes(blob_of(text, data, python))
    cache_of(root).chmod(0o600)


def test_a_read_keeps_tomllib_s_answer_and_the_next_read_uses_it(root: Path) -> None:
    assert config.load(root).board.prefix == "aa"
    assert cache_of(root).is_file()
    assert list((root / ".board").iterdir()) == [], "a cache was kept in the repository"
    text = (root / "board.toml").read_text()
    folder = cachedir.for_repo(root)
    assert folder is not None
    assert tomlcache.read(folder, tomlcache.NAME, text) == {
        "board": {"prefix": "aa"},
        "gate": {"argv": ["make", "test"]},
    }
    # the next read takes the kept answer: a forged one for this very text shows through
    forge(root, text, {"board": {"prefix": "zz"}})
    assert config.load(root).board.prefix == "zz"


def test_an_edit_is_seen_at_once_with_the_same_size_and_time_stamps(root: Path) -> None:
    path = root / "board.toml"
    assert config.load(root).board.prefix == "aa"
    before = path.stat()
    board_toml(root, "bb")  # the same length
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = path.stat()
    assert (after.st_size, after.st_mtime_ns) == (before.st_size, before.st_mtime_ns)
    assert config.load(root).board.prefix == "bb"
    # and the cache now holds the new answer
    folder = cachedir.for_repo(root)
    assert folder is not None
    assert tomlcache.read(folder, tomlcache.NAME, path.read_text()) is not None


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"garbage",
        b"board.toml cache 1\n",
        b"board.toml cache 1\n\x00\x00\x00\x00",
        b"board.toml cache 1\n\x00\x00\x00\x00\x00\x00\x00\x00",
    ],
    ids=["empty", "foreign", "magic only", "no payload", "zeros"],
)
def test_a_corrupt_cache_is_ignored_and_replaced(root: Path, blob: bytes) -> None:
    config.load(root)
    cache_of(root).write_bytes(blob)
    assert config.load(root).board.prefix == "aa"
    assert cache_of(root).read_bytes() != blob


def test_a_torn_or_flipped_cache_is_ignored(root: Path) -> None:
    config.load(root)
    good = cache_of(root).read_bytes()
    text = (root / "board.toml").read_text()
    forge(root, text, {"board": {"prefix": "zz"}})  # what a flip would turn it into
    forged = cache_of(root).read_bytes()
    for bad in (forged[:-1], forged[:-1] + bytes([forged[-1] ^ 1]), forged + b"x"):
        cache_of(root).write_bytes(bad)
        assert config.load(root).board.prefix == "aa"
    assert cache_of(root).read_bytes() == good


@pytest.mark.parametrize(
    "kept",
    [
        ("another python", None, {"board": {"prefix": "zz"}}),
        (sys.version, "another text", {"board": {"prefix": "zz"}}),
        (sys.version, None, {"board": ("not", "a", "toml", "array")}),
        (sys.version, None, {"board": {"prefix": b"zz"}}),
        (sys.version, None, {"board": {1: "zz"}}),
        (sys.version, None, {"board": {"prefix": {"zz"}}}),
        (sys.version, None, ["not", "a", "table"]),
        (sys.version, None, (lambda: None).__code__),
    ],
    ids=["python", "text", "tuple", "bytes", "int key", "set", "list", "code"],
)
def test_a_foreign_cache_is_ignored(root: Path, kept: tuple[str, str | None, object]) -> None:
    python, text, data = kept
    real = (root / "board.toml").read_text()
    forge(root, real if text is None else text, data, python)
    assert config.load(root).board.prefix == "aa"


def test_an_unwritable_cache_directory_is_fine(root: Path) -> None:
    config.load(root)
    folder = folder_of(root)
    cache_of(root).unlink()
    folder.chmod(0o555)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who writes anywhere (see the next test)")
        assert config.load(root).board.prefix == "aa"
        assert config.load(root).board.prefix == "aa"
        assert list(folder.iterdir()) == []
    finally:
        folder.chmod(0o700)


def test_a_cache_that_cannot_be_written_or_read_is_fine(root: Path) -> None:
    """What root cannot be refused: the cache's name taken by a directory."""
    cache_of(root).mkdir(parents=True)
    (cache_of(root) / "x").write_text("")
    assert config.load(root).board.prefix == "aa"
    board_toml(root, "bb")
    assert config.load(root).board.prefix == "bb"
    assert sorted(p.name for p in folder_of(root).iterdir()) == [tomlcache.NAME]
    assert cache_of(root).is_dir()


def test_no_board_dir_is_made(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOARD_CACHE_DIR", str(tmp_path / "cache"))
    repo = tmp_path / "repo"
    repo.mkdir()
    board_toml(repo, "aa")
    assert config.load(repo).board.prefix == "aa"
    assert sorted(p.name for p in repo.iterdir()) == ["board.toml"]


def test_a_cache_in_the_repository_is_never_read(root: Path) -> None:
    """A clone brings whatever its repository committed in .board/: a kept reading there,
    for board.toml's very text, would name another coder (issue 39). It is not read, and
    nothing is written beside it."""
    text = (root / "board.toml").read_text()
    forged = blob_of(text, {"board": {"prefix": "zz"}})
    for name in (tomlcache.NAME, "themes.toml.cache"):
        (root / ".board" / name).write_bytes(forged)
    assert config.load(root).board.prefix == "aa"
    assert config.load(root).board.prefix == "aa"  # and again, from the user's own cache
    assert cache_of(root).is_file()
    assert (root / ".board" / tomlcache.NAME).read_bytes() == forged


@pytest.mark.parametrize(
    "damage", ["others may write the file", "others may write the folder", "a symlink"]
)
def test_a_cache_that_is_not_the_users_own_is_not_read(root: Path, damage: str) -> None:
    config.load(root)
    text = (root / "board.toml").read_text()
    forge(root, text, {"board": {"prefix": "zz"}})
    assert config.load(root).board.prefix == "zz"  # the forge reads as a kept answer …
    if damage == "others may write the file":
        cache_of(root).chmod(0o666)
    elif damage == "others may write the folder":
        folder_of(root).chmod(0o777)
    else:
        elsewhere = root.parent / "elsewhere"
        elsewhere.write_bytes(cache_of(root).read_bytes())
        elsewhere.chmod(0o600)
        cache_of(root).unlink()
        cache_of(root).symlink_to(elsewhere)
    assert config.load(root).board.prefix == "aa"  # … but not once another may have written it


def test_turned_off_nothing_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BOARD_CACHE_DIR", "")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    repo = tmp_path / "repo"
    (repo / ".board").mkdir(parents=True)
    board_toml(repo, "aa")
    assert cachedir.for_repo(repo) is None
    assert config.load(repo).board.prefix == "aa"
    assert not (tmp_path / "xdg").exists() and list((repo / ".board").iterdir()) == []


def test_a_document_marshal_cannot_hold_is_read_each_time(root: Path) -> None:
    """A TOML date (refused by the schema, but tomllib reads it first) is not kept."""
    (root / "board.toml").write_text("[board]\nbase = 1979-05-27\n")
    with pytest.raises(ConfigError, match="base"):
        config.load(root)
    assert not cache_of(root).exists()


def test_a_refused_board_toml_is_not_kept(root: Path) -> None:
    """Valid TOML that board refuses is read again (and refused again) each time."""
    board_toml(root, "BAD!")
    for _ in range(2):
        with pytest.raises(ConfigError, match="prefix"):
            config.load(root)
    assert not cache_of(root).exists()


def test_bad_toml_is_refused_as_before_and_not_kept(root: Path) -> None:
    (root / "board.toml").write_text("[board\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        config.load(root)
    assert not cache_of(root).exists()
    # the same refusal with a cache present for another text
    board_toml(root, "aa")
    config.load(root)
    (root / "board.toml").write_text("[board\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        config.load(root)


def test_a_read_with_the_cache_current_imports_no_tomllib(root: Path) -> None:
    config.load(root)
    code = (
        "import sys\n"
        "from pathlib import Path\n"
        "from board.core import config\n"
        f"print(config.load(Path({str(root)!r})).board.prefix, 'tomllib' in sys.modules)\n"
    )
    res = python_child(["-c", code], cwd=root)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["aa", "False"]
    board_toml(root, "cc")
    res = python_child(["-c", code], cwd=root)
    assert res.stdout.split() == ["cc", "True"]


def test_the_cache_directory_follows_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.delenv("BOARD_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cachedir.cache_dir() == str(tmp_path / "xdg" / "board")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cachedir.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "board")
    monkeypatch.setenv("BOARD_CACHE_DIR", "")
    assert cachedir.cache_dir() is None
    # a relative place would be wherever board tui runs (a clone, perhaps): not used
    monkeypatch.setenv("BOARD_CACHE_DIR", "cache")
    assert cachedir.cache_dir() is None
    monkeypatch.delenv("BOARD_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/xdg")
    assert cachedir.cache_dir() == os.path.join(str(tmp_path / "home"), ".cache", "board")


def test_the_cache_directory_is_made_only_under_the_users_own(monkeypatch, tmp_path) -> None:
    """Root running with another user's HOME (sudo) must not leave root's directories in
    it; the user's own runs could then never write their cache."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    if os.getuid() == 0:
        os.chown(theirs, 65534, 65534)
        target = theirs / ".cache" / "board"
    else:
        target = Path("/board-test-not-made") / "board"  # under /, root's
    cachedir.make_dir(str(target))
    assert not target.exists() and not target.parent.exists()
    mine = tmp_path / "mine" / ".cache" / "board"
    cachedir.make_dir(str(mine))
    assert mine.is_dir() and stat.S_IMODE(mine.stat().st_mode) == 0o700
