"""The operator's verbs over saved work, against real git: list, show, pick, discard, CLI."""

from __future__ import annotations

import json
import os
import shutil
import threading
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from board.core import ops, records, tomlcache
from board.core.errors import Conflict, NotFound, Refused
from board.core.git import naming, saves, savestats, snapshot, stranded, worktrees
from board.core.model import CardDraft
from board.core.ops.pick import stamp_time
from board.core.store import Expect, SQLiteStore

from board.cli import entry as cli
from tests.support.repos import Repo
from tests.support.stranded import make_branches

# the stats file and the listing's kept rows are caches, which the suite turns off: on here,
# in each test's own cache directory (core/cachedir.py)
pytestmark = pytest.mark.usefixtures("kept_caches")


def stats_path(r: Repo) -> Path:
    path = saves.stats_file(r.cfg)
    assert path is not None, "the caches are on"
    return path


def save_dirty(r: Repo, card: str = "c-1", files: dict[str, str] | None = None) -> str:
    t = worktrees.create_worktree(r.cfg, card)
    for name, text in (files or {"app.py": "print('saved')\n"}).items():
        (t / name).write_text(text)
    res = worktrees.discard_worktree(r.cfg, t, why="test")
    assert res.saved is not None
    return res.saved.branch


def save_committed(r: Repo, card: str = "c-2") -> tuple[str, str]:
    t = worktrees.create_worktree(r.cfg, card)
    commit = r.commit(t, {"feature.py": "feature = 1\n"}, "the coder's commit")
    (t / "extra.py").write_text("extra = 2\n")
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.saved is not None
    return res.saved.branch, commit


