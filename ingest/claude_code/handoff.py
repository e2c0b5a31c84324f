"""Claude Code transcripts: copied history, the old session a plan hand-off's file starts with
(the package doc says which records are copies).
"""

from __future__ import annotations

import re

from sessiongraph.ingest.claude_code.decoding import UUID
from sessiongraph.ingest.claude_code.session import _Session
from sessiongraph.ingest.jsonl import parse_ts

# A plan hand-off's first prompt ends "read the full transcript at: <dir>/<oldSessionId>.jsonl".
HANDOFF_CITE = re.compile(r"read the full transcript at:?\s*\S*?(" + UUID.pattern + r")\.jsonl")


class _Handoff:
    """The copy test of :class:`records._Parser` (a mixin: the parser's state is its own)."""

    copy_upto: int
    copy_runs: list[list]
    last_own: int
    continued_from: str | None
    open_spawns: list[str]
    sidechain_root: dict[str, str]
    sessions: dict[str, _Session]

    def copied(self, line: int) -> bool:
        """Whether the record on ``line`` is copied history (module doc): a record of another
        sessionId (never fed further) or a line before a hand-off prompt. The one test every
        frame row goes through."""
        return line < self.copy_upto or any(first <= line <= last for first, last, *_ in self.copy_runs)

    def _hand_off(self, n: int, rec: dict, cited: str) -> None:
        """A cited hand-off prompt after records of this session: they were the old session's,
        copied with the sessionId rewritten. The session starts again here."""
        copied = sum(s.n_records for s in self.sessions.values()) - 1  # not the prompt itself
        self.copy_runs.append([1, self.last_own, copied, cited])
        self.copy_upto = n
        self.continued_from = cited
        self.open_spawns.clear()
        self.sidechain_root.clear()
        self.sessions = {"": _Session("")}
        self.sessions[""].see(rec, parse_ts(rec.get("timestamp")))
