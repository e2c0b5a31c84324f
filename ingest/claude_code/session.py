"""Claude Code transcripts: what the parser keeps of each session a file holds."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

from sessiongraph.ingest.jsonl import as_str


@dataclass(slots=True)
class _Session:
    key: str  # "" for the file's own session, a root uuid for an inline sidechain
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    n_records: int = 0
    cwd: str | None = None
    git_branch: str | None = None
    version: str | None = None
    entrypoint: str | None = None
    slug: str | None = None
    ancestor: str | None = None
    # Only the first prompt's hash and whether it was the warm-up ping are kept: parser state
    # may be stored in a checkpoint, and no prompt text may be.
    first_prompt_hash: str | None = None
    warmup: bool = False
    models: Counter = field(default_factory=Counter)
    parent_tool_use_id: str | None = None

    def see(self, rec: dict, ts: datetime | None) -> None:
        self.n_records += 1
        if ts is not None:
            self.first_ts = ts if self.first_ts is None or ts < self.first_ts else self.first_ts
            self.last_ts = ts if self.last_ts is None or ts > self.last_ts else self.last_ts
        self.cwd = self.cwd or as_str(rec.get("cwd"))
        self.git_branch = self.git_branch or as_str(rec.get("gitBranch"))
        self.version = self.version or as_str(rec.get("version"))
        self.entrypoint = self.entrypoint or as_str(rec.get("entrypoint"))
        self.slug = self.slug or as_str(rec.get("slug"))
        snake = as_str(rec.get("session_id"))
        if snake and snake != rec.get("sessionId"):
            self.ancestor = self.ancestor or snake
