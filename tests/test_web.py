"""`board web`: the control room in a real browser, guarded by a token, one app per session.

Real parts only: a bare origin and a clone with the board made by `board init`, the real
`board web` in its own process, Debian's Chromium driven by Selenium through the system's
chromedriver, the real SQLite store read after a key in the browser held a card, and the
process table read from /proc for the server's `board ... tui` children.

The page's terminal is drawn on a canvas, so what the browser was sent is read from its
websocket: a script wraps WebSocket before the page loads and keeps every frame it got.

One server and one browser serve the whole module (each costs seconds). Under CI=true a
missing browser fails the tests, as a missing PostgreSQL does (tests/support/pg_cluster.py).
"""

from __future__ import annotations

import contextlib
import http.client
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from board.core.model import CardDraft

from tests.support.repos import GIT_ENV, Repo, make_repo
from tests.support.waiting import wait_for

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROME_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,900",
)
HOSTILE = "[bold]web literal[/bold] \x1b]0;pwned\x07"

# kept by the page from its first instruction: every frame its websocket received, decoded
RECORD_FRAMES = """
window.boardFrames = [];
const Real = window.WebSocket;
const decoder = new TextDecoder();
window.WebSocket = function (url, protocols) {
  const ws = protocols === undefined ? new Real(url) : new Real(url, protocols);
  ws.addEventListener("message", (event) => {
    const data = event.data;
    window.boardFrames.push(
      data instanceof ArrayBuffer ? decoder.decode(data, {stream: true}) : String(data)
    );
  });
  return ws;
};
window.WebSocket.prototype = Real.prototype;
"""

ANSI = re.compile(r"\x1b\[[0-9;?<>=$]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)")


def _unavailable(why: str) -> None:
    """Fail under CI (a missing browser is a broken image: .ci/run installs it); skip here."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"Chromium and Selenium are required under CI=true: {why}", pytrace=False)
    pytest.skip(f"no browser to test with: {why}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Served:
    """The running `board web`: its process, the URL it printed, its repository."""

    def __init__(self, repo: Repo, port: int) -> None:
        self.repo = repo
        self.port = port
        env = {**os.environ, **GIT_ENV}
        env.pop("BOARD_WEB_TOKEN", None)  # the random token, as an operator gets it
        self.err = repo.root.parent / "web.err"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "board.cli", "web", "--port", str(port)],
            cwd=repo.root,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self.err.open("w"),
            text=True,
            start_new_session=True,
            env=env,
        )
        assert self.process.stdout is not None
        self.line = self.process.stdout.readline().strip()  # printed at once
        match = re.fullmatch(
            r"board web: open (http://127\.0\.0\.1:\d+/\?token=(\S+)) .*", self.line
        )
        assert match, f"no URL printed: {self.line!r} {self.err.read_text()}"
        self.url, self.token = match[1], match[2]

    def apps(self) -> list[int]:
        """The server's `board ... tui` children, from the process table."""
        found = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if int(stat[1]) == self.process.pid and stat[0] != "Z" and b"tui" in argv:
                found.append(int(entry.name))
        return found

    def request(
        self, path: str, headers: dict[str, str] | None = None
    ) -> tuple[int, dict[str, str], str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=10)
        try:
            conn.request("GET", path, headers=headers or {})
            res = conn.getresponse()
            return res.status, dict(res.getheaders()), res.read().decode("utf-8", "replace")
        finally:
            conn.close()

    def websocket(self, query: str = "", headers: dict[str, str] | None = None) -> int:
        """The status a websocket upgrade to /ws gets (101: a session was opened)."""
        upgrade = {
            "Connection": "Upgrade",
            "Upgrade": "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
        }
        return self.request(f"/ws{query}", {**upgrade, **(headers or {})})[0]

    def stop(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    repo = make_repo(tmp_path_factory.mktemp("web"), init="cli")
    toml = repo.root / "board.toml"
    toml.write_text(toml.read_text().replace("max_sessions = 4", "max_sessions = 1"))
    store = repo.store()
    try:
        store.create(CardDraft(title="first card", spec="s", lane="ready", priority=0), "c")
        store.create(CardDraft(title=HOSTILE, spec="s", lane="ready", priority=3), "c")
    finally:
        store.close()
    server = Served(repo, _free_port())
    try:
        yield server
    finally:
        server.stop()
        assert server.apps() == [], "the server left app processes behind"


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
        _unavailable(f"{CHROMIUM} or {CHROMEDRIVER} is missing (apt-get install chromium-driver)")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ModuleNotFoundError as exc:
        _unavailable(f"selenium is not installed ({exc.name})")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path_factory.mktemp('chromium')}")
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORD_FRAMES})
        yield driver
    finally:
        driver.quit()


def _screen(driver: Any, since: int = 0) -> str:
    """What the page's websocket received (from frame `since` on), escapes taken out."""
    frames = driver.execute_script("return window.boardFrames || [];")
    return ANSI.sub("", "".join(frames[since:]))


