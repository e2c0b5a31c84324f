"""Codex rollouts: copied history, the replay of a parent's history a forked thread starts with
(the package doc says how a replay starts and ends).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from uuid import UUID

from sessiongraph.ingest.jsonl import as_str, parse_ts

# Without UUIDv7 ids to compare, a turn this long after the last copied record ends a replay.
REPLAY_GAP = timedelta(milliseconds=250)


def _v7_ms(value: str | None) -> int | None:
    """The millisecond timestamp a UUIDv7 carries (thread and turn ids), else None."""
    try:
        u = UUID(value) if value else None
    except ValueError:
        return None
    return u.int >> 80 if u is not None and u.version == 7 else None


class _Replay:
    """The copy test of :class:`records._Rollout` (a mixin: the parser's state is its own)."""

    meta: dict | None
    copy_of: str | None
    copy_last_ts: datetime | None
    fresh_counter: bool

    def copied(self, kind: object, p: object, raw_ts: object) -> bool:
        """Whether this envelope record is part of a replayed parent history (module doc): the
        single decision every frame row of this file goes through."""
        if self.meta is None or not isinstance(p, dict):
            return False
        if kind == "session_meta":
            other = as_str(p.get("id"))
            if other and other != self.meta["native_id"]:
                self.copy_of = other
                self.copy_last_ts = parse_ts(raw_ts)
                return True
            return self.copy_of is not None
        if self.copy_of is None:
            return False
        ts = parse_ts(raw_ts)
        starts_turn = kind == "turn_context" or (kind == "event_msg" and p.get("type") == "task_started")
        if starts_turn and self._own_turn(as_str(p.get("turn_id")), ts):
            self.copy_of = None
            self.fresh_counter = True
            return False
        if ts is not None:
            self.copy_last_ts = ts
        return True

    def _own_turn(self, turn_id: str | None, ts) -> bool:
        """Whether a turn starting in a replay is the thread's own first turn."""
        assert self.meta is not None  # copied() returns early without a header
        own, turn = _v7_ms(self.meta["native_id"]), _v7_ms(turn_id)
        if own is not None and turn is not None:
            return turn >= own
        return ts is not None and self.copy_last_ts is not None and ts - self.copy_last_ts >= REPLAY_GAP
