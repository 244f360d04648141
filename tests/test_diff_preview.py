"""`stranded.diff_preview` and the diff buffer's use of it, against real git.

For a big new file git writes nothing until it has diffed all of it, so the diff view
shows the start of that file made from its blob. These tests hold the preview to being
exactly the first bytes of `git diff` (so nothing shown is ever not git's), refuse it
where it cannot be known that cheaply, and check that the buffer ends with git's own
lines whether the preview was right or wrong.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from board.core import proc
from board.core.git import stranded
from board.tui.stranded.buffer import DiffBuffer
from board.tui.stranded.diff_screen import DiffScreen

from tests.support.paths import SCRIPTS
from tests.support.repos import GIT_ENV, Repo, git
from tests.support.stranded_tui import diff_loaded, make_app, open_browser, select
from tests.support.tui import run_pilot
from tests.support.waiting import wait_for

BIG_LINES = 30_000  # about 1.5 MB: over PREVIEW_MIN_BYTES
SLOW_GIT = SCRIPTS / "git_slow_patch.sh"
PAUSING_GIT = SCRIPTS / "git_pause_patch.py"


def big_text(lines: int = BIG_LINES, end: bytes = b"\n") -> bytes:
    body = b"".join(
        b"value_%d = compute(%d, 'words')  # line %d\n" % (i, i, i) for i in range(lines)
    )
    return body[:-1] + end


def branch(r: Repo, name: str, files: dict[str, tuple[str, bytes]], base: str = "main") -> str:
    """A stranded/ branch on `base` whose commit writes `files` (path -> (mode, bytes))."""
    ref = f"stranded/{name}/20260101T000000.000Z"
    parent = git(r.root, "rev-parse", base)
    out = [f"commit refs/heads/{ref}".encode(), b"committer t <t@t> 1767225600 +0000", b"data 4"]
    out += [b"save", f"from {parent}".encode()]
    chunks = [b"\n".join(out) + b"\n"]
    for path, (mode, data) in files.items():
        chunks.append(f"M {mode} inline {path}\ndata {len(data)}\n".encode() + data + b"\n")
    res = proc.run(("git", "fast-import", "--quiet"), cwd=r.root, input_bytes=b"".join(chunks))
    assert res.returncode == 0, res.stderr
    return ref


def git_diff(r: Repo, ref: str) -> bytes:
    args = stranded.diff_args(r.cfg, ref)
    res = proc.run(("git", *args), cwd=r.root, timeout=60, env=GIT_ENV)
    assert res.returncode == 0, res.stderr
    return res.stdout.encode("utf-8", "surrogateescape")


# -- the preview is git's first bytes ---------------------------------------------------------


@pytest.mark.parametrize(
    "files",
    [
        pytest.param({"gen/big.py": ("100644", big_text())}, id="new-file"),
        pytest.param({"big.py": ("100644", big_text(end=b""))}, id="no-newline-at-end"),
        pytest.param({"run.sh": ("100755", big_text())}, id="executable"),
        pytest.param({"a.py": ("100644", big_text()), "b.txt": ("100644", b"x\n")}, id="more"),
        pytest.param({"crlf.txt": ("100644", big_text().replace(b"\n", b"\r\n"))}, id="crlf"),
        pytest.param({"with space.py": ("100644", big_text())}, id="space-in-path"),
    ],
)
def test_the_preview_is_exactly_the_start_of_git_diff(r: Repo, files) -> None:
    ref = branch(r, "feat-c-1", files)
    preview = stranded.diff_preview(r.cfg, ref)
    full = git_diff(r, ref)
    assert preview is not None, "no preview for a big new text file"
    assert full.startswith(preview), (
        f"the preview is not git's first bytes:\n{preview[:400]!r}\n{full[:400]!r}"
    )
    assert preview.count(b"\n") >= 6, "the preview holds no line of the file"


@pytest.mark.parametrize("end", [b"\n", b""], ids=["new-file", "no-newline-at-end"])
def test_a_saves_one_new_file_is_previewed_from_its_first_bytes_and_its_stats(
    kept_caches: Path, r: Repo, end: bytes, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real save of one big new file: its stats count the file's lines, so the preview
    reads only the blob's first bytes (never all of it, which takes git as long as the
    diff) and is still exactly git's first bytes."""
    from board.core.git import worktrees

    t = worktrees.create_worktree(r.cfg, "c-1")
    (t / "gen").mkdir()
    (t / "gen" / "big.py").write_bytes(big_text(end=end))
    saved = worktrees.discard_worktree(r.cfg, t, why="test").saved
    assert saved is not None and saved.stats.files == 1

    def whole_blob(*args: object) -> None:
        raise AssertionError("the whole blob was read to count lines the save had counted")

    monkeypatch.setattr(stranded, "_read_blob", whole_blob)
    preview = stranded.diff_preview(r.cfg, saved.branch)
    full = git_diff(r, saved.branch)
    assert preview is not None, "no preview for a save of one big new file"
    assert full.startswith(preview), (
        f"the preview is not git's first bytes:\n{preview[:400]!r}\n{full[:400]!r}"
    )
    saves_stats = stranded.saves.stats_file(r.cfg)
    assert saves_stats is not None and saves_stats.is_file(), "the save kept no stats line"
    saves_stats.unlink()  # a save made in another clone: its trailer is read instead
    assert stranded.diff_preview(r.cfg, saved.branch) == preview


