"""`board doctor`: is this repository ready for the board? Every check, as data.

Without it an operator's first card was the test of their set-up: a tier's program that is
not installed, a gate that is red in a fresh tree (no `.env`, no `node_modules`), or, the
worst because it passes, a gate that imports the operator's checkout through an editable
install and tests the wrong code. Each showed only once a card was claimed and blocked (or
folded). Doctor does what a drive does before its coder, once, in a throwaway tree at the
start point: the copies, `[tree] setup`, the gate; and asks the gate's Python where the
project's packages would be imported from (`pytrap`).

The throwaway tree is `<worktrees>/doctor-<stamp>-<pid>`, detached: no card tree has such
a name (theirs are `feat-…`), so the loop's sweep leaves it alone, and a doctor killed before
it could remove its tree is known by its dead pid and its tree removed by the next doctor.
It holds nothing but what setup made and the gate wrote, so it is removed without a save, on
every way out (a failed check, Ctrl-C), after its running child's process group is killed.

Nothing here prints: each check goes to `on_check` as it ends (setup may take minutes, so
the command line prints each at once) and all are returned.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import stat
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from board.core import config, proc
from board.core.config import CoderSection, Config, GateSection, TreeSection
from board.core.drive import setup as tree_setup
from board.core.drive.gate import run_gate
from board.core.errors import BoardError, Refused
from board.core.git import gitutil, runbranch, treefiles
from board.core.git.naming import common_dir, utc_stamp
from board.core.ops import probe, pytrap
from board.core.records import Record, field
from board.core.store import open_store

OK, WARN, FAIL, SKIP = "ok", "warn", "fail", "skip"
LABELS = {OK: "ok", WARN: "warn", FAIL: "FAIL", SKIP: "skip"}
TREE_PREFIX = "doctor-"
_TREE_NAME = re.compile(r"^doctor-\d{8}T\d{6}\.\d{3}Z-(\d+)$")
TAIL_LINES = 15
KILL_WAIT_S = 5.0


class Check(Record):
    """One check: its name, `level` (ok, warn, fail, skip), one line of what was found,
    how long it took when timed, and the lines beneath it (files, commands, a tail)."""

    name: str
    level: str
    detail: str
    seconds: float | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """A warning passes; a skipped check (an earlier one failed) does not."""
        return self.level in (OK, WARN)

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "ok": self.ok,
            "level": self.level,
            "detail": self.detail,
            "seconds": None if self.seconds is None else round(self.seconds, 2),
            "lines": list(self.lines),
        }


def passed(checks: list[Check]) -> bool:
    return all(c.ok for c in checks)


def report(checks: list[Check]) -> dict[str, Any]:
    """What `board doctor --json` prints (docs/trees.md documents it)."""
    return {"ok": passed(checks), "checks": [c.to_json() for c in checks]}


def check_lines(check: Check) -> list[str]:
    """A check as the command line shows it: its line, then its lines indented."""
    took = f" ({check.seconds:.1f}s)" if check.seconds is not None else ""
    head = f"{LABELS[check.level]:<5} {check.name}: {check.detail}{took}"
    return [head, *(f"      {line}" for line in check.lines)]


def summary(checks: list[Check]) -> str:
    failed = [c.name for c in checks if c.level == FAIL]
    warned = sum(c.level == WARN for c in checks)
    also = f", {warned} warning(s)" if warned else ""
    if not failed:
        return f"ready: {len(checks)} checks passed{also}"
    return f"not ready: {len(failed)} check(s) failed ({', '.join(failed)}){also}"


def _ignore(_check: Check) -> None:
    pass


def diagnose(root: Path, on_check: Callable[[Check], None] = _ignore) -> list[Check]:
    """Every check of the repository at `root`, in order, each handed to `on_check` as it
    ends. Refuses nothing: a check that cannot be made is a failed (or skipped) check."""
    checks: list[Check] = []

    def add(check: Check) -> Check:
        checks.append(check)
        on_check(check)
        return check

    try:
        cfg = config.load(root)
    except BoardError as exc:
        add(Check("config", FAIL, exc.line()))
        return checks
    add(Check("config", OK, f"{cfg.rel(root / config.CONFIG_NAME)} read"))
    if not add(_git()).ok and shutil.which("git") is None:
        return checks  # every other check asks git
    base = add(_base(cfg)).ok
    run = add(_run_branch(cfg)).ok
    add(_store(cfg))
    add(_ignored(cfg))
    add(_tracked(cfg))
    if cfg.publish.mode == "push" or runbranch.on_remote(cfg.publish):
        add(_remote(cfg))
    if cfg.publish.mode == "push":
        add(_forge(cfg))
    if base and run:
        _in_tree(cfg, add)
        return checks
    add(_copy_check(cfg, None))
    add(Check("tree", SKIP, "no fresh tree made: the base or the run branch is missing"))
    env = dict(os.environ)
    for name in cfg.coder.ladder:
        add(_tier(cfg.coder, name, cfg.root, env))
    add(Check("gate", SKIP, "not run: no fresh tree"))
    return checks


# ---------------------------------------------------------------------------------------------
# the repository


def _git() -> Check:
    try:
        v = gitutil.version()
    except BoardError as exc:
        return Check("git", FAIL, exc.line())
    shown = ".".join(map(str, v))
    least = ".".join(map(str, gitutil.MIN_GIT))
    if v[:2] < gitutil.MIN_GIT:
        return Check("git", FAIL, f"git {shown} is too old: board needs >= {least}")
    return Check("git", OK, f"git {shown} (board needs >= {least})")


def _base(cfg: Config) -> Check:
    try:
        ref = runbranch.base_ref(cfg)
    except BoardError as exc:
        return Check("base", FAIL, f"{exc.line()}: [board] base in board.toml names it")
    tip = gitutil.rev(cfg.root, ref) or ""
    return Check("base", OK, f"{cfg.board.base} ({ref} at {tip[:10]})")


def _run_branch(cfg: Config) -> Check:
    if not runbranch.folds(cfg.publish):
        return Check("run-branch", OK, "not used: publish.mode is push (trees start at the base)")
    refs = [f"refs/heads/{cfg.board.run_branch}"]
    if runbranch.on_remote(cfg.publish):
        refs.append(f"refs/remotes/{cfg.publish.remote}/{cfg.board.run_branch}")
    for ref in refs:
        tip = gitutil.rev(cfg.root, ref)
        if tip is not None:
            return Check("run-branch", OK, f"{gitutil.short_ref(ref)} at {tip[:10]}")
    return Check(
        "run-branch",
        FAIL,
        f"the run branch {cfg.board.run_branch} does not exist: "
        "`board init` creates it from the base",
    )


def _store(cfg: Config) -> Check:
    """Opened, and a write transaction begun and ended: a store locked by another writer,
    corrupt or read-only fails here, in one line."""
    t0 = time.monotonic()
    try:
        store = open_store(cfg)
        try:
            with store.transaction():
                pass
            store.change_count()
            where = store.where
        finally:
            store.close()
    except BoardError as exc:
        return Check("store", FAIL, exc.line(), time.monotonic() - t0)
    except Exception as exc:  # a driver's own error: said, not a traceback
        text = " ".join(str(exc).split())[:300]
        return Check("store", FAIL, f"{type(exc).__name__}: {text}", time.monotonic() - t0)
    return Check("store", OK, f"{where} opens and takes writes", time.monotonic() - t0)


def _ignored(cfg: Config) -> Check:
    """`.board/`, the trees' folder and the scratch folders are ignored by git (board init
    writes them into .git/info/exclude): else the checkout shows them as work, and a scratch
    folder in a tree would be committed as the card's."""
    want = [
        ".board/",
        f"{cfg.board.worktrees.strip('/')}/",
        *(f"{s.strip('/')}/" for s in cfg.board.scratch),
    ]
    res = gitutil.git(
        cfg.root,
        "check-ignore",
        "-z",
        "--stdin",
        "--no-index",
        check=False,
        input_bytes="\0".join(want).encode() + b"\0",
    )
    ignored = {p for p in res.stdout.split("\0") if p}
    missing = [w for w in want if w not in ignored]
    if res.returncode not in (0, 1):
        return Check("ignored", FAIL, f"git check-ignore failed: {res.stderr.strip()[:200]}")
    if missing:
        return Check(
            "ignored",
            FAIL,
            f"git does not ignore {', '.join(missing)}: add them to .git/info/exclude "
            "(`board init` does)",
        )
    return Check("ignored", OK, f"git ignores {', '.join(want)}")


