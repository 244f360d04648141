"""Benchmark: 100 drives at once on one host, against the same coders run bare.

A board with `max_concurrent = --drives` (100) drains `--cards` (300) cards whose surfaces
do not overlap (each its own `work/<card>.txt`); each card's coder (a Python script the
bench writes) prints a line every `--period` (0.1 s) for `--seconds` (20 s), then writes
its card's marker; the gate is the suite's real quick gate (tests/scripts/gate_pass.sh).
The loop is a real `board run` process in its own session, folding each card onto the run
branch. The ideal, in the same run: the same coder script in `cards / drives` waves (3) of
`drives` coders at once, each in a directory of its own, its output read through a pipe
into a file as the board reads a coder's; a wave starts when the last of the one before
ends. Runs alternate which side goes first.

Reported per run, with the load average: the board's wall time (cards added to the last
card done) against the ideal's (issue 45's target: at most 1.3x); the loop's own CPU
(utime + stime of the `board run` process from /proc/<pid>/stat, every thread of it and
none of its children) per drive-second (a drive-second: one coder running for a second,
`cards x seconds` in all); the loop's resident memory idle and at its peak, and the
difference per working card. Then one more run, not timed: the loop is killed with
SIGKILL mid-run (`--kill-at`, seconds after the cards were added) and started again;
every card must end done, every marker be on the run branch or a stranded branch, no card
left working, no drive live, no tree, no coder process left. Every run ends with the same
checks; none of them failing is the bench's second target.

    .venv/bin/python tests/bench/bench_fleet.py [--drives 100] [--cards 300] [--seconds 20]
        [--period 0.1] [--runs 3] [--kill-at 30 | --no-kill] [--dir DIR]

A smoke run: `--drives 10 --cards 30 --seconds 3 --runs 1 --kill-at 4`.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from board.core import config, proc  # noqa: E402
from board.core.git import gitutil  # noqa: E402
from board.core.model import CardDraft  # noqa: E402
from board.core.store import SQLiteStore  # noqa: E402

sys.path.insert(0, str(ROOT / "tests" / "bench"))
from bench_drive import make_repo  # noqa: E402

TARGET = 1.3  # issue 45: the run's wall time against the ideal
CPU_TARGET_MS = 5.0  # the loop's CPU per drive-second, set from the profile (performance.md)
GATE = str(ROOT / "tests" / "scripts" / "gate_pass.sh")
CODER = """\
import os, sys, time
wt, card, seconds, period = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
start = time.monotonic()
for i in range(round(seconds / period)):
    print(f"{card}: step {i} of the work, a line as long as a model's progress line", flush=True)
    time.sleep(max(0.0, start + (i + 1) * period - time.monotonic()))
os.makedirs(os.path.join(wt, "work"), exist_ok=True)
with open(os.path.join(wt, "work", card + ".txt"), "w") as fh:
    fh.write("marker " + card + "\\n")
print("wrote", card, flush=True)
"""
IDENTITY = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}
TICK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def g(cwd: Path, *args: str) -> str:
    return gitutil.out(cwd, *args, env=IDENTITY)


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def stalls() -> dict[str, float]:
    """The kernel's pressure-stall totals (/proc/pressure, seconds in which some task waited
    for a CPU, or for I/O), to tell a run slowed by the machine from one slowed by the
    board; empty where the kernel keeps none."""
    found = {}
    for what in ("cpu", "io"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            first = Path(f"/proc/pressure/{what}").read_text().splitlines()[0]
            found[what] = int(first.rsplit("total=", 1)[1]) / 1e6
    with contextlib.suppress(OSError, ValueError, IndexError):  # the host's share (a VM's)
        cpu = Path("/proc/stat").read_text().splitlines()[0].split()
        found["steal"] = int(cpu[8]) / TICK / (os.cpu_count() or 1)
        # and the machine's own use of its CPUs: user (nice too), system (irqs too), idle
        found["user"] = (int(cpu[1]) + int(cpu[2])) / TICK / (os.cpu_count() or 1)
        system = int(cpu[3]) + int(cpu[6]) + int(cpu[7])
        found["system"] = system / TICK / (os.cpu_count() or 1)
    return found


def stalled(before: dict[str, float], wall: float) -> str:
    """The share of `wall` in which some task waited for a CPU, and for I/O, since `before`,
    and the share of the machine's CPUs the host took back (steal)."""
    now = stalls()
    shares = {k: (now[k] - before[k]) / wall * 100 for k in before if k in now}
    said = [f"{k} {shares[k]:.0f}%" for k in ("cpu", "io", "steal") if k in shares]
    text = "stalled (some task waiting): " + ", ".join(said) if said else "no pressure figures"
    if "user" in shares:
        text += f"; the CPUs busy: user {shares['user']:.0f}%, system {shares['system']:.0f}%"
    return text