def _frames(driver: Any) -> int:
    return int(driver.execute_script("return (window.boardFrames || []).length;"))


def _shown(driver: Any, since: int, *texts: str, what: str) -> None:
    wait_for(lambda: all(t in _screen(driver, since) for t in texts), 30, what)


def _press(driver: Any, *keys: str) -> int:
    """Type into the page's terminal; the frame count before, to read what followed."""
    before = _frames(driver)
    terminal = driver.find_element("css selector", "textarea.xterm-helper-textarea")
    for key in keys:
        terminal.send_keys(key)
        time.sleep(0.15)
    return before


def test_without_the_token_or_with_a_wrong_one_403_and_no_app_process(served: Served) -> None:
    wrong = "x" * len(served.token)
    for path in ("/", f"/?token={wrong}", "/?token="):
        status, _, body = served.request(path)
        assert status == 403, f"{path}: {status}"
        assert "first card" not in body
    assert served.request("/", {"Cookie": f"board_web_{served.port}={wrong}"})[0] == 403
    assert served.websocket() == 403
    assert served.websocket(f"?token={wrong}") == 403
    assert served.websocket("", {"Cookie": f"board_web_{served.port}={wrong}"}) == 403
    # the right token from another site's page: the browser sends its Origin
    assert served.websocket(f"?token={served.token}", {"Origin": "http://evil.example"}) == 403
    assert served.apps() == [], "a refused request started an app process"
    # textual-serve's own JS stays open: it carries no data
    assert served.request("/static/js/textual.js")[0] == 200
    # the page with the token sets the cookie its websocket is let in with
    status, headers, _ = served.request(f"/?token={served.token}")
    assert status == 200
    cookie = headers["Set-Cookie"]
    assert cookie.startswith(f"board_web_{served.port}={served.token};")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie


def test_the_browser_drives_the_board_and_closing_it_ends_its_app(
    served: Served, browser: Any, tmp_path: Path
) -> None:
    browser.get(served.url)
    _shown(browser, 0, "backlog", "ready", "first card", what="the lanes and a card")
    # a coder's markup and escapes arrive as text, through the same rendering as a terminal
    screen = _screen(browser)
    assert "[bold]web literal[/bold]" in screen
    raw = "".join(browser.execute_script("return window.boardFrames;"))
    assert "\x1b]0;pwned" not in raw, "an OSC escape from a title reached the browser"
    apps = wait_for(served.apps, 10, "the session's app process")
    assert len(apps) == 1

    since = _press(browser, "\ue007")  # enter: the card opens
    _shown(browser, since, "timeline", what="the card screen after enter")
    since = _press(browser, "\ue00c")  # escape: back to the board
    _shown(browser, since, "backlog", what="the board after escape")

    since = _press(browser, "H")
    _shown(browser, since, "Hold", what="the hold dialog")
    _press(browser, *"away tonight", "\ue007")
    store = served.repo.store()
    try:
        held = wait_for(lambda: store.get("c-1").blocked, 20, "c-1 held in the store")
    finally:
        store.close()
    assert (held.cls, held.reason) == ("held", "away tonight")

    shot = tmp_path / "board-web.png"
    browser.save_screenshot(str(shot))
    print(f"the board in the browser: {shot}")
    assert shot.stat().st_size > 1000

    # the cap: one session is open, [web] max_sessions = 1: the next is refused, and said
    assert served.websocket(f"?token={served.token}") == 503
    assert served.apps() == apps, "a refused session started an app process"
    wait_for(lambda: "a session was refused" in served.err.read_text(), 10, "the refusal line")

    browser.get("about:blank")  # the page goes: its app ends, no process left behind
    wait_for(lambda: not served.apps(), 8, "the app to end after its page closed")
    # Ended is not yet reaped: the server's wait() may lag its exit by a moment, during which
    # the pid is a zombie that `apps()` leaves out. Reaped within the grace is what counts.
    wait_for(
        lambda: all(not Path(f"/proc/{pid}").exists() for pid in apps),
        8,
        "the server to reap the app it ended",
    )


def test_a_port_in_use_is_refused_in_one_line(served: Served) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "board.cli", "web", "--port", str(served.port)],
        cwd=served.repo.root,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        env={**os.environ, **GIT_ENV},
    )
    assert res.returncode != 0
    assert res.stderr.splitlines() == [
        f"board: web: 127.0.0.1:{served.port} is in use (another board web?); --port picks another"
    ]


