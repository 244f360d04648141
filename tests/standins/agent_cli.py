#!/usr/bin/env python3
"""A STAND-IN for an agent CLI (claude, codex, aider, gemini), not the real program.

Installed under the real program's name on PATH (tests/standins/claude, codex, gemini and
aider are links to this file), because the real CLIs need accounts and a network this
machine does not have. It records how the board called it (argv, what stdin is, whether
the brief it was pointed at exists) to $STANDIN_DIR/calls.jsonl when that is set, then
answers as the real CLI does, in the output format its argv asks for:

- claude `-p --output-format stream-json --verbose` (or `json`): the system/init event,
  assistant messages, a tool call and its result, the final `result` event with
  total_cost_usd, usage and num_turns (Claude Code's headless docs, and the SDK message
  schema in its binary: tests/support/agents.py installs it);
- codex `exec --json`: thread.started, turn.started, item.completed (a command, a file
  change, the agent's message), turn.completed with usage, per turn; turn.failed and
  error events (codex docs/exec.md, codex-rs/exec/src/exec_events.rs);
- gemini `--output-format stream-json`: init, message deltas, tool_use, tool_result,
  result with stats.models; or `--output-format json`: one object printed indented, with
  response and stats.models.<model>.tokens (gemini-cli docs/cli/headless.md, and its
  bundle's JsonFormatter and StreamJsonFormatter);
- aider: its text, with `Tokens: … sent, … received. Cost: $… message, $… session.`
  after each message (aider/coders/base_coder.py).

STANDIN_MODE says what each call does, in order (the last repeats), e.g. `fail,ok`:
`ok` edits work/<name>.txt and succeeds; `fail` is a failed turn (it spent tokens and
changed nothing; aider, which exits 0 on failed calls, too); `ratelimit` fails the way
that CLI reports a spent usage limit; `auth` (gemini) is its FatalAuthenticationError.
The default, `limit-then-edit`, is `ratelimit,ok`. What it spends per call:
STANDIN_IN, STANDIN_OUT, STANDIN_CACHED, STANDIN_CACHE_WRITE (claude), STANDIN_COST
(claude, aider), STANDIN_TURNS (codex turns, aider messages), STANDIN_MODEL.
"""

import json
import os
import re
import sys
import time
import uuid

name = os.path.basename(sys.argv[0])
state = os.environ.get("STANDIN_DIR", "")
argv = sys.argv[1:]
try:
    stdin = os.readlink("/proc/self/fd/0")
except OSError:
    stdin = "closed"
brief = ""
if "--message-file" in argv:
    brief = argv[argv.index("--message-file") + 1]
else:
    m = re.search(r"Read the task in (\S+) and", " ".join(argv))
    brief = m.group(1) if m else ""
n = 1
if state:
    calls_path = os.path.join(state, "calls.jsonl")
    n = 1 + (sum(1 for _ in open(calls_path)) if os.path.exists(calls_path) else 0)
    with open(calls_path, "a") as fh:
        record = {
            "name": name,
            "argv": argv,
            "stdin": stdin,
            "brief": brief,
            "brief_exists": bool(brief) and os.path.isfile(brief),
            "cwd": os.getcwd(),
        }
        fh.write(json.dumps(record) + "\n")

# each CLI's own words for a spent limit, as printed in the reports cited in test_failures.py
LIMITS = {
    "claude": ("Claude AI usage limit reached|{epoch}", 1),
    "codex": (
        "You've hit your usage limit. Upgrade to Pro (https://openai.com/chatgpt/pricing) "
        "or try again in 2 seconds.",
        1,
    ),
    "aider": (
        "litellm.RateLimitError: AnthropicException - rate_limit_error\n"
        "The API provider has rate limited you. Try again later or check your quotas.",
        0,
    ),
    "gemini": (
        "[Backend Error] You have exhausted your capacity on this model. Your quota will "
        "reset after 2s. (HTTP 429)",
        1,
    ),
}
# the flags the real program offers (its --help, read by tests/test_presets.py from the real
# CLI): a flag it does not offer is refused as its parser would, so the stand-in never takes
# an argv the real program refuses
flags_dir = os.environ.get("STANDIN_FLAGS_DIR")
if flags_dir:
    with open(os.path.join(flags_dir, f"{name}.flags")) as fh:
        offered = set(fh.read().split())
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if re.fullmatch(r"--?[A-Za-z0-9][\w-]*", flag) and flag not in offered:
            print(f"error: unexpected argument '{flag}' found", file=sys.stderr)
            print(f"\nUsage: {name} [OPTIONS] [PROMPT]", file=sys.stderr)
            sys.exit(2)