def file_cost(where: Path, files: int = 300) -> float:
    """Microseconds of the kernel's and this process's CPU to create, write and remove one
    small file in `where`: a card's tree is a checkout of a few hundred files and its removal,
    so a filesystem that makes that slow slows the board and not the bare coders. (On one VM
    a file under /tmp cost 1 ms of system time, one under /var/tmp on the same disk 40 us.)"""
    import resource

    def used() -> float:
        me = resource.getrusage(resource.RUSAGE_SELF)
        return me.ru_utime + me.ru_stime

    costs = []
    for _ in range(3):  # the median of three: one alone swings with the disk's other work
        probe = Path(tempfile.mkdtemp(prefix="file-cost-", dir=where))
        began = used()
        for i in range(files):
            (probe / f"f{i}.txt").write_bytes(b"x" * 2000)
        shutil.rmtree(probe)
        costs.append((used() - began) / files * 1e6)
    return statistics.median(costs)


def fleet_board(
    base: Path, coder: Path, drives: int, seconds: float, period: float, interval: float
) -> Path:
    """A bare origin and a clone with a few hundred files, pushed; board init done, the
    coder and the quick gate set, `max_concurrent = drives`."""
    base.mkdir(parents=True)
    with contextlib.redirect_stdout(io.StringIO()):
        clone = make_repo(base)  # bench_drive's: the same few hundred files, board init done
    argv = [sys.executable, str(coder), "{worktree}", "{card}", str(seconds), str(period)]
    overrides = {
        "board": {"max_concurrent": drives, "loop_interval_s": interval},
        "coder": {
            "ladder": ["default"],
            "tiers": {"default": {"argv": argv}},
            "timeout_s": max(120, seconds * 6),
            "first_output_timeout_s": 60,
        },
        "gate": {"argv": [GATE], "timeout_s": 60},
    }
    config.write_default(clone, overrides)
    return clone


def add_cards(root: Path, cards: int) -> None:
    """`cards` ready cards, surfaces apart, in one transaction."""
    cfg = config.load(root)
    store = SQLiteStore(cfg.db_path)
    with store.transaction() as tx:
        for i in range(1, cards + 1):
            tx.create(
                CardDraft(title=f"card {i}", spec="print, then write the marker", lane="ready",
                          surface=[f"work/c-{i}.txt"]),
                "c", "bench",
            )  # fmt: skip
    store.close()