TRACKED_SHOWN = 10  # tracked .board/ files named; the rest counted


def _tracked(cfg: Config) -> Check:
    """No file in `.board/` is tracked by git. A tracked one is the repository's: every
    clone checks it out into the board's own folder (a store, a log, a lock it did not
    make), and a commit takes this clone's there. No cache is read from `.board/` (they are
    in the user's cache directory: core/cachedir.py), so what is named here is the board's
    state, carried by the repository (docs/lifecycle.md, "Nothing is lost")."""
    res = gitutil.git(cfg.root, "ls-files", "-z", "--", f"{config.BOARD_DIR}/", check=False)
    if res.returncode != 0:
        return Check("tracked", FAIL, f"git ls-files failed: {res.stderr.strip()[:200]}")
    files = [p for p in res.stdout.split("\0") if p]
    if not files:
        return Check("tracked", OK, f"git tracks nothing in {config.BOARD_DIR}/")
    more = len(files) - TRACKED_SHOWN
    lines = files[:TRACKED_SHOWN] + ([f"and {more} more"] if more > 0 else [])
    lines.append(
        f"untrack them (the files stay here): git rm -r --cached {config.BOARD_DIR} && "
        f"git commit -m 'untrack {config.BOARD_DIR}/'"
    )
    return Check(
        "tracked",
        FAIL,
        f"git tracks {len(files)} file(s) in {config.BOARD_DIR}/, the board's own folder: "
        "every clone checks them out as its store, logs and locks",
        lines=lines,
    )


