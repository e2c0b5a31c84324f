"""What a Kimi CLI session folder holds beside its ``wire.jsonl`` (``ingest.kimi_cli``): the
work dir its folder's name hashes (``~/.kimi/kimi.json``), the subagents' context files, and the
later layout's ``subagents/<agent id>/`` folders. Read only, bounded, never raising."""

from __future__ import annotations

import hashlib
import os
import re

import orjson

from sessiongraph.ingest import kimi_family
from sessiongraph.ingest.files import lines, open_regular, read_bounded
from sessiongraph.ingest.jsonl import Diagnostics, as_dict, as_str
from sessiongraph.ingest.paths import normalise

WIRE = "wire.jsonl"
SUBAGENTS = "subagents"
SHARE_INDEX = "kimi.json"  # in the share dir, beside sessions/
MAX_INDEX_BYTES = 4 * 1024 * 1024
SUB_CONTEXT = re.compile(r"^context_sub(?:_(\d+))?\.jsonl$")


def work_dir(folder: str, d: Diagnostics) -> str | None:
    """The work dir whose md5 names the session's folder, from the share dir's kimi.json."""
    bucket = os.path.dirname(folder)
    index = os.path.join(os.path.dirname(os.path.dirname(bucket)), SHARE_INDEX)
    try:
        raw = read_bounded(index, MAX_INDEX_BYTES)
    except FileNotFoundError:
        return None
    except OSError as exc:
        d.add("bad_sidecar", None, f"kimi.json: {type(exc).__name__}")
        return None
    try:
        data = orjson.loads(raw) if raw is not None else None
    except orjson.JSONDecodeError:
        data = None
    dirs = as_dict(data).get("work_dirs")
    if not isinstance(dirs, list):
        d.add("bad_sidecar", None, "kimi.json: no work_dirs list")
        return None
    name = os.path.basename(bucket)
    for entry in dirs:
        work = as_str(as_dict(entry).get("path"))
        if work is None:
            continue
        digest = hashlib.md5(work.encode(), usedforsecurity=False).hexdigest()
        kaos = as_str(as_dict(entry).get("kaos"))
        if name == digest or (kaos and name == f"{kaos}_{digest}"):
            return normalise(work, None)
    return None


def own_wires(folder: str) -> frozenset[str]:
    """Agent ids with a wire of their own under ``folder/subagents/`` (the later layout)."""
    try:
        names = os.listdir(os.path.join(folder, SUBAGENTS))
    except OSError:
        return frozenset()
    return frozenset(n for n in names if os.path.isfile(os.path.join(folder, SUBAGENTS, n, WIRE)))


def sub_contexts(folder: str) -> list[tuple[str, str]]:
    """(stem, first user message) of the subagent context files in ``folder``, in number order."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    found = []
    for name in names:
        m = SUB_CONTEXT.match(name)
        if m:
            found.append((int(m.group(1) or 0), name))
    out = []
    for _, name in sorted(found):
        first = _first_user_message(os.path.join(folder, name))
        if first is not None:
            out.append((name[: -len(".jsonl")], first))
    return out


def _first_user_message(path: str, max_lines: int = 64) -> str | None:
    try:
        with open_regular(path) as fh:
            for i, raw in enumerate(lines(fh)):
                if i == max_lines:
                    return None
                try:
                    rec = orjson.loads(raw)
                except (orjson.JSONDecodeError, TypeError):
                    continue
                if isinstance(rec, dict) and rec.get("role") == "user":
                    return kimi_family.message_text(rec.get("content"))
    except OSError:
        return None
    return None