def _no_preview(r: Repo, ref: str) -> None:
    assert stranded.diff_preview(r.cfg, ref) is None


def test_no_preview_for_a_small_new_file(r: Repo) -> None:
    _no_preview(r, branch(r, "feat-c-1", {"small.py": ("100644", b"x = 1\n")}))


def test_no_preview_when_no_whole_line_fits(r: Repo) -> None:
    _no_preview(r, branch(r, "feat-c-1", {"one.txt": ("100644", b"y" * (2 << 20))}))


def set_base(r: Repo, ref: str) -> None:
    """Move where trees start, which the diffs compare with (the run branch in fold mode,
    and origin/main), to `ref`."""
    git(r.root, "update-ref", f"refs/remotes/{r.cfg.publish.remote}/{r.cfg.board.base}", ref)
    git(r.root, "update-ref", f"refs/heads/{r.cfg.board.run_branch}", ref)


def test_no_preview_for_a_changed_file(r: Repo) -> None:
    base = branch(r, "feat-c-1", {"big.py": ("100644", big_text())})
    set_base(r, base)  # the file is now on the base
    ref = branch(r, "feat-c-2", {"big.py": ("100644", big_text(BIG_LINES + 1))}, base)
    assert b"--- a/big.py" in git_diff(r, ref)
    _no_preview(r, ref)


def test_no_preview_for_a_renamed_file(r: Repo) -> None:
    base = branch(r, "feat-c-1", {"big.py": ("100644", big_text())})
    set_base(r, base)
    ref = "stranded/feat-c-2/20260101T000000.000Z"
    git(r.root, "branch", ref, base)
    tree = r.root.parent / "rename-tree"
    git(r.root, "worktree", "add", "-q", str(tree), ref)
    git(tree, "mv", "big.py", "moved.py")
    git(tree, "commit", "-qm", "move")
    assert b"rename from big.py" in git_diff(r, ref)
    _no_preview(r, ref)


def test_no_preview_for_a_binary_file(r: Repo) -> None:
    data = b"\0" + big_text()
    _no_preview(r, branch(r, "feat-c-1", {"blob.dat": ("100644", data)}))


def test_no_preview_for_a_file_gitattributes_mark_binary(r: Repo) -> None:
    (r.root / ".gitattributes").write_text("*.gen -diff\n")
    ref = branch(r, "feat-c-1", {"out.gen": ("100644", big_text())})
    assert b"Binary files" in git_diff(r, ref)
    _no_preview(r, ref)


