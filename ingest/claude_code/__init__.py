"""Claude Code transcripts: ``~/.claude/projects/<key>/...jsonl`` in every subagent layout.

One file yields the sessions it holds: a main transcript (plus, up to 2.0.27, the inline
``isSidechain`` subagents inside it) or one subagent file (flat ``agent-<id>.jsonl`` beside the
main transcript from ~2.0.28, nested ``<sessionId>/subagents/agent-<id>.jsonl`` from 2.1.2, with
an optional ``agent-<id>.meta.json`` sidecar read as part of that file).

**Copied history.** A plan hand-off ("accept plan and clear context") opens a new session whose
file starts with a copy of the old one: up to 2.1.2x every record of the old session (same
``uuid``s, ``sessionId`` rewritten to the new one), in later builds its last record only (old
``sessionId`` kept); then the "Implement the following plan" prompt, a root ``user`` record
(``parentUuid: null``) citing the old transcript's path. Records of another ``sessionId`` are
copies as they are read; a cited hand-off prompt after records of the file's own session makes
every line before it a copy. :meth:`_Parser.copied` (``handoff.py``) is the one test every row goes through when
the frames are built: copied lines are counted (``sessions.n_copied``, one ``foreign_record``
diagnostic per run of copied lines, naming them) and kept out of usage, calls and file events, and the session starts at the prompt.

Lines are decoded by msgspec into dicts holding only the fields the parser reads: message
blocks (text, thinking, tool inputs and outputs) are kept undecoded (``msgspec.Raw``) until the
step that hashes them (``ingest.steps``) reads them, once, and the ``toolUseResult`` sidecar only
when a spawn, shell or Read result needs it.
A line this decoder does not take as it is (not JSON, invalid UTF-8, a field of an unexpected
type) goes through ``jsonl.decode_line`` (orjson), so diagnostics are those of the plain path,
which ``SESSIONGRAPH_DECODE=plain`` (or ``DECODE = "plain"``) selects for every line. The frames
are the same either way (tests/test_fast_decode.py) but for one case no Claude build writes: a
number beyond a double's range in a field the parser never reads makes orjson reject the line,
while msgspec skips it unchecked.

The package: ``decoding`` (what a line decodes to, the head checks of :func:`detect`, values read
from records), ``session`` (what is kept per session), ``records`` (the parser, :class:`_Parser`,
record by record, and the frames it builds), ``pairing`` (results paired with their calls,
inline sidechains placed under their spawn call), ``handoff`` (copied history) and ``journal``
(a workflow run's journal, read as the run's session).
"""

from __future__ import annotations

from sessiongraph.ingest import jsonl, resume
from sessiongraph.ingest.claude_code.decoding import (
    FLAT_TYPES,
    THREADED_TYPES,
    _head_records,
    decode_fast,
    gemini_shaped,
)
from sessiongraph.ingest.claude_code.journal import _Journal, run_of
from sessiongraph.ingest.claude_code.records import NAME, _Parser
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import decode_line
from sessiongraph.ingest.resume import Checkpoint

__all__ = ["NAME", "decode_fast", "detect", "is_workflow_journal", "log_of", "not_a_session", "parse", "parse_from"]

DECODE = jsonl.DECODE  # "plain" (SESSIONGRAPH_DECODE=plain): every line through orjson


def is_workflow_journal(path: str) -> bool:
    """``<sessionId>/subagents/workflows/wf_<runId>/journal.jsonl``: a workflow run's journal."""
    return run_of(path) is not None


def detect(path: str, head: bytes) -> bool:
    """A Claude transcript: its first conversation record carries ``sessionId``, or lacks it but
    is Claude-shaped (``type`` user/assistant with a ``message`` object: logs trimmed or exported
    by other tools). Bookkeeping lines (snapshots, summaries) before it are passed over. A
    workflow run's journal (``journal``) is known by where it lies and its typed events. A record
    in Gemini's content shape is a Qwen Code chat's (same envelope), never Claude's."""
    if is_workflow_journal(path):
        first = next(iter(_head_records(head)), None)
        return isinstance(first, dict) and isinstance(first.get("type"), str) and "payload" not in first
    for rec in _head_records(head):
        if not isinstance(rec, dict):
            return False
        if "payload" in rec or rec.get("type") == "session_meta" or gemini_shaped(rec):
            return False
        rtype = rec.get("type")
        if isinstance(rec.get("sessionId"), str) and rtype in THREADED_TYPES | FLAT_TYPES:
            return True
        if rtype in FLAT_TYPES:
            continue  # summary/snapshot lines come first; look at the next record
        return rtype in ("user", "assistant") and "sessionId" not in rec and isinstance(rec.get("message"), dict)
    return False


def not_a_session(head: bytes) -> bool:
    """A file of bookkeeping records only (Claude writes ``file-history-snapshot`` stubs): a
    known non-session, skipped as ``no_session`` rather than reported as an unknown format."""
    seen = False
    for rec in _head_records(head):
        if not isinstance(rec, dict) or rec.get("type") not in FLAT_TYPES or "payload" in rec:
            return False
        seen = True
    return seen


def parse(path: str) -> Frames:
    return parse_from(path)[0]


def parse_from(path: str, checkpoint: Checkpoint | None = None, scrub=None) -> tuple[Frames, Checkpoint | None]:
    """The frames of ``path``, read from ``checkpoint`` when the file only grew since (``ingest.resume``)."""
    if is_workflow_journal(path):
        return resume.parse(path, _Journal, _Journal.restore, checkpoint, scrub, decode_line)
    decode = decode_line if DECODE == "plain" else decode_fast
    return resume.parse(path, _Parser, _Parser.restore, checkpoint, scrub, decode)


def log_of(side_path: str) -> str | None:
    """The transcript a subagent's sidecar (``agent-<id>.meta.json``) is read with: when the
    sidecar changes, so may the transcript's rows (``registry`` side-file hook)."""
    return side_path[: -len(".meta.json")] + ".jsonl" if side_path.endswith(".meta.json") else None