modes = os.environ.get("STANDIN_MODE", "limit-then-edit").replace("limit-then-edit", "ratelimit,ok")
plan = modes.split(",")
mode = plan[min(n, len(plan)) - 1]
if mode == "auth" and name == "gemini":
    # its source's FatalAuthenticationError, exit code 41; no words the default rules know
    print("FatalAuthenticationError", file=sys.stderr)
    sys.exit(41)

IN = int(os.environ.get("STANDIN_IN", "1200"))
OUT = int(os.environ.get("STANDIN_OUT", "345"))
CACHED = int(os.environ.get("STANDIN_CACHED", "200"))
CACHE_WRITE = int(os.environ.get("STANDIN_CACHE_WRITE", "50"))
COST = float(os.environ.get("STANDIN_COST", "0.0123"))
TURNS = int(os.environ.get("STANDIN_TURNS", "2"))
MODELS = {
    "claude": "claude-sonnet-4-5-20250929",
    "codex": "gpt-5-codex",
    "gemini": "gemini-2.5-pro",
    "aider": "anthropic/claude-sonnet-4-20250514",
}
MODEL = os.environ.get("STANDIN_MODEL", MODELS.get(name, "model"))
SESSION = str(uuid.uuid4())
TARGET = os.path.join("work", f"{name}.txt")


def option(flag, default=""):
    if flag in argv and argv.index(flag) + 1 < len(argv):
        return argv[argv.index(flag) + 1]
    return default


def emit(event):
    print(json.dumps(event), flush=True)


def edit():
    os.makedirs("work", exist_ok=True)
    with open(TARGET, "a") as fh:
        fh.write(f"{name} did the task\n")


def limit_text():
    text, code = LIMITS[name]
    return text.format(epoch=int(time.time()) + 2), code


# -- claude --------------------------------------------------------------------------------


def claude_usage():
    return {
        "input_tokens": IN,
        "cache_creation_input_tokens": CACHE_WRITE,
        "cache_read_input_tokens": CACHED,
        "output_tokens": OUT,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
    }


def claude_assistant(msg_id, content, error=None):
    message = {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": MODEL,
        "content": content,
        "stop_reason": None,
        "usage": {"input_tokens": 3, "output_tokens": 7, "cache_read_input_tokens": 0},
    }
    event = {"type": "assistant", "message": message, "parent_tool_use_id": None}
    if error:
        event["error"] = error
    event.update(session_id=SESSION, uuid=str(uuid.uuid4()))
    return event


def claude_result(subtype, is_error, result=None, errors=None, turns=3):
    event = {
        "type": "result",
        "subtype": subtype,
        "is_error": is_error,
        "duration_ms": 4210,
        "duration_api_ms": 3900,
        "num_turns": turns,
        "stop_reason": "end_turn" if not is_error else None,
        "session_id": SESSION,
        "total_cost_usd": COST,
        "usage": claude_usage(),
        "modelUsage": {
            MODEL: {
                "inputTokens": IN,
                "outputTokens": OUT,
                "cacheReadInputTokens": CACHED,
                "cacheCreationInputTokens": CACHE_WRITE,
                "webSearchRequests": 0,
                "costUSD": COST,
                "contextWindow": 200000,
            }
        },
        "permission_denials": [],
        "uuid": str(uuid.uuid4()),
    }
    if result is not None:
        event["result"] = result
    if errors is not None:
        event["errors"] = errors
    return event