def _remote(cfg: Config) -> Check:
    if not cfg.publish.remote:
        return Check("remote", FAIL, "publish.remote is empty: push mode needs a remote")
    res = gitutil.git(cfg.root, "remote", "get-url", cfg.publish.remote, check=False)
    if res.returncode != 0:
        return Check(
            "remote",
            FAIL,
            f"no remote {cfg.publish.remote!r} in this clone (publish.remote names it)",
        )
    url = re.sub(r"(://)[^/@]*@", r"\1", res.stdout.strip())  # no user or token shown
    return Check("remote", OK, f"{cfg.publish.remote} is {url}")


def _forge(cfg: Config) -> Check:
    """The PR command's program (and the PR state and merge commands', when set)."""
    if not cfg.publish.pr_argv:
        return Check(
            "forge", WARN, "publish.pr_argv is empty: pushed branches wait for a PR opened by hand"
        )
    wanted = [("pr_argv", cfg.publish.pr_argv), ("pr_state_argv", cfg.publish.pr_state_argv)]
    if cfg.publish.auto_merge:
        wanted.append(("merge_argv", cfg.publish.merge_argv))
    lines: list[str] = []
    missing: list[str] = []
    for key, argv in wanted:
        if not argv:
            continue
        found = find_program(argv[0], cfg.root, os.environ.get("PATH"))
        lines.append(f"publish.{key}: {argv[0]} -> {found or 'not found'}")
        if found is None:
            missing.append(f"{argv[0]!r} (publish.{key})")
    if missing:
        return Check(
            "forge", FAIL, f"not installed or not on PATH: {', '.join(missing)}", lines=lines
        )
    return Check("forge", OK, f"{cfg.publish.pr_argv[0]} is installed", lines=lines)


def find_program(name: str, cwd: Path, path: str | None) -> str | None:
    """Where `name` (an argv[0]) would be started from: a path (relative to `cwd`) that is
    an executable file, or a name found on `path`; None when it would not start."""
    if "/" in name:
        p = Path(name) if os.path.isabs(name) else cwd / name
        return str(p) if p.is_file() and os.access(p, os.X_OK) else None
    return shutil.which(name, path=path)


