"""Copied history: the runs of lines a log copied from another session (ingest/FORMATS.md).

A run is ``[first line, last line, records, source id]``, plain data so a parser's state stays
storable. Each run becomes one ``foreign_record`` diagnostic naming its lines, so a reader can
tell which records were left out, without one row per copied record.
"""

from __future__ import annotations

from sessiongraph.ingest.jsonl import Diagnostics


def note(runs: list[list], line: int, source: str | None, last_own: int) -> None:
    """Count one copied record on ``line``: it extends the last run when that run copied from the
    same session and no record of the file's own session came after it."""
    if runs and runs[-1][3] == source and runs[-1][1] > last_own:
        runs[-1][1] = line
        runs[-1][2] += 1
    else:
        runs.append([line, line, 1, source])


def total(runs: list[list]) -> int:
    return sum(run[2] for run in runs)


def report(runs: list[list], diags: Diagnostics, what: str) -> None:
    """One ``foreign_record`` row per run, e.g. ``what`` = "replayed from thread"."""
    for first, last, count, source in sorted(runs):
        records = "1 record" if count == 1 else f"{count} records"
        diags.add("foreign_record", first, f"{records} {what} {source} (lines {first}-{last}); not counted here")
