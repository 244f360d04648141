"""A throwaway PostgreSQL cluster for the tests: started once per session, stopped at its end.

The PostgreSQL store is tested against a real server, not a stand-in: its locks, its
LISTEN/NOTIFY and its errors are what the store relies on. The machine's server binaries
(`pg_config --bindir`, or /usr/lib/postgresql/*/bin) make a cluster in a temporary
directory, on a free loopback port, with trust authentication for 127.0.0.1 only and no
Unix socket. initdb and pg_ctl refuse to run as root, so under root they run as the
`postgres` user (runuser), in a directory that user owns. Each test gets a database of its
own (`pg_url`), dropped after it.

Under `CI=true` a cluster that cannot be had fails the tests that need it (a CI image that
lost its server must not pass by skipping); elsewhere they are skipped, saying why.
"""

from __future__ import annotations

import atexit
import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

TIMEOUT_S = 120
RUN_AS = "postgres"  # who runs the server when the tests run as root


class Unavailable(Exception):
    """No cluster could be started here; the message says why."""


def _run(argv: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """A child process as every child of the suite: no stdin, its own session, a timeout."""
    return subprocess.run(
        argv,
        cwd=cwd,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        timeout=TIMEOUT_S,
    )


def find_bindir() -> Path | None:
    """Where initdb, pg_ctl and postgres are: BOARD_PG_BINDIR when set (and only there),
    else pg_config, the Debian layout (newest first), or PATH."""
    candidates: list[Path] = []
    if os.environ.get("BOARD_PG_BINDIR"):
        candidates.append(Path(os.environ["BOARD_PG_BINDIR"]))
        return candidates[0] if _has_server(candidates[0]) else None
    pg_config = shutil.which("pg_config")
    if pg_config:
        try:
            res = _run([pg_config, "--bindir"])
            if res.returncode == 0 and res.stdout.strip():
                candidates.append(Path(res.stdout.strip()))
        except (OSError, subprocess.TimeoutExpired):
            pass
    versions = glob.glob("/usr/lib/postgresql/*/bin")
    versions.sort(key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit() else 0)
    candidates += [Path(p) for p in reversed(versions)]
    on_path = shutil.which("initdb")
    if on_path:
        candidates.append(Path(on_path).resolve().parent)
    return next((bindir for bindir in candidates if _has_server(bindir)), None)


def _has_server(bindir: Path) -> bool:
    return all((bindir / tool).is_file() for tool in ("initdb", "pg_ctl", "postgres"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Cluster:
    """A running throwaway cluster; `url(db)` reaches a database on it as `postgres`."""

    def __init__(self, durable: bool = False) -> None:
        """`durable`: fsync and synchronous commits on, as a real server runs (the bench);
        the tests run without them, being throwaway."""
        self.durable = durable
        bindir = find_bindir()
        if bindir is None:
            raise Unavailable(
                "no PostgreSQL server binaries (initdb, pg_ctl, postgres) found: not via "
                "BOARD_PG_BINDIR, pg_config --bindir, /usr/lib/postgresql/*/bin or PATH"
            )
        self.bindir = bindir
        self.prefix: list[str] = []
        self.root = Path(tempfile.mkdtemp(prefix="board-pg-"))
        self.data = self.root / "data"
        self.port = 0
        self.running = False
        if os.geteuid() == 0:  # initdb and pg_ctl refuse root
            try:
                user = pwd.getpwnam(RUN_AS)
            except KeyError:
                self._remove()
                raise Unavailable(f"running as root and there is no {RUN_AS!r} user") from None
            runuser = shutil.which("runuser")
            if runuser is None:
                self._remove()
                raise Unavailable("running as root and there is no runuser to drop to postgres")
            os.chown(self.root, user.pw_uid, user.pw_gid)
            self.prefix = [runuser, "-u", RUN_AS, "--"]

    def _tool(self, name: str, *args: str) -> subprocess.CompletedProcess[str]:
        return _run([*self.prefix, str(self.bindir / name), *args], cwd=self.root)

    def start(self) -> None:
        res = self._tool(
            "initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
            "--no-locale", "-E", "UTF8", "--no-sync",
        )  # fmt: skip
        if res.returncode != 0:
            raise Unavailable(f"initdb failed: {(res.stderr or res.stdout).strip()[-500:]}")
        for attempt in range(3):  # a port taken between the probe and the bind: another
            self.port = _free_port()
            settings = (
                f"port = {self.port}\n"
                "listen_addresses = '127.0.0.1'\n"
                "unix_socket_directories = ''\n"
                "max_connections = 200\n"
            )
            if not self.durable:
                settings += "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
            with (self.data / "postgresql.conf").open("a", encoding="utf-8") as fh:
                fh.write(settings)  # the last setting of a name wins
            log = self.root / "server.log"
            res = self._tool(
                "pg_ctl", "-D", str(self.data), "-l", str(log), "-w", "-t", "60", "start"
            )
            if res.returncode == 0:
                self.running = True
                atexit.register(self.stop)
                return
            why = (res.stderr or res.stdout).strip()
            tail = log.read_text(errors="replace")[-500:] if log.exists() else ""
            if "already in use" not in tail or attempt == 2:
                raise Unavailable(f"pg_ctl start failed: {why[-300:]} {tail}")

    def restart(self) -> None:
        """`pg_ctl restart`, as an operator's routine restart: fast mode, so every session
        is ended and the server is away for a moment (`-l` again, or the new server would
        hold our pipe open)."""
        self._ctl("restart")

    def down(self) -> None:
        """Stop the server (fast mode: every session ended); `up` starts it again."""
        self._ctl("stop")

    def up(self) -> None:
        self._ctl("start")

    def _ctl(self, verb: str) -> None:
        log = str(self.root / "server.log")
        res = self._tool("pg_ctl", "-D", str(self.data), "-l", log, "-w", "-t", "60", verb)
        if res.returncode != 0:
            raise AssertionError(f"pg_ctl {verb} failed: {(res.stderr or res.stdout).strip()}")

    def url(self, db: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{db}"

    def admin(self, sql: str) -> None:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True, connect_timeout=10) as conn:
            conn.execute(sql)  # test-made DDL: names from uuid4, no user input

    def create_db(self) -> str:
        name = f"t_{uuid.uuid4().hex[:12]}"
        self.admin(f"CREATE DATABASE {name}")
        return name

    def drop_db(self, name: str) -> None:
        self.admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        if self.running:
            self.running = False
            try:
                self._tool("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
            except (OSError, subprocess.TimeoutExpired):
                pass
        self._remove()

    def _remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _unavailable(why: str) -> None:
    """Fail under CI (a missing server is a broken image, not a reason to pass); skip here."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"PostgreSQL is required under CI=true: {why}", pytrace=False)
    pytest.skip(f"no PostgreSQL to test against: {why}")


@pytest.fixture(scope="session")
def pg_cluster() -> Iterator[Cluster]:
    """One throwaway cluster for the session (failing or skipping when there is none)."""
    try:
        cluster = Cluster()
    except Unavailable as exc:
        _unavailable(str(exc))
        raise AssertionError("unreachable") from None
    try:
        cluster.start()
    except (Unavailable, OSError, subprocess.TimeoutExpired) as exc:
        cluster.stop()
        _unavailable(str(exc))
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def pg_url(pg_cluster: Cluster) -> Iterator[str]:
    """A fresh, empty database on the session's cluster; dropped after the test."""
    name = pg_cluster.create_db()
    try:
        yield pg_cluster.url(name)
    finally:
        pg_cluster.drop_db(name)