def _tier(coder: CoderSection, name: str, cwd: Path, env: dict[str, str]) -> Check:
    tier = coder.tiers.get(name)
    if tier is None or not tier.argv:
        return Check(f"tier:{name}", FAIL, f"the ladder names {name!r}, but it has no argv")
    program = gitutil.argv_with(tier.argv[:1], worktree=str(cwd), card="", brief="")[0]
    found = find_program(program, cwd, env.get("PATH"))
    if found is None:
        return Check(
            f"tier:{name}",
            FAIL,
            f"{program!r} is not installed or not on PATH: a drive on this tier would block "
            "dispatch-infra",
        )
    shown = program if found == program else f"{program} -> {found}"
    if probe.preset_of(program) is None:
        return Check(f"tier:{name}", OK, shown)
    argv = [str(found), *tier.argv[1:]]
    t0 = time.monotonic()
    asked = probe.probe(argv, cwd, env)
    took = time.monotonic() - t0
    version = f" {asked.version}" if asked.version else ""
    if asked.why:
        return Check(f"tier:{name}", WARN, f"{shown}{version}: {asked.why}", took)
    if asked.unknown:
        return Check(
            f"tier:{name}",
            FAIL,
            f"{os.path.basename(program)}{version} does not offer {asked.unknown[0]} "
            f"(`{asked.asked}`): every card on this tier would block dispatch-infra; fix "
            f"[coder.tiers.{name}] argv",
            took,
        )
    return Check(f"tier:{name}", OK, f"{shown}{version}: takes every flag of its argv", took)


def _copy_check(cfg: Config, made: treefiles.CopyPlan | None) -> Check:
    """The copy plan: a refused file fails (it would not reach the tree, or would be work)."""
    include = cfg.root / treefiles.INCLUDE_FILE
    try:
        big = include.stat().st_size > treefiles.MAX_INCLUDE_BYTES
    except OSError:
        big = False
    if big:
        return Check(
            "copy",
            FAIL,
            f"{treefiles.INCLUDE_FILE} is over {treefiles.MAX_INCLUDE_BYTES // 1024} KiB, so it "
            "is read as empty: it names a few paths, in .gitignore syntax",
        )
    if made is None:
        try:
            made = treefiles.plan(cfg)
        except BoardError as exc:
            return Check("copy", FAIL, f"the copy plan could not be made: {exc.line()}")
    lines = made.lines()
    if made.refused:
        said = "; ".join(f"{p} ({why})" for p, why in made.refused[:3])
        more = f" and {len(made.refused) - 3} more" if len(made.refused) > 3 else ""
        return Check("copy", FAIL, f"not copied: {said}{more}", lines=lines)
    if not made.files:
        if not treefiles.patterns(cfg):
            none = f"nothing to copy (no [tree] copy, no {treefiles.INCLUDE_FILE})"
            return Check("copy", OK, none)
        return Check("copy", OK, "the patterns name no ignored file in the checkout", lines=lines)
    return Check("copy", OK, f"{len(made.files)} file(s) copied into a fresh tree", lines=lines)


# ---------------------------------------------------------------------------------------------
# the fresh tree


class _Child:
    """The child running now (its process group), killed when the doctor is interrupted:
    `proc.stream` stops waiting on Ctrl-C, but the child, in its own group, runs on. Only
    a normal return marks it ended, so an interrupt leaves its pid here for `kill`."""

    def __init__(self) -> None:
        self.pid = 0

    def started(self, pid: int) -> None:
        self.pid = pid

    def ended(self) -> None:
        self.pid = 0

    def kill(self) -> None:
        """SIGTERM to the group, SIGKILL after proc's grace period, as a timeout kills."""
        if not self.pid:
            return
        pgid, self.pid = self.pid, 0
        for sig, wait in ((signal.SIGTERM, proc.KILL_GRACE_S), (signal.SIGKILL, KILL_WAIT_S)):
            if not proc.kill_group(pgid, sig):
                return
            deadline = time.monotonic() + wait
            while proc.group_alive(pgid) and time.monotonic() < deadline:
                time.sleep(0.02)


