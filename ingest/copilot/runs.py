"""Copilot CLI runs (the start or a resume of a session, to its shutdown) and their tokens."""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from sessiongraph.ingest.frames import SESSION_SCOPE, split_cache_writes

METRICS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")


class Run:
    """One run of the main agent: from the start (or a resume) to its shutdown."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.first_ts: datetime | None = None
        self.last_ts: datetime | None = None
        self.n_records = 0
        self.prompt: str | None = None
        self.models: Counter[str] = Counter()
        self.metrics: tuple[int, dict[str, tuple[int, ...]]] | None = None  # (line, model -> counts)
        self.metrics_ts: datetime | None = None
        self.fallback: list[dict] = []  # output-token rows, for a run with no metrics

    def see(self, ts) -> None:
        self.n_records += 1
        self.span(ts)

    def span(self, ts) -> None:
        if ts is not None:
            self.first_ts = ts if self.first_ts is None or ts < self.first_ts else self.first_ts
            self.last_ts = ts if self.last_ts is None or ts > self.last_ts else self.last_ts


def usage_row(path: str, n: int, ts, model, message_id: str, counts: tuple[int, ...]) -> dict:
    """A usage row from (input incl. cache, output, cache read, cache write, reasoning)."""
    total_in, out, read, write, reasoning = counts
    five, hour, _ = split_cache_writes(write, write, 0)
    return {
        "ts": ts,
        "model": model,
        "message_id": message_id,
        "input_tokens": max(0, total_in - read - write),
        "output_tokens": out,
        "cache_read_tokens": read,
        "cache_creation_tokens": write,
        "cache_creation_5m_tokens": five,
        "cache_creation_1h_tokens": hour,
        "reasoning_tokens": reasoning,
        "source_path": path,
        "line": n,
    }


def run_usage(runs: list[Run], path: str) -> list[list[dict]]:
    """Each run's usage rows: its shutdown's figures, less the previous shutdown's when they are
    cumulative (the package doc), one row per model of scope ``session`` (a run's totals, not a
    request); its messages' output tokens, one request each, when it has none."""
    out: list[list[dict]] = []
    before: dict[str, tuple[int, ...]] | None = None
    for run in runs:
        if run.metrics is None:
            out.append(list(run.fallback))
            continue
        line, now = run.metrics
        cumulative = before is not None and all(
            m in now and all(a >= b for a, b in zip(now[m], old, strict=True)) for m, old in before.items()
        )
        rows = []
        for model, counts in now.items():
            if cumulative and before is not None and model in before:
                counts = tuple(a - b for a, b in zip(counts, before[model], strict=True))
            if any(counts):
                row = usage_row(path, line, run.metrics_ts, model, f"shutdown:{line}:{model}", counts)
                rows.append({**row, "scope": SESSION_SCOPE})
        out.append(rows)
        before = now
    return out