def claude():
    fmt = option("--output-format", "text")
    if fmt == "text":
        if mode == "ratelimit":
            text, code = limit_text()
            print(text, file=sys.stderr)
            sys.exit(code)
        if mode == "fail":
            print("Error: the model could not finish the task", file=sys.stderr)
            sys.exit(1)
        edit()
        print(f"claude: edited {TARGET}")
        sys.exit(0)
    events = []
    if fmt == "stream-json":
        events.append(
            {
                "type": "system",
                "subtype": "init",
                "cwd": os.getcwd(),
                "session_id": SESSION,
                "tools": ["Bash", "Edit", "Read", "Write"],
                "mcp_servers": [],
                "model": MODEL,
                "permissionMode": option("--permission-mode", "default"),
                "apiKeySource": "none",
                "uuid": str(uuid.uuid4()),
            }
        )
    if mode == "ratelimit":
        text, code = limit_text()
        if fmt == "stream-json":
            reset = int(text.rsplit("|", 1)[1])
            events.append(
                {
                    "type": "rate_limit_event",
                    "rate_limit_info": {
                        "status": "rejected",
                        "resetsAt": reset,
                        "rateLimitType": "five_hour",
                        "isUsingOverage": False,
                    },
                    "uuid": str(uuid.uuid4()),
                    "session_id": SESSION,
                }
            )
            events.append(
                claude_assistant("msg_limit", [{"type": "text", "text": text}], "rate_limit")
            )
        events.append(claude_result("success", True, result=text, turns=1))
        for e in events:
            emit(e)
        sys.exit(code)
    if mode == "fail":
        if fmt == "stream-json" and os.environ.get("STANDIN_TOOL_OUTPUT"):
            # a file it read says what a failure rule would read as a limit: not its own
            read = {"file_path": os.path.join(os.getcwd(), "tests", "test_api.py")}
            events.append(
                claude_assistant(
                    "msg_0", [{"type": "tool_use", "id": "toolu_0", "name": "Read", "input": read}]
                )
            )
            result = {
                "tool_use_id": "toolu_0",
                "type": "tool_result",
                "content": os.environ["STANDIN_TOOL_OUTPUT"],
            }
            events.append(
                {
                    "type": "user",
                    "message": {"role": "user", "content": [result]},
                    "parent_tool_use_id": None,
                    "session_id": SESSION,
                }
            )
        if fmt == "stream-json":
            events.append(
                claude_assistant("msg_1", [{"type": "text", "text": "Let me look at the task."}])
            )
            events.append(
                claude_assistant(
                    "msg_1",
                    [
                        {
                            "type": "tool_use",
                            "id": "toolu_1",
                            "name": "Read",
                            "input": {"file_path": os.path.join(os.getcwd(), "missing.py")},
                        }
                    ],
                )
            )
            events.append(
                {
                    "type": "user",
                    "message": {
                        "role": "user",
                        "content": [
                            {
                                "tool_use_id": "toolu_1",
                                "type": "tool_result",
                                "content": "<tool_use_error>File does not exist.</tool_use_error>",
                                "is_error": True,
                            }
                        ],
                    },
                    "parent_tool_use_id": None,
                    "session_id": SESSION,
                }
            )
        events.append(
            claude_result(
                "error_during_execution", True, errors=["the turn ended before the task was done"]
            )
        )
        for e in events:
            emit(e)
        sys.exit(1)
    edit()
    if fmt == "stream-json":
        path = os.path.join(os.getcwd(), TARGET)
        events.append(
            claude_assistant(
                "msg_1", [{"type": "text", "text": "I'll write the file the task asks for."}]
            )
        )
        events.append(
            claude_assistant(
                "msg_1",
                [
                    {
                        "type": "tool_use",
                        "id": "toolu_1",
                        "name": "Write",
                        "input": {"file_path": path, "content": "x" * 5000},
                    }
                ],
            )
        )
        events.append(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "tool_use_id": "toolu_1",
                            "type": "tool_result",
                            "content": f"File created successfully at: {path}",
                        }
                    ],
                },
                "parent_tool_use_id": None,
                "session_id": SESSION,
            }
        )
        events.append(
            claude_assistant(
                "msg_2",
                [{"type": "text", "text": f"Done: {TARGET} is written.\nNothing else changed."}],
            )
        )
    events.append(
        claude_result("success", False, result=f"Done: {TARGET} is written.\nNothing else changed.")
    )
    for e in events:
        emit(e)
    sys.exit(0)