def _in_tree(cfg: Config, add: Callable[[Check], Check]) -> None:
    """Start point, throwaway tree, copies, setup, tiers, gate, imports; the tree removed."""
    t0 = time.monotonic()
    try:
        start = runbranch.start_point(cfg)
    except (BoardError, OSError) as exc:
        why = exc.line() if isinstance(exc, BoardError) else f"{type(exc).__name__}: {exc}"
        add(Check("start-point", FAIL, why, time.monotonic() - t0))
        add(_copy_check(cfg, None))
        add(Check("tree", SKIP, "no fresh tree made: no start point"))
        add(Check("gate", SKIP, "not run: no fresh tree"))
        return
    add(_start_check(cfg, start, time.monotonic() - t0))
    left = _remove_stale(cfg)
    tree = cfg.worktrees_dir / f"{TREE_PREFIX}{utc_stamp()}-{os.getpid()}"
    child = _Child()
    made = False
    try:
        t0 = time.monotonic()
        try:
            cfg.worktrees_dir.mkdir(parents=True, exist_ok=True)
            gitutil.git(cfg.root, "worktree", "add", "--detach", str(tree), start)
            made = True
        except (BoardError, OSError) as exc:
            why = exc.line() if isinstance(exc, BoardError) else str(exc)
            add(_copy_check(cfg, None))
            add(Check("tree", FAIL, f"no fresh tree could be made at {start[:10]}: {why}"))
            add(Check("gate", SKIP, "not run: no fresh tree"))
            return
        add(
            Check(
                "tree",
                OK,
                f"a fresh tree at {start[:10]} in {cfg.rel(tree)} (removed afterwards)",
                time.monotonic() - t0,
                [f"removed {cfg.rel(p)}, left by a doctor that was killed" for p in left],
            )
        )
        _tree_checks(cfg, tree, start, add, child)
    finally:
        child.kill()
        why = _remove(cfg, tree)  # also what a failed `worktree add` may have left
        if why:
            add(Check("cleanup", FAIL, f"{cfg.rel(tree)} could not be removed: {why}"))
        elif made:
            add(Check("cleanup", OK, f"{cfg.rel(tree)} removed"))


def _start_check(cfg: Config, start: str, seconds: float) -> Check:
    """Where trees start; in fold mode, a base the run branch could not take in (a
    conflict) stops new builds, so it fails here."""
    try:
        base = runbranch.base_ref(cfg)
    except BoardError:
        base = ""
    where = cfg.board.run_branch if runbranch.folds(cfg.publish) else base
    if runbranch.folds(cfg.publish):
        tip = gitutil.rev(cfg.root, base) if base else None
        if tip and not gitutil.ok(cfg.root, "merge-base", "--is-ancestor", tip, start):
            return Check(
                "start-point",
                FAIL,
                f"the base {base} moved on and conflicts with {cfg.board.run_branch}: "
                "merge it into the run branch by hand (the board starts no new build until then)",
                seconds,
            )
    return Check("start-point", OK, f"{where} at {start[:10]}", seconds)


def _tree_checks(
    cfg: Config, tree: Path, start: str, add: Callable[[Check], Check], child: _Child
) -> None:
    try:
        copied = treefiles.copy_into(cfg, tree, start)
    except (BoardError, OSError) as exc:
        why = exc.line() if isinstance(exc, BoardError) else f"{type(exc).__name__}: {exc}"
        add(Check("copy", FAIL, f"the files could not be copied into the tree: {why}"))
    else:
        add(_copy_check(cfg, copied))
    # a slot past any a loop on this machine holds (1..max_concurrent): no port of a
    # running drive's is taken
    env = tree_setup.tree_env(cfg, tree, "", cfg.board.max_concurrent + 1)
    set_up = add(_setup(cfg.tree, tree, env, child)).ok
    full = {**os.environ, **env}
    for name in cfg.coder.ladder:
        add(_tier(cfg.coder, name, tree, full))
    if not set_up:
        add(Check("gate", SKIP, "not run: setup failed"))
        return
    if cfg.gate.format_argv:
        add(_format(cfg.gate, tree, env, child))
    if not cfg.gate.argv:
        add(
            Check(
                "gate",
                WARN,
                "none: [gate] argv is empty, so every card that builds is published "
                "unchecked (`board init` finds one, or set [gate] argv)",
            )
        )
        return
    add(_gate(cfg.gate, tree, start, env, child))
    imports = _imports(cfg, tree, env, child)
    if imports is not None:
        add(imports)
    modules = _node_modules(cfg, tree)
    if modules is not None:
        add(modules)


