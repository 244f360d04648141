# ruff: noqa: E501 (each message is kept whole, as printed)
"""The failure rules over real messages: each row is what an agent CLI (or the API under it)
printed, copied from the public report or source it was seen in, and the class the default
table must give it. A row the table gets wrong is a card climbing over a rate limit at 2 a.m.
(or a real failure retried forever), so every pattern change runs against all of them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from board.core import config, failures
from board.core.errors import ConfigError
from board.core.records import replace

CC = "https://github.com/anthropics/claude-code/issues/"
CX = "https://github.com/openai/codex/issues/"
AI = "https://github.com/Aider-AI/aider/issues/"
GM = "https://github.com/google-gemini/gemini-cli/issues/"

# (message as printed, class, where it was seen)
REAL = [
    # rate limits, quotas, usage limits, overload
    ("Claude AI usage limit reached|1755615600", "rate-limit", CC + "6119"),
    ("Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).", "rate-limit", CC + "6119"),
    ("5-hour limit reached ∙ resets 5am", "rate-limit", CC + "6392"),
    ("⎿  You've hit your limit · resets 3:30am (Asia/Calcutta)", "rate-limit", CC + "24511"),
    ("You've hit your session limit · resets 12:50am (America/Los_Angeles)", "rate-limit", CC + "74079"),
    ('Error: 429 {"type":"error","error":{"type":"rate_limit_error","message":"This request would exceed your account\'s rate limit. Please try again later."},"request_id":"req_011CSHCYzBstm5tDEsXB7mev"}', "rate-limit", CC + "6119"),
    ("API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited", "rate-limit", CC + "80342"),
    ('API Error: 529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded."},"request_id":"req_011CZTEFvft13DajMTp9pp64"}', "rate-limit", CC + "39745"),
    ("529 Overloaded · Retrying in 21s · attempt 7/10", "rate-limit", CC + "78051"),
    ("You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) or try again in 2 days 17 hours 14 minutes.", "rate-limit", CX + "3124"),
    ("⚠️ stream error: stream disconnected before completion: Rate limit is exceeded. Try again in 4 seconds.; retrying 1/5 in 209ms…", "rate-limit", CX + "3764"),
    ("Stream disconnected before completion: Rate limit reached for organization org-BOvpEHVcDPTe8h4lZnwMO5Ly on tokens per min (TPM): Limit 250000, Used 250000, Requested 58487. Please try again in 14.036s. Visit https://platform.openai.com/account/rate-limits to learn more.", "rate-limit", CX + "10055"),
    ("exceeded retry limit, last status: 429 Too Many Requests, request id: 9bd5b5e1ea09c7b3-DUS", "rate-limit", CX + "9148"),
    ('litellm.RateLimitError: AnthropicException - {"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit', "rate-limit", AI + "861"),
    ("The API provider has rate limited you. Try again later or check your quotas.", "rate-limit", "https://github.com/Aider-AI/aider/blob/main/aider/exceptions.py"),
    ("[API Error: {\"error\":{\"message\":\"{\\n  \\\"error\\\": {\\n    \\\"code\\\": 429,\\n    \\\"message\\\": \\\"Resource has been exhausted (e.g. check quota).\\\",", "rate-limit", GM + "1906"),
    ("Attempt 1 failed: You have exhausted your capacity on this model. Your quota will reset after 5s.. Retrying after 6173ms...", "rate-limit", GM + "22107"),
    ("[Backend Error] You have exhausted your capacity on this model. Your quota will reset after 4h28m20s. (HTTP 429)", "rate-limit", GM + "25103"),
    ("✕ [API Error: You have exhausted your daily quota on this model.]", "rate-limit", GM + "15576"),
    # transient: connection, timeouts, DNS, 5xx, dropped streams
    ("API Error (Connection error.) · Retrying in 1 seconds… (attempt 1/10)", "transient", CC + "6596"),
    ("⎿  API Error: Request timed out.", "transient", CC + "2027"),
    ("API Error: Unable to connect to API (ECONNRESET)", "transient", CC + "66758"),
    ("Unable to connect to API (ConnectionRefused) · Retrying in 11s · attempt 8/10", "transient", CC + "71188"),
    ("⎿  API Error (503 upstream connect error or disconnect/reset before headers. reset reason: connection timeout) · Retrying in 5 seconds… (attempt 4/10)", "transient", CC + "7403"),
    ("⎿  API Error: 503 no healthy upstream", "transient", CC + "2024"),
    ("stream disconnected before completion: No connection could be made because the target machine actively refused it. (os error 10061)", "transient", CX + "40435"),
    ("litellm.APIError: APIError: OpenAIException - Connection error.", "transient", AI + "2812"),
    ("✕ [API Error: exception TypeError: fetch failed sending request]", "transient", GM + "8092"),
    ("✖  Error when talking to Gemini API Full report available at: /tmp/gemini-client-error-Turn.run-sendMessageStream-2026-03-10T19-50-46-399Z.json TypeError: fetch failed", "transient", GM + "21923"),
    # auth: a dead login
    ("⎿  Invalid API key · Please run /login", "auth", CC + "1665"),
    ("Missing API key · Run /login", "auth", CC + "6893"),
    ('Error: 401 {"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"},"request_id":"req_011CUBgWE2fdbDGiPKTUQTwy"}', "auth", CC + "9694"),
    ('API Error: 401 {"type":"error","error":{"type":"authentication_error","message":"OAuth token has expired. Please obtain a new token or refresh your existing token."}} · Please run /login', "auth", CC + "33230"),
    ("ERROR: exceeded retry limit, last status: 401 Unauthorized, request id: 9a4af5870a31a58e-WAW", "auth", CX + "7323"),
    ("■ Failed to refresh token: 401 Unauthorized: Your refresh token has already been used to generate a new access token. Please try signing in again.", "auth", CX + "6028"),
    ("Your access token could not be refreshed because your refresh token was already used. Please log out and sign in again.", "auth", CX + "9634"),
    ("The API provider is not able to authenticate you. Check your API key.", "auth", AI + "3802"),
    ("✕ [API Error: API key not valid. Please pass a valid API key. (Status: INVALID_ARGUMENT)]", "auth", GM + "4690"),
    ("Please set an Auth method in your /root/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY, GOOGLE_GENAI_USE_VERTEXAI, GOOGLE_GENAI_USE_GCA", "auth", GM + "28439"),
    ('"code": 403, "message": "The caller does not have permission", "status": "PERMISSION_DENIED"', "auth", GM + "25760"),
    # printed by the real programs here, with no login and no network (tests/test_agents_real.py)
    ("Not logged in · Please run /login", "auth", "claude 2.1.332"),
    ("No LLM model was specified and no API keys were provided.", "auth", "aider 0.86.2"),
    ("Please open this URL in your browser to connect Aider with OpenRouter:", "auth", "aider 0.86.2"),
    ("warning: Falling back from WebSockets to HTTPS transport. stream disconnected before completion: failed to lookup address information: Name does not resolve", "transient", "codex 0.171.0"),
    ("ERROR: Reconnecting... waiting for network", "transient", "codex 0.171.0"),
    # a coder that refuses its own command line: the argv in board.toml, not the card
    ("error: unexpected argument '--full-auto' found", "dispatch-infra", "codex 0.171.0 (clap)"),
    ("error: unknown option '--output-fromat'", "dispatch-infra", "claude (commander)"),
    ("Unknown arguments: approval-mod, approvalMod", "dispatch-infra", "gemini (yargs)"),
    ("aider: error: unrecognized arguments: --no-strem", "dispatch-infra", "aider (argparse)"),
]  # fmt: skip

# what a coder prints as it runs, and the class a `live` rule stops it with at once
LIVE = [
    ("Waiting up to 5 minutes for you to finish in the browser...", "auth"),
    ("No LLM model was specified and no API keys were provided.", "auth"),
    ("Not logged in · Please run /login", "auth"),
    ("Please set an Auth method in your /root/.gemini/settings.json or specify one of the following environment variables before running: GEMINI_API_KEY", "auth"),
    ("ERROR: Reconnecting... waiting for network", "transient"),
]  # fmt: skip
# what a working agent prints that must never stop it
NOT_LIVE = [
    "FAILED tests/test_login.py::test_redirect - AssertionError: user not logged in",
    "HTTP 401 Unauthorized returned by /api/me when the token is missing",
    "ERROR: Reconnecting... 2/5",
    "error: unexpected argument '--foo' found",
]


@pytest.mark.parametrize(("line", "cls"), LIVE)
def test_live_rules_stop_a_coder_that_waits_for_the_operator(line: str, cls: str) -> None:
    found = failures.classify_line(failures.DEFAULT_RULES, "coder", line)
    assert found is not None and found.cls == cls, found


@pytest.mark.parametrize("line", NOT_LIVE)
def test_no_live_rule_stops_a_coder_at_work(line: str) -> None:
    assert failures.classify_line(failures.DEFAULT_RULES, "coder", line) is None


def _line_plain(rules: tuple[failures.Rule, ...], step: str, line: str) -> failures.Rule | None:
    """classify_line with each live rule tried alone, in order: what the defaults' one
    pattern (core/liverules.py, a speed trick) must answer the same as."""
    was = failures.TOGETHER
    failures.TOGETHER = False
    try:
        found = failures.classify_line(rules, step, line)
    finally:
        failures.TOGETHER = was
    return found.rule if found is not None else None


def _all_live(rules: tuple[failures.Rule, ...]) -> tuple[failures.Rule, ...]:
    return tuple(replace(r, live=True, steps=("coder",)) for r in rules)


def test_the_live_rules_tried_together_answer_as_each_tried_alone() -> None:
    """Every message of this file, and a working agent's lines, through the live rules: the
    defaults' one pattern gives the rule (and so the class) the rules tried one by one give,
    first match first, with board.toml's own live rules before and among them."""
    lines = [m for m, _, _ in REAL] + [m for m, _ in LIVE] + NOT_LIVE + [
        "c-17: step 42 of the work, a line as long as a model's progress line",
        "", "x" * 5000 + " not logged in · please run /login",
        "Waiting for you to log in" + "!" * (failures.LINE_CHARS + 10),
    ]  # fmt: skip
    mine = failures.Rule(r"step \d+ of the work", "transient", ("coder",), live=True)
    never = failures.Rule(r"no line says this", "auth", ("coder",), live=True)
    tables = {
        "defaults": failures.DEFAULT_RULES,
        "board.toml's first": (mine, never, *failures.DEFAULT_RULES),
        "every default live": _all_live(failures.DEFAULT_RULES),
        "board.toml's among them": (
            *_all_live(failures.DEFAULT_RULES[:3]),
            mine,
            *_all_live(failures.DEFAULT_RULES[3:]),
        ),  # fmt: skip
    }
    hits = 0
    for name, rules in tables.items():
        for line in lines:
            want = _line_plain(rules, "coder", line)
            got = failures.classify_line(rules, "coder", line)
            assert (got.rule if got else None) == want, (name, line[:80])
            assert failures.classify_line(rules, "gate", line) is None
            hits += want is not None
    assert hits > len(REAL), "too few lines matched for the order to have been tried"


