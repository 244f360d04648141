"""`board web`: the control room served to a browser, one `board tui` process per session.

The operator who cannot reach a terminal (a phone, a laptop without SSH) opens the same app
in a browser, through textual-serve (from the Textual project): its page runs xterm.js, and
a websocket carries the keys in and the screen out. It is not a second UI: each browser
session runs the real `board -C ROOT tui` under Textual's web driver, so what a coder wrote
is drawn through the same neutralising path as in a terminal.

What is ours, and why:
- textual-serve starts its app through a shell, in the server's own process group, with no
  limit on how long it may take to start. The board runs no shell, and keeps each child in
  a group of its own that can be killed whole (core/proc.py, invariant 3). So the app is
  run by `AppSession` below (an argv, `start_new_session`), and only textual-serve's public
  methods are overridden: its page, its static files and its `serve` are used as they are.
- Loopback only by default, and a token on everything that shows the board: the page
  (`?token=`) and the websocket (the HttpOnly, SameSite=Strict cookie the page sets, or
  `?token=`). A request without it gets 403 before any app process starts; another page
  in the same browser cannot open the websocket with the cookie (SameSite, and the Origin
  check). The static files (textual-serve's JS, CSS and fonts) carry no data and stay open.
- `[web] max_sessions` caps the app processes; one over the cap gets 503 and a line.
- A session ends when its browser goes: the app is asked to quit, then its whole process
  group is killed after a grace period, so no process is left behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hmac
import json
import logging
import os
import re
import secrets
import signal
import sys
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from aiohttp import WSMsgType, web
from board.core import proc
from board.core.errors import BoardError
from board.core.safetext import sanitize
from textual_serve.server import Server

TOKEN_ENV = "BOARD_WEB_TOKEN"
TOKEN_RE = re.compile(r"[A-Za-z0-9_-]{16,256}")  # what fits a URL and a cookie unescaped
START_TIMEOUT_S = 30.0  # the app's first words (the web driver's prelude) within this
QUIT_GRACE_S = 3.0  # after the quit meta, before its process group is killed
ANNOUNCE_WAIT_S = 10.0  # how long the URL waits for the socket to listen before it is printed
PRELUDE = b"__GANGLION__\n"
LOOPBACK = ("127.0.0.1", "localhost", "::1")
WEB_DRIVER = "textual.drivers.web_driver:WebDriver"

log = logging.getLogger("board.web")


def make_token(environ: dict[str, str] | None = None) -> str:
    """The session token: `BOARD_WEB_TOKEN` when set (a bookmark that survives a restart),
    else a fresh random one. A token set too short, or with characters a URL would have
    to escape, is refused rather than used."""
    env = os.environ if environ is None else environ
    given = env.get(TOKEN_ENV)
    if given is None:
        return secrets.token_urlsafe(24)
    if not TOKEN_RE.fullmatch(given):
        raise BoardError(
            f"{TOKEN_ENV} must be 16 to 256 characters of A-Z a-z 0-9 _ - "
            f"(got {len(given)} characters); unset it for a random token"
        )
    return given


def is_loopback(host: str) -> bool:
    """Whether `host` is reachable from this machine only."""
    return host in LOOPBACK or host.startswith("127.")


def encode_packet(kind: bytes, payload: bytes) -> bytes:
    """One packet of Textual's web driver protocol: a type byte (D data, M meta), the
    payload's size as 4 bytes big-endian, the payload."""
    return kind + len(payload).to_bytes(4, "big") + payload


