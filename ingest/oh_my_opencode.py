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
- **Children.** The spawn tools (``SPAWN_TOOLS``): opencode's ``task`` (the plugin's newer
  delegate tool takes its name), the plugin's ``delegate_task``, ``sisyphus_task`` and ``omo_task``
  (older names of it), ``call_omo_agent`` (explore/librarian, sync or ``run_in_background``),
  ``background_task`` and ``look_at`` (a multimodal-looker child). A result names the child
  opencode session by its metadata, ``tool_output.sessionId`` (unless ``"pending"``), else by its
  own text: the last ``<task_metadata>`` ``session_id: ses_...``, a ``Session ID: ses_...`` line,
  opencode's ``task_id: ses_...``. That id is ``result_agent_id``; the spawn pass ties it to the
  child's transcript or the child's opencode session (same ``ses_`` id), verified. The child's own
  transcript does not say it is one, so it stays ``main``.
- **Background launches.** A launch whose session had not started yet says only ``Task ID:
  bg_...`` (and ``Session ID: pending``). A later ``background_output`` (input ``task_id``) or
  ``background_cancel`` (``taskId``) of that task id names it: its metadata ``sessionId``, else the
  one ``Session ID:`` its text gives beside that ``Task ID:``. That id is the launch's
  ``progress_agent_id`` (tied by a later record, like Claude's ``agent_progress``). A launch no
  later call names, and a result that names no child (an error, ``look_at``), is counted
  (``unnamed_child``), never guessed.
- **Continuing.** ``session_id`` (``resume`` for ``sisyphus_task``) in a spawn tool's input
  continues that child: a follow-up, not a new spawn (kind ``other``, ``result_agent_id`` that id).
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
SPAWN_TOOLS = frozenset(
    {"task", "delegate_task", "sisyphus_task", "omo_task", "call_omo_agent", "background_task", "look_at"}
)
TOOL_KINDS = {
    "bash": "shell",
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    **dict.fromkeys(SPAWN_TOOLS, "spawn"),
}
FILE_OPS = {"read": "read", "write": "write", "edit": "write", "multiedit": "write"}
# Tools that report on a background task by its id: tool -> the input key holding the id.
TASK_REPORTS = {"background_output": "task_id", "background_cancel": "taskId"}
# Input keys by which a spawn tool continues an existing child session instead of starting one.
CONTINUES = ("session_id", "resume")
STEM = re.compile(r"ses_[A-Za-z0-9]+")
_SES = r"(ses_[A-Za-z0-9]+)"
_METADATA_CHILD = re.compile(r"<task_metadata>\s*session_id:\s*" + _SES)
_SESSION_LINE = re.compile(r"^Session ID:\s*`?" + _SES, re.MULTILINE)
_OPENCODE_CHILD = re.compile(r"(?:task_id:\s*|<task id=\")" + _SES)
_TASK_LINE = re.compile(r"^Task ID:\s*`?(bg_[A-Za-z0-9]+)", re.MULTILINE)
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
    reported: dict[str, str] = {}  # background task id -> the child session a later report names
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
        if tool in TASK_REPORTS:
            _report(as_dict(args).get(TASK_REPORTS[tool]), out, reported)
    _tie_launches(calls, reported, d)
    rows = [{k: v for k, v in c.items() if not k.startswith("_")} for c in calls.values()]
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
        row["subagent_type"] = row["subagent_type"] or as_str(inp.get("agent"))  # call_omo_agent names its agent
        row["run_in_background"] = (
            inp.get("run_in_background") if isinstance(inp.get("run_in_background"), bool) else None
        )
        continued = next((c for k in CONTINUES if (c := _session(inp.get(k)))), None)
        if continued:  # a follow-up in an existing child, not a new one
            row.update(kind="other", result_agent_id=continued)
    return row


def _session(value: object) -> str | None:
    """An opencode session id, or None (``"pending"``, ``undefined``, anything else)."""
    return value if isinstance(value, str) and STEM.fullmatch(value) else None


def _text(out: object) -> str:
    return out if isinstance(out, str) else as_str(as_dict(out).get("output")) or ""


def _result(row: dict, out: object, ts) -> None:
    row["ended_at"] = ts
    if row["kind"] != "spawn":
        return
    meta = as_dict(out)
    row["subagent_type"] = row["subagent_type"] or as_str(meta.get("agent"))
    child = _session(meta.get("sessionId"))
    text = _text(out)
    if child is None:
        tagged = _METADATA_CHILD.findall(text)  # appended last, after the child's own answer
        said = _SESSION_LINE.search(text) or _OPENCODE_CHILD.search(text)
        child = tagged[-1] if tagged else said.group(1) if said else None
    row["result_agent_id"] = child
    launched = set(_TASK_LINE.findall(text))
    row["_task"] = launched.pop() if len(launched) == 1 else None
    row["_answered"] = True


def _report(task: object, out: object, reported: dict[str, str]) -> None:
    """A background_output/background_cancel of ``task``: the child session it names, when exact
    (its metadata, else the one Session ID its text gives beside that Task ID)."""
    if not isinstance(task, str) or not task.startswith("bg_"):
        return
    child = _session(as_dict(out).get("sessionId"))
    if child is None:
        text = _text(out)
        sessions = set(_SESSION_LINE.findall(text))
        if set(_TASK_LINE.findall(text)) == {task} and len(sessions) == 1:
            child = sessions.pop()
    if child is not None:
        reported.setdefault(task, child)


def _tie_launches(calls: dict[str, dict], reported: dict[str, str], d: Diagnostics) -> None:
    """Background launches get the child a later report of their task id names; a spawn whose
    result names no child is counted, never guessed."""
    for row in calls.values():
        if row["kind"] != "spawn" or not row.get("_answered") or row.get("result_agent_id"):
            continue
        task = row.get("_task")
        if task is not None and task in reported:
            row["progress_agent_id"] = reported[task]
        elif task is not None:
            d.add(
                "unnamed_child",
                row["line"],
                f"{row['tool']}: background task {task}, no later report names its session",
            )
        else:
            d.add("unnamed_child", row["line"], f"{row['tool']}: the result names no child session")
