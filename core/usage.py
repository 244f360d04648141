"""What a drive's coder spent, read from the agent's own output, and its log made readable.

An operator who leaves agents running overnight wants to know in the morning what it cost.
The agents say it themselves, each in its own format, so each has a reader here, named on
its tier (`usage = "claude" | "codex" | "gemini" | "aider" | "none"`):

- **claude**: Claude Code `-p --output-format stream-json --verbose` (or `json`). The final
  `{"type": "result"}` event carries `total_cost_usd`, `usage` and `num_turns`; the model
  comes from the `system`/`init` event (or the result's `modelUsage`). Cache *creation*
  tokens count as input (they are input the API was sent, billed above the input rate);
  `cached_tokens` are cache *reads*. A run killed before its result is counted from its
  assistant messages' usage, each message once; its cost is then the operator's price.
- **codex**: Codex `exec --json`, JSON lines; each `turn.completed` carries `usage`
  (`input_tokens`, `cached_input_tokens`, `output_tokens`), summed over the turns. Codex's
  input includes the cached tokens, so input here is the rest; it names no model, so the
  model is the one the tier's argv asks for (`-m`/`--model`), if it does.
- **gemini**: Gemini CLI `--output-format stream-json` (its `init` event names the model,
  its `result` event's `stats.models` the tokens per model) or `json` (one object:
  `stats.models.<model>.tokens`). Its prompt count includes the cached tokens, so input
  is the rest; thought tokens count as output where the format reports them.
- **aider**: text. Each message prints `Tokens: 2.1k sent, 50 received. Cost: $0.01
  message, $0.05 session.` (k and M suffixes; `cache write` and `cache hit` between):
  tokens are summed over the messages, and the last session cost is the drive's.

Where an agent reports tokens but no cost, the cost is tokens × `[usage.prices."<model>"]`
(dollars per million tokens: input, output, cached_input), which the operator sets;
without a price the cost stays None. A price is never guessed.

The JSON readers also turn the stream into the drive log's text (`Meter.feed`): the
agent's messages and final result as lines, a tool call as one short line, a non-JSON line
as it is, a line too long to read cut with a note; the raw stream is kept beside the log
(`<attempt>.jsonl`). The failure rules (core/failures.py) read that text, so it carries
every error and rate-limit message the agent printed, with any reset time in it.

Plain data and text; the only I/O is `of_drive`, which reads one file.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from board.core.lineindex import SplitLines
from board.core.model import MOST_TOKENS, MOST_USD, READERS, Price, Usage
from board.core.records import Frozen

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path
    from typing import Any

RAW_SUFFIX = ".jsonl"  # the raw stream of a JSON reader's coder, beside its `.log`
EVENT_CAP = 4 * 1024 * 1024  # the longest line read as an event; a longer one is cut
TEXT_CAP = 16 * 1024  # the longest line passed into the log (the log viewer's own cap)
TOOL_CAP = 160  # a tool call's one line
MODEL_CAP = 100  # a model's name
MILLION = 1_000_000


def cost_of(tokens: Usage, price: Price) -> float | None:
    """The price of `tokens` (input, output, cached), or None when the input or output
    count is unknown: half a count priced would be shown as the cost."""
    if tokens.input_tokens is None or tokens.output_tokens is None:
        return None
    dollars = (
        tokens.input_tokens * price.input
        + tokens.output_tokens * price.output
        + (tokens.cached_tokens or 0) * price.cached_input
    ) / MILLION
    return round(dollars, 6)


# ---------------------------------------------------------------------------------------------
# bytes into lines


class Lines(SplitLines[tuple[str, int]]):
    """A coder's output bytes as lines, however the reads cut them, each with its real
    length in bytes (at most `cap` bytes of one line are held; a longer one comes out cut)."""

    def __init__(self, cap: int = EVENT_CAP) -> None:
        super().__init__(cap)

    def _finish(self) -> tuple[str, int]:
        raw = bytes(self._head)
        total = self._length
        self._head.clear()
        self._length = 0
        if raw.endswith(b"\r") and total == len(raw):
            raw = raw[:-1]
            total -= 1
        return raw.decode("utf-8", "replace"), total


def _cut(text: str, total: int) -> str:
    """A line as the log gets it: at most TEXT_CAP characters, a cut one saying so."""
    if total > len(text.encode("utf-8", "replace")) or len(text) > TEXT_CAP:
        return text[:TEXT_CAP] + f" … [line cut: {total:,} bytes]"
    return text


def _one_line(text: str, cap: int = TOOL_CAP) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= cap else flat[: cap - 1] + "…"


def _int(value: Any) -> int | None:
    """A token count as the agent gave it; anything else (a string, a float, a bool, a
    count past MOST_TOKENS, which no store column or sum could hold) is not a count and
    reads as unknown."""
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MOST_TOKENS:
        return None
    return value


def _money(value: Any) -> float | None:
    """A cost in dollars as the agent gave it; NaN, a negative or one past MOST_USD is not
    a cost (the store refuses it, and a sum of such overflows) and reads as unknown."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if value != value or not 0 <= value <= MOST_USD:
        return None
    return float(value)