class AppSession:
    """One browser session's app: `board -C ROOT tui` under Textual's web driver, in a
    process group of its own, wired to the websocket.

    The app writes a prelude line, then packets (type byte, size, payload): D is screen
    data for the browser, M a meta message (`exit`: the app has ended). The browser's keys
    go back as D packets, a resize, focus, blur or quit as M packets."""

    def __init__(self, argv: list[str], env: dict[str, str], ws: web.WebSocketResponse) -> None:
        self.argv = argv
        self.env = env
        self.ws = ws
        self.process: asyncio.subprocess.Process | None = None
        self.stderr_tail: deque[bytes] = deque(maxlen=20)
        self.tasks: list[asyncio.Task[None]] = []

    @property
    def pgid(self) -> int:
        """The app's process group (its leader's pid: it started a session of its own)."""
        return self.process.pid if self.process is not None else 0

    async def start(self) -> None:
        """Start the app, and the tasks that copy its screen to the browser."""
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=self.env,
            start_new_session=True,  # its own group, killed whole at the end
        )
        self.tasks = [
            asyncio.create_task(self.pump()),
            asyncio.create_task(self.read_stderr()),
        ]

    async def read_stderr(self) -> None:
        """Keep the last lines the app wrote on stderr (said when it fails to start)."""
        assert self.process is not None and self.process.stderr is not None
        with contextlib.suppress(asyncio.CancelledError, ConnectionError):
            async for line in self.process.stderr:
                self.stderr_tail.append(line)

    async def pump(self) -> None:
        """Copy the app's screen to the browser until it ends; close the websocket then."""
        assert self.process is not None and self.process.stdout is not None
        stdout = self.process.stdout
        try:
            try:
                await asyncio.wait_for(self.prelude(stdout), START_TIMEOUT_S)
            except TimeoutError:
                log.warning("board web: the app did not start within %ss", START_TIMEOUT_S)
                return
            while True:
                head = await stdout.readexactly(5)
                payload = await stdout.readexactly(int.from_bytes(head[1:], "big"))
                kind = head[:1]
                if kind == b"D":
                    await self.ws.send_bytes(payload)
                elif kind == b"M" and self.is_exit(payload):
                    return
                # P (file deliveries) and other metas (open_url): not served here
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            raise
        finally:
            if not self.ws.closed:
                with contextlib.suppress(Exception):
                    await self.ws.close()

    async def prelude(self, stdout: asyncio.StreamReader) -> None:
        """Read up to the web driver's prelude line; raise IncompleteReadError without it."""
        for _ in range(50):
            line = await stdout.readline()
            if not line:
                break
            if line == PRELUDE:
                return
        tail = b"".join(self.stderr_tail).decode("utf-8", "replace").strip().splitlines()
        log.warning("board web: the app did not start: %s", sanitize(tail[-1] if tail else "?"))
        raise asyncio.IncompleteReadError(b"", None)

    @staticmethod
    def is_exit(payload: bytes) -> bool:
        try:
            meta = json.loads(payload)
        except ValueError:
            return False
        return isinstance(meta, dict) and meta.get("type") == "exit"

    async def send(self, kind: bytes, payload: bytes) -> None:
        """Write one packet to the app's stdin; a closed pipe is the app gone, not an error."""
        if self.process is None or self.process.stdin is None:
            return
        with contextlib.suppress(ConnectionError, RuntimeError):
            self.process.stdin.write(encode_packet(kind, payload))
            await self.process.stdin.drain()

    async def send_meta(self, meta: dict[str, object]) -> None:
        await self.send(b"M", json.dumps(meta).encode("utf-8"))

    async def stop(self) -> None:
        """Ask the app to quit; after `QUIT_GRACE_S` kill its whole group, and reap it."""
        process = self.process
        if process is None:
            return
        if process.returncode is None:
            await self.send_meta({"type": "quit"})
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), QUIT_GRACE_S)
        self.kill()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), QUIT_GRACE_S)
        for task in self.tasks:
            task.cancel()
        for task in self.tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    def kill(self) -> None:
        """SIGKILL the app's group: whatever of it is left, the app or what it started."""
        if self.pgid:
            proc.kill_group(self.pgid, signal.SIGKILL)


