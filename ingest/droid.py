"""Factory Droid sessions (``~/.factory/sessions/<cwd slug>/<uuid>.jsonl``) -> frames.

One session file per session (more-harness-formats.md section 6), with a ``<uuid>.settings.json``
beside it. Line 1 is ``{type: "session_start", id, title, sessionTitle, owner, version, cwd}``;
then ``{type: "message", id, timestamp, message: {role, content: [text | tool_use |
tool_result]}}`` (the content blocks in Anthropic's shape: ``tool_use{id, name, input}``,
``tool_result{tool_use_id, content, is_error}``).

Decisions, from the format facts:
- **Identity** is ``session_start.id`` (the file stem when it has none); the cwd is its ``cwd``.
- **Children.** A subagent / worker session is a file of its own whose ``session_start`` names
  ``callingSessionId`` and ``callingToolUseId`` (reported by third parties, no real child seen):
  ``parent_native_id`` and ``parent_tool_use_id``, ``session_kind`` ``subagent``; the spawn pass
  ties it to the parent's call of that id (verified).
- **Settings side file** (``<uuid>.settings.json``, read through :func:`log_of`): ``model``, and
  ``tokenUsage{inputTokens, outputTokens, cacheCreationTokens, cacheReadTokens, thinkingTokens}``,
  the whole session's (no message carries tokens): one usage row of scope ``session`` with the
  session's model, priced as one sum. Read as Anthropic counts (Droid's models are mostly
  Claude): ``inputTokens`` uncached input, cache writes in the 5-minute bucket (no lifetime is
  logged), ``thinkingTokens`` the part of ``outputTokens`` spent thinking. Without a
  ``tokenUsage`` a ``no_token_counts`` diagnostic says so.
- **Calls.** Tool names are Droid's: ``Read`` reads, ``Create``/``Write`` write, ``Edit``/
  ``MultiEdit`` edit, ``Execute``/``Bash`` are shell calls, ``Task`` a spawn (by file path
  ``file_path``/``path``, shell ``command``); a result closes its call by ``tool_use_id``.
"""

from __future__ import annotations

import os

import orjson

from sessiongraph.ingest.files import read_bounded
from sessiongraph.ingest.frames import SESSION_SCOPE, Frames, call_file_events
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    arguments,
    as_dict,
    as_int,
    as_str,
    file_size,
    json_type,
    read_records,
    record_ts,
    spawn_fields,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "factory-droid"
SETTINGS = ".settings.json"
MAX_SETTINGS_BYTES = 1 << 20
TOOL_KINDS = {
    "Read": "read",
    "Create": "write",
    "Write": "write",
    "Edit": "edit",
    "MultiEdit": "edit",
    "Execute": "shell",
    "Bash": "shell",
    "Task": "spawn",
}
FILE_OPS = {"Read": "read", "Create": "write", "Write": "write", "Edit": "write", "MultiEdit": "write"}
FILE_ARGS = ("file_path", "path")


def detect(path: str, head: bytes) -> bool:
    """A Droid session: its first record is a ``session_start`` with an id and no Claude/Codex envelope."""
    try:
        first = head.split(b"\n", 1)[0]
        rec = orjson.loads(first)
        return (
            isinstance(rec, dict)
            and rec.get("type") == "session_start"
            and isinstance(rec.get("id"), str)
            and "payload" not in rec
            and "sessionId" not in rec
        )
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def log_of(side_path: str) -> str | None:
    """The session a ``<uuid>.settings.json`` belongs to (its ``<uuid>.jsonl`` beside it)."""
    if not side_path.endswith(SETTINGS):
        return None
    log = side_path[: -len(SETTINGS)] + ".jsonl"
    return log if os.path.isfile(log) else None


def _settings(path: str, d: Diagnostics) -> dict:
    side = path[: -len(".jsonl")] + SETTINGS if path.endswith(".jsonl") else path + SETTINGS
    if not os.path.isfile(side):
        return {}
    try:
        raw = read_bounded(side, MAX_SETTINGS_BYTES)
        data = orjson.loads(raw) if raw is not None else None
    except (OSError, ValueError) as e:
        d.add("bad_sidecar", None, f"{os.path.basename(side)}: {type(e).__name__}")
        return {}
    if not isinstance(data, dict):
        d.add("bad_sidecar", None, f"{os.path.basename(side)}: a JSON {json_type(data)}")
        return {}
    return data