def _model(value: Any) -> str:
    """A model's name as the agent gave it, made one short line: it is shown on a row of
    the card screen, on `board card show` and in the drive log, where a line break would
    forge a line of its own."""
    return _one_line(value, MODEL_CAP) if isinstance(value, str) else ""


def _cost_in(model_usage: Any) -> float:
    """The cost one `modelUsage` entry says (0 when it says none): the dearest names the model."""
    return (_money(model_usage.get("costUSD")) if isinstance(model_usage, dict) else None) or 0.0


def _add(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


# ---------------------------------------------------------------------------------------------
# the meters: one coder run's output, read as it streams


class Tally(Frozen, slots=True):
    """Tokens of one model: input (cached excluded), output, cached; None: not said."""

    input: int | None = None
    output: int | None = None
    cached: int | None = None

    def plus(self, other: Tally) -> Tally:
        return Tally(
            _add(self.input, other.input),
            _add(self.output, other.output),
            _add(self.cached, other.cached),
        )


class Meter:
    """One coder run's output, fed line by line as it streams: `feed` gives the text the
    drive log shows for the line, `usage` what the run spent. This base reads text and
    passes every line through unchanged (`usage = "none"` meters nothing)."""

    name = "none"
    json = False

    def __init__(self) -> None:
        self.model = ""  # the model the agent named
        self.turns: int | None = None
        self.cost: float | None = None  # the agent's own figure, for the whole run
        self.models: dict[str, Tally] = {}  # tokens by model ("" when it named none)

    def feed(self, line: str, total: int | None = None) -> list[str]:
        """The drive log's lines for one output line (`total`: its whole length in bytes,
        when `line` holds only its first EVENT_CAP bytes)."""
        return [_cut(line, len(line.encode("utf-8", "replace")) if total is None else total)]

    def end(self) -> list[str]:
        """Text held back until the output ended (a message still being streamed)."""
        return []

    def tallies(self) -> dict[str, Tally]:
        return self.models

    def usage(self, prices: Mapping[str, Price] | None = None, model: str = "") -> Usage | None:
        """What the run spent, or None when the agent said nothing of it. `model`: the
        model the tier's argv asks for, used when the agent names none. The cost is the
        agent's own; else, when every model that used tokens has an operator's price, the
        sum of those; else None."""
        parts = {(m or self.model or model): t for m, t in self.tallies().items()}
        total = Tally()
        for t in parts.values():
            total = total.plus(t)
        said = total != Tally()
        if not said and self.cost is None:
            return None
        main = self.model or model
        if parts and not main:
            main = max(parts, key=lambda m: (parts[m].input or 0) + (parts[m].output or 0))
        cost = self.cost
        if cost is None and said and prices:
            costs = []
            for m, t in parts.items():
                price = prices.get(m) if m else None
                one = Usage(t.input, t.output, t.cached)
                costs.append(cost_of(one, price) if price is not None else None)
            if costs and all(c is not None for c in costs):
                cost = round(sum(c for c in costs if c is not None), 6)
        return Usage(  # each figure within what one drive can spend, or unknown
            input_tokens=_int(total.input),
            output_tokens=_int(total.output),
            cached_tokens=_int(total.cached),
            cost_usd=_money(cost),
            model=_model(main),
            turns=_int(self.turns),
        )


class JsonMeter(Meter):
    """A JSON-lines stream: each line parsed as one event; a line that is not JSON (the
    agent's stderr, a warning) passes through as it is."""

    json = True

    def feed(self, line: str, total: int | None = None) -> list[str]:
        size = len(line.encode("utf-8", "replace")) if total is None else total
        stripped = line.strip()
        if size > len(line.encode("utf-8", "replace")) and stripped.startswith("{"):
            kind = _kind_of(stripped)
            return [f"[an event{kind} of {size:,} bytes, too long to show: whole in the .jsonl]"]
        if not stripped.startswith("{"):
            return self.feed_text(line, size)
        try:
            import json  # late: a drive reads JSON, every verb loads this (board.toml)

            event = json.loads(stripped)
        except ValueError:
            return self.feed_text(line, size)
        if not isinstance(event, dict):
            return self.feed_text(line, size)
        return self.event(event)

    def feed_text(self, line: str, size: int) -> list[str]:
        return [*self.end(), _cut(line, size)]

    def event(self, event: dict[str, Any]) -> list[str]:  # pragma: no cover - each reader's
        raise NotImplementedError


def _kind_of(text: str) -> str:
    """The `"type"` of a cut event, if its first bytes say it: for the note that stands
    in for it."""

    m = re.search(r'"type"\s*:\s*"([A-Za-z0-9_.]{1,40})"', text[:400])
    return f" ({m.group(1)})" if m else ""


def _lines(text: Any, prefix: str = "") -> list[str]:
    """An agent's message as log lines; the first carries `prefix`."""
    if not isinstance(text, str) or not text.strip():
        return [prefix.rstrip(": ")] if prefix else []
    out = text.strip("\n").split("\n")
    out[0] = prefix + out[0]
    return [_cut(x, len(x)) for x in out]


def _tool_line(name: Any, args: Any) -> str:
    """A tool call in one short line: its name and what it acts on."""
    what = ""
    if isinstance(args, dict):
        for key in ("file_path", "path", "command", "pattern", "url", "query", "description"):
            if isinstance(args.get(key), str) and args[key]:
                what = args[key]
                break
        else:
            import json  # late: a drive reads JSON, every verb loads this (board.toml)

            what = json.dumps(args, ensure_ascii=False) if args else ""
    elif isinstance(args, str):
        what = args
    return _one_line(f"→ {name} {what}".rstrip())


class ClaudeMeter(JsonMeter):
    """Claude Code's stream-json (and json: the same result object, alone)."""

    name = "claude"

    def __init__(self) -> None:
        super().__init__()
        self.result: Tally | None = None  # the result event's totals, once it came
        self.messages: dict[str, Tally] = {}  # each assistant message's usage, by id

    def tallies(self) -> dict[str, Tally]:
        if self.result is not None:
            return {self.model: self.result}
        total = Tally()
        for t in self.messages.values():
            total = total.plus(t)
        return {self.model: total} if self.messages else {}

    @staticmethod
    def _tally(usage: Any) -> Tally:
        if not isinstance(usage, dict):
            return Tally()
        sent = _add(_int(usage.get("input_tokens")), _int(usage.get("cache_creation_input_tokens")))
        return Tally(
            sent, _int(usage.get("output_tokens")), _int(usage.get("cache_read_input_tokens"))
        )

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if kind == "system":
            sub = event.get("subtype")
            if sub == "init":
                if isinstance(event.get("model"), str):
                    self.model = event["model"]
                return [f"claude: session started, model {self.model or '?'}"]
            for key in ("message", "error", "reason"):
                if isinstance(event.get(key), str) and event[key]:
                    return _lines(event[key], f"system {sub}: ")
            return []
        if kind == "assistant":
            return self._assistant(event)
        if kind == "user":
            return self._tool_errors(event)
        if kind == "result":
            return self._result(event)
        if kind == "rate_limit_event":
            info = event.get("rate_limit_info")
            if not isinstance(info, dict) or info.get("status") in (None, "allowed"):
                return []
            line = f"rate limit: {info.get('status')}"
            if info.get("rateLimitType"):
                line += f" ({info['rateLimitType']})"
            if info.get("resetsAt"):
                line += f", resets at {info['resetsAt']}"
            return [line]
        return []

    def _assistant(self, event: dict[str, Any]) -> list[str]:
        message = event.get("message")
        if not isinstance(message, dict):
            return []
        if isinstance(message.get("model"), str) and not self.model:
            self.model = message["model"]
        key = message.get("id")
        if isinstance(key, str) and "usage" in message:
            self.messages[key] = self._tally(message["usage"])  # repeated per block: once
        out: list[str] = []
        if isinstance(event.get("error"), str):
            out.append(f"error: {event['error']}")
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "text":
                out += _lines(block.get("text"))
            elif block.get("type") == "tool_use":
                out.append(_tool_line(block.get("name"), block.get("input")))
        return out

    def _tool_errors(self, event: dict[str, Any]) -> list[str]:
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        out = []
        for block in content if isinstance(content, list) else []:
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_result"
                and block.get("is_error")
            ):
                body = block.get("content")
                if isinstance(body, list):
                    body = " ".join(str(b.get("text", "")) for b in body if isinstance(b, dict))
                out.append(_one_line(f"← tool error: {body}", 300))
        return out

    def _result(self, event: dict[str, Any]) -> list[str]:
        self.result = self._tally(event.get("usage"))
        self.cost = _money(event.get("total_cost_usd"))
        self.turns = _int(event.get("num_turns"))
        by_model = event.get("modelUsage")
        if not self.model and isinstance(by_model, dict) and by_model:
            self.model = str(max(by_model, key=lambda m: _cost_in(by_model[m])))
        head = "result"
        sub = event.get("subtype")
        if event.get("is_error") or (isinstance(sub, str) and sub.startswith("error")):
            head += " (error" + (f": {sub}" if sub and sub != "success" else "") + ")"
        out = _lines(event.get("result"), f"{head}: ") if event.get("result") else []
        errors = event.get("errors")
        for err in errors if isinstance(errors, list) else []:
            out += _lines(str(err), f"{head}: ")
        return out or [head]


