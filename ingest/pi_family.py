"""The pi session format's heads, shared by ``ingest.pi`` and ``ingest.omp`` (oh-my-pi writes pi's
format with traits of its own): the header records, and which files are oh-my-pi's, so that pi's
detect() leaves them to omp without importing it (omp builds on pi)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson

from sessiongraph.ingest.files import open_regular

HEAD_RECORDS = 12  # records detect() looks at
# Entry types oh-my-pi adds to pi's v3 (oh-my-pi docs/session.md, 2026).
OMP_ONLY_TYPES = frozenset(
    {
        "service_tier_change",
        "reset_boundary",
        "title_change",
        "ttsr_injection",
        "credential_pin",
        "session_init",
        "mode_change",
    }
)
# Message roles oh-my-pi adds (docs/session.md role table).
OMP_ONLY_ROLES = frozenset({"developer", "pythonExecution", "fileMention"})
SESSION_STEM = re.compile(r"^\d{4}-\d{2}-\d{2}T[0-9-]+Z?_(?P<id>[^/\\]+)$")


def head_records(head: bytes) -> list[dict]:
    """The complete JSON-object lines at the start of ``head`` (the last one may be cut)."""
    out = []
    for raw in head.removeprefix(b"\xef\xbb\xbf").split(b"\n")[:HEAD_RECORDS]:
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            break
        if not isinstance(rec, dict):
            break
        out.append(rec)
    return out


def is_header(rec: dict) -> bool:
    return rec.get("type") == "session" and isinstance(rec.get("id"), str) and "timestamp" in rec


def is_omp(path: str, head: bytes) -> bool:
    """An oh-my-pi file: a title slot first, or a pi-style header with oh-my-pi traits (title
    fields, omp-only entries or roles, ``provider/id`` model changes), a path under ``.omp/``, or
    a place in a session's artifacts folder."""
    try:
        records = head_records(head)
        if not records:
            return False
        first = records[0]
        if first.get("type") == "title" and isinstance(first.get("v"), int):
            # the slot is omp's alone; the header after it may not fit in the head
            return len(records) == 1 or is_header(records[1])
        if not is_header(first):
            return False
        if "title" in first or "titleSource" in first or ".omp" in Path(path).parts:
            return True
        for rec in records[1:]:
            kind = rec.get("type")
            msg = rec.get("message")
            if kind in OMP_ONLY_TYPES or (kind == "model_change" and isinstance(rec.get("model"), str)):
                return True
            if kind == "message" and isinstance(msg, dict) and msg.get("role") in OMP_ONLY_ROLES:
                return True
        return place(path)[0] is not None
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def place(path: str) -> tuple[str | None, str | None]:
    """(task id, root session id) of a subagent transcript, (None, None) for a main one."""
    folder, name = os.path.split(os.path.abspath(path))
    if not name.endswith(".jsonl"):
        return None, None
    stem = os.path.basename(folder)
    main = folder + ".jsonl"
    m = SESSION_STEM.match(stem)
    if not m and not os.path.isfile(main):
        return None, None
    root = header_id(main) or (m.group("id") if m else stem)
    return name[: -len(".jsonl")], root


def header_id(path: str) -> str | None:
    """The header id of a main session file (its first two lines: title slot, header)."""
    try:
        with open_regular(path) as fh:
            lines = [fh.readline(1 << 20), fh.readline(1 << 20)]
    except OSError:
        return None
    for raw in lines:
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict) and is_header(rec):
            return rec["id"]
    return None