def test_a_usage_error_needs_the_usage_exit() -> None:
    """A usage error is the CLI's own refusal, with its usage status; printed by a tool the
    agent ran, in a run that exited 0, it is nobody's refusal of board.toml."""
    line = "error: unexpected argument '--full-auto' found"
    assert failures.classify(failures.DEFAULT_RULES, "coder", line, 2).cls == "dispatch-infra"
    assert failures.classify(failures.DEFAULT_RULES, "coder", line, 0) is None


# what a coder prints when the card itself failed: these must climb as before
THE_CARDS_OWN = [
    "FAILED tests/test_parse.py::test_round_trip - AssertionError: assert 3 == 4",
    "error[E0308]: mismatched types",
    "Wrote 503 lines to src/big_module.py; the build failed",
    "TypeError: Cannot read properties of undefined (reading 'limit')",
]


@pytest.mark.parametrize(
    ("message", "cls", "seen"), REAL, ids=[f"{c}-{i}" for i, (_, c, _) in enumerate(REAL)]
)
def test_the_default_rules_classify_real_messages(message: str, cls: str, seen: str) -> None:
    found = failures.classify(failures.DEFAULT_RULES, "coder", f"working…\n{message}\n", 1)
    assert found is not None, f"unclassified (seen at {seen}): {message}"
    assert found.cls == cls, f"{found.cls} instead of {cls} (seen at {seen}): {message}"
    assert message.strip()[:20] in found.line or found.line in message