class CodexMeter(JsonMeter):
    """Codex's `exec --json` events."""

    name = "codex"

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if isinstance(event.get("model"), str) and event["model"]:
            self.model = event["model"]
        if kind == "turn.completed":
            usage = event.get("usage")
            if isinstance(usage, dict):
                sent = _int(usage.get("input_tokens"))
                cached = _int(usage.get("cached_input_tokens"))
                if sent is not None and cached is not None:
                    sent = max(sent - cached, 0)
                one = Tally(sent, _int(usage.get("output_tokens")), cached)
                self.models[""] = self.models.get("", Tally()).plus(one)
            self.turns = (self.turns or 0) + 1
            return []
        if kind == "turn.failed":
            err = event.get("error")
            text = err.get("message") if isinstance(err, dict) else err
            return _lines(str(text or ""), "turn failed: ")
        if kind == "error":
            return _lines(str(event.get("message") or ""), "error: ")
        if kind == "item.completed" and isinstance(event.get("item"), dict):
            return self._item(event["item"])
        return []

    def _item(self, item: dict[str, Any]) -> list[str]:
        kind = item.get("type")
        if kind == "agent_message":
            return _lines(item.get("text"))
        if kind == "command_execution":
            code = item.get("exit_code")
            tail = f" (exit {code})" if code not in (None, 0) else ""
            return [_one_line(f"$ {item.get('command', '')}") + tail]
        if kind == "file_change":
            changes = item.get("changes")
            paths = [
                f"{c.get('kind', '')} {c.get('path', '')}".strip()
                for c in (changes if isinstance(changes, list) else [])
                if isinstance(c, dict)
            ]
            return [_one_line("→ files: " + ", ".join(paths))]
        if kind == "mcp_tool_call":
            return [
                _tool_line(
                    f"{item.get('server', '')}.{item.get('tool', '')}", item.get("arguments")
                )
            ]
        if kind == "web_search":
            return [_tool_line("web search", item.get("query"))]
        if kind == "error":
            return _lines(str(item.get("message") or ""), "error: ")
        return []


