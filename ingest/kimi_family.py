"""What the two Kimi adapters share: Kimi Code (``ingest.kimi_code``, ``~/.kimi-code``) and the
older Kimi CLI it replaced (``ingest.kimi_cli``, ``~/.kimi``).

Both write a ``wire.jsonl`` whose first line is ``{type: "metadata", protocol_version}``; Kimi
Code's also has ``created_at`` and flat ``{type, ..., time}`` ops after it, Kimi CLI's has no
``created_at`` and ``{timestamp, message: {type, payload}}`` envelopes, and its oldest wires
have no metadata line at all (kimi-cli ``wire/file.py``: a file without it is read as the legacy
protocol). :func:`wire_head` is the one test both detectors read, so each refuses the other's files. Both count tokens in the same
four fields, spelled ``inputOther``/``inputCacheRead``/... by Kimi Code and
``input_other``/``input_cache_read``/... by Kimi CLI (:func:`usage_row`), and both place a file
tool's path under the session's cwd the same way (:func:`file_events`) and name their tools'
arguments alike (:func:`call_row`).
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson

from sessiongraph.ingest.frames import call_file_events, split_cache_writes
from sessiongraph.ingest.jsonl import as_str, spawn_fields
from sessiongraph.ingest.paths import normalise

CODE = "code"  # Kimi Code's wire
CLI = "cli"  # Kimi CLI's wire


def wire_head(head: bytes) -> str | None:
    """Which Kimi wire ``head`` opens (:data:`CODE`, :data:`CLI`), or None for neither."""
    try:
        lines = [raw for raw in head.split(b"\n")[:3] if raw.strip()]
        first = orjson.loads(lines[0])
        if _cli_record(first):  # a wire from before the metadata header (kimi-cli's "legacy" protocol)
            return CLI
        if not (isinstance(first, dict) and first.get("type") == "metadata" and "protocol_version" in first):
            return None
        kind = CODE if "created_at" in first else CLI
        if len(lines) < 2:
            return kind
        try:
            second = orjson.loads(lines[1])
        except orjson.JSONDecodeError:
            return kind  # cut by the head
        if not isinstance(second, dict):
            return None
        if kind == CODE:
            return kind if isinstance(second.get("type"), str) and "time" in second else None
        return kind if _cli_record(second) else None
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return None


def _cli_record(rec: object) -> bool:
    """``{timestamp: <epoch seconds>, message: {type, payload}}``, a Kimi CLI wire record."""
    if not isinstance(rec, dict):
        return False
    stamp, message = rec.get("timestamp"), rec.get("message")
    return (
        isinstance(stamp, int | float)
        and not isinstance(stamp, bool)
        and isinstance(message, dict)
        and isinstance(message.get("type"), str)
        and isinstance(message.get("payload"), dict)
    )


def epoch(value: object, per_second: int) -> datetime | None:
    """A UTC time from an epoch number in ``1/per_second`` units (ms: 1000, s: 1); None otherwise."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value / per_second, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def message_text(content: object) -> str | None:
    """A message's text: a string, or its ``text`` parts joined."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(texts) if texts else None
    return None


def usage_row(
    sid: str, path: str, n: int, ts, model, message_id: str, uncached: int, output: int, read: int, writes: int
) -> dict:
    """One response's usage row: Kimi's input fields are disjoint (uncached, cache read, cache
    write), so they map one to one; cache writes go to the 5-minute bucket (no lifetime logged)."""
    five, hour, _ = split_cache_writes(writes, writes, 0)
    return {
        "session_id": sid,
        "ts": ts,
        "model": model,
        "message_id": message_id,
        "input_tokens": uncached,
        "output_tokens": output,
        "cache_read_tokens": read,
        "cache_creation_tokens": writes,
        "cache_creation_5m_tokens": five,
        "cache_creation_1h_tokens": hour,
        "reasoning_tokens": 0,
        "source_path": path,
        "line": n,
    }


def file_events(row: dict, cwd: str | None, file_tools: dict[str, tuple[str, str]], path: str) -> list[dict]:
    """A call's file events (``file_tools``: tool -> (call kind, file op)); places the call's
    paths, and a shell call's cwd, under the session's ``cwd`` first. A failed call touched nothing."""
    if row["kind"] == "shell" and row["cwd"]:
        row["cwd"] = normalise(row["cwd"], cwd) or row["cwd"]
    if row["tool"] not in file_tools:
        return []
    row["paths"] = [p for p in (normalise(x, cwd) for x in row["paths"]) if p]
    if row.get("is_error"):
        return []
    return call_file_events(row, file_tools[row["tool"]][1], path, row["ended_at"] or row["started_at"])


def call_row(
    path: str,
    call_id: str,
    tool: str,
    args: dict,
    n: int,
    ts,
    file_tools: dict[str, tuple[str, str]],
    shell_tools: frozenset[str],
    spawn_tools: frozenset[str],
) -> dict:
    """A Kimi tool call's row (without its session): a file tool names a ``path`` (placed under
    the cwd by :func:`file_events`), a shell call a ``command``, a spawn its ``subagent_type``,
    ``description`` and a hash of its ``prompt``."""
    row: dict = {
        "call_id": call_id,
        "tool": tool,
        "kind": "other",
        "started_at": ts,
        "ended_at": None,
        "cwd": None,
        "paths": [],
        "output_ids": [],
        "source_path": path,
        "line": n,
    }
    if tool in file_tools:
        row["kind"] = file_tools[tool][0]
        named = as_str(args.get("path"))
        row["paths"] = [named] if named else []
    elif tool in shell_tools:
        row["kind"] = "shell"
        row["command"] = as_str(args.get("command"))
    elif tool in spawn_tools:
        row["kind"] = "spawn"
        row.update(spawn_fields(args))
    return row
