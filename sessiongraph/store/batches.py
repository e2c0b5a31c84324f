"""Reading the store in groups of whole runs, so an export's memory is one group, not the store.

An export decides its order and each run's weight first (a cheap query), then reads and writes one
group at a time: :func:`groups` cuts the ordered run keys into consecutive groups whose weights
add up to at most a budget (a run heavier than the budget is a group alone), so no run is split
and the groups, concatenated, keep the export's order (``Store.per_run`` reads an export's runs
so). :func:`text_bytes` is the weight the trajectory exports use: the characters of step text
each run key holds (from the lengths the store keeps beside the text, not from the text).

A group's rows are scattered over the table (rows are stored file by file, in ingest order), and
DuckDB, without an index, scans the whole table for each group's query. :class:`RowIndex` keeps
each session's ``rowid`` ranges (a file's rows are written together, so a session has a range per
file), and a group's query adds :meth:`RowIndex.where`, a condition on ``rowid`` that DuckDB
prunes the scan by: a group reads its own blocks only, not every block of the text once per group.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Protocol

import duckdb
import polars as pl

from sessiongraph.store.connection import registered


class Store(Protocol):
    """What these helpers use of a ``Store`` (``Store.per_run`` uses ``groups``: no import of it here)."""

    @property
    def con(self) -> duckdb.DuckDBPyConnection: ...

    def query(self, sql: str, params: list | None = None) -> pl.DataFrame: ...


# Per run key (its run id, or the session id of a session no run holds): the characters of its
# steps' stored text (``n_chars`` less what the length cap cut: the stored text's length), and the
# sessions under it. No text is read, only the lengths beside it.
_TEXT_BYTES = """
SELECT coalesce(m.run_id, t.session_id) AS run_key, t.session_id,
       coalesce(sum(t.n_chars - coalesce(t.cut_chars, 0)), 0)::BIGINT AS bytes
FROM texts t LEFT JOIN (SELECT session_id, any_value(run_id) AS run_id FROM run_sessions GROUP BY 1) m USING (session_id)
GROUP BY ALL
"""


def text_bytes(store: Store) -> dict[str, int]:
    """Run key -> characters of step text its sessions hold (keys with no text are absent)."""
    df = store.query(_TEXT_BYTES)
    if not df.height:
        return {}
    sums = df.group_by("run_key").agg(pl.col("bytes").sum())
    return dict(sums.iter_rows())


def session_text_bytes(store: Store) -> dict[str, int]:
    """Session id -> characters of step text it holds."""
    df = store.query(_TEXT_BYTES)
    return dict(df.group_by("session_id").agg(pl.col("bytes").sum()).iter_rows()) if df.height else {}


# DuckDB's memory while an export reads the store (Store.capped): the blocks it has read stay
# cached up to this, not up to DuckDB's default of 80% of RAM (which a long export fills with
# every block of the store); a query that needs more gets more.
EXPORT_MEMORY_MB = 128

# DuckDB reads a table in vectors of 2,048 rows: ranges closer than that cost no more read as one.
ADJACENT_ROWS = 2048
MAX_RANGES = 64  # terms of one rowid condition; more ranges are joined over their smallest gaps


class RowIndex:
    """Where each session's rows lie in the given tables (``rowid`` ranges, one per file), read
    once from the session and file columns; :meth:`where` selects a group's rows' blocks. The
    ranges hold for the connection they were read on (an export's one read-only connection)."""

    def __init__(self, store: Store, tables: Iterable[str]) -> None:
        self.ranges: dict[str, dict[str, list[tuple[int, int]]]] = {}
        for table in tables:
            df = store.query(
                f"SELECT session_id, min(rowid) AS lo, max(rowid) AS hi FROM {table} GROUP BY session_id, source_path"
            )
            by: dict[str, list[tuple[int, int]]] = {}
            for sid, lo, hi in df.iter_rows():
                by.setdefault(sid, []).append((lo, hi))
            self.ranges[table] = by

    def where(self, table: str, sessions: Iterable[str], column: str = "rowid") -> str:
        """A SQL condition on ``column`` (the table's ``rowid``) true for every row of ``sessions``
        in ``table`` (and maybe a few others: the query still filters on the sessions)."""
        by = self.ranges[table]
        return rowid_condition([r for sid in sessions for r in by.get(sid, ())], column)


def rowid_condition(ranges: list[tuple[int, int]], column: str = "rowid") -> str:
    """``column BETWEEN lo AND hi OR ...`` covering ``ranges``: ranges that touch (closer than
    ADJACENT_ROWS) are one, and at most MAX_RANGES terms, joined across the smallest gaps."""
    if not ranges:
        return "FALSE"
    merged: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo - merged[-1][1] <= ADJACENT_ROWS:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    if len(merged) > MAX_RANGES:
        gaps = sorted(b[0] - a[1] for a, b in zip(merged, merged[1:], strict=False))
        widest_kept = gaps[len(merged) - MAX_RANGES - 1]  # join every gap up to this one
        joined: list[list[int]] = [merged[0]]
        for lo, hi in merged[1:]:
            if lo - joined[-1][1] <= widest_kept:
                joined[-1][1] = hi
            else:
                joined.append([lo, hi])
        merged = joined
    return "(" + " OR ".join(f"{column} BETWEEN {lo} AND {hi}" for lo, hi in merged) + ")"


def groups(keys: Iterable[str], weights: Mapping[str, int], budget: int) -> Iterator[list[str]]:
    """``keys`` in their order, cut into consecutive groups of at most ``budget`` weight (a key
    missing from ``weights`` weighs 1, a key over the budget is a group of its own)."""
    group: list[str] = []
    total = 0
    for key in keys:
        w = max(1, int(weights.get(key, 1)))
        if group and total + w > budget:
            yield group
            group, total = [], 0
        group.append(key)
        total += w
    if group:
        yield group


def restricted(store: Store, name: str, column: str, values: list[str]):
    """A context in which SQL can read ``values`` as table ``name`` (one ``column``): the queries
    of one group filter on it (``WHERE x IN (SELECT column FROM name)``)."""
    return registered(store.con, {name: pl.DataFrame({column: values}, schema={column: pl.String}).to_arrow()})