@pytest.mark.parametrize("path", ['quo"te.py', "naïve.py", "tab\there.py"])
def test_no_preview_for_a_path_git_would_quote(r: Repo, path: str) -> None:
    _no_preview(r, branch(r, "feat-c-1", {path: ("100644", big_text())}))


def test_the_preview_refuses_what_show_refuses(r: Repo) -> None:
    from board.core.errors import Refused

    with pytest.raises(Refused):
        stranded.diff_preview(r.cfg, "main")


# -- the buffer: a preview is checked against git, never kept when it differs ------------------


def feed_in_chunks(buffer: DiffBuffer, data: bytes, size: int = 4096) -> None:
    for start in range(0, len(data), size):
        buffer.feed(data[start : start + size])
    buffer.finish()


def lines_of(data: bytes) -> list[str]:
    return data.decode().split("\n")[:-1]


def test_a_right_preview_is_confirmed_and_not_shown_twice(r: Repo) -> None:
    ref = branch(r, "feat-c-1", {"a.py": ("100644", big_text()), "b.py": ("100644", b"b\n")})
    full = git_diff(r, ref)
    preview = stranded.diff_preview(r.cfg, ref)
    assert preview is not None
    buffer = DiffBuffer()
    assert buffer.preview(preview)
    assert buffer.previewing and buffer.count == preview.count(b"\n")
    feed_in_chunks(buffer, full, 3000)
    assert not buffer.previewing and not buffer.preview_replaced
    assert buffer.lines(0, buffer.count) == lines_of(full)
    assert [(f.path, f.added) for f in buffer.files] == [("a.py", BIG_LINES), ("b.py", 1)]


def test_a_wrong_preview_is_replaced_by_git_s_lines(r: Repo) -> None:
    """Git says the file is binary (core.bigFileThreshold) where the preview showed text."""
    ref = branch(r, "feat-c-1", {"a.py": ("100644", big_text())})
    preview = stranded.diff_preview(r.cfg, ref)
    assert preview is not None
    git(r.root, "config", "core.bigFileThreshold", "1k")
    full = git_diff(r, ref)
    assert b"Binary files" in full and not full.startswith(preview)
    buffer = DiffBuffer()
    assert buffer.preview(preview)
    generation = buffer.generation
    feed_in_chunks(buffer, full, 7)
    assert buffer.preview_replaced and buffer.generation > generation
    assert buffer.lines(0, buffer.count) == lines_of(full)
    assert [f.path for f in buffer.files] == ["a.py"] and buffer.files[0].binary


def test_a_preview_longer_than_what_git_wrote_is_cut_back_to_it(r: Repo) -> None:
    ref = branch(r, "feat-c-1", {"a.py": ("100644", big_text())})
    preview = stranded.diff_preview(r.cfg, ref)
    assert preview is not None
    written = preview[: len(preview) // 2]  # git died part way
    buffer = DiffBuffer()
    buffer.preview(preview)
    feed_in_chunks(buffer, written, 1000)
    assert buffer.preview_replaced
    cut = written[: written.rfind(b"\n") + 1]
    assert buffer.lines(0, buffer.count)[: cut.count(b"\n")] == lines_of(cut)
    assert buffer.count == written.count(b"\n") + 1  # and the partial last line, as git's


def test_a_preview_after_git_has_begun_is_not_used(r: Repo) -> None:
    ref = branch(r, "feat-c-1", {"a.py": ("100644", big_text())})
    preview = stranded.diff_preview(r.cfg, ref)
    full = git_diff(r, ref)
    buffer = DiffBuffer()
    buffer.feed(full[:100])
    assert preview is not None and not buffer.preview(preview)
    feed_in_chunks(buffer, full[100:])
    assert not buffer.previewed and buffer.lines(0, buffer.count) == lines_of(full)


# -- the diff view: the preview first, then git's lines ---------------------------------------


def git_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: Path) -> None:
    """`git` on PATH is `script`, a wrapper that runs the real git (REAL_GIT) its own way."""
    real = shutil.which("git")
    assert real is not None
    bin_dir = tmp_path / f"{script.stem}-bin"
    bin_dir.mkdir()
    (bin_dir / "git").symlink_to(script)
    monkeypatch.setenv("REAL_GIT", real)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")


