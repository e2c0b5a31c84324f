"""Claude Code transcripts: what a line decodes to, the records of a file's head, and the values
the parser reads from records.

What the parser reads, as msgspec types. Fields whose JSON type the parser reports when it is
unexpected are typed strictly, so such a line is rejected and decoded by the plain path; the
others are Any (the parser checks them itself) or Raw (decoded by _val when needed).
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

import msgspec
import orjson

from sessiongraph.ingest.jsonl import Diagnostics, decode_typed, raw_value
from sessiongraph.ingest.paths import normalise

UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# Record types seen in transcripts from 1.x to 2.1.248 (harness-log-formats.md section 1.3).
PR_LINK = "pr-link"  # read by records._pr_link into ingest.commits rows
THREADED_TYPES = frozenset({"user", "assistant", "system", "attachment", "progress"})
FLAT_TYPES = frozenset(
    {
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "ai-title",
        "last-prompt",
        "bridge-session",
        "custom-title",
        "agent-name",
        "mode",
        "permission-mode",
        "atis-latch",
        "frame-link",
        "cost-state",
        "file-history-delta",
        "tag",
        "pr-link",  # 2.1.x: the pull request a session opened (a link, no call or tokens; PR_LINK)
    }
)

# file fails on every line): a transcript's head has at most a few broken lines, then records.
# Undecodable lines in a row after which a head is no JSON Lines at all (a pretty-printed JSON
# file fails on every line): a transcript's head has at most a few broken lines, then records.
MAX_BAD_HEAD_LINES = 8
_NEVER_LAST = (b",", b"{", b"[", b":")


def gemini_shaped(rec: dict) -> bool:
    """A record in Gemini's content shape (``message.parts``, ``systemPayload``, ``usageMetadata``,
    a ``tool_result`` type): Qwen Code's chats share Claude's uuid/parentUuid/sessionId envelope,
    but no Claude build writes these (``ingest.qwen``)."""
    if "systemPayload" in rec or "usageMetadata" in rec or rec.get("type") == "tool_result":
        return True
    message = rec.get("message")
    return isinstance(message, dict) and "parts" in message and "content" not in message


def _head_records(head: bytes):
    """The JSON values of ``head``'s lines; blank lines and a line that does not decode (the
    head may end mid-line, a crash may have cut one) are passed over, up to
    MAX_BAD_HEAD_LINES in a row."""
    bad = 0
    for raw in head.split(b"\n"):
        line = raw.rstrip()
        if not line:
            continue
        # A JSON text never ends so: a pretty-printed document's lines are known bad undecoded.
        rec = _BAD if line.endswith(_NEVER_LAST) else _decode_or_bad(raw)
        if rec is _BAD:
            bad += 1
            if bad == MAX_BAD_HEAD_LINES:
                return
            continue
        bad = 0
        yield rec


_BAD = object()


def _decode_or_bad(raw: bytes) -> object:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return _BAD


class _Data(TypedDict, total=False):  # progress record's data
    type: Any
    agentId: Any


class _File(TypedDict, total=False):  # toolUseResult.file of a Read
    filePath: Any


class _Sidecar(TypedDict, total=False):  # toolUseResult
    agentId: Any
    agent_id: Any  # a teammate's <name>@<team> (status teammate_spawned)
    status: Any
    runId: Any  # a Workflow run
    stdout: Any
    stderr: Any
    file: msgspec.Raw


class _Block(TypedDict, total=False):
    type: Any
    id: Any
    name: Any
    input: msgspec.Raw
    tool_use_id: Any
    is_error: Any
    content: msgspec.Raw
    text: msgspec.Raw
    thinking: msgspec.Raw


class _Message(TypedDict, total=False):
    model: Any
    id: Any
    content: list[_Block] | str | None
    usage: msgspec.Raw  # decoded by orjson in decode_fast


class _Record(TypedDict, total=False):
    type: str
    sessionId: str | None
    timestamp: Any
    cwd: Any
    gitBranch: Any
    version: Any
    entrypoint: Any
    slug: Any
    session_id: Any
    isSidechain: Any
    agentId: Any
    uuid: Any
    parentUuid: Any
    requestId: Any
    isMeta: Any
    isCompactSummary: Any
    parentToolUseID: Any
    teamName: Any
    isApiErrorMessage: Any  # how the session ends (records._end)
    error: msgspec.Raw
    message: _Message | None
    toolUseResult: msgspec.Raw
    data: _Data | None  # agent ids of agent_progress: decoded here, the nested message skipped
    prNumber: Any  # a pr-link record's (ingest.commits.from_pr_link)
    prUrl: Any
    prRepository: Any


_RECORD = msgspec.json.Decoder(_Record)
_DATA = msgspec.json.Decoder(_Data)
_FILE = msgspec.json.Decoder(_File)
_SIDECAR = msgspec.json.Decoder(_Sidecar)
_val = raw_value


def decode_fast(raw: bytes, n: int, diags: Diagnostics) -> dict | None:
    """``decode_line``'s record cut down to the fields the parser reads (see the module doc)."""
    return decode_typed(raw, n, diags, _RECORD, _with_usage)


def _with_usage(rec: dict) -> dict:
    """The record with message.usage decoded as on the plain path, by orjson: msgspec would keep
    an integer past 64 bits an int where orjson makes it a float (as_int treats them apart), and
    one past a double's range must reject the line."""
    msg = rec.get("message")
    if msg is not None and "usage" in msg:
        msg["usage"] = orjson.loads(memoryview(msg["usage"]))
    return rec


def _paths(value: object, cwd: str | None) -> list[str]:
    if not isinstance(value, str):
        return []
    p = normalise(value, cwd)
    return [p] if p else []


def _prompt_text(content: object) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [_val(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        strs = [t for t in texts if isinstance(t, str)]
        if texts and len(strs) == len(texts):
            return "\n".join(strs)
    return None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _block_text(block: dict) -> str:
    content = block.get("content")
    if type(content) is msgspec.Raw:  # decoded once: the step and the call's result both read it
        content = block["content"] = _val(content)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str))
    return ""