def stat(pid: int) -> tuple[float, int, float] | None:
    """The process's own CPU seconds (utime + stime, all its threads, no children), its
    resident bytes and its reaped children's CPU seconds (cutime + cstime: the coders, git,
    the gates); None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()
    # fields[0] is the state (stat's 3rd field): utime and stime are the 14th and 15th
    cpu = (int(fields[11]) + int(fields[12])) / TICK
    return cpu, int(fields[21]) * PAGE, (int(fields[13]) + int(fields[14])) / TICK


def start_loop(root: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "board.cli", "run", "--quiet"],
        cwd=root, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
        stderr=open(root / ".board" / "bench-run.err", "ab"),  # noqa: SIM115
        env={**os.environ, **IDENTITY}, start_new_session=True,
    )  # fmt: skip


def lanes(root: Path) -> dict[str, str]:
    cfg = config.load(root)
    store = SQLiteStore(cfg.db_path)
    try:
        return {c.id: c.lane for c in store.list_cards()}
    finally:
        store.close()


class LoopRun:
    """One `board run` over the board: wall time to all done, its CPU and memory."""

    def __init__(self, wall: float, cpu: float, rss_idle: int, rss_peak: int) -> None:
        self.wall, self.cpu, self.rss_idle, self.rss_peak = wall, cpu, rss_idle, rss_peak
        self.stalled = ""  # the machine's pressure over the run (`stalled`)
        self.children = 0.0  # CPU seconds of the loop's reaped children over the run


STUCK_S = 30.0  # nothing working and no lane moving this long: the run is over, stuck


def run_board(root: Path, cards: int, kill_at: float | None = None) -> LoopRun:
    """Start the loop on the empty board, note its idle memory, add the cards, wait for
    all done (killing the loop with SIGKILL once at `kill_at`, and starting it again)."""
    loop = start_loop(root)
    procs = [loop]
    try:
        time.sleep(2.0)  # booted and idle
        idle = stat(loop.pid)
        if idle is None:
            raise SystemExit(f"board run died: {(root / '.board' / 'bench-run.err').read_text()}")
        add_cards(root, cards)
        started, pressure = time.monotonic(), stalls()
        cpu, peak, last_check = idle[0], idle[1], 0.0
        children, killed_children = idle[2], 0.0
        killed_cpu = 0.0
        settled: tuple[dict[str, str], float] = ({}, started)
        while True:
            now = time.monotonic()
            if now - started > max(600, cards * 10):
                raise SystemExit("not drained in time")
            seen = stat(loop.pid)
            if seen is not None:
                cpu, peak, children = seen[0], max(peak, seen[1]), seen[2]
            if kill_at is not None and now - started >= kill_at:
                kill_at = None
                os.kill(loop.pid, signal.SIGKILL)  # the loop alone: its coders live on
                loop.wait(30)
                working = sum(1 for lane in lanes(root).values() if lane == "working")
                print(f"  killed the loop (SIGKILL) at {now - started:.1f} s, {working} working")
                killed_cpu, killed_children = cpu - idle[0], children - idle[2]
                loop = start_loop(root)
                procs.append(loop)
                idle = (0.0, idle[1], 0.0)
                time.sleep(1.0)
            if now - last_check >= 1.0:
                last_check = now
                seen_lanes = lanes(root)
                if all(lane == "done" for lane in seen_lanes.values()):
                    break
                # nothing working and nothing moving: what is left is stuck (blocked, or
                # never claimed), and `check` names it instead of the bench waiting on
                if seen_lanes != settled[0] or "working" in seen_lanes.values():
                    settled = (seen_lanes, now)
                elif now - settled[1] >= STUCK_S:
                    print(f"  stuck: nothing working or moving for {STUCK_S:g} s")
                    break
            time.sleep(0.2)
        wall = time.monotonic() - started
        seen = stat(loop.pid)
        if seen is not None:
            cpu, children = seen[0], seen[2]
        res = LoopRun(wall, killed_cpu + cpu - idle[0], idle[1], peak)
        res.stalled = stalled(pressure, wall)
        res.children = killed_children + children - idle[2]
        return res
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(120)
            except subprocess.TimeoutExpired:
                proc.kill_group(p.pid)
                p.wait(10)


STAGES = (  # a drive log's stamped line that starts each stage, in order
    ("tree", "board: fresh worktree "),
    ("coder", "board: coder (tier "),
    ("ended", "board: coder ended"),
    ("gate", "board: gate: the gate"),
    ("commit", "board: commit: "),
    ("folded", "board: folded onto "),
)


def stages(root: Path) -> str:
    """Where each card's time went, from the board's own stamps: the loop log's claim and
    end, the drive log's lines between. Medians and 90th percentiles over the cards, in
    seconds; the coder's own run is the part a bare coder has too."""
    import json
    from datetime import datetime

    def at(stamp: str) -> float:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()

    marks: dict[str, dict[str, float]] = {}
    for line in (root / ".board" / "loop.log").read_text().splitlines():
        event = json.loads(line)
        if event.get("event") in ("claim", "end") and event.get("card"):
            marks.setdefault(event["card"], {}).setdefault(event["event"], at(event["at"]))
    for card, seen in marks.items():
        for log in sorted((root / ".board" / "logs" / card).glob("*.log")):
            for line in log.read_text(errors="replace").splitlines():
                stamp, _, text = line.partition(" ")
                for name, head in STAGES:
                    if name not in seen and text.startswith(head):
                        seen[name] = at(stamp)
    order = ["claim", *(name for name, _ in STAGES), "end"]
    said = []
    for a, b in zip(order, order[1:], strict=False):
        gaps = sorted(m[b] - m[a] for m in marks.values() if a in m and b in m)
        if gaps:
            p90 = gaps[min(len(gaps) - 1, int(len(gaps) * 0.9))]
            said.append(f"{a}->{b} {statistics.median(gaps):.2f}/{p90:.2f}")
    return "stages (median/p90 s): " + ", ".join(said)