async def open_diff(pilot, fx, ref: str) -> DiffScreen:  # type: ignore[no-untyped-def]
    """From the stranded browser, `enter` on `ref`: the diff screen, as soon as it is up."""
    browser = await open_browser(pilot, fx)
    await select(pilot, browser, ref)
    await pilot.press("enter")
    app = pilot.app
    await wait_for(pilot, lambda: isinstance(app.screen, DiffScreen), what="the diff")
    assert isinstance(app.screen, DiffScreen)
    return app.screen


@pytest.fixture
def slow_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`git` on PATH is git with `diff --patch` starting late (tests/scripts/git_slow_patch.sh)."""
    git_on_path(tmp_path, monkeypatch, SLOW_GIT)
    monkeypatch.setenv("SLOW_GIT_DELAY", "2")


@pytest.mark.parametrize("wrong", [False, True], ids=["confirmed", "replaced"])
async def test_the_view_shows_the_new_file_before_git_then_git_s_own_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, slow_git: None, wrong: bool
) -> None:
    from tests.support.stranded_tui import build

    fx = build(tmp_path, monkeypatch, husk=False)
    try:
        ref = branch(fx.repo, "feat-c-1", {"gen/big.py": ("100644", big_text())})
        if wrong:
            git(fx.repo.root, "config", "core.bigFileThreshold", "1k")  # git: "Binary files"
        full = git_diff(fx.repo, ref)
        app = make_app(fx)
        async with run_pilot(app, size=(100, 30)) as pilot:
            diff = await open_diff(pilot, fx, ref)
            await wait_for(pilot, lambda: diff.buffer.count > 0, what="the first lines")
            assert not diff.buffer.done, "git ended before the preview: the delay is too short"
            await pilot.pause()
            shown = [line.rstrip() for line in diff.view.text_lines()]
            assert shown[0] == "diff --git a/gen/big.py b/gen/big.py", shown[:3]
            assert "+value_0 = compute(0, 'words')  # line 0" in shown, shown[:8]
            status = str(diff.query_one("#diff-status").render())
            assert "git is diffing" in status, status
            diff = await diff_loaded(pilot)
            assert diff.buffer.preview_replaced is wrong
            assert diff.buffer.lines(0, diff.buffer.count) == lines_of(full)
            await pilot.pause()
            shown = [line.rstrip() for line in diff.view.text_lines()]
            want = lines_of(full)[: len(shown)]
            want += [""] * (len(shown) - len(want))  # below git's last line: nothing
            assert shown == want, "the view does not show git's lines (stale preview lines?)"
    finally:
        fx.close()


def test_reading_while_a_wrong_preview_is_replaced_never_fails() -> None:
    """The view asks which lines are headers while the reader thread may be replacing a
    wrong preview's lines (and its file list) with git's: every answer must come from one
    list or the other, never an index from one into the other."""
    import threading

    files = b"".join(b"diff --git a/f%d b/f%d\n+x\n" % (i, i) for i in range(400))
    git_bytes = b"error: git said something else\n"
    errors: list[BaseException] = []
    buffer = DiffBuffer()
    done = threading.Event()

    def ask() -> None:
        try:
            while not done.is_set():
                for line in (1, 300, 799):
                    buffer.in_header(line)
        except BaseException as exc:  # the failure this test is about
            errors.append(exc)

    import sys

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    reader = threading.Thread(target=ask)
    reader.start()
    try:
        for _ in range(1500):
            buffer = DiffBuffer()
            buffer.preview(files)
            buffer.feed(git_bytes)  # differs at once: the preview's lines are replaced
            buffer.finish()
            if errors:
                break
    finally:
        done.set()
        reader.join(10)
        sys.setswitchinterval(switch)
    assert not errors, f"in_header failed while the lines were replaced: {errors[0]!r}"
    assert buffer.lines(0, buffer.count) == ["error: git said something else"]


async def test_the_file_list_follows_a_replaced_preview_while_git_still_writes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A wrong preview (a stand-in: diff_preview is made to return the right bytes with one
    line changed) is replaced at git's first chunk; git then pauses mid-diff
    (tests/scripts/git_pause_patch.py). Meanwhile the view and the file list must show
    git's lines and counts, not the preview's."""
    from tests.support.stranded_tui import build

    fx = build(tmp_path, monkeypatch, husk=False)
    try:
        ref = branch(fx.repo, "feat-c-1", {"gen/big.py": ("100644", big_text())})
        right = stranded.diff_preview(fx.repo.cfg, ref)
        assert right is not None
        wrong = right.replace(b"+value_0 = ", b"+value_X = ", 1)
        monkeypatch.setattr(stranded, "diff_preview", lambda cfg, name: wrong)
        git_on_path(tmp_path, monkeypatch, PAUSING_GIT)
        monkeypatch.setenv("GIT_PAUSE_AFTER", "200000")
        monkeypatch.setenv("GIT_PAUSE_S", "3")
        app = make_app(fx)
        async with run_pilot(app, size=(100, 30)) as pilot:
            diff = await open_diff(pilot, fx, ref)
            await wait_for(pilot, lambda: diff.buffer.preview_replaced, what="the replacement")
            await pilot.pause(0.5)  # git is paused: the screen has caught up by now
            assert not diff.buffer.done, "git ended already: the pause is too short"
            listed = diff.files.items
            assert listed and listed[0] is diff.buffer.files[0], (
                "the file list still shows the replaced preview's file"
            )
            shown = [line.rstrip() for line in diff.view.text_lines()]
            assert "+value_X = compute(0, 'words')  # line 0" not in shown, "a stale line"
            assert "+value_0 = compute(0, 'words')  # line 0" in shown
    finally:
        fx.close()


