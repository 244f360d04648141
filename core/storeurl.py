"""`[store] url`: what may be written there, and how `board init --store` writes it.

board.toml is committed, copied and pasted into issues, so a password never lives there;
kept apart from core/config/, which reads every other key.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit


def store_url_problem(url: str) -> str:
    """Why `url` cannot be `[store] url`, or '' when it can (empty: the SQLite file).

    board.toml is committed, copied and pasted into issues, so a password never lives
    there: libpq reads it from PGPASSWORD or ~/.pgpass. The URL is not echoed back, in
    case it holds one."""
    if not url:
        return ""
    scheme, sep, rest = url.partition("://")
    if not sep or scheme not in ("postgresql", "postgres"):
        return "must be a postgresql://user@host:port/db URL (or empty for the SQLite file)"
    try:
        parts = urlsplit(url)
        query = parse_qs(parts.query, keep_blank_values=True)
        has_password = bool(parts.password)
    except ValueError as exc:
        return f"is not a valid URL: {exc}"
    if has_password or "password" in query:
        return (
            "carries a password: keep it out of board.toml and give it in PGPASSWORD or "
            "~/.pgpass (libpq reads both)"
        )
    return ""


def with_store_url(text: str, url: str) -> str:
    """board.toml's text with `[store] url` set to `url`, the rest kept as it was: the
    url line replaced, or added under an existing `[store]`, or a `[store]` table added."""
    import tomli_w  # only init writes board.toml

    line = tomli_w.dumps({"url": url}).rstrip("\n")
    lines = text.splitlines()
    start = next(
        (i for i, raw in enumerate(lines) if re.match(r"^\s*\[\s*store\s*\]\s*(#.*)?$", raw)),
        None,
    )
    if start is None:
        tail = "" if not text or text.endswith("\n") else "\n"
        return f"{text}{tail}\n[store]\n{line}\n"
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].lstrip().startswith("[")),
        len(lines),
    )
    for i in range(start + 1, end):
        if re.match(r'^\s*"?url"?\s*=', lines[i]):
            lines[i] = line
            break
    else:
        lines.insert(start + 1, line)
    return "\n".join(lines) + "\n"
