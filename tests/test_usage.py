"""What a drive's coder spent, read from the agent's own output, and the drive log kept text.

The agents are the STAND-INS under tests/standins/ (claude, codex, gemini, aider: links to
agent_cli.py), run as real processes; each prints its real CLI's format (the sources are
named in agent_cli.py and beside the presets in docs/agents.md). The numbers they print
are set here through STANDIN_* variables, so each expected sum below is what they printed,
read by that format's rules (core/usage.py): Claude's cache writes count as input, Codex's
and Gemini's input holds the cached tokens (input here is the rest), aider's cost is the
last session figure.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from board.core import config, presets, proc, usage
from board.core.errors import ConfigError
from board.core.logs import LogWriter
from board.core.model import MOST_TOKENS, MOST_USD, Usage
from board.core.store import SQLiteStore

from tests.support.boards import make_board
from tests.support.loop import add_card, drive_one, write_config
from tests.support.paths import STANDINS, script
from tests.support.repos import make_repo, run_cli

SPEND = {
    "STANDIN_IN": "2100",
    "STANDIN_OUT": "250",
    "STANDIN_CACHED": "300",
    "STANDIN_CACHE_WRITE": "100",
    "STANDIN_COST": "0.5",
    "STANDIN_TURNS": "3",
}
PROMPT = "Read the task in brief.md and do it"


def _standin(tmp_path: Path, name: str, *args: str, mode: str = "ok") -> str:
    """Run the stand-in `name` as a real child; its whole output."""
    env = {**os.environ, **SPEND, "STANDIN_MODE": mode}
    env.pop("STANDIN_DIR", None)
    env.pop("STANDIN_FLAGS_DIR", None)
    res = proc.run([str(STANDINS / name), *args], cwd=tmp_path, timeout=60, env=env)
    return res.stdout + res.stderr


def _argv(name: str) -> list[str]:
    """The preset's own argv (its program's flags), the prompt filled in."""
    return [a.replace("{brief}", "brief.md") for a in presets.PRESETS[name].argv[1:]]


# what each format, as printed with SPEND, reads as (ok and a failed turn spend alike)
EXPECTED = {
    # result: input 2100 + 100 cache writes, cache reads 300, its own cost and turns
    "claude": Usage(2200, 250, 300, 0.5, "claude-sonnet-4-5-20250929", 3),
    # three turn.completed, each 2100 in (300 of them cached) and 250 out; no cost, no model
    "codex": Usage(3 * 1800, 3 * 250, 3 * 300, None, "", 3),
    # stream-json stats.models: prompt 2100 (300 cached), 250 out
    "gemini": Usage(1800, 250, 300, None, "gemini-2.5-pro", None),
    # three `Tokens: 2.1k sent, 300 cache hit, 250 received. Cost: $0.50 message, $… session.`
    "aider": Usage(3 * 2100, 3 * 250, 3 * 300, 1.5, "anthropic/claude-sonnet-4-20250514", 3),
}


@pytest.mark.parametrize("mode", ["ok", "fail"])
@pytest.mark.parametrize("name", list(EXPECTED))
def test_each_reader_sums_what_its_stand_in_printed(tmp_path: Path, name: str, mode: str) -> None:
    out = _standin(tmp_path, name, *_argv(name), mode=mode)
    raw = tmp_path / "1.jsonl"
    raw.write_text(out)
    if name == "aider":  # aider's usage is read from the drive log: stamps, board's own lines
        raw = tmp_path / "1.log"
        with LogWriter(raw) as log:
            log.write_line("board: coder (tier aider): Tokens: 9k sent, 9 received.")
            for line in out.splitlines():
                log.write_line(line)
    expected = EXPECTED[name]
    if name == "codex" and mode == "fail":  # its last turn failed: two completed turns
        expected = Usage(2 * 1800, 2 * 250, 2 * 300, None, "", 2)
    assert usage.of_drive(presets.PRESETS[name].usage, raw) == expected, out[-2000:]


def test_gemini_json_output_is_read_from_stats_models_tokens(tmp_path: Path) -> None:
    """`--output-format json`: one object printed over many lines, thoughts count as output."""
    out = _standin(tmp_path, "gemini", "-p", PROMPT, "--output-format", "json")
    assert out.startswith("{\n"), out[:200]
    meter = usage.meter("gemini")
    assert meter is not None
    text = usage.read_lines(meter, ((x, len(x)) for x in out.splitlines()))
    assert text == ["I wrote work/gemini.txt.", "The task is done."], text
    assert meter.usage() == Usage(1800, 250 + 30, 300, None, "gemini-2.5-pro", 2)


def test_a_rate_limited_run_that_completed_no_turn_spent_nothing_said(tmp_path: Path) -> None:
    out = _standin(tmp_path, "codex", *_argv("codex"), mode="ratelimit")
    (tmp_path / "1.jsonl").write_text(out)
    assert usage.of_drive("codex", tmp_path / "1.jsonl") is None
    assert usage.of_drive("none", tmp_path / "1.jsonl") is None
    assert usage.of_drive("codex", tmp_path / "missing.jsonl") is None


# prices -------------------------------------------------------------------------------------


def test_tokens_without_a_cost_are_priced_only_by_the_operators_price(tmp_path: Path) -> None:
    out = _standin(tmp_path, "codex", *_argv("codex"), "-m", "gpt-5-codex")
    raw = tmp_path / "1.jsonl"
    raw.write_text(out)
    price = usage.Price(input=1.25, output=10.0, cached_input=0.125)
    # Codex names no model: the one its argv asks for prices it
    got = usage.of_drive("codex", raw, {"gpt-5-codex": price}, model="gpt-5-codex")
    assert got is not None and got.model == "gpt-5-codex"
    assert got.cost_usd == round((5400 * 1.25 + 750 * 10.0 + 900 * 0.125) / 1e6, 6)
    assert usage.model_in_argv(["exec", "-m", "gpt-5-codex", "go"]) == "gpt-5-codex"
    assert usage.model_in_argv(["--model=o3"]) == "o3" and usage.model_in_argv(["-p", "x"]) == ""
    # no price for its model, or no model at all: tokens, and no cost (never a guess)
    assert usage.of_drive("codex", raw, {"gpt-4o": price}, model="gpt-5-codex").cost_usd is None
    assert usage.of_drive("codex", raw, {"gpt-5-codex": price}).cost_usd is None


def test_the_agents_own_cost_wins_and_half_known_tokens_are_not_priced() -> None:
    price = usage.Price(input=3.0, output=15.0, cached_input=0.3)
    assert usage.cost_of(Usage(1_000_000, 100_000, 500_000), price) == 3.0 + 1.5 + 0.15
    assert usage.cost_of(Usage(1000, None, 0), price) is None
    assert usage.cost_of(Usage(None, 1000, 0), price) is None
    meter = usage.meter("claude")
    assert meter is not None
    line = {"type": "result", "total_cost_usd": 0.25, "num_turns": 1, "usage": {}}
    meter.feed(json.dumps(line | {"usage": {"input_tokens": 10, "output_tokens": 5}}))
    meter.model = "m"
    assert meter.usage({"m": price}).cost_usd == 0.25, "the agent's own cost was replaced"


def test_a_gemini_run_on_two_models_is_priced_only_when_both_have_a_price() -> None:
    meter = usage.meter("gemini")
    assert meter is not None
    stats = {
        "models": {
            "gemini-2.5-pro": {"input_tokens": 1000, "output_tokens": 100, "cached": 0},
            "gemini-2.5-flash": {"input_tokens": 3000, "output_tokens": 50, "cached": 1000},
        }
    }
    meter.feed(json.dumps({"type": "result", "status": "success", "stats": stats}))
    pro = usage.Price(input=1.25, output=10.0, cached_input=0.31)
    flash = usage.Price(input=0.3, output=2.5, cached_input=0.075)
    assert meter.usage({"gemini-2.5-pro": pro}).cost_usd is None
    both = meter.usage({"gemini-2.5-pro": pro, "gemini-2.5-flash": flash})
    assert both.input_tokens == 1000 + 2000 and both.output_tokens == 150
    want = (1000 * 1.25 + 100 * 10.0) / 1e6 + (2000 * 0.3 + 50 * 2.5 + 1000 * 0.075) / 1e6
    assert both.cost_usd == round(want, 6)
    assert both.model == "gemini-2.5-flash", "the model that used the most tokens is named"


# board.toml -----------------------------------------------------------------------------------


def _parse(text: str) -> config.Config:
    return config.parse(Path("/r/board.toml"), text, Path("/r"))


TIER = '[coder]\nladder = ["a"]\n[coder.tiers.a]\nargv = ["x"]\n'


def test_prices_and_a_tiers_reader_are_read_from_board_toml() -> None:
    cfg = _parse(
        TIER + 'usage = "codex"\n[usage.prices."gpt-5.1-codex"]\n'
        "input = 1.25\noutput = 10\ncached_input = 0.125\n"
    )
    assert cfg.coder.tiers["a"].usage == "codex"
    assert cfg.usage.prices == {"gpt-5.1-codex": usage.Price(1.25, 10.0, 0.125)}
    plain = _parse(TIER)
    assert plain.coder.tiers["a"].usage == "none" and plain.usage.prices == {}


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (TIER + 'usage = "claud"\n', 5, "coder.tiers.a.usage: must be one of none, claude"),
        (TIER + 'usage = 1\n', 5, "coder.tiers.a.usage: expected a string"),
        ('[usage.prices.m]\ninput = -1\noutput = 1\ncached_input = 0\n', 2,
         "usage.prices.m.input: must be a finite number, not negative, got -1"),
        ('[usage.prices.m]\ninput = 1\noutput = "2"\ncached_input = 0\n', 3,
         "usage.prices.m.output: expected a number of dollars"),
        ('[usage.prices.m]\ninput = 1\noutput = 2\n', 1,
         "usage.prices.m: cached_input is missing"),
        ('[usage.prices.m]\ninput = 1\noutput = 2\ncached_input = 0\nper = 1\n', 5,
         "usage.prices.m.per: unknown key"),
        ('[usage]\nprices = 3\n', 2, "usage.prices: expected a table of models"),
        ('[usage]\ncurrency = "eur"\n', 2, "usage.currency: unknown key"),
    ],
)  # fmt: skip
def test_a_bad_reader_or_price_is_refused_naming_file_line_and_key(
    tmp_path: Path, text: str, line: int, words: str
) -> None:
    path = tmp_path / "board.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as exc:
        config.load(tmp_path)
    assert f"{path}:{line}: {words}" in str(exc.value), str(exc.value)
    assert path.read_text() == text, "a refused board.toml was changed"


# the drive log's text ---------------------------------------------------------------------------


LOG_TEXT = {
    "claude": [
        "claude: session started, model claude-sonnet-4-5-20250929",
        "I'll write the file the task asks for.",
        "→ Write {cwd}/work/claude.txt",
        "Done: work/claude.txt is written.",
        "Nothing else changed.",
        "result: Done: work/claude.txt is written.",
        "Nothing else changed.",
    ],
    "codex": [
        "$ bash -lc 'ls'",
        "Looked at the tree.",
        "$ bash -lc 'ls'",
        "Looked at the tree.",
        "$ bash -lc 'ls'",
        "→ files: add {cwd}/work/codex.txt",
        "Edited work/codex.txt.",
    ],
    "gemini": [
        "gemini: session started, model gemini-2.5-pro",
        "I'll write the file.",
        "First, the tool:",
        "→ write_file work/gemini.txt",
        "Done: work/gemini.txt is written.",
        "result: success",
    ],
}


@pytest.mark.parametrize("name", list(LOG_TEXT))
def test_each_json_format_reads_as_the_agents_messages_however_the_reads_cut_it(
    tmp_path: Path, name: str
) -> None:
    out = _standin(tmp_path, name, *_argv(name)).encode()
    want = [x.format(cwd=tmp_path) for x in LOG_TEXT[name]]
    for size in (len(out), 7, 1):  # whole, and cut mid-line (mid-character too) by the reads
        meter = usage.meter(name)
        assert meter is not None
        lines = usage.Lines()
        pairs = [p for i in range(0, len(out), size) for p in lines.feed(out[i : i + size])]
        text = usage.read_lines(meter, [*pairs, *lines.flush()])
        assert text == want, f"read {size} bytes at a time"


def test_a_line_that_is_not_json_passes_and_a_huge_one_is_cut() -> None:
    meter = usage.meter("claude")
    assert meter is not None
    assert meter.feed("npm WARN deprecated glob@7") == ["npm WARN deprecated glob@7"]
    assert meter.feed("{not json at all") == ["{not json at all"]
    big = json.dumps({"type": "user", "message": {"content": "x" * (usage.EVENT_CAP + 10)}})
    lines = usage.Lines()
    pairs = [*lines.feed(big.encode() + b"\n"), *lines.flush()]
    assert len(pairs) == 1 and pairs[0][1] == len(big)
    (note,) = meter.feed(*pairs[0])
    assert note.startswith("[an event (user) of ") and len(note) < 200, note[:300]
    long_text = "y" * (usage.TEXT_CAP + 5)
    (cut,) = meter.feed(long_text)
    assert cut.startswith("y" * 100) and cut.endswith(f"[line cut: {len(long_text):,} bytes]")


# a real drive -------------------------------------------------------------------------------


@pytest.fixture
def on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The stand-ins first on PATH, under the real programs' names."""
    monkeypatch.setenv("PATH", f"{STANDINS}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("STANDIN_DIR", raising=False)
    monkeypatch.delenv("STANDIN_FLAGS_DIR", raising=False)
    for key, value in SPEND.items():
        monkeypatch.setenv(key, value)


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_a_run_of_the_presets_argv_logs_text_and_keeps_the_json_beside_it(
    tmp_path: Path, on_path: None, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("STANDIN_MODE", "ok")
    repo = make_repo(tmp_path, init="").root
    assert run_cli(repo, "init", "--coder", name).returncode == 0
    cfg = config.load(repo)
    assert cfg.coder.tiers[name].usage == presets.PRESETS[name].usage
    res = run_cli(
        repo, "card", "add", "a task", "--spec", "do it", "--surface", "work/**", "--ready"
    )
    assert res.returncode == 0, res.stderr
    res = run_cli(repo, "run", "--until-idle", "--quiet", timeout=180)
    assert res.returncode == 0, res.stderr
    shown = json.loads(run_cli(repo, "card", "show", "c-1", "--json").stdout)
    assert shown["lane"] == "done", shown
    log = cfg.logs_dir / "c-1" / "1.log"
    text = run_cli(repo, "logs", "c-1").stdout
    assert "board: coder ended: exit 0" in text
    assert '{"type"' not in text, f"the drive log shows JSON:\n{text}"
    said = f"board: usage: {usage.said(EXPECTED[name])}"
    assert said in text, f"{said!r} not in:\n{text}"
    raw = usage.raw_path(log)
    if name == "aider":  # text: no raw copy, its own lines in the log
        assert not raw.exists()
        assert "Applied edit to work/aider.txt" in text
        return
    for line in LOG_TEXT[name]:
        assert line.split("{")[0] in text
    events = [json.loads(x) for x in raw.read_text().splitlines()]
    assert events and all("type" in e for e in events), "the .jsonl is not the raw stream"
    assert usage.of_drive(name, raw) == EXPECTED[name]


@pytest.mark.parametrize("name", ["claude", "codex", "gemini"])
def test_a_json_rate_limit_is_still_classified_rate_limit_on_the_text(
    tmp_path: Path, on_path: None, monkeypatch: pytest.MonkeyPatch, name: str
) -> None:
    monkeypatch.setenv("STANDIN_MODE", "ratelimit")
    repo = make_repo(tmp_path, init="").root
    assert run_cli(repo, "init", "--coder", name).returncode == 0
    cfg = config.load(repo)
    store = SQLiteStore(cfg.db_path)
    card = add_card(store, "a task", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert (end.outcome, end.cls) == ("backed-off", "rate-limit"), end
    tails = [e.text for e in store.timeline(card.id) if "log tail" in e.text]
    assert tails and "usage limit" in tails[-1].lower() or "capacity" in tails[-1], tails
    assert '{"type"' not in tails[-1], f"the log tail the card got is JSON:\n{tails[-1]}"
    store.close()


def test_a_limit_named_in_a_file_the_agent_read_is_not_its_rate_limit(
    tmp_path: Path, on_path: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The raw stream holds every tool result (a file read, a test's output); the failure
    rules read what the agent said. A failed turn whose tool output mentions HTTP 429 is
    the card's failure: it climbs, it is not backed off as a rate limit."""
    monkeypatch.setenv("STANDIN_MODE", "fail")
    monkeypatch.setenv("STANDIN_TOOL_OUTPUT", "test_api.py: assert status == 429 too many requests")
    repo = make_repo(tmp_path, init="").root
    assert run_cli(repo, "init", "--coder", "claude").returncode == 0
    cfg = config.load(repo)
    store = SQLiteStore(cfg.db_path)
    end = drive_one(cfg, store, add_card(store, "a task", surface=["work/**"]))
    raw = (cfg.logs_dir / "c-1" / "1.jsonl").read_text()
    assert "429 too many requests" in raw, "the stand-in did not print the tool output"
    assert (end.outcome, end.cls) == ("blocked", "terminal"), end
    store.close()


def test_the_model_in_an_argv_is_not_a_python_interpreters_module() -> None:
    """`-m`/`--model` names the model a price is looked up by; a Python interpreter's own
    `-m` names the module it runs (the demo's coder, an agent run as a module)."""
    assert usage.model_in_argv(["codex", "exec", "-m", "gpt-5", "go"]) == "gpt-5"
    assert usage.model_in_argv(["aider", "--model=sonnet"]) == "sonnet"
    assert usage.model_in_argv(["/usr/bin/python3", "-m", "board.demo.coder", "--tier", "q"]) == ""
    assert usage.model_in_argv(["python3.11", "-m", "aider", "--model", "opus"]) == "opus"


# hostile output -------------------------------------------------------------------------------

# lines a coder may print that look like what its reader reads and are not: each must read
# as unknown (never a crash, never a figure no column or sum can hold), the model one line
HOSTILE = {
    "aider": [
        "Model: evil\x1b[31m with whole edit format",
        "Tokens: 1.2.3k sent, 5 received. Cost: $1.2.3 message, $1..2 session.",
        "Tokens: " + "9" * 400 + " sent, 5 received.",
        "Tokens: "
        + "9" * 300
        + "M sent, 5 received. Cost: $1e9 message, $"
        + "9" * 400
        + " session.",
    ],  # fmt: skip
    "claude": [
        {"type": "system", "subtype": "init", "model": "m\nboard: forged [red]" + "x" * 500},
        {
            "type": "user",
            "message": {
                "content": [
                    {
                        "type": "tool_result",
                        "is_error": True,
                        "content": [{"text": 5}, {"text": None}],
                    }
                ]
            },
        },
        {
            "type": "result",
            "modelUsage": {"x": 5, "y": [1]},
            "usage": {"input_tokens": 10**30, "output_tokens": 7},
            "total_cost_usd": 1e308,
            "num_turns": 2**70,
        },
    ],  # fmt: skip
    "codex": [
        {"type": "turn.completed", "usage": {"input_tokens": 10**12, "output_tokens": 1}},
        {"type": "turn.completed", "usage": {"input_tokens": 10**12, "output_tokens": 1}},
    ],
    "gemini": [
        {
            "type": "result",
            "stats": {
                "models": {
                    "g\x1b]0;t\x07": {"input_tokens": 10**40, "output_tokens": 5, "cached": -1}
                }
            },
        },
    ],  # fmt: skip
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_output_hostile_to_a_reader_reads_as_unknown_and_never_raises(name: str) -> None:
    meter = usage.meter(name)
    assert meter is not None
    for line in HOSTILE[name]:
        meter.feed(line if isinstance(line, str) else json.dumps(line))
    meter.end()
    price = usage.Price(input=1e6, output=1e6, cached_input=1e6)
    got = meter.usage({m: price for m in ("", "x", "y")}, "x")
    assert got is not None
    for figure in (got.input_tokens, got.output_tokens, got.cached_tokens, got.turns):
        assert figure is None or 0 <= figure <= MOST_TOKENS, got
    assert got.cost_usd is None or 0 <= got.cost_usd <= MOST_USD, got
    assert "\n" not in got.model and len(got.model) <= usage.MODEL_CAP, got.model
    if name == "aider":
        assert (got.input_tokens, got.cost_usd) == (None, None), got
    if name == "claude":  # the output count is the one figure it gave
        assert (got.input_tokens, got.output_tokens, got.cost_usd, got.turns) == (
            None,
            7,
            None,
            None,
        )
        assert got.model.startswith("m board: forged [red]xxx"), got.model


@pytest.mark.parametrize("reader", ["aider", "claude"])
def test_a_coder_whose_output_is_hostile_to_its_reader_is_logged_to_its_end(
    tmp_path: Path, reader: str
) -> None:
    """The reader runs on the thread that drains the coder's pipe: had it raised on one
    line, the rest of the output was lost to the log and the coder, 200 KB later, blocked
    on the full pipe until its timeout (a timeout counted against the card)."""
    cfg, store = make_board(tmp_path, origin=True)
    coder = [sys.executable, script("coder_hostile_usage.py"), "{worktree}", "{card}", reader]
    cfg = write_config(cfg.root, tiers={"hostile": coder}, usage={"hostile": reader},
                       coder={"timeout_s": 15})  # fmt: skip
    card = add_card(store, "a task", surface=["work/**"])
    end = drive_one(cfg, store, card)
    assert end.outcome == "done", end
    text = (cfg.logs_dir / card.id / "1.log").read_text()
    assert "the last line of the coder" in text and "more output 01999" in text
    assert "board: coder ended: exit 0" in text, text[-2000:]
    (row,) = store.list_drives(card.id)
    assert row.input_tokens is None, row  # 1.2.3k, 999…: no count; aider's $0.01 is its cost
    assert "\n" not in row.model and "\x1b" not in run_cli(cfg.root, "card", "show", card.id).stdout
    store.close()