def parse(path: str) -> Frames:
    """Parse one session file; bad input becomes diagnostics rows, never an exception."""
    d = Diagnostics(path, NAME)
    records = list(read_records(path, d))
    if not records:
        return Frames.from_rows(diagnostics=d.rows)
    settings = _settings(path, d)
    head = records[0][1] if records[0][1].get("type") == "session_start" else {}
    native = as_str(head.get("id")) or os.path.splitext(os.path.basename(path))[0]
    sid = f"{NAME}:{native}"
    cwd = normalise(as_str(head.get("cwd")) or "", None)
    parent = as_str(head.get("callingSessionId"))
    tokens = settings.get("tokenUsage")
    if tokens is None:
        d.add("no_token_counts", None, "the session records no token counts")
    elif not isinstance(tokens, dict):
        d.add("bad_sidecar", None, f"settings.json tokenUsage: a JSON {json_type(tokens)}")
    log = StepLog()
    calls: dict[str, dict] = {}
    prompt: str | None = None
    times = []
    kept = 0
    for n, rec in records:
        rtype = rec.get("type")
        if rtype == "session_start":
            kept += 1
            continue
        if rtype != "message" or not isinstance(rec.get("message"), dict):
            d.add("unknown_record_type", n, f"type={str(rtype)[:40]}")
            continue
        ts = record_ts(rec.get("timestamp"), d, n)
        if ts is not None:
            times.append(ts)
        message = rec["message"]
        role = message.get("role")
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if role not in ("user", "assistant") or not isinstance(content, list):
            d.add("wrong_type", n, f"message: role {json_type(role)}, content {json_type(content)}")
            continue
        kept += 1
        for i, block in enumerate(content):
            btype = as_dict(block).get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                if role == "user":
                    prompt = block["text"] if prompt is None else prompt
                    log.add(0, n, ts, "user", "prompt", block["text"])
                else:
                    log.add(0, n, ts, "assistant", "text", block["text"])
            elif btype == "tool_use" and role == "assistant":
                tool = as_str(block.get("name")) or ""
                call_id = as_str(block.get("id")) or f"line{n}.{i}"
                calls[call_id] = _call(block, tool, call_id, sid, path, n, ts, cwd, d)
                log.add(
                    0, n, ts, "assistant", "tool_call", json_content(block.get("input")), call_id=call_id, tool=tool
                )
            elif btype == "tool_result":
                call_id = as_str(block.get("tool_use_id")) or ""
                row = calls.get(call_id)
                if row is None:
                    d.add("unmatched_result", n, f"tool_use_id {call_id[:60]}")
                    continue
                row["ended_at"] = ts
                if isinstance(block.get("is_error"), bool):
                    row["is_error"] = block["is_error"]
                log.add(
                    0,
                    n,
                    ts,
                    "tool",
                    "tool_result",
                    json_content(block.get("content")),
                    call_id=call_id,
                    tool=row["tool"],
                )
            else:
                d.add("unknown_record_type", n, f"content block type={str(btype)[:40]}")
    rows = list(calls.values())
    events = [
        e
        for c in rows
        if c["tool"] in FILE_OPS and c.get("ended_at") is not None and not c.get("is_error")
        for e in call_file_events(c, FILE_OPS[c["tool"]], path, c["ended_at"])
    ]
    session = {
        "session_id": sid,
        "harness": NAME,
        "native_id": native,
        "session_kind": "subagent" if parent else "main",
        "parent_native_id": parent,
        "parent_tool_use_id": as_str(head.get("callingToolUseId")),
        "harness_version": str(head["version"]) if isinstance(head.get("version"), int | str) else None,
        "source_path": path,
        "source_bytes": file_size(path),
        "cwd": cwd or None,
        "started_at": min(times) if times else None,
        "ended_at": max(times) if times else None,
        "model": as_str(settings.get("model")),
        "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
        "n_records": kept,
    }
    usage = [_usage(tokens, session, path)] if isinstance(tokens, dict) else []
    return log.frames(sid, path, sessions=[session], calls=rows, file_events=events, usage=usage, diagnostics=d.rows)


def _usage(tokens: dict, session: dict, path: str) -> dict:
    """The session's one usage row from its ``tokenUsage`` (the module doc)."""
    writes = as_int(tokens.get("cacheCreationTokens"))  # no lifetime logged: the 5-minute bucket
    return {
        "session_id": session["session_id"],
        "ts": session["ended_at"],
        "model": session["model"],
        "message_id": f"session:{session['native_id']}",
        "input_tokens": as_int(tokens.get("inputTokens")),
        "output_tokens": as_int(tokens.get("outputTokens")),
        "cache_read_tokens": as_int(tokens.get("cacheReadTokens")),
        "cache_creation_tokens": writes,
        "cache_creation_5m_tokens": writes,
        "cache_creation_1h_tokens": 0,
        "reasoning_tokens": as_int(tokens.get("thinkingTokens")),
        "scope": SESSION_SCOPE,
        "source_path": path,
    }


def _call(block: dict, tool: str, call_id: str, sid: str, path: str, n: int, ts, cwd, d: Diagnostics) -> dict:
    args = arguments(block.get("input"), d, n, tool, "input is")
    row: dict = {
        "session_id": sid,
        "call_id": call_id,
        "tool": tool,
        "kind": TOOL_KINDS.get(tool, "other"),
        "started_at": ts,
        "cwd": cwd or None,
        "paths": [],
        "output_ids": [],
        "source_path": path,
        "line": n,
    }
    if tool in FILE_OPS:
        named = [args[k] for k in FILE_ARGS if isinstance(args.get(k), str)][:1]
        row["paths"] = [p for p in (normalise(x, cwd or None) for x in named) if p]
    elif row["kind"] == "shell":
        row["command"] = as_str(args.get("command"))
    elif row["kind"] == "spawn":
        row.update(spawn_fields(args))
    return row