@pytest.mark.parametrize("message", THE_CARDS_OWN)
def test_the_cards_own_failures_match_no_rule(message: str) -> None:
    assert failures.classify(failures.DEFAULT_RULES, "coder", message, 1) is None


def test_the_default_rules_leave_the_gate_alone() -> None:
    """Test output often says "connection refused" or "403" about the code under test."""
    for message, _, _ in REAL:
        assert failures.classify(failures.DEFAULT_RULES, "gate", message, 1) is None
    rule = failures.Rule("flaky network", "transient", steps=("gate",))
    assert failures.classify([rule], "gate", "E   flaky network here", 1) is not None


def test_a_rule_with_exit_codes_applies_only_to_those() -> None:
    rule = failures.Rule("boom", "transient", exit_codes=(75,))
    assert failures.classify([rule], "coder", "boom", 75) is not None
    assert failures.classify([rule], "coder", "boom", 1) is None


NOW = datetime(2025, 8, 19, 10, 0, tzinfo=UTC)
RESETS = [
    ("Please try again in 14.036s. Visit https://platform.openai.com/account/rate-limits", 14.036),
    ("Rate limit is exceeded. Try again in 4 seconds.", 4),
    ("try again in 2 days 17 hours 14 minutes.", 2 * 86400 + 17 * 3600 + 14 * 60),
    ("Your quota will reset after 8h44m7s.", 8 * 3600 + 44 * 60 + 7),
    ("Please retry in 39.844676573s", 39.844676573),
    ("HTTP/1.1 429 Too Many Requests\nRetry-After: 120", 120),
    ("Claude AI usage limit reached|1755615600", 5 * 3600),  # the epoch is 15:00Z
    ("Your limit will reset at 5pm (Europe/Warsaw).", 5 * 3600),  # 17:00 CEST = 15:00Z
    ("You've hit your limit · resets 3:30am (Asia/Calcutta)", 12 * 3600),  # 22:00Z
    ("5-hour limit reached ∙ resets 5am", 19 * 3600),  # no zone: UTC, tomorrow
    ("usage limit: try again at 2025-08-19T11:30:00Z", 90 * 60),
]


