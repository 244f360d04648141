"""Benchmark: the stranded browser and its diff view in the running app, with big inputs.

1. Browser: time from pushing the stranded screen to the first paint of its rows, over
   2,000 stranded branches (500 of whose cards are on the board), against the bare git
   command producing the same data in the same run: `git for-each-ref` with each save's
   `Board-Save` trailer (branch, commit, card, tree, diffstat). The first paint is the
   newest screenful, checked to be the head of the whole list as the screen sorts it,
   with the same card, title, lane and stats; the rest fills in after, and the time to
   the whole table painted is printed too. The plain ref listing (no trailers: what
   `list_stranded` itself runs) is printed as well. Loose refs, then packed refs.
   Targets (first paint): at most 2x the same-data command, and under 0.5 s. The
   fingerprint the open browser takes every second to notice new saves
   (`stranded.refs_signature`, stat calls in a worker) is timed too: under 5% of that
   second (50 ms), so watching never competes with the keys.
2. Diff: time from pushing the diff screen to the first screenful of the diff painted,
   for a 1,000,000-line diff, against the bare `git diff` of the same range run to its
   end. Shapes: 500 files of 2,000 lines, and one new file of 1,000,000 lines (git
   itself writes nothing of a file until it has diffed all of it, so the view paints that
   file's start from its blob meanwhile: `stranded.diff_preview`), as a save makes it
   (its `Board-Save` trailer counts the file's lines) and as a branch made by hand (no
   trailer: the blob is read to its end to count them; shown, no target). Either way the
   first screenful is checked to be exactly git's first lines.
   Targets: at most 2x, and under 0.5 s; the new file's first screenful under 0.25 s
   (issue 27).
3. Keys: key-to-repaint latency (a `j` arriving as from the terminal, to the repaint that
   shows the view one line down) while the 1,000,000-line diff is still streaming in,
   against the same view idle, in alternating batches on the same screen (so a passing
   load falls on both). The streaming keys start once the screen has opened (its
   footer's keys drawn); one key pressed the moment the first lines show is timed apart
   (the screen's opening, shown without a target). Target (issue 27): at most 1.3x.

    /tmp/venv/bin/python tests/bench/bench_stranded_tui.py [--branches 2000] [--rounds 5]
        [--lines 1000000] [--keys 40] [--browser-only | --keys-only]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from board.core import proc
from board.core.git import saves, snapshot, stranded  # noqa: E402
from board.core.model import CardDraft  # noqa: E402
from board.core.store import SQLiteStore  # noqa: E402
from board.tui.app import BoardApp  # noqa: E402
from board.tui.stranded.browser import StrandedScreen  # noqa: E402
from board.tui.stranded.diff_screen import DiffScreen  # noqa: E402
from board.tui.stranded.strandrows import load_rows, sort_rows  # noqa: E402
from textual import events  # noqa: E402

from tests.support.boards import make_board  # noqa: E402
from tests.support.repos import GIT_ENV, git  # noqa: E402
from tests.support.stranded import make_branches  # noqa: E402

RATIO = 2.0
LIMIT_S = 0.5
KEY_RATIO = 1.3  # issue 27: keys while a diff streams at most 1.3x idle
SETTLE_S = 0.1  # after the footer's keys are drawn, before the streaming keys
NEW_FILE_LIMIT_S = 0.25  # issue 27: a 1,000,000-line new file's first screenful
NEW_FILE = "1 file x 1,000,000 lines"
BY_HAND = "1 file x 1,000,000 lines, no trailer"
SIGNATURE_LIMIT_S = 0.05  # 5% of the browser's 1 s poll
SIZE = (120, 40)


def fmt(seconds: float) -> str:
    return f"{seconds * 1000:8.1f} ms"


def bare(root: Path, *args: str) -> float:
    start = time.perf_counter()
    res = proc.run(("git", *args), cwd=root, timeout=300, env=GIT_ENV)
    took = time.perf_counter() - start
    assert res.returncode == 0, res.stderr
    return took


def make_diff_branch(
    root: Path, name: str, files: int, lines_per_file: int, trailer: bool = True
) -> str:
    """A stranded/… branch adding `files` files of `lines_per_file` lines, by fast-import.

    With `trailer` its commit is a save's, with the `Board-Save` trailer every save writes
    (its diffstat); without, a branch made by hand, whose stats nobody recorded.
    """
    base = git(root, "rev-parse", "main")
    tree_dir = name.split("/")[1]
    stats = snapshot.Stats(files, files * lines_per_file, 0)
    msg = saves._message(tree_dir, None, "bench", stats, "bench") if trailer else "bench\n"
    data = msg.encode()
    out = [f"commit refs/heads/{name}", "committer bench <b@b> 1767225600 +0000"]
    out += [f"data {len(data)}", data.decode().rstrip("\n")]
    out.append(f"from {base}")
    chunks = [("\n".join(out) + "\n").encode()]
    for f in range(files):
        body = b"".join(
            b"value_%d = compute(%d, 'some words to look like code')  # line %d\n" % (i, f, i)
            for i in range(lines_per_file)
        )
        chunks.append(b"M 100644 inline gen/file_%04d.py\ndata %d\n" % (f, len(body)))
        chunks.append(body + b"\n")
    res = proc.run(
        ("git", "fast-import", "--quiet"), cwd=root, timeout=600, input_bytes=b"".join(chunks)
    )
    assert res.returncode == 0, res.stderr
    return name


def fill_stranded(cfg: Any, store: SQLiteStore, branches: int, cards: int) -> None:
    """`branches` stranded branches and `cards` cards on the board, and the stats file."""
    make_branches(cfg.root, branches)
    for i in range(cards):
        store.create(CardDraft(title=f"card number {i} with a title of ordinary length"), "c")
    stranded.list_stranded(cfg)  # the stats file, as the saves would have written it


async def wait(predicate: Any, timeout: float = 60.0, step: float = 0.0005) -> None:
    end = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > end:
            raise AssertionError(f"timed out waiting for {predicate}")
        await asyncio.sleep(step)


def _shown(row: Any) -> tuple[Any, ...]:
    """What a row shows: the first paint must show exactly this for the head of the list."""
    return (row.name, row.card_id, row.title, row.lane, row.files, row.insertions, row.deletions)


async def time_browser(app: BoardApp, expected: list[Any]) -> tuple[float, float]:
    """(push to the first rows painted, push to the whole table painted), in seconds.

    The first rows must be the head of `expected` (the whole list as the screen sorts it),
    with their real cards and stats, at least a screenful of them.
    """
    screen = StrandedScreen(app.cfg, app.store, poll_s=0)
    frames: list[tuple[float, int]] = []  # (when, rows the list held) per frame written
    first_rows: list[Any] = []  # the rows the list held at the first frame with rows
    hook = app.post_display_hook

    def timed_display() -> None:
        """The moment a frame has left the compositor (headless: where it would be
        written): Textual's hook after each display."""
        hook()
        if app.screen is screen and screen.is_mounted:
            frames.append((time.perf_counter(), screen.table.painted_items))
            if frames[-1][1] > 0 and not first_rows:
                first_rows.extend(screen.table.items)

    app.post_display_hook = timed_display  # type: ignore[method-assign]
    start = time.perf_counter()
    app.push_screen(screen)
    try:
        await wait(lambda: any(n > 0 for _, n in frames))
        table = screen.table
        await wait(lambda: any(n == len(expected) for _, n in frames))
    finally:
        app.post_display_hook = hook  # type: ignore[method-assign]
    first = next(t for t, n in frames if n > 0) - start
    whole = next(t for t, n in frames if n == len(expected)) - start
    rows = first_rows
    height = table.scrollable_content_region.height - table.header_rows
    assert len(rows) >= min(height, len(expected)), f"first paint: {len(rows)} rows < {height}"
    head = [_shown(r) for r in rows[:height]]
    want = [_shown(r) for r in expected[:height]]
    assert head == want, f"the first paint is not the head of the list: {head[:3]} != {want[:3]}"
    await asyncio.sleep(0.05)
    app.pop_screen()
    await asyncio.sleep(0.05)
    return first, whole