# -- codex ---------------------------------------------------------------------------------


def codex():
    if "--json" not in argv:
        if mode == "ratelimit":
            text, code = limit_text()
            print(text, file=sys.stderr)
            sys.exit(code)
        if mode == "fail":
            print("ERROR: the turn failed", file=sys.stderr)
            sys.exit(1)
        edit()
        print(f"codex: edited {TARGET}")
        sys.exit(0)
    emit({"type": "thread.started", "thread_id": SESSION})
    usage = {"input_tokens": IN, "cached_input_tokens": CACHED, "output_tokens": OUT}
    if mode == "ratelimit":
        text, code = limit_text()
        emit({"type": "turn.started"})
        emit({"type": "error", "message": text})
        emit({"type": "turn.failed", "error": {"message": text}})
        sys.exit(code)
    for turn in range(TURNS):
        emit({"type": "turn.started"})
        emit(
            {
                "type": "item.completed",
                "item": {
                    "id": f"item_{turn}_0",
                    "type": "reasoning",
                    "text": "**Reading the task**",
                },
            }
        )
        emit(
            {
                "type": "item.started",
                "item": {
                    "id": f"item_{turn}_1",
                    "type": "command_execution",
                    "command": "bash -lc 'ls'",
                    "aggregated_output": "",
                    "exit_code": None,
                    "status": "in_progress",
                },
            }
        )
        emit(
            {
                "type": "item.completed",
                "item": {
                    "id": f"item_{turn}_1",
                    "type": "command_execution",
                    "command": "bash -lc 'ls'",
                    "aggregated_output": "work\n",
                    "exit_code": 0,
                    "status": "completed",
                },
            }
        )
        if turn == TURNS - 1 and mode == "fail":
            emit(
                {
                    "type": "turn.failed",
                    "error": {
                        "message": "stream error: the model stopped before the task was done"
                    },
                }
            )
            sys.exit(1)
        if turn == TURNS - 1:
            edit()
            emit(
                {
                    "type": "item.completed",
                    "item": {
                        "id": f"item_{turn}_2",
                        "type": "file_change",
                        "changes": [{"path": os.path.join(os.getcwd(), TARGET), "kind": "add"}],
                        "status": "completed",
                    },
                }
            )
        text = f"Edited {TARGET}." if turn == TURNS - 1 else "Looked at the tree."
        emit(
            {
                "type": "item.completed",
                "item": {"id": f"item_{turn}_3", "type": "agent_message", "text": text},
            }
        )
        emit({"type": "turn.completed", "usage": usage})
    sys.exit(0)


# -- gemini --------------------------------------------------------------------------------


def gemini_stats_models():
    return {
        MODEL: {
            "total_tokens": IN + OUT,
            "input_tokens": IN,
            "output_tokens": OUT,
            "cached": CACHED,
            "input": IN - CACHED,
        }
    }