def test_another_host_warns_and_a_bad_token_or_setting_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, init="cli")
    env = {**os.environ, **GIT_ENV}
    env.pop("BOARD_WEB_TOKEN", None)

    def web(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "board.cli", "web", *args],
            cwd=repo.root,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
            env={**env, **extra},
        )

    # 192.0.2.1 (TEST-NET-1) is no address of this machine: the warning, then a clear refusal
    res = web("--host", "192.0.2.1", "--port", str(_free_port()))
    lines = res.stderr.splitlines()
    assert res.returncode != 0 and len(lines) == 2, res.stderr
    assert lines[0].startswith("board web: warning: listening on 192.0.2.1, not loopback")
    assert lines[1].startswith("board: web: cannot listen on 192.0.2.1:")

    res = web("--port", str(_free_port()), BOARD_WEB_TOKEN="short")
    assert res.returncode != 0 and res.stdout == ""
    assert res.stderr.splitlines() == [
        "board: BOARD_WEB_TOKEN must be 16 to 256 characters of A-Z a-z 0-9 _ - "
        "(got 5 characters); unset it for a random token"
    ]

    toml = repo.root / "board.toml"
    toml.write_text(toml.read_text().replace("max_sessions = 4", "max_sessions = 0"))
    res = web("--port", str(_free_port()))
    assert res.returncode != 0 and res.stdout == ""
    assert len(res.stderr.splitlines()) == 1 and "max_sessions" in res.stderr, res.stderr
    assert "must be from 1 to 64, got 0" in res.stderr


def test_a_public_url_is_the_address_printed_and_the_page_s_websocket(tmp_path: Path) -> None:
    """Behind a tunnel or a proxy, or reached by another machine's name for this one, the
    page must open its websocket where the browser is, not at HOST:PORT: `--public-url`
    is printed and put in the page, and a websocket from a page of that origin passes the
    same-site check. Listening on every address without it is refused (the page would
    point at 0.0.0.0), and so is a public URL that is more than scheme, name and port."""
    from aiohttp.test_utils import make_mocked_request
    from board.tui.web import BoardServer

    repo = make_repo(tmp_path, init="cli")
    env = {**os.environ, **GIT_ENV}
    env.pop("BOARD_WEB_TOKEN", None)
    port = _free_port()
    public = "http://board.example:9999"
    process = subprocess.Popen(
        [sys.executable, "-m", "board.cli", "web", "--port", str(port), "--public-url", public],
        cwd=repo.root,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        match = re.fullmatch(r"board web: open http://board\.example:9999/\?token=(\S+) .*", line)
        assert match, line
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        conn.request("GET", f"/?token={match[1]}")
        page = conn.getresponse().read().decode()
        conn.close()
        assert 'data-session-websocket-url="ws://board.example:9999/ws"' in page
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=15)

    server = BoardServer(
        repo.root, host="127.0.0.1", port=port, token="t" * 20, max_sessions=1, public_url=public
    )
    origins = {
        public: True,
        f"http://127.0.0.1:{port}": True,
        "http://evil.example": False,
        "http://board.example:1": False,
    }
    for origin, ok in origins.items():
        request = make_mocked_request(
            "GET", "/ws", headers={"Origin": origin, "Host": f"127.0.0.1:{port}"}
        )
        assert server.same_origin(request) is ok, origin

    for args, want in (
        (("--host", "0.0.0.0"), "listens on every address"),
        (("--public-url", "http://x.example/board"), "--public-url must be http://NAME[:PORT]"),
        (("--public-url", "ftp://x.example"), "--public-url must be http://NAME[:PORT]"),
        (("--public-url", "http://x.example:99999"), "--public-url has a bad port"),
    ):
        res = subprocess.run(
            [sys.executable, "-m", "board.cli", "web", "--port", str(_free_port()), *args],
            cwd=repo.root, capture_output=True, text=True, stdin=subprocess.DEVNULL,
            timeout=60, env=env,
        )  # fmt: skip
        assert res.returncode != 0 and res.stdout == "", res
        assert len(res.stderr.splitlines()) == 1 and want in res.stderr, res.stderr


def test_the_url_is_printed_only_once_the_port_listens(tmp_path: Path) -> None:
    """aiohttp runs `on_startup` before its socket listens: a URL printed there could be
    opened (by a script reading it, as the tests do) before anything accepts it, and be
    refused. The line waits for the port; here a listener comes up 0.4 s later."""
    import asyncio

    from aiohttp import web as aioweb
    from board.tui.web import BoardServer

    port = _free_port()
    said: list[tuple[float, str]] = []
    server = BoardServer(
        tmp_path, host="127.0.0.1", port=port, token="t" * 20, max_sessions=1,
        print_line=lambda line: said.append((time.monotonic(), line)),
    )  # fmt: skip

    async def scenario() -> float:
        await server.on_startup(aioweb.Application())
        await asyncio.sleep(0.4)
        assert said == [], "the URL was printed before anything listened"
        listener = await asyncio.start_server(lambda r, w: w.close(), "127.0.0.1", port)
        up = time.monotonic()
        async with listener:
            assert server.announcing is not None
            await asyncio.wait_for(server.announcing, 10)
        return up

    up = asyncio.run(scenario())
    assert len(said) == 1 and said[0][0] >= up, said
    assert said[0][1].startswith(f"board web: open http://127.0.0.1:{port}/?token=")
