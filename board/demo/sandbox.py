"""`board demo`: a sandbox repository with a real loop and a real coder, for a first look.

Within its first minute a newcomer sees a card reach done, a log grow, a stranded
branch appear and a card blocked with its reason — every promise of the product,
on this machine, with nothing to configure. Cards keep arriving for three minutes more
(`trickle`), so there is always one working to watch, stop or hold.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from board.core import config, locks, ops, proc
from board.core.errors import Refused
from board.core.git import gitutil
from board.core.model import CardDraft
from board.core.store import Expect, open_store

MARKER = ".board-demo"

PROJECT = {
    "README.md": "# calc\n\nA tiny calculator the demo coders extend, one card at a time.\n",
    "calc/__init__.py": '"""calc: the demo project."""\n',
    "calc/ops.py": (
        '"""The operations calc started with."""\n\n\ndef add(a, b):\n    return a + b\n\n\n'
        "def sub(a, b):\n    return a - b\n"
    ),
    "tests/__init__.py": "",
    "tests/test_ops.py": (
        "import unittest\n\nfrom calc.ops import add, sub\n\n\n"
        "class TestOps(unittest.TestCase):\n    def test_add(self):\n"
        "        self.assertEqual(add(2, 3), 5)\n\n    def test_sub(self):\n"
        "        self.assertEqual(sub(5, 3), 2)\n"
    ),
}

# (title, spec, lane, priority, surface, deps by index, extra)
CARDS: list[dict[str, Any]] = [
    {"title": "Set up the calc project", "lane": "done"},
    {"title": "Add multiply to calc", "spec": "Add mul(a, b).\ndemo: ok calc/mul.py",
     "surface": ["calc/mul.py", "tests/test_mul.py"], "priority": 1},
    {"title": "Add divide with a zero check", "spec": "Add div(a, b); raise on zero.\n"
     "demo: flaky calc/div.py", "surface": ["calc/div.py", "tests/test_div.py"], "priority": 1},
    {"title": "Add modulo", "spec": "Add mod(a, b).\ndemo: die calc/mod.py",
     "surface": ["calc/mod.py", "tests/test_mod.py"], "priority": 1},
    {"title": "Rewrite calc as a plugin system", "spec": "Every operation becomes a plugin.\n"
     "demo: wide", "surface": ["calc/plugins/**"], "priority": 1},
    {"title": "Add power", "spec": "Add power(a, b).\ndemo: ok calc/power.py",
     "surface": ["calc/power.py", "tests/test_power.py"], "deps": [1], "priority": 2},
    {"title": "Add a command-line entry point", "spec": "python -m calc 2 + 3\n"
     "demo: red calc/cli.py", "surface": ["calc/cli.py", "tests/test_cli.py"], "priority": 2},
    {"title": "Add logging", "spec": "Log each call.\ndemo: silent",
     "surface": ["calc/log.py"], "priority": 3},
    {"title": "Add square root", "spec": "Add sqrt(a).\ndemo: ok calc/sqrt.py",
     "surface": ["calc/sqrt.py", "tests/test_sqrt.py"], "held": "waiting for the numerics review"},
    {"title": "Add negate", "spec": "Add neg(a).", "lane": "review", "branch_file": "calc/neg.py"},
    {"title": "Document the API", "spec": "", "lane": "backlog"},
    {"title": "Port calc to Rust", "spec": "Not this year.", "lane": "cancelled"},
]  # fmt: skip


# Cards that arrive while the demo runs, one every TRICKLE_S (16 over 3 min 12 s), so there
# is always a card working to watch (`l`, `d`), stop (`S`) or hold (`H`), not only in the
# first minute. Each writes its own file a piece at a time ("slow"), in its own surface.
TRICKLE_S = 12.0
TRICKLE_OPS = (
    "abs", "max", "min", "clamp", "avg", "sign", "square", "cube",
    "half", "double", "floor", "ceil", "gcd", "lcm", "hypot", "percent",
)  # fmt: skip


# The installed command line, run by this interpreter. `-P`: the directory the demo was
# started from does not go first on the child's path, so a source checkout's `board/`
# (the README runs the demo from a fresh clone, installed with a plain `pip install .`)
# cannot shadow the installed package, which it only partly is.
BOARD = (sys.executable, "-P", "-m", "board.cli")


def trickle_card(op: str) -> CardDraft:
    """One arriving card: ready, its own file and test, the slow coder."""
    return CardDraft(
        title=f"Add {op} to calc",
        spec=f"Add {op}.\ndemo: slow calc/{op}.py",
        lane="ready",
        priority=2,
        surface=[f"calc/{op}.py", f"tests/test_{op}.py"],
    )


def trickle(repo: Path, stop: threading.Event, every_s: float = TRICKLE_S) -> int:
    """Add TRICKLE_OPS' cards to the demo board one at a time, `every_s` apart, until all
    are in or `stop` is set; returns how many went in. Its own store connection (a thread
    of `board demo`, beside the TUI's)."""
    cfg = config.load(repo)
    store = open_store(cfg)
    added = 0
    try:
        for op in TRICKLE_OPS:
            if stop.wait(every_s):
                break
            ops.add_card(store, trickle_card(op), prefix=cfg.board.prefix, who="demo")
            added += 1
    finally:
        store.close()
    return added


def start_trickle(repo: Path) -> tuple[threading.Thread, threading.Event]:
    """`trickle` in a daemon thread; set the event to stop it."""
    stop = threading.Event()
    thread = threading.Thread(target=trickle, args=(repo, stop), name="demo-trickle", daemon=True)
    thread.start()
    return thread, stop


def _write_project(root: Path) -> None:
    for rel, text in PROJECT.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _demo_config(python: str) -> dict[str, dict[str, Any]]:
    coder = [python, "-P", "-m", "board.demo.coder", "--brief", "{brief}", "--worktree",
             "{worktree}"]  # fmt: skip
    return {
        "board": {"max_concurrent": 3, "loop_interval_s": 1},
        "coder": {
            "ladder": ["quick", "careful"],
            "timeout_s": 12,  # a slow build fits; a wide one is parked within the minute
            "first_output_timeout_s": 4,
            "timeout_split_after": 2,
            "tiers": {
                "quick": {"argv": [*coder, "--tier", "quick"], "usage": "aider"},
                "careful": {"argv": [*coder, "--tier", "careful"], "usage": "aider"},
            },
        },
        "gate": {
            "argv": [python, "-m", "unittest", "discover", "-s", "tests", "-q"],
            "timeout_s": 60,
            "retries": 0,
        },  # fmt: skip
    }


def create_sandbox(target: Path) -> Path:
    """Make (or remake) the demo sandbox at `target`; refuse to touch a non-demo directory."""
    target = target.resolve()
    if target.exists():
        if not (target / MARKER).exists():
            if any(target.iterdir()):
                raise Refused(
                    f"{target} exists and is not a board demo sandbox; choose another DIR"
                )
        else:
            stop_loop(target)
            shutil.rmtree(target)
    target.mkdir(parents=True, exist_ok=True)
    origin = target / "origin.git"
    repo = target / "calc"
    env = {**gitutil.BOARD_IDENTITY}
    gitutil.git(target, "init", "-q", "--bare", "-b", "main", str(origin))
    gitutil.git(target, "init", "-q", "-b", "main", str(repo))
    gitutil.git(repo, "remote", "add", "origin", str(origin))
    _write_project(repo)
    config.write_default(repo, _demo_config(sys.executable))
    gitutil.git(repo, "add", "-A")
    gitutil.git(repo, *gitutil.NO_HOOKS, "commit", "-q", "-m", "calc: add and sub", env=env)
    gitutil.git(repo, "push", "-q", "-u", "origin", "main")
    (target / MARKER).write_text("made by `board demo`; removed and remade by the next one\n")
    res = proc.run([*BOARD, "-C", str(repo), "init"], timeout=60)
    if res.returncode != 0:
        raise Refused(f"board init failed in the sandbox: {res.stderr.strip()}")
    _seed_cards(repo, env)
    return repo


def _seed_cards(repo: Path, env: dict[str, str]) -> None:
    cfg = config.load(repo)
    store = open_store(cfg)
    try:
        ids: list[str] = []
        for spec in CARDS:
            lane = spec.get("lane", "ready")
            draft = CardDraft(
                title=spec["title"],
                spec=spec.get("spec", "Done before the demo started."),
                lane="backlog" if lane == "backlog" else "ready",
                priority=spec.get("priority", 2),
                surface=list(spec.get("surface", [])),
                deps=[ids[i] for i in spec.get("deps", [])],
            )
            card = ops.add_card(store, draft, prefix=cfg.board.prefix, who="demo")
            ids.append(card.id)
            if spec.get("held"):
                ops.hold(store, card.id, spec["held"], who="demo")
            if lane == "done":
                ops.done(store, None, card.id, who="demo")
            elif lane == "cancelled":
                ops.cancel(store, None, card.id, who="demo", reason="out of scope")
            elif lane == "review":
                branch = f"feat/{card.id}"
                gitutil.git(repo, "branch", branch, cfg.board.base)
                tree = cfg.worktrees_dir / f"feat-{card.id}"
                gitutil.git(repo, "worktree", "add", "-q", str(tree), branch)
                rel = spec["branch_file"]
                (tree / rel).write_text('"""neg"""\n\n\ndef neg(a):\n    return -a\n')
                gitutil.git(tree, "add", rel)
                gitutil.git(tree, *gitutil.NO_HOOKS, "commit", "-q", "-m", card.title, env=env)
                store.update(
                    card.id,
                    Expect(lane="ready"),
                    {"lane": "review", "branch": branch},
                    who="demo",
                    note="built before the demo started; waiting for the operator",
                )
    finally:
        store.close()


def start_loop(repo: Path) -> subprocess.Popen[bytes]:
    """`board run` in the background, its own process group, output to .board/loop.out."""
    out = (repo / ".board" / "loop.out").open("ab")
    return subprocess.Popen(
        [*BOARD, "-C", str(repo), "run"],
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )


def stop_loop(target: Path, child: subprocess.Popen[bytes] | None = None) -> None:
    """Stop a demo loop: SIGTERM lets it save and reap its drives; SIGKILL after 30 s."""
    if child is not None:
        if child.poll() is None:
            os.killpg(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill_group(child.pid)
                child.wait()
        return
    lock = target / "calc" / ".board" / "locks" / "loop.lock"
    deadline = time.monotonic() + 30
    signalled = False
    while (holder := locks.is_held(lock)) is not None:  # a loop still runs on the old sandbox
        if not signalled:
            try:
                os.kill(int(holder.split()[0]), signal.SIGTERM)
            except (ValueError, IndexError, ProcessLookupError, PermissionError):
                pass
            signalled = True
        if time.monotonic() > deadline:
            raise Refused(f"the old demo's loop in {target} does not stop; stop it by hand")
        time.sleep(0.2)


def cmd_demo(args: argparse.Namespace, ctx: object) -> int:
    """`board demo`: the sandbox needs nothing of the command line's context (`ctx`)."""
    target = Path(args.dir or "board-demo")
    repo = create_sandbox(target)
    print(f"demo sandbox: {repo}  (the loop's output: {repo}/.board/loop.out)", flush=True)
    child = start_loop(repo)
    feeder, stop_feeding = start_trickle(repo)
    try:
        if args.screenshot:
            _screenshot(repo, Path(args.screenshot), args.seconds, args.theme)
        elif args.no_tui:
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline and child.poll() is None:
                time.sleep(0.5)
        else:
            from board.tui import app as tui_app

            cfg = config.load(repo)
            store = open_store(cfg)
            try:
                tui_app.run(cfg, store, theme=args.theme)
            finally:
                store.close()
    finally:
        stop_feeding.set()
        feeder.join(timeout=5)
        stop_loop(target, child)
    return 0


def _screenshot(repo: Path, path: Path, seconds: float, theme: str | None) -> None:
    """Run the TUI headless for `seconds`, then save what it shows as SVG (for the README)."""
    from board.tui import app as tui_app

    cfg = config.load(repo)
    store = open_store(cfg)
    try:
        app = tui_app.BoardApp(cfg, store, theme=theme)

        def shoot() -> None:
            app.save_screenshot(filename=path.name, path=str(path.parent.resolve()))
            app.exit()

        app.call_later(lambda: app.set_timer(seconds, shoot))
        app.run(headless=True, size=(120, 30))
    finally:
        store.close()
    print(f"saved {path}", flush=True)