class BoardServer(Server):
    """textual-serve's server with the board's guard (a token, a session cap) and the
    board's own app sessions. Only public methods of `Server` are overridden."""

    def __init__(
        self,
        root: Path,
        *,
        host: str,
        port: int,
        token: str,
        max_sessions: int,
        print_line: Callable[[str], None] | None = None,
        public_url: str = "",
    ) -> None:
        super().__init__(
            command="board tui", host=host, port=port, title="board", public_url=public_url or None
        )
        self.root = root
        self.token = token
        self.max_sessions = max_sessions
        self.print_line = print_line or _say
        self.sessions: set[AppSession] = set()
        self.reserved = 0  # sessions counted before their process has started
        self.announcing: asyncio.Task[None] | None = None  # prints the URL once it listens
        self.cookie = f"board_web_{port}"  # one per port: two boards on one host differ

    # the guard -------------------------------------------------------------------------

    def authorised(self, request: web.Request) -> bool:
        """Whether the request carries the token (query or cookie), compared in constant
        time."""
        given = request.query.get("token") or request.cookies.get(self.cookie) or ""
        return hmac.compare_digest(given.encode("utf-8"), self.token.encode("utf-8"))

    def same_origin(self, request: web.Request) -> bool:
        """A websocket opened by a page of another site is refused: a browser always sends
        Origin with one, and only this server's own page has this host (or its public URL's)
        in it."""
        origin = request.headers.get("Origin")
        if origin is None:  # not a browser's page: the token alone decides
            return True
        netloc = urlsplit(origin).netloc
        return netloc == request.host or netloc == urlsplit(self.public_url).netloc

    def argv(self) -> list[str]:
        """The app one session runs: this interpreter's board, on this repository."""
        return [sys.executable, "-m", "board.cli", "-C", str(self.root), "tui"]

    def app_env(self, width: int, height: int) -> dict[str, str]:
        """The app's environment: ours, less the token, with Textual's web driver (as
        textual-serve sets it)."""
        env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
        env.update(
            TEXTUAL_DRIVER=WEB_DRIVER,
            TEXTUAL_FPS="60",
            TEXTUAL_COLOR_SYSTEM="truecolor",
            TERM_PROGRAM="textual",
            COLUMNS=str(width),
            ROWS=str(height),
        )
        return env

    def url(self) -> str:
        """The address to open, with its token."""
        return f"{self.public_url}/?token={self.token}"

    # textual-serve's public methods ------------------------------------------------------

    def initialize_logging(self) -> None:
        """Plain lines on stderr, warnings only: the access log would print the token."""
        logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)

    async def on_startup(self, app: web.Application) -> None:
        """aiohttp runs this before the socket listens: the URL is printed once it does,
        so whoever reads it (an operator, a script) can open it at once."""
        self.announcing = asyncio.get_running_loop().create_task(self.announce())

    async def announce(self) -> None:
        """Print the URL once the port takes connections (or after ANNOUNCE_WAIT_S anyway)."""
        host = {"0.0.0.0": "127.0.0.1", "::": "::1", "": "127.0.0.1"}.get(self.host, self.host)
        deadline = time.monotonic() + ANNOUNCE_WAIT_S
        while time.monotonic() < deadline:
            try:
                _, writer = await asyncio.open_connection(host, self.port)
            except OSError:
                await asyncio.sleep(0.02)
                continue
            writer.close()
            break
        self.print_line(f"board web: open {self.url()} (Ctrl+C stops it)")

    async def on_shutdown(self, app: web.Application) -> None:
        """The server stops: every session's app goes with it."""
        await asyncio.gather(*(s.stop() for s in list(self.sessions)), return_exceptions=True)

    async def handle_index(self, request: web.Request) -> web.StreamResponse:
        if not self.authorised(request):
            raise web.HTTPForbidden(text="board web: a token is needed (the URL it printed)\n")
        response = await super().handle_index(request)  # the rendered page
        response.set_cookie(self.cookie, self.token, httponly=True, samesite="Strict", path="/")
        response.headers["Cache-Control"] = "no-store"
        response.headers["Referrer-Policy"] = "no-referrer"  # the token is in the page's URL
        return response

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        if not self.authorised(request) or not self.same_origin(request):
            raise web.HTTPForbidden(text="board web: a token is needed (the URL it printed)\n")
        if len(self.sessions) + self.reserved >= self.max_sessions:
            print(
                f"board web: a session was refused: [web] max_sessions = {self.max_sessions} "
                "are open",
                file=sys.stderr,
                flush=True,
            )
            raise web.HTTPServiceUnavailable(
                text=f"board web: {self.max_sessions} sessions are open ([web] max_sessions)\n"
            )
        width = _int(request.query.get("width"), 80)
        height = _int(request.query.get("height"), 24)
        self.reserved += 1
        ws = web.WebSocketResponse(heartbeat=15)
        session: AppSession | None = None
        try:
            await ws.prepare(request)
            session = AppSession(self.argv(), self.app_env(width, height), ws)
            await session.start()
            self.sessions.add(session)
            self.reserved -= 1
            await self.relay(ws, session)
        finally:
            if session is None or session not in self.sessions:
                self.reserved -= 1
            if session is not None:
                self.sessions.discard(session)
                await asyncio.shield(session.stop())
        return ws

    async def relay(self, ws: web.WebSocketResponse, session: AppSession) -> None:
        """The browser's messages to the app, until the websocket closes: keys as data,
        a resize, focus or blur as meta, a ping answered here."""
        async for message in ws:
            if message.type != WSMsgType.TEXT:
                continue
            try:
                envelope = json.loads(message.data)
                kind, data = envelope[0], envelope[1]
            except (ValueError, TypeError, IndexError, KeyError):
                continue
            if kind == "stdin" and isinstance(data, str):
                await session.send(b"D", data.encode("utf-8"))
            elif kind == "resize" and isinstance(data, dict):
                width, height = _int(data.get("width"), 0), _int(data.get("height"), 0)
                if width > 0 and height > 0:
                    await session.send_meta({"type": "resize", "width": width, "height": height})
            elif kind == "ping":
                await ws.send_json(["pong", data])
            elif kind in ("blur", "focus"):
                await session.send_meta({"type": kind})

    def kill_all(self) -> None:
        """Kill every session's group (after the loop ended, whatever happened to it)."""
        for session in list(self.sessions):
            session.kill()


