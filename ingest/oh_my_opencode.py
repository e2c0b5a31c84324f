"""oh-my-opencode transcripts (``~/.claude/transcripts/ses_<id>.jsonl``) -> frames.

The oh-my-opencode plugin for opencode writes one Claude-hooks-style transcript per opencode
session, from three hooks (its ``claude-code-hooks`` ``transcript.ts`` and handlers):
``{type: "user", timestamp, content}`` (the prompt's text parts), ``{type: "tool_use",
timestamp, tool_name, tool_input}`` before a tool runs and ``{type: "tool_result", timestamp,
tool_name, tool_input, tool_output}`` after it (``tool_output``: ``{output, filePath?,
sessionId?, agent?, ...}``, a compact copy of the tool's result and metadata).

Decisions, from the format facts:
- **Identity.** The file stem is the opencode session id (``ses_...``): session
  ``oh-my-opencode:<ses id>``. The transcript logs the same opencode session that opencode's own
  storage holds; when that storage is read too the session appears under both harnesses (the
  transcript holds no assistant text or tokens, so neither replaces the other).
- **Calls.** No record carries a call id: a ``tool_result`` is paired with the oldest open
  ``tool_use`` of the same tool (the same input first); the call's id is ``line<n>`` of its
  ``tool_use`` (of the result when no use was logged: an ``unmatched_result`` diagnostic).
  Tool names are opencode's: ``bash`` shell, ``read``/``write``/``edit``/``multiedit`` files by
  ``filePath``, ``task`` a spawn. No cwd is logged, so only absolute paths are placed.
- **Children.** A ``task`` result names the child opencode session: ``tool_output.sessionId``,
  else ``session_id: ses_...`` in the ``<task_metadata>`` block of its text (or opencode's
  ``task_id:``). That id is ``result_agent_id``; the spawn pass ties it to the child's transcript
  or to the child's opencode session (same ``ses_`` id), verified. The child's own transcript does
  not say it is one, so it stays ``main``.
- **Tokens, model.** None is logged: no usage rows, a ``no_token_counts`` diagnostic per file.
"""

from __future__ import annotations

import os
import re

from sessiongraph.ingest.frames import Frames, call_file_events
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    arguments,
    as_dict,
    as_str,
    file_size,
    head_all,
    json_type,
    read_records,
    record_ts,
    spawn_fields,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "oh-my-opencode"
TYPES = frozenset({"user", "tool_use", "tool_result"})
TOOL_KINDS = {
    "bash": "shell",
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "task": "spawn",
}
FILE_OPS = {"read": "read", "write": "write", "edit": "write", "multiedit": "write"}
SPAWN_TOOLS = frozenset({"task"})
STEM = re.compile(r"ses_[A-Za-z0-9]+")
_CHILD = re.compile(r"(?:session_id:\s*|task_id:\s*|<task id=\")(ses_[A-Za-z0-9]+)")
_HEAD_RECORDS = 8


def _shaped(rec: object) -> bool:
    """A transcript record: one of the three types, a timestamp, and no Claude envelope."""
    if not isinstance(rec, dict) or rec.get("type") not in TYPES or "message" in rec or "sessionId" in rec:
        return False
    if rec["type"] == "user":
        return "content" in rec
    return isinstance(rec.get("tool_name"), str) and "tool_input" in rec


def detect(path: str, head: bytes) -> bool:
    """A transcript named ``ses_<id>.jsonl`` whose first records are transcript records."""
    stem = os.path.splitext(os.path.basename(path))[0]
    return STEM.fullmatch(stem) is not None and head_all(head, _shaped, _HEAD_RECORDS)