async def time_diff(
    app: BoardApp, row: Any, expect: list[str] | None = None
) -> tuple[float, DiffScreen]:
    """Push to the first screenful painted; with `expect` (git's own first lines), the
    screenful painted must be exactly those lines, whatever it was painted from."""
    screen = DiffScreen(app.cfg, row)
    start = time.perf_counter()
    app.push_screen(screen)

    def painted() -> bool:
        if not screen.is_mounted:
            return False
        view = screen.view
        height = view.scrollable_content_region.height
        return height > 0 and view.painted_rows >= height

    await wait(painted)
    took = time.perf_counter() - start
    if expect is not None:
        shown = [line.rstrip() for line in screen.view.text_lines()]
        want = [line.rstrip() for line in expect[: len(shown)]]
        assert shown == want, f"the first screenful is not git's: {shown[:8]} != {want[:8]}"
    return took, screen


async def key_latencies(app: BoardApp, screen: DiffScreen, keys: int, loading: bool) -> list[float]:
    """Seconds from a `j` arriving to the repaint one line down; only while (not) loading."""
    view = screen.view
    out: list[float] = []
    for _ in range(keys):
        if loading and screen.buffer.done:
            break
        want = view.top_line + 1
        if want > view.max_scroll_y:
            break
        event = events.Key("j", "j")
        event.set_sender(app)
        start = time.perf_counter()
        app.post_message(event)  # into the app's queue, as the driver puts a key
        await wait(lambda want=want: view.painted_top == want, step=0.0002)
        if (not screen.buffer.done) == loading:
            out.append(time.perf_counter() - start)
        await asyncio.sleep(0.03)
    return out