class GeminiMeter(JsonMeter):
    """Gemini CLI's stream-json events, or its json output (one object printed over many
    lines: held from its opening `{` line to its closing `}` line, then read whole)."""

    name = "gemini"

    def __init__(self) -> None:
        super().__init__()
        self.said = ""  # the assistant's streamed text not yet ended by a newline
        self.block: list[str] | None = None  # the json form's lines, while it is printed
        self.block_size = 0

    def feed(self, line: str, total: int | None = None) -> list[str]:
        if self.block is not None:
            self.block.append(line)
            self.block_size += len(line) + 1
            if line.rstrip() == "}":
                lines, self.block = self.block, None
                import json  # late: a drive reads JSON, every verb loads this (board.toml)

                try:
                    whole = json.loads("\n".join(lines))
                except ValueError:
                    return [_cut(x, len(x)) for x in lines]
                return self._whole(whole) if isinstance(whole, dict) else []
            if self.block_size > EVENT_CAP:  # not the json form after all: as it is
                lines, self.block = self.block, None
                return [_cut(x, len(x)) for x in lines]
            return []
        if line.rstrip() == "{":
            held = self.end()
            self.block, self.block_size = [line], len(line)
            return held
        return super().feed(line, total)

    def end(self) -> list[str]:
        out = []
        if self.said.strip():
            out = _lines(self.said)
        self.said = ""
        if self.block is not None:
            out += [_cut(x, len(x)) for x in self.block]
            self.block = None
        return out

    def event(self, event: dict[str, Any]) -> list[str]:
        kind = event.get("type")
        if kind == "message" and event.get("role") == "assistant":
            text = event.get("content")
            if not isinstance(text, str):
                return []
            if not event.get("delta"):
                return [*self.end(), *_lines(text)]
            self.said += text
            if "\n" not in self.said:
                return []
            done, _, self.said = self.said.rpartition("\n")
            return _lines(done)
        out = self.end()
        if kind == "init":
            if isinstance(event.get("model"), str):
                self.model = event["model"]
            return [*out, f"gemini: session started, model {self.model or '?'}"]
        if kind == "tool_use":
            return [*out, _tool_line(event.get("tool_name"), event.get("parameters"))]
        if kind == "tool_result" and event.get("status") == "error":
            err = event.get("error")
            text = err.get("message") if isinstance(err, dict) else err
            return [*out, _one_line(f"← tool error: {text}", 300)]
        if kind == "error":
            return [
                *out,
                *_lines(str(event.get("message") or ""), f"{event.get('severity') or 'error'}: "),
            ]
        if kind == "result":
            self._stats(event.get("stats"))
            if event.get("status") == "error":
                err = event.get("error")
                text = err.get("message") if isinstance(err, dict) else err
                return [*out, *_lines(str(text or ""), "result (error): ")]
            return [*out, f"result: {event.get('status') or 'done'}"]
        return out

    def _stats(self, stats: Any) -> None:
        """stream-json's stats: per model, input_tokens (the prompt, cached included),
        output_tokens, cached."""
        models = stats.get("models") if isinstance(stats, dict) else None
        if isinstance(models, dict) and models:
            for name, m in models.items():
                if isinstance(m, dict):
                    self.models[str(name)] = self._tally(
                        m.get("input_tokens"), m.get("output_tokens"), m.get("cached")
                    )
        elif isinstance(stats, dict):
            self.models[""] = self._tally(
                stats.get("input_tokens"), stats.get("output_tokens"), stats.get("cached")
            )

    @staticmethod
    def _tally(prompt: Any, output: Any, cached: Any, thoughts: Any = None) -> Tally:
        sent, got = _int(prompt), _int(cached)
        if sent is not None and got is not None:
            sent = max(sent - got, 0)
        out = _int(output)
        if out is not None and _int(thoughts):
            out += _int(thoughts) or 0
        return Tally(sent, out, got)

    def _whole(self, whole: dict[str, Any]) -> list[str]:
        """The json form: `response`, `error`, `stats.models.<model>.tokens`."""
        stats = whole.get("stats")
        models = stats.get("models") if isinstance(stats, dict) else None
        turns = None
        for name, m in (models if isinstance(models, dict) else {}).items():
            tokens = m.get("tokens") if isinstance(m, dict) else None
            if isinstance(tokens, dict):
                self.models[str(name)] = self._tally(
                    tokens.get("prompt"), tokens.get("candidates"), tokens.get("cached"),
                    tokens.get("thoughts"),
                )  # fmt: skip
            api = m.get("api") if isinstance(m, dict) else None
            if isinstance(api, dict) and _int(api.get("totalRequests")) is not None:
                turns = (turns or 0) + (_int(api.get("totalRequests")) or 0)
        self.turns = turns
        out = _lines(whole.get("response"))
        err = whole.get("error")
        if isinstance(err, dict):
            out += _lines(str(err.get("message") or ""), f"error ({err.get('type') or '?'}): ")
        return out