def _say(line: str) -> None:
    """A line on stdout, at once (a script waiting for the URL reads a pipe)."""
    print(line, flush=True)


def _int(value: Any, default: int) -> int:
    """A size from the browser: an integer from 1 to 1000, else `default`."""
    try:
        number = int(value)
    except (TypeError, ValueError):
        return default
    return number if 0 < number <= 1000 else default


def check_public_url(url: str) -> str:
    """`--public-url`: http(s)://NAME[:PORT] and nothing more (the page appends its own
    paths; a path, a query or a fragment here would be sent on to every link), without a
    trailing slash; else one line."""
    parts = urlsplit(url.strip())
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
        or parts.username
        or parts.password
    ):
        raise BoardError(
            f"web: --public-url must be http://NAME[:PORT] or https://NAME[:PORT] and nothing "
            f"more, got {url!r}"
        )
    try:
        parts.port  # noqa: B018 - a bad port raises here
    except ValueError:
        raise BoardError(f"web: --public-url has a bad port: {url!r}") from None
    return f"{parts.scheme}://{parts.netloc}"


def serve(
    root: Path, *, host: str, port: int, max_sessions: int, token: str, public_url: str = ""
) -> None:
    """Serve the control room until Ctrl+C or SIGTERM; a port already taken is refused in
    one line."""
    server = BoardServer(
        root,
        host=host,
        port=port,
        token=token,
        max_sessions=max_sessions,
        public_url=public_url,
    )
    try:
        server.serve()
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise BoardError(
                f"web: {host}:{port} is in use (another board web?); --port picks another"
            ) from None
        raise BoardError(f"web: cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        server.kill_all()


__all__ = [
    "AppSession",
    "BoardServer",
    "check_public_url",
    "encode_packet",
    "is_loopback",
    "make_token",
    "serve",
]