def _node_modules(cfg: Config, tree: Path) -> Check | None:
    """The Node form of the editable trap: a tree with no node_modules of its own resolves
    `require` up its parent folders, and trees live inside the checkout, so its gate runs
    against the checkout's installed packages, not what the tree's lockfile says."""
    if not (tree / "package.json").is_file():
        return None
    if (tree / "node_modules").is_dir():
        return Check("node-modules", OK, "the tree has node_modules of its own (made by setup)")
    theirs = cfg.root / "node_modules"
    if not theirs.is_dir():
        return None
    return Check(
        "node-modules",
        FAIL,
        f"the tree has no node_modules after setup, so require() finds the checkout's "
        f"({theirs}): the gate would run against those, not the tree's lockfile; set [tree] "
        'setup (e.g. [["npm", "ci"]]; `board init` writes it from the lockfile)',
    )


def _setup(tree_cfg: TreeSection, tree: Path, env: dict[str, str], child: _Child) -> Check:
    if not tree_cfg.setup:
        return Check("setup", OK, "none: [tree] setup is empty")
    end = tree_setup.run_setup(tree_cfg, tree, env, _no_line, on_start=child.started)
    child.ended()
    here = str(tree)
    lines = [f"{argv.replace(here, '{worktree}')} ({took:.1f}s)" for argv, took in end.steps]
    if not end.ok:
        tail = end.tail.splitlines()[-TAIL_LINES:]
        return Check("setup", FAIL, end.reason, end.seconds, lines + [f"| {t}" for t in tail])
    n = len(tree_cfg.setup)
    return Check("setup", OK, f"{n} command(s) ran in a fresh tree", end.seconds, lines)


def _format(gate: GateSection, tree: Path, env: dict[str, str], child: _Child) -> Check:
    """`gate.format_argv`, run before the gate as a drive runs it; a failure is said, and a
    drive goes on, so it does not fail."""
    argv = gitutil.argv_with(gate.format_argv, worktree=str(tree))
    t0 = time.monotonic()
    res = proc.stream(
        argv, cwd=tree, timeout=gate.timeout_s, on_line=_no_line, env=env,
        on_start=child.started,
    )  # fmt: skip
    child.ended()
    took = time.monotonic() - t0
    if res.ok:
        return Check("format", OK, f"{argv[0]} ran", took)
    what = "could not be started" if res.missing else f"exited {res.returncode}"
    tail = [f"| {t}" for t in res.tail[-TAIL_LINES:]]
    return Check("format", WARN, f"{argv[0]} {what} (a drive goes on to the gate)", took, tail)


def _gate(
    gate_cfg: GateSection, tree: Path, start: str, env: dict[str, str], child: _Child
) -> Check:
    t0 = time.monotonic()
    verdict = run_gate(gate_cfg, tree, _no_line, on_start=child.started, env=env)
    child.ended()
    took = time.monotonic() - t0
    if verdict.status == "passed":
        return Check("gate", OK, f"green in a fresh tree at {start[:10]}", took)
    tail = [f"| {t}" for t in verdict.tail.splitlines()[-TAIL_LINES:]]
    if verdict.status == "no-verdict":
        return Check("gate", FAIL, f"{verdict.reason} in a fresh tree", took, tail)
    return Check(
        "gate",
        FAIL,
        f"{verdict.reason} in a fresh tree at {start[:10]}: every card would block gate-red, "
        "whatever its coder did",
        took,
        tail,
    )


