"""Codex rollouts: what a line decodes to and the checks :func:`detect_head` makes of a file's head.

What the parser reads, as msgspec types (jsonl.decode_typed). A field whose JSON type the parser
may report is typed strictly (another type sends the line to the plain path) or kept Raw and
decoded by orjson when read, as are numbers it checks by type (spawn depth, token counts):
msgspec keeps an integer past 64 bits an int where orjson makes it a float.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

import msgspec
import orjson

from sessiongraph.ingest.jsonl import Diagnostics, decode_typed

# RolloutItem kinds (codex-rs protocol.rs, late 2025), and those of the 0.14x multi-agent builds,
# read and ignored: inter-agent messages and world-state snapshots carry no call, token or file.
ENVELOPE_KINDS = frozenset({"session_meta", "turn_context", "response_item", "event_msg", "compacted"})
IGNORED_KINDS = frozenset({"inter_agent_communication", "inter_agent_communication_metadata", "world_state"})

_META_TYPE = re.compile(rb'"type"\s*:\s*"session_meta"')
_META_PAYLOAD = re.compile(rb'"payload"\s*:\s*\{')
_LEGACY_HEAD = re.compile(rb'^\{\s*"id"\s*:\s*"[^"]*"\s*,\s*"timestamp"\s*:\s*"[^"]*"\s*,\s*"instructions"\s*:')


def detect_head(head: bytes) -> bool:
    first, newline, rest = head.removeprefix(b"\xef\xbb\xbf").lstrip().partition(b"\n")
    if not first.startswith(b"{"):
        return False
    if newline:
        try:
            obj = orjson.loads(first)
        except orjson.JSONDecodeError:
            obj = None  # e.g. invalid UTF-8 in the header: fall back to the byte checks
        if isinstance(obj, dict):
            if obj.get("type") == "session_meta":
                return isinstance(obj.get("payload"), dict)
            if obj.get("type") in ENVELOPE_KINDS and isinstance(obj.get("payload"), dict) and "timestamp" in obj:
                return True  # session_meta missing or later in the file (trimmed, exported)
            legacy = "type" not in obj and isinstance(obj.get("id"), str) and "timestamp" in obj
            return legacy and ("instructions" in obj or b'"record_type"' in rest[:200])
    # The header did not fit in head (long base_instructions): look at its opening bytes.
    prefix = first[:1024]
    kind, payload = _META_TYPE.search(prefix), _META_PAYLOAD.search(prefix)
    if kind and payload and kind.start() < payload.start():
        return True
    return bool(_LEGACY_HEAD.match(prefix))


class _Fields(TypedDict, total=False):
    """Payload keys (and the top-level keys of pre-envelope headers and bare items)."""

    type: str | None
    id: str | None
    timestamp: str | None
    cwd: Any
    model: Any
    role: Any
    content: msgspec.Raw  # read for the first user message and for steps
    summary: msgspec.Raw  # reasoning summary: a step's text
    name: Any
    arguments: str | None
    call_id: Any
    output: msgspec.Raw  # a step's text, hashed as logged; decoded for the output facts
    input: str | None
    action: msgspec.Raw  # local_shell_call: read through _ACTION; any call's step text
    message: msgspec.Raw  # read for the first user_message only, and a compaction's text
    info: msgspec.Raw
    exit_code: Any  # _exit_code keeps only exit codes (a number past 64 bits is no exit code either way)
    aggregated_output: msgspec.Raw  # scanned for ids when the call may own them
    stdout: msgspec.Raw
    stderr: msgspec.Raw
    parsed_cmd: msgspec.Raw
    success: Any
    changes: msgspec.Raw
    new_thread_id: Any
    turn_id: Any  # turn_context / task_started: where a forked child's own history begins
    kind: Any  # sub_agent_activity
    event_id: Any
    agent_thread_id: Any
    # session_meta and the pre-envelope header
    git: Any
    source: msgspec.Raw
    originator: Any
    cli_version: Any
    parent_thread_id: Any
    agent_role: Any
    forked_from_id: Any
    session_id: Any


class _Record(_Fields, total=False):
    payload: _Fields | None
    record_type: Any


_RECORD = msgspec.json.Decoder(_Record)


def decode_fast(raw: bytes, n: int, diags: Diagnostics) -> dict | None:
    """``decode_line``'s record cut down to the fields the parser reads."""
    return decode_typed(raw, n, diags, _RECORD)


def _texts(value: object) -> str | None:
    """A string, or the joined ``text`` of content items ``[{type, text}, ...]``."""
    if isinstance(value, list):
        return "\n".join(i["text"] for i in value if isinstance(i, dict) and isinstance(i.get("text"), str))
    return value if isinstance(value, str) else None
