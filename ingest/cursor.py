"""Cursor agent transcripts (``~/.cursor/projects/<slug>/agent-transcripts/``) -> frames.

One transcript file is one session, ``cursor:<uuid>`` (more-harness-formats.md section 5). Lines
are ``{role: "user"|"assistant", message: {content: [{type: "text", text} | {type: "tool_use",
name, input}]}}``: role and content only.

Decisions, from the format facts:
- **Identity** is the file's uuid stem: no record carries an id.
- **Layouts.** ``agent-transcripts/<uuid>.jsonl`` (flat; its ``<uuid>.txt`` twin holds the same
  chat as plain text and is never read: discovery takes only ``.jsonl``/``.json`` files),
  ``agent-transcripts/<uuid>/<uuid>.jsonl`` (nested), and a delegated run
  ``agent-transcripts/<parent uuid>/subagents/<uuid>.jsonl``: a ``subagent`` session whose
  ``parent_native_id`` is that folder. Only the layout says so (no call id, no prompt link in the
  file), so the spawn pass ties it to its parent at the ``heuristic`` tier.
- **Time.** No record has a timestamp: ``ended_at`` is the file's mtime (when it was last
  written), ``started_at`` and every call and step time stay null, and a ``time_from_mtime``
  diagnostic says so once per file.
- **Tokens, model, cwd.** None is in the file: no usage rows and no model (a ``no_token_counts``
  diagnostic per file says so; nothing is estimated), no cwd (the folder slug turns ``/`` into
  ``-`` and cannot be turned back), so relative tool paths cannot be placed and are left out.
- **Calls.** Each ``tool_use`` block is a call; with no ids, its id is ``line<n>.<block>``. No
  result is logged, so ``ended_at`` and ``is_error`` are null. Tool names (not seen in a real
  file: the corpus transcripts hold text only) follow the agent's tool set: ``Read`` reads,
  ``Write`` writes, ``StrReplace``/``Edit`` edit, ``Delete`` deletes, ``Shell`` is a shell call and
  ``Task`` a spawn; file events are ``verified`` only as far as a call without a result can be: the
  tool was asked to touch the file.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime

from sessiongraph.ingest.frames import Frames, call_file_events
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    arguments,
    as_str,
    file_size,
    head_all,
    json_type,
    read_records,
    spawn_fields,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "cursor"
ROLES = frozenset({"user", "assistant"})
# tool -> (call kind, file op)
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "Read": ("read", "read"),
    "Write": ("write", "write"),
    "StrReplace": ("edit", "write"),
    "Edit": ("edit", "write"),
    "Delete": ("other", "delete"),
}
FILE_ARGS = ("path", "file_path", "target_file")
SHELL_TOOLS = frozenset({"Shell"})
SPAWN_TOOLS = frozenset({"Task"})
SUBAGENTS = "subagents"
_HEAD_RECORDS = 8


def _cursor_shaped(rec: object) -> bool:
    """A transcript line: role and message only, the message's content a list of blocks."""
    if not isinstance(rec, dict) or not set(rec) <= {"role", "message"} or rec.get("role") not in ROLES:
        return False
    message = rec.get("message")
    return isinstance(message, dict) and isinstance(message.get("content"), list)


def detect(path: str, head: bytes) -> bool:
    """A Cursor transcript: its first records are role/message lines and nothing else."""
    return head_all(head, _cursor_shaped, _HEAD_RECORDS)


def parse(path: str) -> Frames:
    """Parse one transcript; bad input becomes diagnostics rows, never an exception."""
    d = Diagnostics(path, NAME)
    records = list(read_records(path, d))
    native = os.path.splitext(os.path.basename(path))[0]
    sid = f"{NAME}:{native}"
    folder = os.path.dirname(path)
    kind, parent, layout = "main", None, "flat"
    if os.path.basename(folder) == SUBAGENTS:
        kind, parent, layout = "subagent", os.path.basename(os.path.dirname(folder)), "nested"
    elif os.path.basename(folder) == native:
        layout = "nested"
    if not records:
        return Frames.from_rows(diagnostics=d.rows)
    try:
        mtime: datetime | None = datetime.fromtimestamp(os.stat(path).st_mtime, tz=UTC)
    except (OSError, OverflowError, ValueError):
        mtime = None
    d.add("time_from_mtime", None, "no record times: ended_at is the file's mtime, started_at null")
    d.add("no_token_counts", None, "the transcript records no token counts or model")
    log = StepLog()
    calls: list[dict] = []
    prompt: str | None = None
    kept = 0
    for n, rec in records:
        role = rec.get("role")
        message = rec.get("message")
        # a role of any JSON type (list, object) is a diagnostic, not an unhashable-key TypeError
        if not isinstance(role, str) or role not in ROLES or not isinstance(message, dict):
            d.add("unknown_record_type", n, f"role: {json_type(role)}" if not isinstance(role, str) else "no message")
            continue
        content = message.get("content")
        if not isinstance(content, list):
            d.add("wrong_type", n, f"message.content: {json_type(content)}")
            continue
        kept += 1
        for i, block in enumerate(content):
            if not isinstance(block, dict):
                d.add("wrong_type", n, f"message.content[{i}]: {json_type(block)}")
                continue
            btype = block.get("type")
            if btype == "text" and isinstance(block.get("text"), str):
                text = block["text"]
                if role == "user":
                    prompt = text if prompt is None else prompt
                    log.add(0, n, None, "user", "prompt", text)
                else:
                    log.add(0, n, None, "assistant", "text", text)
            elif btype == "tool_use" and role == "assistant":
                tool = as_str(block.get("name")) or ""
                call_id = f"line{n}.{i}"
                log.add(
                    0, n, None, "assistant", "tool_call", json_content(block.get("input")), call_id=call_id, tool=tool
                )
                calls.append(_call(block, tool, call_id, sid, path, n, d))
            else:
                d.add("unknown_record_type", n, f"content block type={str(btype)[:40]}")
    events = [
        e for c in calls if c["tool"] in FILE_TOOLS for e in call_file_events(c, FILE_TOOLS[c["tool"]][1], path, None)
    ]
    session = {
        "session_id": sid,
        "harness": NAME,
        "native_id": native,
        "session_kind": kind,
        "parent_native_id": parent,
        "layout": layout,
        "source_path": path,
        "source_bytes": file_size(path),
        "ended_at": mtime,
        "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
        "n_records": kept,
    }
    return log.frames(sid, path, sessions=[session], calls=calls, file_events=events, diagnostics=d.rows)


def _call(block: dict, tool: str, call_id: str, sid: str, path: str, n: int, d: Diagnostics) -> dict:
    args = arguments(block.get("input"), d, n, tool, "input is")
    row: dict = {
        "session_id": sid,
        "call_id": call_id,
        "tool": tool,
        "kind": "other",
        "paths": [],
        "output_ids": [],
        "source_path": path,
        "line": n,
    }
    if tool in FILE_TOOLS:
        row["kind"] = FILE_TOOLS[tool][0]
        named = [args[k] for k in FILE_ARGS if isinstance(args.get(k), str)][:1]
        # No cwd is known: only absolute paths can be placed.
        row["paths"] = [p for p in (normalise(x, None) for x in named) if p]
    elif tool in SHELL_TOOLS:
        row["kind"] = "shell"
        row["command"] = as_str(args.get("command"))
        row["cwd"] = normalise(as_str(args.get("working_directory")) or "", None)
    elif tool in SPAWN_TOOLS:
        row["kind"] = "spawn"
        row.update(spawn_fields(args))
    return row