def _imports(cfg: Config, tree: Path, env: dict[str, str], child: _Child) -> Check | None:
    """The editable-install trap (`pytrap`): None for a gate that is not Python's and a
    tree with no Python package."""
    names = pytrap.packages(tree)
    full = {"BOARD_CARD": "", "BOARD_BRIEF": "", **os.environ, **env}
    argv = gitutil.argv_with(cfg.gate.argv, worktree=str(tree), card="", brief="")
    if pytrap.own_environment(argv):
        return None  # tox, nox: each run installs the project from the tree into its own env
    py = pytrap.interpreter(argv, tree, full.get("PATH"))
    if py is None:
        if not names:
            return None
        py = pytrap.guess(full.get("PATH"))
        if py is None:
            return None
    if not names:
        return Check(
            "imports", OK, "no Python package in the tree (src/<pkg>, <pkg>/__init__.py) to check"
        )
    found = pytrap.probe(py, tree, cfg.root, names, full, cfg.gate.timeout_s, child.started)
    child.ended()
    py.shown = py.shown.replace(str(tree), "{worktree}")
    gate_py = f"the gate's python ({py.shown})" if py.named else f"{py.shown} on the gate's PATH"
    if not found.ran:
        return Check(
            "imports",
            WARN,
            f"could not ask {gate_py} where it imports the project from: {found.why}",
            found.seconds,
        )
    if found.ok:
        said = f"{gate_py} imports the project from the tree"
        return Check("imports", OK, said, found.seconds, found.lines)
    fix = pytrap.fix_lines(tree, cfg.board.scratch[0])
    if not py.named:
        return Check(
            "imports",
            WARN,
            f"the gate names no Python; if it runs {py.shown}, that imports "
            f"{'; '.join(found.wrong)}, not the tree's code",
            found.seconds,
            found.lines + fix,
        )
    return Check(
        "imports",
        FAIL,
        f"{gate_py} imports {'; '.join(found.wrong)}, not from the tree: the gate would test "
        "that code, not the card's",
        found.seconds,
        found.lines + fix,
    )


def _no_line(_line: str) -> None:
    pass


# ---------------------------------------------------------------------------------------------
# removing the throwaway tree


def _remove(cfg: Config, tree: Path) -> str:
    """Remove a doctor's tree and its git admin entry; '' when gone, else why not. It holds
    only setup's products and the gate's outputs: nothing to save."""
    if not os.path.lexists(tree):
        return ""
    admin = _admin_dir(tree)
    gitutil.git(cfg.root, "worktree", "remove", "--force", str(tree), check=False)
    try:
        _rmtree(tree)
        # only an entry of this repository's (the tree's .git file is the tree's to change)
        if admin is not None and admin.resolve().parent == common_dir(cfg).resolve() / "worktrees":
            with gitutil.admin_locked(cfg.root):  # not while a `git worktree add` reads them
                _rmtree(admin)
    except (OSError, Refused) as exc:
        return str(exc)
    return ""


def _admin_dir(tree: Path) -> Path | None:
    try:
        text = (tree / ".git").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    path = Path(text[len("gitdir:") :].strip())
    return path if path.is_absolute() else tree / path


def _rmtree(path: Path) -> None:
    """Remove a folder, read-only ones too (a Go module cache is made read-only)."""
    if not os.path.lexists(path):
        return
    if os.path.islink(path) or not path.is_dir():
        os.unlink(path)
        return
    try:
        shutil.rmtree(path)
    except OSError:
        for dirpath, dirnames, _ in os.walk(path):
            os.chmod(dirpath, stat.S_IRWXU)
            for name in dirnames:
                sub = os.path.join(dirpath, name)
                if not os.path.islink(sub):
                    os.chmod(sub, stat.S_IRWXU)
        shutil.rmtree(path)


def _remove_stale(cfg: Config) -> list[Path]:
    """Trees left by a doctor that was killed (its pid no longer runs), removed."""
    root = cfg.worktrees_dir
    if not root.is_dir():
        return []
    gone: list[Path] = []
    for entry in sorted(root.iterdir()):
        m = _TREE_NAME.match(entry.name)
        if m is None or proc.pid_alive(int(m.group(1))):
            continue
        if not _remove(cfg, entry):
            gone.append(entry)
    return gone
