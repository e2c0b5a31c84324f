"""Copilot CLI tool calls: which tool does what, a call's row, its result, its file events."""

from __future__ import annotations

from sessiongraph.ingest.frames import call_file_events
from sessiongraph.ingest.jsonl import Diagnostics, arguments, as_str, find_uuids, spawn_fields
from sessiongraph.ingest.paths import normalise

# tool -> (call kind, file op); str_replace_editor (<= 0.0.33x) by its command argument.
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "view": ("read", "read"),
    "create": ("write", "write"),
    "edit": ("edit", "write"),
    "str_replace": ("edit", "write"),
    "insert": ("edit", "write"),
}
EDITOR_TOOLS = frozenset({"str_replace_editor"})
SHELL_TOOLS = frozenset({"bash", "powershell"})
SPAWN_TOOLS = frozenset({"task"})
MAX_OUTPUT_IDS = 20


def tool_kind(tool: str, args: dict) -> tuple[str, str | None]:
    """(call kind, file op) of a call."""
    if tool in EDITOR_TOOLS:
        tool = as_str(args.get("command")) or tool
    if tool in FILE_TOOLS:
        return FILE_TOOLS[tool]
    if tool in SHELL_TOOLS:
        return "shell", None
    if tool in SPAWN_TOOLS:
        return "spawn", None
    return "other", None


def call_row(path: str, call_id: str, tool: str, args: object, n: int, ts, d: Diagnostics) -> dict:
    args = arguments(args, d, n, tool)
    kind, op = tool_kind(tool, args)
    row: dict = {
        "call_id": call_id,
        "tool": tool,
        "kind": kind,
        "started_at": ts,
        "ended_at": None,
        "cwd": None,
        "paths": [],
        "output_ids": [],
        "source_path": path,
        "line": n,
        "_op": op,
    }
    if op is not None:
        named = as_str(args.get("path"))
        row["paths"] = [named] if named else []
    elif kind == "shell":
        row["command"] = as_str(args.get("command"))
    elif kind == "spawn":
        row.update(spawn_fields(args, "agent_type"))
    return row


def close(row: dict, ts, error: bool | None, output: str) -> None:
    row["ended_at"] = ts
    if error is not None:
        row["is_error"] = error
    if row["kind"] == "shell":
        row["output_ids"] = list(dict.fromkeys(u.lower() for u in find_uuids(output, bounded=True)))[:MAX_OUTPUT_IDS]


def finish_calls(calls: list[dict], sid: str, cwd: str | None, path: str) -> list[dict]:
    """Gives the calls their session and placed paths; returns their file events."""
    events = []
    for row in calls:
        row["session_id"] = sid
        op = row.pop("_op", None)
        row["paths"] = [p for p in (normalise(x, cwd) for x in row["paths"]) if p]
        if op is None or row.get("is_error") or (row["ended_at"] is None and row["started_at"] is not None):
            continue  # no result logged (history: no times at all, so a call stands for itself)
        events += call_file_events(row, op, path, row["ended_at"] or row["started_at"])
    return events