class AiderMeter(Meter):
    """Aider's text: every line passes through; its token and cost lines are read."""

    name = "aider"

    def __init__(self) -> None:
        super().__init__()
        self.session: float | None = None

    def feed(self, line: str, total: int | None = None) -> list[str]:
        text = line.strip()
        m = re.match(r"(?:Main model|Model): (\S+) with ", text)
        if m and not self.model:
            self.model = m.group(1)
        m = re.match(
            r"Tokens: (?P<sent>[\d.]+[kKmM]?) sent(?P<rest>.*?), (?P<got>[\d.]+[kKmM]?) received\.",
            text,
        )
        if m:
            hit = re.search(r"([\d.]+[kKmM]?) cache hit", m.group("rest"))
            one = Tally(
                _count(m.group("sent")), _count(m.group("got")), _count(hit.group(1)) if hit else 0
            )
            self.models[""] = self.models.get("", Tally()).plus(one)
            self.turns = (self.turns or 0) + 1
        m = re.search(r"Cost: \$([\d.]+) message, \$([\d.]+) session\.", text)
        if m:
            self.cost = _money(_float(m.group(2)))
        return super().feed(line, total)


def _float(text: str) -> float | None:
    """A number of aider's line (`1.5`), None for what only looks like one (`1.2.3`)."""
    try:
        return float(text)
    except ValueError:
        return None