def parse(path: str) -> Frames:
    """Parse one transcript; bad input becomes diagnostics rows, never an exception."""
    d = Diagnostics(path, NAME)
    records = list(read_records(path, d))
    if not records:
        return Frames.from_rows(diagnostics=d.rows)
    native = os.path.splitext(os.path.basename(path))[0]
    sid = f"{NAME}:{native}"
    d.add("no_token_counts", None, "the transcript records no token counts or model")
    log = StepLog()
    calls: dict[str, dict] = {}
    open_uses: dict[str, list[str]] = {}
    prompt: str | None = None
    times = []
    kept = 0
    for n, rec in records:
        rtype = rec.get("type")
        if not isinstance(rtype, str) or rtype not in TYPES:
            d.add("unknown_record_type", n, f"type={str(rtype)[:40]}")
            continue
        ts = record_ts(rec.get("timestamp"), d, n)
        if ts is not None:
            times.append(ts)
        if rtype == "user":
            text = rec.get("content")
            if not isinstance(text, str):
                d.add("wrong_type", n, f"content: {json_type(text)}")
                continue
            kept += 1
            prompt = text if prompt is None else prompt
            log.add(0, n, ts, "user", "prompt", text)
            continue
        tool = rec.get("tool_name")
        if not isinstance(tool, str):
            d.add("wrong_type", n, f"tool_name: {json_type(tool)}")
            continue
        kept += 1
        args = rec.get("tool_input")
        if rtype == "tool_use":
            call_id = f"line{n}"
            calls[call_id] = _call(args, tool, call_id, sid, path, n, ts, d)
            open_uses.setdefault(tool, []).append(call_id)
            log.add(0, n, ts, "assistant", "tool_call", json_content(args), call_id=call_id, tool=tool)
            continue
        paired = _pair(open_uses.get(tool, []), calls, args)
        if paired is None:
            d.add("unmatched_result", n, f"{tool}: no open tool_use of this tool")
            paired = f"line{n}"
            calls[paired] = _call(args, tool, paired, sid, path, n, ts, d)
        call_id = paired
        out = rec.get("tool_output")
        log.add(0, n, ts, "tool", "tool_result", json_content(out), call_id=call_id, tool=tool)
        _result(calls[call_id], out, ts)
    rows = [{k: v for k, v in c.items() if k != "_input"} for c in calls.values()]
    events = [
        e
        for c in rows
        if c["tool"] in FILE_OPS and c.get("ended_at") is not None
        for e in call_file_events(c, FILE_OPS[c["tool"]], path, c["ended_at"])
    ]
    session = {
        "session_id": sid,
        "harness": NAME,
        "native_id": native,
        "session_kind": "main",
        "source_path": path,
        "source_bytes": file_size(path),
        "started_at": min(times) if times else None,
        "ended_at": max(times) if times else None,
        "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
        "n_records": kept,
    }
    return log.frames(sid, path, sessions=[session], calls=rows, file_events=events, diagnostics=d.rows)


def _pair(waiting: list[str], calls: dict[str, dict], args: object) -> str | None:
    """The open use a result answers: the oldest with the same input, else the oldest."""
    if not waiting:
        return None
    same = [c for c in waiting if calls[c]["_input"] == args]
    chosen = same[0] if same else waiting[0]
    waiting.remove(chosen)
    return chosen


def _call(args: object, tool: str, call_id: str, sid: str, path: str, n: int, ts, d: Diagnostics) -> dict:
    inp = arguments(args, d, n, tool, "tool_input is")
    row: dict = {
        "session_id": sid,
        "call_id": call_id,
        "tool": tool,
        "kind": TOOL_KINDS.get(tool, "other"),
        "started_at": ts,
        "paths": [],
        "output_ids": [],
        "source_path": path,
        "line": n,
        "_input": args,
    }
    if tool in FILE_OPS:
        placed = normalise(inp["filePath"], None) if isinstance(inp.get("filePath"), str) else None
        row["paths"] = [placed] if placed else []
    elif tool == "bash":
        row["command"] = as_str(inp.get("command"))
        row["description"] = as_str(inp.get("description"))
        if isinstance(inp.get("workdir"), str):
            row["cwd"] = normalise(inp["workdir"], None)
    elif tool in SPAWN_TOOLS:
        row.update(spawn_fields(inp))
        row["run_in_background"] = (
            inp.get("run_in_background") if isinstance(inp.get("run_in_background"), bool) else None
        )
    return row


def _result(row: dict, out: object, ts) -> None:
    row["ended_at"] = ts
    if row["tool"] not in SPAWN_TOOLS:
        return
    meta = as_dict(out)
    child = as_str(meta.get("sessionId"))
    if child is None:
        text = out if isinstance(out, str) else as_str(meta.get("output")) or ""
        said = _CHILD.search(text)
        child = said.group(1) if said else None
    row["result_agent_id"] = child
