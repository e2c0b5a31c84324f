"""Codex CLI rollouts (``$CODEX_HOME/sessions/**/rollout-*.jsonl``) -> frames: the adapter.

One file is one thread. Both layouts parse here: envelope lines ``{timestamp, type, payload}``
(codex-rs >= ~0.39) and the older pre-envelope file (bare header line, ``record_type: state``
markers, bare response items without timestamps).

**Copied history.** A forked thread (a sub-agent spawned with a forked context, or ``codex fork``)
starts its rollout with its own ``session_meta``, then the parent's ``session_meta`` and a replay
of the parent's history up to the fork: messages, calls and outputs, ``token_count`` events
(cumulative totals that go on from the parent's), all re-stamped at the fork time or kept with
their old times. The replay is the parent's: :meth:`_Rollout.copied` (``replay.py``) is the one place that says
whether a record is part of it, and a copied record is counted (``sessions.n_copied``, one
``foreign_record`` diagnostic naming its lines) and kept out of every frame. Its ``token_count``
totals still set the baseline the child's own totals are counted from (unless the child's first
own count starts again from zero, as multi-agent v2 children's do). The replay starts at a ``session_meta``
naming another thread and ends at the first turn the child itself starts: a ``task_started`` or
``turn_context`` whose ``turn_id`` (a UUIDv7, like thread ids) is not older than the child's own
thread id. Without UUIDv7 ids to compare, a turn that starts at least ``REPLAY_GAP`` after the
last copied record ends it (a re-stamped replay is written in one burst).

Lines are decoded by msgspec into dicts of the fields the parser reads (``jsonl.decode_typed``):
reasoning, instructions and assistant text are skipped, message text and command output are kept
undecoded until read. ``SESSIONGRAPH_DECODE=plain`` decodes every line whole with orjson; the
frames are the same either way (tests/test_fast_decode.py).

The package: ``decoding`` (what a line decodes to, the header checks of :func:`detect`),
``records`` (the parser, :class:`_Rollout`, record by record), ``pairing`` (results kept as
facts, one list per kind, and paired with their calls once the file is read) and ``replay``
(copied history).
"""

from __future__ import annotations

from sessiongraph.ingest import jsonl, resume
from sessiongraph.ingest.codex.decoding import decode_fast, detect_head
from sessiongraph.ingest.codex.records import NAME, _Rollout
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import decode_line
from sessiongraph.ingest.resume import Checkpoint

__all__ = ["NAME", "decode_fast", "detect", "parse", "parse_from"]

DECODE = jsonl.DECODE  # "plain" (SESSIONGRAPH_DECODE=plain): every line through orjson


def detect(path: str, head: bytes) -> bool:
    """True when ``head`` starts like a Codex rollout (envelope or pre-envelope header)."""
    try:
        return detect_head(head)
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def parse(path: str) -> Frames:
    """Parse one rollout; bad input becomes diagnostics rows, never an exception."""
    return parse_from(path)[0]


def parse_from(path: str, checkpoint: Checkpoint | None = None, scrub=None) -> tuple[Frames, Checkpoint | None]:
    """The frames of ``path``, read from ``checkpoint`` when the file only grew since (``ingest.resume``)."""
    decode = decode_line if DECODE == "plain" else decode_fast
    return resume.parse(path, _Rollout, _Rollout.restore, checkpoint, scrub, decode)