def run_bare(base: Path, coder: Path, drives: int, cards: int, seconds: float,
             period: float) -> tuple[float, float]:  # fmt: skip
    """`cards / drives` waves of `drives` bare coders, each in a directory of its own, its
    output through a pipe into a file (a thread reads each, as the board's drive does).
    Returns the wall time and the coders' own CPU (a yardstick of this machine's speed at
    this load, for the loop's CPU: the same run, the same coders)."""
    import resource
    import threading

    def children_cpu() -> float:
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime

    shutil.rmtree(base, ignore_errors=True)
    base.mkdir(parents=True)
    started, cpu = time.monotonic(), children_cpu()
    n = 0
    while n < cards:
        wave = range(n + 1, min(cards, n + drives) + 1)
        n += len(wave)
        children: list[tuple[subprocess.Popen[bytes], threading.Thread]] = []
        try:
            for i in wave:
                where = base / f"c-{i}"
                where.mkdir()
                child = subprocess.Popen(
                    [sys.executable, str(coder), str(where), f"c-{i}", str(seconds), str(period)],
                    cwd=where, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT, start_new_session=True,
                )  # fmt: skip

                def drain(pipe: object = child.stdout, out: Path = where / "out.log") -> None:
                    with out.open("wb") as fh:
                        for line in pipe:  # type: ignore[attr-defined]
                            fh.write(line)
                            fh.flush()

                t = threading.Thread(target=drain, daemon=True)
                t.start()
                children.append((child, t))
            for child, t in children:
                child.wait(seconds * 6 + 60)
                t.join(10)
        finally:
            for child, _ in children:
                if child.poll() is None:
                    proc.kill_group(child.pid)
                    child.wait(10)
    wall, cpu = time.monotonic() - started, children_cpu() - cpu
    missing = [
        i for i in range(1, cards + 1) if not (base / f"c-{i}" / "work" / f"c-{i}.txt").exists()
    ]
    if missing:
        raise SystemExit(f"the bare coders broke: {len(missing)} markers missing")
    return wall, cpu


def check(root: Path, cards: int, coder: Path) -> list[str]:
    """Every card done, its marker on the run branch or a stranded branch, nothing working,
    no live drive, no tree, no coder process left."""
    cfg = config.load(root)
    store = SQLiteStore(cfg.db_path)
    problems: list[str] = []
    try:
        found = {c.id: c for c in store.list_cards()}
        files = set(g(root, "ls-tree", "-r", "--name-only", cfg.board.run_branch, "work").split())
        stranded = g(root, "for-each-ref", "--format=%(refname)", "refs/heads/stranded").split()
        for ref in stranded:
            files |= set(g(root, "ls-tree", "-r", "--name-only", ref, "work").split())
        for i in range(1, cards + 1):
            card = found.get(f"c-{i}")
            if card is None:
                problems.append(f"c-{i} is missing")
                continue
            if card.lane != "done":
                problems.append(f"{card.id} is {card.lane} ({card.blocked})")
            if f"work/c-{i}.txt" not in files:
                problems.append(
                    f"{card.id}'s marker is on neither the run branch nor a stranded one"
                )
        live = store.live_drives()
        if live:
            problems.append(f"{len(live)} drive(s) still live")
    finally:
        store.close()
    left = [p.name for p in cfg.worktrees_dir.glob("*") if not p.name.startswith(".")]
    if left:
        problems.append(f"trees left: {left[:5]}")
    for pid_dir in Path("/proc").glob("[0-9]*"):
        try:
            cmd = (pid_dir / "cmdline").read_bytes()
        except OSError:
            continue
        if str(coder).encode() in cmd:
            problems.append(f"a coder is still running: pid {pid_dir.name}")
    return problems