@pytest.mark.parametrize(("text", "seconds"), RESETS)
def test_a_reset_named_in_the_output_is_read(text: str, seconds: float) -> None:
    at = failures.reset_at(text, NOW)
    assert at is not None, text
    assert abs((at - NOW).total_seconds() - seconds) < 0.01, (text, at)


@pytest.mark.parametrize(
    "text",
    [
        "API Error (529 Overloaded) · Retrying in 4 seconds… (attempt 4/10)",  # the CLI's own
        "[2025-08-01T15:36:54] stream error: 429",  # a log line's stamp, in the past
        "Claude AI usage limit reached|1750708800",  # a reset already behind us
        "rate limited, try again later",
    ],
)
def test_no_reset_is_read_where_none_is_named(text: str) -> None:
    assert failures.reset_at(text, NOW) is None


def test_the_backoff_doubles_with_jitter_and_stops_at_the_cap() -> None:
    import random

    rule = failures.Rule("x", "transient", backoff_s=10)
    rng = random.Random(7)
    waits = [failures.backoff(rule, n, 3600, rng) for n in (1, 2, 3)]
    for n, wait in zip((1, 2, 3), waits, strict=True):
        assert 10 * 2 ** (n - 1) * 0.8 <= wait <= 10 * 2 ** (n - 1) * 1.2
    assert failures.backoff(rule, 30, 300, rng) == 300
    until = failures.wait_until(rule, "retry after 99999s", 1, NOW, 600)
    assert (until - NOW).total_seconds() == 600, "a named reset is capped too"


def _parse(tmp_path: Path, text: str) -> config.Config:
    path = tmp_path / "board.toml"
    path.write_text(text)
    return config.load(tmp_path)


def test_user_rules_come_before_the_defaults(tmp_path: Path) -> None:
    cfg = _parse(
        tmp_path,
        '[[failures.rules]]\npattern = "credit balance is too low"\nclass = "auth"\n'
        '[[failures.rules]]\npattern = "usage limit"\nclass = "transient"\nbackoff_s = 5\n'
        'max_attempts = 3\nsteps = ["coder", "gate"]\nexit_codes = [1, 2]\n',
    )
    assert cfg.failures.rules[2:] == failures.DEFAULT_RULES
    found = failures.classify(cfg.failures.rules, "coder", "Claude usage limit reached", 1)
    assert found is not None and found.cls == "transient" and found.rule.max_attempts == 3
    found = failures.classify(cfg.failures.rules, "coder", "Credit balance is too low", 1)
    assert found is not None and found.cls == "auth"


@pytest.mark.parametrize(
    ("body", "line", "says"),
    [
        ('pattern = "rate (limit"\nclass = "rate-limit"\n', 5, "not a valid regex"),
        ('pattern = "x"\nclass = "slow"\n', 6, "class must be one of rate-limit, transient, auth"),
        ('pattern = "x"\nclass = "auth"\nsteps = ["deploy"]\n', 7, "steps: must be a list of"),
        ('pattern = "x"\nclass = "auth"\nmax_attempts = 0\n', 7, "max_attempts"),
        ('pattern = "x"\nclass = "auth"\nbackoff_s = -1\n', 7, "backoff_s"),
        ('pattern = "x"\nclass = "auth"\nexit_code = [1]\n', 7, "unknown key"),
        ('class = "auth"\n', 4, "needs a pattern"),
    ],
)
def test_a_bad_rule_is_refused_naming_file_and_line(
    tmp_path: Path, body: str, line: int, says: str
) -> None:
    text = '[[failures.rules]]\npattern = "fine"\nclass = "auth"\n[[failures.rules]]\n' + body
    # the second rule's header is line 4, its keys lines 5, 6 and 7
    with pytest.raises(ConfigError) as err:
        _parse(tmp_path, text)
    msg = str(err.value)
    assert f"board.toml:{line}:" in msg and "failures.rules[2]" in msg and says in msg, msg