def run(r: Repo, *argv: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = cli.main(["-C", str(r.root), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# list --------------------------------------------------------------------------------------


def test_list_shows_every_save_with_its_diffstat_from_one_git_call(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = save_dirty(r, "c-1", {"app.py": "x\ny\n", "new.py": "n\n"})
    b, _ = save_committed(r, "c-2")
    calls: list[tuple[str, ...]] = []
    real = stranded.git

    def counting(cwd, *args, **kw):  # a pass-through that counts: git still runs for real
        calls.append(args)
        return real(cwd, *args, **kw)

    monkeypatch.setattr(stranded, "git", counting)
    monkeypatch.setattr(savestats, "git", counting)  # the trailers' reading, were it made
    listed = {x.branch: x for x in stranded.list_stranded(r.cfg)}
    assert len(calls) == 1, f"stranded list made {len(calls)} git calls: {calls}"
    assert set(listed) == {a, b}, f"a saved branch is missing from the list: {listed}"
    one = listed[a]
    assert (one.card, one.tree, one.files, one.insertions, one.deletions) == (
        "c-1",
        "feat-c-1",
        2,
        3,
        1,
    ), one
    assert one.stamp and a.endswith(one.stamp) and one.commit == r.rev(a)
    two = listed[b]
    assert (two.card, two.files, two.insertions, two.deletions) == ("c-2", 2, 2, 0), two
    keys = {"branch", "card", "tree", "stamp", "commit", "files", "insertions", "deletions"}
    assert keys <= set(one.to_json())


def test_list_words_one_file_as_one_file(r: Repo, capsys: pytest.CaptureFixture[str]) -> None:
    one = save_dirty(r, "c-1")
    two = save_dirty(r, "c-3", {"a.py": "a = 1\n", "b.py": "b = 2\n"})
    code, out, _ = run(r, "stranded", "list", capsys=capsys)
    lines = {line.split()[0]: line for line in out.splitlines() if line.startswith("stranded/")}
    assert code == 0 and " 1 file +1 -1 " in lines[one], lines[one]
    assert " 2 files +2 -0 " in lines[two], lines[two]


def test_list_reads_the_trailers_when_the_stats_file_is_gone(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    branch = save_dirty(r, "c-1", {"app.py": "x\ny\n"})
    stats_path(r).unlink()  # a save made in another clone, or a lost file
    (item,) = stranded.list_stranded(r.cfg)
    assert (item.branch, item.files, item.insertions, item.deletions) == (branch, 1, 2, 1), item
    calls: list[tuple[str, ...]] = []
    real = stranded.git
    counting = lambda cwd, *a, **k: calls.append(a) or real(cwd, *a, **k)  # noqa: E731
    monkeypatch.setattr(stranded, "git", counting)
    monkeypatch.setattr(savestats, "git", counting)  # where the trailers are read
    assert stranded.list_stranded(r.cfg)[0].files == 1
    assert len(calls) == 1, f"the stats were not recorded again: {len(calls)} git calls"


def test_list_reads_a_hand_made_branch_without_stats(r: Repo) -> None:
    r.git("branch", "stranded/feat-c-7/20250101T000000.000Z", "main")
    (item,) = stranded.list_stranded(r.cfg)
    assert (item.card, item.tree, item.stamp, item.files) == (
        "c-7",
        "feat-c-7",
        "20250101T000000.000Z",
        None,
    )


@pytest.mark.parametrize("space", ["\u00a0", "\u0085", "\u2028", "\u3000"])
def test_a_branch_name_with_a_unicode_space_is_listed_whole(r: Repo, space: str) -> None:
    """git allows any non-ASCII character in a ref name, Unicode spaces included; the
    listing's columns are split at git's own separators only, so such a name neither
    shifts the next branch's commit nor stops the listing."""
    other = r.git("commit-tree", "main^{tree}", "-p", "main", "-m", "other")
    odd = f"stranded/feat{space}c-7/20250101T000000.000Z"
    r.git("branch", odd, "main")
    r.git("branch", "stranded/feat-c-8/20250102T000000.000Z", other)
    listed = {b.branch: b for b in stranded.list_stranded(r.cfg)}
    assert set(listed) == {odd, "stranded/feat-c-8/20250102T000000.000Z"}, listed
    assert listed[odd].commit == r.git("rev-parse", "main")
    assert listed[odd].tree == f"feat{space}c-7"
    assert listed["stranded/feat-c-8/20250102T000000.000Z"].commit == other


def test_list_reads_every_shape_of_name_and_stats_line_in_one_listing(r: Repo) -> None:
    """The listing reads its stats column by column; every odd row must still read as it
    does alone: a name with no tree dir, a tree dir of several parts, a save whose stats
    name no card, a six-field line from before kinds, an attempt, a damaged last line."""
    make_branches(r.root, 5)
    base = r.git("rev-parse", "main")
    r.git("branch", "stranded/20991231T000000.000Z", base)  # no tree dir
    r.git("branch", "stranded/feat-c-8/deep/20991230T000000.000Z", base)
    stranded.list_stranded(r.cfg)  # writes the stats file
    first = stranded.list_stranded(r.cfg)
    by_card = {b.card: b for b in first}
    no_card, six, attempt = by_card["c-1"].commit, by_card["c-2"].commit, by_card["c-3"].commit
    damaged = by_card["c-4"].commit
    saves.record_stats(
        r.cfg,
        [
            saves.stats_line(no_card, "feat-c-1", None, snapshot.Stats(1, 2, 3)),
            saves.stats_line(six, "feat-c-2", "c-2", snapshot.Stats(4, 5, 6)).rsplit("\t", 1)[0]
            + "\n",
            saves.stats_line(attempt, "feat-c-3", "c-3", snapshot.Stats(7, 8, 9), "attempt"),
            f"{damaged}\tfeat-c-4\tcut short\n",  # a torn line: the last good one wins
        ],
    )
    listed = stranded.list_stranded(r.cfg)
    shown = [(b.branch, b.card, b.tree, b.stamp, b.files, b.kind) for b in listed]
    assert shown[:2] == [
        ("stranded/20991231T000000.000Z", None, "", "20991231T000000.000Z", None, "foreign"),
        (
            "stranded/feat-c-8/deep/20991230T000000.000Z",
            "c-8",
            "feat-c-8",
            "20991230T000000.000Z",
            None,
            "foreign",  # made by hand: no Board-Save trailer
        ),
    ], shown[:2]
    got = {b.commit: (b.card, b.files, b.insertions, b.deletions, b.kind) for b in listed}
    assert got[no_card] == ("c-1", 1, 2, 3, "saved"), "a save naming no card lost its tree's"
    assert got[six] == ("c-2", 4, 5, 6, "saved"), "a line from before kinds was misread"
    assert got[attempt] == ("c-3", 7, 8, 9, "attempt"), "the attempt's kind was lost"
    was = by_card["c-4"]
    assert got[damaged] == ("c-4", was.files, was.insertions, was.deletions, "saved"), (
        "a damaged last line hid the good one before it"
    )
    assert [b.branch for b in listed] == [b.branch for b in first], "the order changed"
    assert [b.stamp for b in listed] == sorted((b.stamp for b in listed), reverse=True)


def test_a_stats_line_whose_numbers_cannot_be_read_is_skipped_like_a_torn_one(
    r: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stats file is a cache of the trailers: a line whose diffstat `int` cannot read
    (a bad disk, a hand edit) is malformed, so the good line before it stands (or, with none,
    the trailer is read), in the whole list, the first screenful and the CLI alike. It
    used to stop the listing with an internal error."""
    make_branches(r.root, 3)
    stranded.list_stranded(r.cfg)  # writes the stats file
    before = stranded.list_stranded(r.cfg)
    damaged, only = before[0], before[1]
    text = stats_path(r).read_text()
    stats_path(r).write_text(
        "".join(x for x in text.splitlines(keepends=True) if not x.startswith(only.commit))
        + f"{damaged.commit}\tfeat-c-2\tc-2\t1\tmany\t2\tsaved\n"
        + f"{only.commit}\tfeat-c-1\tc-1\t\u00b2\t1\t1\tsaved\n"  # a digit int refuses
        + f"{damaged.commit}\tfeat-c-2\tc-2\t3\t4\t\u00b2\tsaved\n"
    )
    assert stranded.list_stranded(r.cfg) == before
    assert stranded.read_refs(r.cfg, newest=3).newest(3) == before
    code, out, err = run(r, "stranded", "list", capsys=capsys)
    assert code == 0 and err == "", err
    assert f"{damaged.branch}  {damaged.card:<8} {damaged.files} files" in out, out


def test_a_listing_reads_its_stats_beside_git_and_a_failure_there_is_raised(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The listing reads its stats file in a thread started before git, so the two overlap
    from git's start on: here each side waits (10 s at most) for the other to have begun,
    which only two threads can both pass. The rows are those of a listing read in turn.
    A failure reading the file is raised by the listing, once git is done."""
    make_branches(r.root, 20)
    expected = stranded.list_stranded(r.cfg)
    real_git, real_read = stranded.git, stranded._read_stats
    began = {"git": threading.Event(), "stats": threading.Event()}
    met: list[str] = []

    def git(*args: Any, **kwargs: Any) -> Any:
        began["git"].set()
        if began["stats"].wait(10):
            met.append("git saw the stats being read")
        return real_git(*args, **kwargs)

    def read(cfg: Any) -> Any:
        began["stats"].set()
        if began["git"].wait(10):
            met.append("the stats saw git begin")
        return real_read(cfg)

    monkeypatch.setattr(stranded, "git", git)
    monkeypatch.setattr(stranded, "_read_stats", read)
    assert stranded.list_stranded(r.cfg) == expected
    assert sorted(met) == ["git saw the stats being read", "the stats saw git begin"], met

    finished: list[bool] = []

    def git_then_note(*args: Any, **kwargs: Any) -> Any:
        res = real_git(*args, **kwargs)
        finished.append(True)
        return res

    def failing(cfg: Any) -> Any:
        raise RuntimeError("the stats file could not be read")

    monkeypatch.setattr(stranded, "git", git_then_note)
    monkeypatch.setattr(stranded, "_read_stats", failing)
    with pytest.raises(RuntimeError, match="could not be read"):
        stranded.list_stranded(r.cfg)
    assert finished == [True], "git was not run to its end before the failure was raised"


def test_the_newest_screenful_is_the_head_of_the_whole_list_with_the_same_stats(r: Repo) -> None:
    """The browser paints `read_refs(newest=n).newest(n)` first: it must be what the whole
    list shows first (same order, stamp ties included, same stats, the last stats line
    winning, trailers read for a commit the stats file does not know)."""
    make_branches(r.root, 30)
    base = r.git("rev-parse", "main")
    tie = "20991231T235959.000Z"  # newer than every other save; three names share it
    for name in (f"stranded/aa/{tie}", f"stranded/zz/{tie}", f"stranded/zz/{tie}-1"):
        r.git("branch", name, base)  # made by hand: no trailer, no stats line
    stranded.list_stranded(r.cfg)  # writes the stats file
    listed = stranded.list_stranded(r.cfg)
    newest_saved = next(b for b in listed if b.files is not None)
    saves.record_stats(  # a later line for the same commit wins
        r.cfg,
        [saves.stats_line(newest_saved.commit, newest_saved.tree, "c-99", snapshot.Stats(9, 8, 7))],
    )
    with stats_path(r).open("a") as f:
        f.write(f"{newest_saved.commit}\tbroken line\n")  # malformed: ignored by both
    unknown = listed[5].commit  # not in the file: its trailer is read

    def forget_unknown() -> None:
        text = stats_path(r).read_text()
        stats_path(r).write_text(
            "".join(x for x in text.splitlines(keepends=True) if not x.startswith(unknown))
        )

    whole = stranded.list_stranded(r.cfg)
    assert [b.files for b in whole if b.commit == newest_saved.commit] == [9], whole[:5]
    for n in (1, 3, 4, 12, len(whole) + 5):
        forget_unknown()
        head = stranded.read_refs(r.cfg, newest=n).newest(n)
        assert head == whole[:n], (
            f"the first {n} rows painted differ from the head of the whole list: "
            f"{[(b.branch, b.files) for b in head[:6]]} != "
            f"{[(b.branch, b.files) for b in whole[:6]]}"
        )


def test_list_says_which_saves_are_failed_attempts_wherever_it_reads_the_stats(
    r: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """The kind is durable: in the save's trailer and the stats file, never lost between."""
    t = worktrees.create_worktree(r.cfg, "c-1")
    (t / "app.py").write_text("attempt 1\n")
    res = worktrees.discard_worktree(r.cfg, t, why="test", kind=naming.KIND_ATTEMPT)
    assert res.saved is not None and res.saved.kind == "attempt"
    attempt = res.saved.branch
    saved = save_dirty(r, "c-2")
    kinds = {b.branch: b.kind for b in stranded.list_stranded(r.cfg)}
    assert kinds == {attempt: "attempt", saved: "saved"}, kinds
    stats_path(r).unlink()  # another clone's saves: read from the trailers
    kinds = {b.branch: b.kind for b in stranded.list_stranded(r.cfg)}
    assert kinds == {attempt: "attempt", saved: "saved"}, f"the trailer lost the kind: {kinds}"
    code, out, _ = run(r, "stranded", "list", "--json", capsys=capsys)
    assert code == 0
    assert {x["branch"]: x["kind"] for x in json.loads(out)} == kinds
    code, out, _ = run(r, "stranded", "list", capsys=capsys)
    marked = [line.split()[0] for line in out.splitlines() if "(a failed attempt)" in line]
    assert code == 0 and marked == [attempt], out
    # a stats line from before kinds existed (six fields) reads as `saved`
    line = saves.stats_line(r.rev(saved) or "", "feat-c-2", "c-2", snapshot.Stats(1, 1, 1))
    assert savestats._parse_stats_line(line.rsplit("\t", 1)[0])[-1] == "saved"


def test_list_marks_a_candidate_not_chosen_and_its_json_kind_stays_candidate(
    r: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    """A best-of-N candidate the race did not choose (issue 42) is neither a failed attempt
    nor an ordinary save: the text says what it is, the JSON keeps its kind."""
    t = worktrees.create_worktree(r.cfg, "c-1", "2")
    (t / "app.py").write_text("candidate 2\n")
    res = worktrees.discard_worktree(r.cfg, t, why="test", kind=naming.KIND_CANDIDATE)
    assert res.saved is not None
    (item,) = stranded.list_stranded(r.cfg)
    assert item.is_candidate and not item.is_attempt, item
    code, out, _ = run(r, "stranded", "list", "--json", capsys=capsys)
    assert code == 0 and [x["kind"] for x in json.loads(out)] == ["candidate"], out
    code, out, _ = run(r, "stranded", "list", capsys=capsys)
    assert code == 0 and res.saved.branch in out, out
    assert "(a candidate not chosen)" in out and "(a failed attempt)" not in out, out


def test_a_save_reused_after_a_crash_keeps_the_kind_its_commit_records(r: Repo) -> None:
    """A climb killed after its save, before the tree went: the next save of the same
    state reuses that branch, and it stays an attempt."""
    t = worktrees.create_worktree(r.cfg, "c-1")
    (t / "app.py").write_text("attempt 1\n")
    first = saves.preserve_worktree(r.cfg, t, kind=naming.KIND_ATTEMPT)
    assert first is not None
    again = worktrees.discard_worktree(r.cfg, t, why="boot")
    assert again.saved is not None and again.saved.reused and again.saved.branch == first.branch
    assert again.saved.kind == "attempt"
    (item,) = stranded.list_stranded(r.cfg)
    assert item.kind == "attempt", "the reuse recorded the attempt as an ordinary save"


def _stats_text(*lines: str) -> tuple[str, list[str]]:
    text = "".join(f"{line}\n" for line in lines)
    return text, text.splitlines()


def test_the_stats_file_read_column_by_column_makes_the_rows_the_line_reading_makes(
    r: Repo,
) -> None:
    """`_read_plain_lines` (in C, for a file as saves write it today) must make exactly the
    rows `_read_lines` makes, or decline: over every shape a line takes (a card or none,
    "" for a card, each kind and an unknown one, no tree dir, a commit listed again), and
    over near-misses it must leave to the line reading (a deep name, a sign, a digit `int`
    refuses, no trailer, seven or nine fields, a blank line)."""
    c = [f"{i:040x}" for i in range(1, 9)]
    plain = [
        f"{c[0]}\tfeat-c-1\tc-1\t1\t2\t3\tsaved\tstranded/feat-c-1/20250101T000000.000Z",
        f"{c[1]}\tfeat-c-2\t-\t4\t0\t0\tattempt\tstranded/feat-c-2/20250102T000000.000Z",
        f"{c[2]}\tfeat-c-3\t\t5\t6\t7\tsaved\tstranded/feat-c-3-fix/20250103T000000.000Z-2",
        f"{c[3]}\tx\t-\t1\t1\t1\tlater\tstranded/20250104T000000.000Z",
        f"{c[4]}\tfeat-c-5\tc-9\t10\t200\t3000\tsaved\tstranded/feat-c-5/20250105T000000.000Z",
        f"{c[0]}\tfeat-c-1\tc-1\t8\t8\t8\tattempt\tstranded/feat-c-1/20250101T000000.000Z",
        f"{c[5]}\tnot-a-card\t-\t1\t0\t0\tsaved\tstranded/not-a-card/20250106T000000.000Z",
    ]
    text, lines = _stats_text(*plain)
    by_columns = savestats._read_plain_lines(r.cfg, text, lines)
    by_lines = savestats._read_lines(r.cfg, text, lines)
    assert by_columns is not None, "a file as saves write it was left to the line reading"
    assert by_columns.ready == by_lines.ready, (by_columns.ready, by_lines.ready)
    assert by_columns.ready[c[0]].files == 8, "the later line of a commit did not win"
    assert by_columns.ready[c[1]].card == "c-2", "a save naming no card lost its tree's"
    assert by_columns.ready[c[3]][1:4] == (None, "", "20250104T000000.000Z")
    assert by_columns.cache == by_lines.cache
    near_misses = [
        f"{c[6]}\tfeat-c-7\tc-7\t1\t1\t1\tsaved\tstranded/feat-c-7/deep/20250107T000000.000Z",
        f"{c[6]}\tfeat-c-7\tc-7\t+1\t1\t1\tsaved\tstranded/feat-c-7/20250107T000000.000Z",
        f"{c[6]}\tfeat-c-7\tc-7\t1\t\u00b2\t1\tsaved\tstranded/feat-c-7/20250107T000000.000Z",
        f"{c[6]}\t-\t-\t-\t-\t-\tsaved\tstranded/feat-c-7/20250107T000000.000Z",
        f"{c[6]}\tfeat-c-7\tc-7\t1\t1\t1\tsaved",
        f"{c[6]}\tfeat-c-7\tc-7\t1\t1\t1\tsaved\tstranded/feat-c-7/20250107T000000.000Z\tx",
        "",
    ]
    for odd in near_misses:
        text, lines = _stats_text(*plain, odd)
        assert savestats._read_plain_lines(r.cfg, text, lines) is None, odd
        if odd:  # what the line reading makes of it stands, whatever it is
            assert savestats._read_lines(r.cfg, text, lines).ready.keys() <= set(c)


def test_the_listing_s_kept_rows_serve_only_the_very_text_they_were_made_of(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rows made of the stats file are kept beside it (`stranded-stats.tsv.cache`) and
    used while the file is that text: the next listing makes none; a hand edit is seen at
    once; a damaged or foreign cache is read past, never trusted."""
    make_branches(r.root, 6)
    stranded.list_stranded(r.cfg)  # reads the trailers, writes the stats file
    first = stranded.list_stranded(r.cfg)  # makes the rows, keeps them
    kept = stats_path(r).with_name(naming.STATS_KEPT)
    folder = r.cfg.cache_folder
    assert folder is not None
    assert kept.is_file(), "the rows made of the stats file were not kept"

    def no_reading(*_a: object) -> None:
        raise AssertionError("the stats file was read again although its text is unchanged")

    with monkeypatch.context() as m:
        m.setattr(savestats, "_read_plain_lines", no_reading)
        m.setattr(savestats, "_read_lines", no_reading)
        m.setattr(stranded, "_branches", no_reading)
        assert stranded.list_stranded(r.cfg) == first
    # a hand edit of one line's numbers, same length: seen at once
    stats = stats_path(r)
    victim = first[2]
    text = stats.read_text()
    line = next(x for x in text.splitlines() if x.startswith(victim.commit))
    fields = line.split("\t")
    fields[3:6] = ["9" * len(fields[3]), "9" * len(fields[4]), "9" * len(fields[5])]
    stats.write_text(text.replace(line, "\t".join(fields)))
    edited = {b.commit: b for b in stranded.list_stranded(r.cfg)}[victim.commit]
    want = (int(fields[3]), int(fields[4]), int(fields[5]))
    assert (edited.files, edited.insertions, edited.deletions) == want, "the kept rows hid an edit"
    stats.write_text(text)
    assert stranded.list_stranded(r.cfg) == first
    # damaged, foreign, or not ours at all: read past
    good = kept.read_bytes()

    def read_kept(blob: bytes | None = None) -> object:
        if blob is not None:
            kept.write_bytes(blob)
        data = tomlcache.load(
            folder, naming.STATS_KEPT, savestats._KEPT_MAGIC, f"{r.cfg.board.prefix}\n{text}"
        )
        assert data is not None, "no rows kept for the stats file's text"
        return data

    for bad in (
        good[:-40] + bytes(40),
        good[:30],
        b"board.toml cache 1\n" + good[len(b"board stranded stats 1\n") :],
        b"",
    ):
        kept.write_bytes(bad)
        assert stranded.list_stranded(r.cfg) == first, bad[:40]
        assert read_kept() == read_kept(good), "a damaged cache was not made again"


def test_a_stats_file_appended_to_has_only_its_new_lines_read_over_the_kept_rows(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a save the stats file has one more line: the listing reads that line over the
    rows kept for the text before it, and must end where reading the whole file ends, line
    after line of every kind: a new save, a later line for a known commit, one from before
    branches were named, a damaged one, one with no trailer, a commit under a new name."""
    make_branches(r.root, 4)
    stranded.list_stranded(r.cfg)  # reads the trailers, writes the stats file
    stats = stats_path(r)
    first = stats.read_text().splitlines()
    one, two = first[0].split("\t"), first[1].split("\t")
    new = f"{9:040x}"
    appended = [
        f"{new}\tfeat-c-9\tc-9\t3\t2\t1\tsaved\tstranded/feat-c-9/20250109T000000.000Z",
        "\t".join([*one[:3], "7", "7", "7", "attempt", one[7]]),
        "\t".join(two[:7]),  # seven fields: the row kept for it must go
        f"{new}\tfeat-c-9\tc-9\tcut short",
        f"{new}\t-\t-\t-\t-\t-\tsaved\tstranded/feat-c-9/20250109T000000.000Z",
        "\t".join([*two[:7], "stranded/feat-c-2/20250110T000000.000Z"]),
    ]
    given: list[int] = []
    real = savestats._read_lines

    def counting(cfg, text, lines):  # a pass-through that notes how much it was given
        given.append(len(text))
        return real(cfg, text, lines)

    text = kept_text = first_kept = stats.read_text()
    savestats._read_stats(r.cfg)  # keeps the rows of this text
    more = [  # enough further saves for the rows to be kept again
        f"{i:040x}\tfeat-c-{i}\tc-{i}\t1\t1\t1\tsaved\tstranded/feat-c-{i}/20250111T000000.000Z"
        for i in range(100, 100 + savestats._KEEP_AFTER)
    ]
    for line in appended + more:
        text += line + "\n"
        stats.write_text(text)
        given.clear()
        with monkeypatch.context() as m:
            m.setattr(savestats, "_read_lines", counting)
            m.setattr(savestats, "_read_plain_lines", lambda *_a: None)
            got = savestats._read_stats(r.cfg).ready
        assert given == [len(text) - len(kept_text)], f"not just the new lines were read: {given}"
        want = savestats._read_lines(r.cfg, text, text.splitlines()).ready
        assert got == want, f"after {line!r}: {got} != {want}"
        folder = r.cfg.cache_folder
        assert folder is not None
        if tomlcache.load(
            folder, naming.STATS_KEPT, savestats._KEPT_MAGIC, f"{r.cfg.board.prefix}\n{text}"
        ):
            kept_text = text
    assert kept_text != first_kept, "the rows were not kept again after many new lines"
    assert text[len(kept_text) :].count("\n") < savestats._KEEP_AFTER


def test_a_listing_that_reads_a_save_s_line_half_written_writes_nothing_back(r: Repo) -> None:
    """A save appends its stats line in one write, which a listing may see half done: a
    line cut before or inside its kind reads as six or seven fields (an attempt then reads
    as `saved`), one that names no branch, which would have the file rewritten naming it;
    cut sooner, it is unread and the commit's trailer is. The listing must then write
    nothing: rewritten, the file would keep the cut line for good, and the save's write,
    still going to the old file, would be lost; a line added would join the cut one."""
    t = worktrees.create_worktree(r.cfg, "c-1")
    (t / "app.py").write_text("attempt 1\n")
    res = worktrees.discard_worktree(r.cfg, t, why="test", kind=naming.KIND_ATTEMPT)
    assert res.saved is not None
    stats = stats_path(r)
    whole = stats.read_text()
    good = {x.branch: x for x in stranded.list_stranded(r.cfg)}[res.saved.branch]
    assert good.kind == "attempt" and whole == stats.read_text()
    fields = whole.rstrip("\n").split("\t")
    cuts = ("\t".join(fields[:5]), "\t".join(fields[:6]), "\t".join(fields[:6]) + "\tatt")
    for torn in cuts:  # five fields (unread: the trailer is), six, seven
        stats.write_text(torn)
        fd = os.open(stats, os.O_WRONLY | os.O_APPEND)  # the save's write, half done
        try:
            stranded.list_stranded(r.cfg)
            os.write(fd, whole[len(torn) :].encode())  # the write ends, in that file
        finally:
            os.close(fd)
        assert stats.read_text() == whole, "the file was written while a save wrote to it"
        for _ in range(2):
            listed = {x.branch: x for x in stranded.list_stranded(r.cfg)}[res.saved.branch]
            assert listed == good, f"{listed} != {good}"


def test_the_kept_rows_follow_the_card_prefix(r: Repo) -> None:
    """A save whose line names no card is its tree's card, read with the board's prefix:
    rows kept under one prefix must not answer for another."""
    make_branches(r.root, 2)
    stranded.list_stranded(r.cfg)  # writes the stats file
    stats = stats_path(r)
    stats.write_text(
        "".join(
            "\t".join(f[:2] + ["-"] + f[3:]) + "\n"  # the card left out: the tree's
            for f in (line.split("\t") for line in stats.read_text().splitlines())
        )
    )
    assert {b.card for b in stranded.list_stranded(r.cfg)} == {"c-0", "c-1"}
    other = records.replace(r.cfg, board=records.replace(r.cfg.board, prefix="t"))
    assert {b.card for b in stranded.list_stranded(other)} == {None}, "rows of prefix c answered"
    assert {b.card for b in stranded.list_stranded(r.cfg)} == {"c-0", "c-1"}


def test_a_save_s_branch_copied_by_hand_is_listed_under_each_name(r: Repo) -> None:
    """The stats file names a commit's branch; a second name for the same commit (a branch
    copied by hand) must not be shown as the first, nor the first as the second."""
    saved = save_dirty(r, "c-1")
    copy = "stranded/feat-c-4/20991231T000000.000Z"
    r.git("branch", copy, saved)
    for _ in range(2):  # once making the rows, once from the kept ones
        listed = {b.branch: b for b in stranded.list_stranded(r.cfg)}
        assert set(listed) == {saved, copy}, listed
        assert (listed[copy].tree, listed[copy].stamp, listed[copy].card) == (
            "feat-c-4",
            "20991231T000000.000Z",
            "c-1",
        ), listed[copy]
        assert listed[saved].tree == "feat-c-1" and saved.endswith(listed[saved].stamp)


def test_a_stats_file_from_before_branches_were_recorded_is_written_again_naming_them(
    r: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A board upgraded from a version whose stats lines had seven fields lists as before,
    and its file is written again with each line naming its branch, so the next listing
    takes its rows as made (no row made after git)."""
    make_branches(r.root, 4)
    before = stranded.list_stranded(r.cfg)
    stats = stats_path(r)
    old = "".join(
        line.rsplit("\t", 1)[0] + "\n" for line in stats.read_text().splitlines()
    )  # seven fields: the branch dropped
    stats.write_text(old)
    assert stranded.list_stranded(r.cfg) == before
    lines = stats.read_text().splitlines()
    assert sorted(line.split("\t")[7] for line in lines) == sorted(b.branch for b in before)

    def made_after_git(*_a: object) -> None:
        raise AssertionError("the rows were made after git: the file does not name branches")

    monkeypatch.setattr(stranded, "_branches", made_after_git)
    assert stranded.list_stranded(r.cfg) == before


def test_list_also_lists_husks(r: Repo) -> None:
    t = worktrees.create_worktree(r.cfg, "c-3")
    shutil.rmtree(Path(r.git("rev-parse", "--path-format=absolute", "--git-dir", cwd=t)))
    worktrees.discard_worktree(r.cfg, t)
    (husk,) = stranded.list_husks(r.cfg)
    assert husk.card == "c-3" and husk.tree == "feat-c-3" and husk.path.is_dir()


# show --------------------------------------------------------------------------------------


def test_show_is_the_saved_work_as_a_diff_against_base(r: Repo) -> None:
    branch = save_dirty(r)
    text = stranded.show(r.cfg, branch)
    assert "+print('saved')" in text and "-print('hello')" in text, text
    with pytest.raises(Refused):
        stranded.show(r.cfg, "main")
    with pytest.raises(NotFound):
        stranded.show(r.cfg, "stranded/feat-c-9/nothing")


# pick --------------------------------------------------------------------------------------


def _operator_state(r: Repo) -> tuple[str, bytes, str]:
    return (
        r.git("rev-parse", "HEAD"),
        (r.root / ".git" / "index").read_bytes(),
        r.git("status", "--porcelain"),
    )


def test_pick_carries_the_save_and_its_unpushed_commits_without_touching_the_checkout(
    r: Repo,
) -> None:
    branch, commit = save_committed(r)
    (r.root / "README.md").write_text("the operator is editing\n")
    (r.root / "staged.txt").write_text("staged by the operator\n")
    r.git("add", "staged.txt")
    before = _operator_state(r)
    result = ops.pick(r.cfg, branch)
    assert result.ok and result.target == "board/run" and len(result.picked) == 2, result
    assert _operator_state(r) == before, "the pick touched the operator's checkout or index"
    assert r.show("board/run", "feature.py") == "feature = 1\n", "the unpushed commit was lost"
    assert r.show("board/run", "extra.py") == "extra = 2\n", "the save commit was not picked"
    subjects = r.git("log", "--format=%s", "board/run", "-n", "2").splitlines()
    assert subjects == [
        f"c-2: work saved from feat-c-2 (picked from {branch})",
        f"c-2: the coder's commit (picked from {branch})",
    ], "a picked commit's message does not name its card and where it came from"
    assert "pick-" not in r.git("worktree", "list"), "the temporary worktree was left behind"
    assert r.rev(commit) and r.rev(branch), "the pick consumed the stranded branch"


def test_pick_skips_a_save_commit_that_adds_nothing(r: Repo) -> None:
    t = worktrees.create_worktree(r.cfg, "c-4")
    commit = r.commit(t, {"f.py": "f\n"}, "only a commit")
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.saved is not None
    result = ops.pick(r.cfg, res.saved.branch)
    assert result.picked == [commit] and result.skipped == [res.saved.commit], result
    assert r.show("board/run", "f.py") == "f\n"


def test_a_conflicting_pick_leaves_the_target_exactly_as_it_was_and_names_the_paths(
    r: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    branch = save_dirty(r, files={"app.py": "print('saved')\n", "other.py": "o\n"})
    r.git("checkout", "-q", "board/run")
    r.commit(r.root, {"app.py": "print('run branch')\n"}, "run branch edit")
    r.git("checkout", "-q", "main")
    old = r.rev("board/run")
    result = ops.pick(r.cfg, branch)
    assert not result.ok and result.conflicts == ["app.py"], result
    assert r.rev("board/run") == old, "a conflicting pick moved the target"
    assert "pick-" not in r.git("worktree", "list"), "the temporary worktree was left behind"
    code, _, err = run(r, "stranded", "pick", branch, capsys=capsys)
    assert code != 0 and "app.py" in err and err.count("\n") == 1, err
    assert r.rev("board/run") == old


def test_pick_refuses_a_target_that_is_checked_out(r: Repo) -> None:
    branch = save_dirty(r)
    before = _operator_state(r)
    with pytest.raises(Refused, match="checked out"):
        ops.pick(r.cfg, branch, onto="main")
    assert _operator_state(r) == before
    with pytest.raises(NotFound):
        ops.pick(r.cfg, branch, onto="no-such-branch")


# discard -----------------------------------------------------------------------------------


def test_discard_deletes_only_branches_under_stranded(r: Repo) -> None:
    branch = save_dirty(r)
    r.git("branch", "feat/c-8", "main")
    store = r.store()
    for name in ("main", "feat/c-8", "refs/heads/main", "../main", "board/run"):
        with pytest.raises((Refused, NotFound)):
            ops.discard(r.cfg, name, store)
    assert r.rev("main") and r.rev("feat/c-8") and r.rev("board/run"), "discard deleted a branch"
    assert store.tombstones() == set(), "a refused discard buried something"
    commit = r.rev(branch)
    ops.discard(r.cfg, branch, store)
    assert r.rev(branch) is None and stranded.list_stranded(r.cfg) == []
    assert store.tombstones() == {(branch, commit)}, "the discard was not buried"
    store.close()


def test_discard_deletes_a_husk_only_under_the_husk_directory(r: Repo, tmp_path: Path) -> None:
    t = worktrees.create_worktree(r.cfg, "c-5")
    shutil.rmtree(Path(r.git("rev-parse", "--path-format=absolute", "--git-dir", cwd=t)))
    res = worktrees.discard_worktree(r.cfg, t)
    assert res.husk_to is not None
    outside = tmp_path / "precious"
    outside.mkdir()
    store = r.store()
    for name in (str(outside), "../../precious", ".", "..", str(r.cfg.worktrees_dir)):
        with pytest.raises((Refused, NotFound)):
            ops.discard(r.cfg, name, store)
    assert outside.is_dir()
    ops.discard(r.cfg, f".worktrees/.stranded/{res.husk_to.name}", store)
    assert not res.husk_to.exists()
    assert store.tombstones() == set(), "a husk is not a save any host fetches"
    store.close()


# the command line --------------------------------------------------------------------------


def test_cli_list_json_and_discard_asks_unless_yes(
    r: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    branch = save_dirty(r)
    r.store().close()  # a board has its store (`board init` makes it): a discard buries there
    code, out, _ = run(r, "stranded", "list", "--json", capsys=capsys)
    assert code == 0
    (item,) = json.loads(out)
    assert item["branch"] == branch and item["card"] == "c-1" and item["files"] == 1
    code, out, _ = run(r, "stranded", "show", branch, capsys=capsys)
    assert code == 0 and "+print('saved')" in out
    code, _, err = run(r, "stranded", "discard", branch, capsys=capsys)  # no terminal: no
    assert code != 0 and "--yes" in err and r.rev(branch), "discard deleted without asking"
    code, out, _ = run(r, "stranded", "discard", branch, "--yes", capsys=capsys)
    assert code == 0 and r.rev(branch) is None
    code, out, _ = run(r, "stranded", "list", capsys=capsys)
    assert code == 0 and "nothing was left behind" in out


# prune -------------------------------------------------------------------------------------


def _lanes(r: Repo, lanes: dict[str, str]) -> SQLiteStore:
    store = r.store()
    for card_id, lane in lanes.items():
        card = store.create(CardDraft(title=f"card {card_id}"), prefix="c")
        assert card.id == card_id
        if lane != "backlog":
            store.update(card.id, Expect(), {"lane": lane}, who="test")
    return store


def _save(r: Repo, card: str, text: str, kind: str = naming.KIND_SAVED) -> str:
    t = worktrees.create_worktree(r.cfg, card)
    (t / "app.py").write_text(text)
    res = worktrees.discard_worktree(r.cfg, t, card_id=card, why="test", kind=kind)
    assert res.saved is not None
    return res.saved.branch


def _refs(r: Repo) -> dict[str, str]:
    text = r.git("for-each-ref", "--format=%(refname) %(objectname)")
    return dict(line.split(" ", 1) for line in text.splitlines() if line)


def test_prune_refuses_a_working_card_and_deletes_only_what_it_named(
    r: Repo, capsys: pytest.CaptureFixture[str]
) -> None:
    store = _lanes(r, {"c-1": "done", "c-2": "working", "c-3": "cancelled", "c-4": "ready"})
    done = [
        _save(r, "c-1", "attempt 1\n", naming.KIND_ATTEMPT),
        _save(r, "c-1", "the blocked tree\n"),
        _save(r, "c-3", "cancelled work\n"),
    ]
    _save(r, "c-2", "the working card's attempt\n", naming.KIND_ATTEMPT)
    _save(r, "c-4", "a ready card's save\n")
    r.git("branch", "stranded/feat-c-9/20250101T000000.000Z", "main")  # card unknown
    r.git("branch", "stranded/by-hand/20250101T000000.000Z", "main")  # no card at all
    before = _refs(r)

    # a working card named: refused in one line, nothing deleted
    code, out, err = run(r, "stranded", "prune", "--card", "c-2", "--yes", capsys=capsys)
    assert code != 0 and "c-2 is working" in err and err.count("\n") == 1, (code, err)
    assert _refs(r) == before, "a refused prune deleted something"
    for bad in (["--older-than", "soon"], ["--card", "c-99"], ["--card", "c-4"]):
        code, _, err = run(r, "stranded", "prune", *bad, "--yes", capsys=capsys)
        assert code != 0 and err.count("\n") == 1, (bad, err)
        assert _refs(r) == before, f"prune {bad} changed something"

    # no terminal to ask on: it names what it would delete, and deletes nothing
    code, out, err = run(r, "stranded", "prune", capsys=capsys)
    assert code != 0 and "--yes" in err
    assert _refs(r) == before, "prune deleted without asking"
    assert all(b in out for b in done) and "attempt" in out, out
    named = [line.split()[0] for line in out.splitlines() if line.startswith("  stranded/")]
    assert sorted(named) == sorted(done), f"prune names other saves than a done card's: {named}"

    code, out, _ = run(r, "stranded", "prune", "--older-than", "1d", "--yes", capsys=capsys)
    assert code == 0 and "nothing to prune" in out and _refs(r) == before, "too new: kept"

    code, out, _ = run(r, "stranded", "prune", "--yes", capsys=capsys)
    assert code == 0
    deleted = [line.split()[1] for line in out.splitlines() if line.startswith("deleted ")]
    assert sorted(deleted) == sorted(done), out
    after = _refs(r)
    assert after == {k: v for k, v in before.items() if k[len("refs/heads/") :] not in done}, (
        "prune deleted something it did not name, or kept something it named"
    )
    assert store.tombstones() == {(b, before[f"refs/heads/{b}"]) for b in done}, (
        "the pruned saves are not buried, so another host would bring them back"
    )
    store.close()


def test_prune_deletes_nothing_when_a_named_branch_moved_or_its_card_reopened(r: Repo) -> None:
    store = _lanes(r, {"c-1": "done", "c-2": "done"})
    a = _save(r, "c-1", "one\n")
    b = _save(r, "c-2", "two\n")
    plan = ops.prune_plan(r.cfg, store)
    assert sorted(x.branch for x in plan.branches) == sorted([a, b])
    r.git("update-ref", f"refs/heads/{b}", "main")  # moved after it was named
    with pytest.raises(Conflict, match="nothing was pruned"):
        ops.prune(r.cfg, store, plan)
    assert r.rev(a) and r.rev(b), "a prune that failed deleted a branch"
    plan = ops.prune_plan(r.cfg, store, card="c-1")
    store.update("c-1", Expect(), {"lane": "ready"}, who="test")  # reopened after the plan
    with pytest.raises(Conflict, match="c-1 is ready now"):
        ops.prune(r.cfg, store, plan)
    assert r.rev(a), "the save of a reopened card was pruned"
    assert store.tombstones() == set(), "a prune that deleted nothing buried something"
    store.close()


def test_prune_older_than_keeps_the_newer_saves(r: Repo) -> None:
    store = _lanes(r, {"c-1": "done"})
    branch = _save(r, "c-1", "one\n")
    stamp = stamp_time(branch.rsplit("/", 1)[-1])
    assert stamp is not None
    later = stamp + timedelta(days=3)
    assert ops.prune_plan(r.cfg, store, older_than=7 * 86400, now=later).branches == []
    (item,) = ops.prune_plan(r.cfg, store, older_than=2 * 86400, now=later).branches
    assert item.branch == branch
    assert ops.parse_age("2w") == 14 * 86400 and ops.parse_age("90s") == 90
    store.close()