def _count(text: str) -> int | None:
    """Aider's `2.1k`, `15k`, `1.2M`, `950` as a number of tokens (None when it is none,
    or too big to be one: `_int`)."""
    scale = {"k": 1_000, "m": 1_000_000}.get(text[-1:].lower(), 1)
    number = _float(text[:-1] if scale != 1 else text)
    if number is None or not number * scale <= MOST_TOKENS:
        return None
    return round(number * scale)


_METERS: dict[str, type[Meter]] = {
    "claude": ClaudeMeter,
    "codex": CodexMeter,
    "gemini": GeminiMeter,
    "aider": AiderMeter,
}


def meter(reader: str) -> Meter | None:
    """A fresh meter for one coder run of a tier whose `usage` is `reader`; None for
    "none" (the output is logged as it is and nothing is metered)."""
    if reader not in READERS:
        raise ValueError(f"no usage reader {reader!r} (readers: {', '.join(READERS)})")
    made = _METERS.get(reader)
    return made() if made is not None else None


def model_in_argv(argv: Sequence[str]) -> str:
    """The model a coder's argv asks for (`-m X`, `--model X`, `--model=X`), or "": what
    usage is priced by when the agent's output names none (Codex's does not). A Python
    interpreter's own `-m` names a module (`python -m agent --model X`), not a model."""
    first = 0
    if argv and re.fullmatch(r"python[\d.]*", argv[0].rsplit("/", 1)[-1]) and argv[1:2] == ["-m"]:
        first = 3
    for i, arg in enumerate(argv[first:], first):
        if arg in ("-m", "--model") and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--model="):
            return arg.split("=", 1)[1]
    return ""