def gemini():
    fmt = option("--output-format", option("-o", "text"))
    now = "2026-01-02T03:04:05.678Z"
    if fmt == "json":
        tokens = {
            "input": IN - CACHED,
            "prompt": IN,
            "candidates": OUT,
            "total": IN + OUT + 30,
            "cached": CACHED,
            "thoughts": 30,
            "tool": 0,
        }
        stats = {
            "models": {
                MODEL: {
                    "api": {"totalRequests": 2, "totalErrors": 0, "totalLatencyMs": 3100},
                    "tokens": tokens,
                }
            },
            "tools": {"totalCalls": 1, "totalSuccess": 1, "totalFail": 0},
            "files": {"totalLinesAdded": 1, "totalLinesRemoved": 0},
        }
        out = {"session_id": SESSION}
        code = 0
        if mode == "ratelimit":
            text, code = limit_text()
            out = {"session_id": SESSION, "error": {"type": "Error", "message": text, "code": 429}}
        elif mode == "fail":
            out["error"] = {
                "type": "FatalToolExecutionError",
                "message": "Error executing tool write_file: no space left",
                "code": 53,
            }
            code = 53
        else:
            edit()
            out["response"] = f"I wrote {TARGET}.\nThe task is done."
            out["stats"] = stats
        print(json.dumps(out, indent=2), flush=True)
        sys.exit(code)
    if fmt != "stream-json":
        if mode == "ratelimit":
            text, code = limit_text()
            print(text, file=sys.stderr)
            sys.exit(code)
        if mode == "fail":
            print("Error executing tool write_file", file=sys.stderr)
            sys.exit(1)
        edit()
        print(f"gemini: edited {TARGET}")
        sys.exit(0)
    emit({"type": "init", "timestamp": now, "session_id": SESSION, "model": MODEL})
    emit({"type": "message", "timestamp": now, "role": "user", "content": option("-p")})
    stats = {
        "total_tokens": IN + OUT,
        "input_tokens": IN,
        "output_tokens": OUT,
        "cached": CACHED,
        "input": IN - CACHED,
        "duration_ms": 3100,
        "tool_calls": 1,
        "models": gemini_stats_models(),
    }
    if mode == "ratelimit":
        text, code = limit_text()
        emit({"type": "error", "timestamp": now, "severity": "error", "message": text})
        emit(
            {
                "type": "result",
                "timestamp": now,
                "status": "error",
                "error": {"type": "Error", "message": text},
                "stats": stats,
            }
        )
        sys.exit(code)
    for piece in ("I'll write ", "the file.\nFirst, ", "the tool:"):
        emit(
            {
                "type": "message",
                "timestamp": now,
                "role": "assistant",
                "content": piece,
                "delta": True,
            }
        )
    emit(
        {
            "type": "tool_use",
            "timestamp": now,
            "tool_name": "write_file",
            "tool_id": "write_file-1",
            "parameters": {"file_path": TARGET, "content": "x"},
        }
    )
    if mode == "fail":
        emit(
            {
                "type": "tool_result",
                "timestamp": now,
                "tool_id": "write_file-1",
                "status": "error",
                "output": "",
                "error": {"type": "no_space_left", "message": "no space left on device"},
            }
        )
        emit(
            {
                "type": "result",
                "timestamp": now,
                "status": "error",
                "error": {
                    "type": "FatalToolExecutionError",
                    "message": "Error executing tool write_file: no space left on device",
                },
                "stats": stats,
            }
        )
        sys.exit(53)
    edit()
    emit(
        {
            "type": "tool_result",
            "timestamp": now,
            "tool_id": "write_file-1",
            "status": "success",
            "output": "",
        }
    )
    emit(
        {
            "type": "message",
            "timestamp": now,
            "role": "assistant",
            "content": f"Done: {TARGET} is written.",
            "delta": True,
        }
    )
    emit({"type": "result", "timestamp": now, "status": "success", "stats": stats})
    sys.exit(0)


# -- aider ---------------------------------------------------------------------------------


def tokens(count):
    """aider.utils.format_tokens"""
    if count < 1000:
        return f"{count}"
    if count < 10000:
        return f"{count / 1000:.1f}k"
    return f"{round(count / 1000)}k"


def aider():
    print("Aider v0.86.2")
    print(f"Main model: {MODEL} with diff edit format, infinite output")
    print("Weak model: anthropic/claude-3-5-haiku-20241022")
    print("Git repo: none")
    if mode == "ratelimit":
        text, code = limit_text()
        print(text)
        sys.exit(code)
    session = 0.0
    for _ in range(TURNS):
        print("I'll make the change the task asks for.")
        session += COST
        print(
            f"Tokens: {tokens(IN)} sent, {tokens(CACHED)} cache hit, {tokens(OUT)} received. "
            f"Cost: ${COST:.2f} message, ${session:.2f} session."
        )
    if mode == "fail":
        print("litellm.BadRequestError: AnthropicException - the request was refused")
        sys.exit(0)
    edit()
    print(f"Applied edit to {TARGET}")
    sys.exit(0)


{"claude": claude, "codex": codex, "gemini": gemini, "aider": aider}[name]()