def main() -> int:
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # a log's lines as they come
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--drives", type=int, default=100, help="max_concurrent (100)")
    ap.add_argument("--cards", type=int, default=300)
    ap.add_argument("--seconds", type=float, default=20.0, help="each coder's run (20 s)")
    ap.add_argument("--period", type=float, default=0.1, help="a line every PERIOD s (0.1)")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--kill-at", type=float, default=None,
                    help="SIGKILL the loop this many seconds into the last, untimed run "
                         "(default: 1.5 x --seconds, mid second wave)")  # fmt: skip
    ap.add_argument("--no-kill", action="store_true", help="no run with the loop killed")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the boards (their logs) at the end")
    ap.add_argument("--interval", type=float, default=config.MIN_INTERVAL_S,
                    help="the board's loop_interval_s (default: its minimum, "
                         f"{config.MIN_INTERVAL_S:g}; the board's own default is 5)")  # fmt: skip
    args = ap.parse_args()
    os.environ.update(IDENTITY)
    base = Path(tempfile.mkdtemp(prefix="bench-fleet-", dir=args.dir))
    coder = base / "coder.py"
    coder.write_text(CODER)
    drive_seconds = args.cards * args.seconds
    said = (
        f"drives: {args.drives}, cards: {args.cards}, loop_interval_s {args.interval:g}, "
        f"each coder {args.seconds:g} s, "
    )
    print(f"{said}a line every {args.period:g} s; cpus: {os.cpu_count()}; load {load()}")
    print(f"under {base.parent}: a small file created, written and removed costs "
          f"{file_cost(base):.0f} us of CPU")  # fmt: skip
    ratios, cpus, per_cards, yards, fails = [], [], [], [], 0
    try:
        for n in range(args.runs):
            board = fleet_board(
                base / f"b{n}", coder, args.drives, args.seconds, args.period, args.interval
            )
            bare_first = n % 2 == 0
            if bare_first:
                bare, bare_cpu = run_bare(base / f"bare{n}", coder, args.drives, args.cards,
                                          args.seconds, args.period)  # fmt: skip
            at_start = load()
            res = run_board(board, args.cards)
            if not bare_first:
                bare, bare_cpu = run_bare(base / f"bare{n}", coder, args.drives, args.cards,
                                          args.seconds, args.period)  # fmt: skip
            problems = check(board, args.cards, coder)
            fails += bool(problems)
            ratio = res.wall / bare
            per_ds = res.cpu / drive_seconds * 1000
            per_card = (res.rss_peak - res.rss_idle) / min(args.drives, args.cards) / 1024
            coder_ds = bare_cpu / drive_seconds * 1000
            yards.append(per_ds / coder_ds)
            ratios.append(ratio)
            cpus.append(per_ds)
            per_cards.append(per_card)
            print(f"run {n + 1}: board {res.wall:6.1f} s, bare waves {bare:6.1f} s, "
                  f"ratio {ratio:.2f}x; loop CPU {res.cpu:.1f} s = {per_ds:.2f} ms per "
                  f"drive-second ({res.cpu / res.wall * 100:.0f}% of a core); loop RSS idle "
                  f"{res.rss_idle / 2**20:.0f} MiB, peak {res.rss_peak / 2**20:.0f} MiB = "
                  f"{per_card:.0f} KiB per working card; lost or stuck: {len(problems)}; "
                  f"load {at_start} -> {load()}", flush=True)  # fmt: skip
            print(f"  during the board's run, {res.stalled}; a small file "
                  f"{file_cost(base):.0f} us after it")  # fmt: skip
            others = res.children - bare_cpu
            print(
                f"  the loop's children {res.children:.1f} s of CPU, the bare coders' "
                f"{bare_cpu:.1f} s: git and the gates {others:.1f} s = "
                f"{others / args.cards * 1000:.0f} ms a card"
            )
            print(
                f"  a bare coder's own CPU {coder_ds:.2f} ms per second: the loop's per "
                f"drive-second is {per_ds / coder_ds:.2f}x that (the same run)"
            )
            print(f"  {stages(board)}")
            for p in problems[:10]:
                print(f"  {p}")
            shutil.rmtree(base / f"bare{n}", ignore_errors=True)
            if not args.keep:  # a board left on disk slowed the runs after it (the notes)
                shutil.rmtree(base / f"b{n}", ignore_errors=True)
        if ratios:
            ratio, per_ds = statistics.median(ratios), statistics.median(cpus)
            print(
                f"median ratio {ratio:.2f}x ({', '.join(f'{r:.2f}' for r in ratios)}), "
                f"target <= {TARGET}x: {'met' if ratio <= TARGET else 'NOT MET'}"
            )
            print(
                f"median loop CPU {per_ds:.2f} ms per drive-second "
                f"({', '.join(f'{c:.2f}' for c in cpus)}), target <= {CPU_TARGET_MS} ms: "
                f"{'met' if per_ds <= CPU_TARGET_MS else 'NOT MET'}"
            )
            print(
                f"median loop CPU per drive-second against a bare coder's own "
                f"{statistics.median(yards):.2f}x ({', '.join(f'{y:.2f}' for y in yards)})"
            )
            print(f"median loop RSS per working card {statistics.median(per_cards):.0f} KiB")
        if not args.no_kill:
            kill_at = args.kill_at if args.kill_at is not None else 1.5 * args.seconds
            board = fleet_board(
                base / "kill", coder, args.drives, args.seconds, args.period, args.interval
            )
            print(
                f"kill run: SIGKILL of the loop at {kill_at:g} s, then board run again", flush=True
            )
            res = run_board(board, args.cards, kill_at=kill_at)
            problems = check(board, args.cards, coder)
            fails += bool(problems)
            print(
                f"kill run: drained in {res.wall:.1f} s; lost or stuck: {len(problems)}, "
                f"target 0: {'met' if not problems else 'NOT MET'}"
            )
            for p in problems[:10]:
                print(f"  {p}")
    finally:
        if args.keep:
            print(f"kept: {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)
    met = (not ratios or statistics.median(ratios) <= TARGET) and not fails
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