def raw_path(log: Path) -> Path:
    """`<attempt>.jsonl` beside `<attempt>.log`: a JSON reader's coder output, raw."""
    return log.with_suffix(RAW_SUFFIX)


def read_lines(meter_: Meter, lines: Iterable[tuple[str, int]]) -> list[str]:
    """Feed `lines` (text, whole length) to `meter_`; the log text they make."""
    out: list[str] = []
    for line, total in lines:
        out += meter_.feed(line, total)
    out += meter_.end()
    return out


def of_drive(
    reader: str, path: Path, prices: Mapping[str, Price] | None = None, model: str = ""
) -> Usage | None:
    """What one drive's coder spent, read again from what it left: for a JSON reader its
    raw `<attempt>.jsonl`, for aider its `<attempt>.log` (stamps skipped; the board's own
    `board: …` lines never match aider's, which start their line). None for the reader
    "none", for a file that is not there, or when the agent said nothing of it. `model`:
    the model its argv asks for (a fallback)."""
    made = meter(reader)
    if made is None:
        return None
    try:
        fh = open(path, "rb")  # noqa: SIM115 - closed below, read in chunks
    except OSError:
        return None
    split = Lines()
    stamped = not made.json

    def fed(pairs: list[tuple[str, int]]) -> None:
        for line, total in pairs:
            made.feed(_unstamped(line) if stamped else line, total)

    with fh:
        while chunk := fh.read(1024 * 1024):
            fed(split.feed(chunk))
        fed(split.flush())
    made.end()
    return made.usage(prices, model)


def _unstamped(line: str) -> str:
    """A drive log line without its `2026-01-02T03:04:05.678Z ` stamp."""
    if len(line) > 25 and line[4] == "-" and line[10] == "T" and line[23] == "Z":
        return line[25:]
    return line


def said(u: Usage) -> str:
    """One line of what a drive spent, for its log: unknowns are left out, a cost never
    invented ("no price" when the tokens are known and the cost is not)."""
    parts = []
    if u.input_tokens is not None:
        parts.append(f"{u.input_tokens:,} in")
    if u.output_tokens is not None:
        parts.append(f"{u.output_tokens:,} out")
    if u.cached_tokens is not None:
        parts.append(f"{u.cached_tokens:,} cached")
    if u.cost_usd is not None:
        parts.append(f"${u.cost_usd:.4f}")
    elif parts:
        parts.append("cost unknown (the agent gave none and [usage.prices] has no price for it)")
    if u.model:
        parts.append(f"model {u.model}")
    if u.turns is not None:
        parts.append(f"{u.turns} turn(s)")
    return ", ".join(parts)