def git_first_byte(cfg: Any, name: str) -> float:
    """Seconds until bare `git diff` writes its first byte (git diffs a file before writing it)."""
    first: list[float] = []
    start = time.perf_counter()

    def on_chunk(_data: bytes) -> None:
        if not first:
            first.append(time.perf_counter() - start)

    stranded.stream_diff(cfg, name, on_chunk)
    return first[0]


def time_signature(cfg: Any, calls: int = 50) -> float:
    """Seconds per `stranded.refs_signature` (the browser's once-a-second fingerprint)."""
    stranded.refs_signature(cfg)
    start = time.perf_counter()
    for _ in range(calls):
        stranded.refs_signature(cfg)
    return (time.perf_counter() - start) / calls


async def browser_rounds(app: BoardApp, rounds: int, expected: list[Any]) -> tuple[float, ...]:
    """(first paint, whole table, same-data git, refs-only git, the refs fingerprint):
    medians, alternating so all see the same load."""
    root = app.cfg.root
    same_fmt = "--format=%(objectname) %(refname) %(trailers:key=Board-Save,valueonly)"
    plain_fmt = "--format=%(objectname) %(refname)"
    firsts, wholes, same, plain, sigs = [], [], [], [], []
    for _ in range(rounds):
        same.append(bare(root, "for-each-ref", same_fmt, "refs/heads/stranded/"))
        plain.append(bare(root, "for-each-ref", plain_fmt, "refs/heads/stranded/"))
        sigs.append(time_signature(app.cfg))
        first, whole = await time_browser(app, expected)
        firsts.append(first)
        wholes.append(whole)
    return tuple(statistics.median(x) for x in (firsts, wholes, same, plain, sigs))


async def diff_rounds(app: BoardApp, row: Any, rounds: int) -> tuple[float, float, float]:
    """(first paint, bare git diff to its end, bare git diff's first byte): medians."""
    firsts, wholes, bytes1 = [], [], []
    args = stranded.diff_args(app.cfg, row.name)
    head = proc.run(("git", *args), cwd=app.cfg.root, timeout=300, env=GIT_ENV).stdout
    expect = head[: 1 << 20].split("\n")[:200]  # git's first lines, to check the first paint
    for _ in range(rounds):
        wholes.append(bare(app.cfg.root, *args))
        bytes1.append(git_first_byte(app.cfg, row.name))
        took, _screen = await time_diff(app, row, expect)
        firsts.append(took)
        app.pop_screen()  # git is killed if it is still writing
        await asyncio.sleep(0.2)
    return statistics.median(firsts), statistics.median(wholes), statistics.median(bytes1)