def test_the_viewers_git_diff_runs_below_the_operators_keys(r: Repo) -> None:
    """Once its first bytes are out (the first screenful, at full speed), the diff view's
    `git diff` runs at a lower CPU priority (`DIFF_NICE`): on a busy machine the UI comes
    first while the rest streams in."""
    ref = branch(r, "feat-c-1", {"a.py": ("100644", big_text())})
    group: list[int] = []
    seen: list[int] = []
    mine = os.getpriority(os.PRIO_PROCESS, 0)
    chunks: list[bytes] = []

    def take(data: bytes) -> None:
        if not chunks:
            seen.append(os.getpriority(os.PRIO_PROCESS, group[0]))
        chunks.append(data)

    res = stranded.stream_diff(r.cfg, ref, take, group.append)
    assert res.returncode == 0 and b"".join(chunks) == git_diff(r, ref)
    assert seen == [min(mine + stranded.DIFF_NICE, 19)], f"git diff ran at {seen}, we at {mine}"


def test_the_preview_is_read_from_the_moment_the_diff_screen_is_made(r: Repo) -> None:
    """The diff screen starts reading the preview when it is created, before it is even
    mounted: its git calls run while the screen is built, not after."""
    from board.tui.stranded.strandrows import StrandedRow

    ref = branch(r, "feat-c-1", {"gen/big.py": ("100644", big_text())})
    row = StrandedRow("branch", ref, ref, "c-1", None, "", "", "feat-c-1", "", None)
    screen = DiffScreen(r.cfg, row)
    thread = screen._preview_thread
    assert thread is not None, "the preview waits for the screen to be mounted"
    thread.join(30)
    assert not screen.is_mounted and screen.buffer.previewed, "no preview before the mount"
    assert git_diff(r, ref).startswith("\n".join(screen.buffer.lines(0, 8)).encode())