async def opened(screen: DiffScreen) -> None:
    """The screen has done its opening work: its footer's keys are drawn, a moment ago."""
    await wait(lambda: bool(screen.query("FooterKey")), step=0.002)
    await asyncio.sleep(SETTLE_S)


async def key_rounds(
    app: BoardApp, row: Any, keys: int
) -> tuple[list[float], list[float], list[float]]:
    """Key latencies while the diff streams in, then idle (all read) on the same screen, in
    alternating batches: both halves see the same machine, so a load that comes and goes
    (a shared 2-core box) does not land on one side of the ratio. The streaming batch
    starts once the screen has opened (`opened`), with git still writing: a key pressed
    the moment the first lines show also waits for the screen's own opening (its footer
    drawn, its panes laid out), which is timed apart, as the third list."""
    idle: list[float] = []
    loading: list[float] = []
    opening: list[float] = []
    batch = max(1, min(8, keys))
    for _ in range(4 * (keys // batch + 1)):
        if len(loading) >= keys and len(idle) >= keys:
            break
        _, screen = await time_diff(app, row)
        if len(loading) < keys:
            opening += await key_latencies(app, screen, 1, True)
            await opened(screen)
            loading += await key_latencies(app, screen, min(batch, keys - len(loading)), True)
        await wait(lambda screen=screen: screen.buffer.done, timeout=120, step=0.01)
        await asyncio.sleep(0.2)
        if len(idle) < keys:
            idle += await key_latencies(app, screen, min(batch, keys - len(idle)), False)
        app.pop_screen()
        await asyncio.sleep(0.2)
    return idle, loading, opening


def verdict(ok: bool) -> str:
    return "met" if ok else "not met"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--branches", type=int, default=2000)
    ap.add_argument("--cards", type=int, default=500)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--lines", type=int, default=1_000_000)
    ap.add_argument("--keys", type=int, default=40)
    ap.add_argument("--browser-only", action="store_true", help="skip the diff and key parts")
    ap.add_argument("--keys-only", action="store_true", help="only part 3 (the keys)")
    opts = ap.parse_args()
    os.environ.update(GIT_ENV)
    oks: list[bool] = []
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="board-bench-stranded-tui-") as tmp:
        t = time.perf_counter()
        cfg, store = make_board(Path(tmp), origin=True)
        fill_stranded(cfg, store, opts.branches, opts.cards)
        shapes = {
            "500 files x 2,000 lines": make_diff_branch(
                cfg.root, "stranded/feat-c-1/20260101T000000.000Z", 500, opts.lines // 500
            ),
            "1 file x 1,000,000 lines": make_diff_branch(
                cfg.root, "stranded/feat-c-2/20260101T000000.000Z", 1, opts.lines
            ),
            "1 file x 1,000,000 lines, no trailer": make_diff_branch(
                cfg.root, "stranded/feat-c-3/20260101T000000.000Z", 1, opts.lines, trailer=False
            ),
        }
        made = time.perf_counter() - t
        print(f"fixture: {opts.branches + 2} stranded branches, {opts.cards} cards, two")
        print(f"{opts.lines:,}-line diffs, made in {made:.1f} s")
        listed = sort_rows(load_rows(cfg, store, datetime.now(UTC)), "age")
        rows = {r.name: r for r in listed}

        async def run_app() -> None:
            app = BoardApp(cfg, store, poll_interval=0)
            app.animation_level = "none"
            async with app.run_test(size=SIZE) as pilot:
                await pilot.pause(0.5)
                if opts.keys_only:
                    wide = rows[shapes["500 files x 2,000 lines"]]
                    results["keys"] = await key_rounds(app, wide, opts.keys)
                    return
                results["loose"] = await browser_rounds(app, opts.rounds, listed)
                git(cfg.root, "pack-refs", "--all")
                results["packed"] = await browser_rounds(app, opts.rounds, listed)
                if opts.browser_only:
                    return
                for label, name in shapes.items():
                    results[label] = await diff_rounds(app, rows[name], max(3, opts.rounds // 2))
                wide = rows[shapes["500 files x 2,000 lines"]]
                results["keys"] = await key_rounds(app, wide, opts.keys)

        asyncio.run(run_app())
        store.close()

    if opts.keys_only:
        return print_keys(results, oks)
    print(f"\n1. browser over {len(rows):,} rows: push to the first paint of the newest rows")
    for refs in ("loose", "packed"):
        ours, whole, same, plain, sig = results[refs]
        ratio = ours / same
        ok = ratio <= RATIO and ours <= LIMIT_S
        oks.append(ok)
        oks.append(sig <= SIGNATURE_LIMIT_S)
        print(f"   {refs} refs:")
        print(f"     stranded screen, first paint:                     {fmt(ours)}")
        print(f"     stranded screen, the whole table painted:         {fmt(whole)}")
        print(f"     bare git for-each-ref + Board-Save trailers:      {fmt(same)} (same data)")
        print(f"     bare git for-each-ref, refs only:                 {fmt(plain)}")
        print(
            f"     first paint {ratio:.2f}x the same data (target <= {RATIO}x and <= {LIMIT_S} s):"
        )
        print(
            f"     {verdict(ok)}   [{ours / plain:.2f}x the refs-only listing; whole table"
            f" {whole / same:.2f}x the same data]"
        )
        print(
            f"     the poll's refs fingerprint: {fmt(sig)} (target <= {fmt(SIGNATURE_LIMIT_S)}):"
            f" {verdict(sig <= SIGNATURE_LIMIT_S)}"
        )
    if opts.browser_only:
        print(f"\n{'all targets met' if all(oks) else 'some targets missed'} (browser only)")
        return 0 if all(oks) else 1
    print(f"\n2. diff: push to the first screenful painted, {opts.lines:,} lines")
    for label in shapes:
        first, whole, byte1 = results[label]
        ratio = first / whole
        limit = NEW_FILE_LIMIT_S if label in (NEW_FILE, BY_HAND) else LIMIT_S
        ok = ratio <= RATIO and first <= limit
        if label != BY_HAND:  # a branch made by hand is shown, but no save looks like it
            oks.append(ok)
        print(
            f"   {label}:" + (" (made by hand: no recorded stats, no target)" * (label == BY_HAND))
        )
        print(f"     diff screen first paint:          {fmt(first)}")
        print(f"     bare git diff, to its end:        {fmt(whole)}")
        print(f"     bare git diff, its first byte:    {fmt(byte1)}")
        if label == BY_HAND:
            print(f"     ratio {ratio:.2f}x (shown for comparison: no target)")
        else:
            print(f"     ratio {ratio:.2f}x (target <= {RATIO}x and <= {limit} s): {verdict(ok)}")
    return print_keys(results, oks)


def print_keys(results: dict[str, Any], oks: list[bool]) -> int:
    idle, loading, opening = results["keys"]
    med_idle = statistics.median(idle)
    med_load = statistics.median(loading) if loading else float("nan")
    ratio = med_load / med_idle
    ok = ratio <= KEY_RATIO
    oks.append(ok)
    print("\n3. key-to-repaint latency (j, one line down), the 500-file diff:")
    print(f"   idle:             median {fmt(med_idle)}  max {fmt(max(idle))}  ({len(idle)} keys)")
    if loading:
        print(
            f"   while streaming:  median {fmt(med_load)}  max {fmt(max(loading))}"
            f"  ({len(loading)} keys)"
        )
    print(f"   ratio {ratio:.2f}x (target <= {KEY_RATIO}x): {verdict(ok)}")
    if opening:
        print(
            f"   the first key, pressed as the first lines show (the screen still opening):"
            f" median {fmt(statistics.median(opening))}  max {fmt(max(opening))}"
            f"  ({len(opening)} keys; {statistics.median(opening) / med_idle:.2f}x idle,"
            " no target: the screen's opening, not the stream)"
        )
    print(f"\n{'all targets met' if all(oks) else 'some targets missed'}")
    return 0 if all(oks) else 1


if __name__ == "__main__":
    raise SystemExit(main())
