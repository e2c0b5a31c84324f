"""Reading the store in groups of whole runs, so an export's memory is one group, not the store.

An export decides its order and each run's weight first (a cheap query), then reads and writes one
group at a time: :func:`groups` cuts the ordered run keys into consecutive groups whose weights
add up to at most a budget (a run heavier than the budget is a group alone), so no run is split
and the groups, concatenated, keep the export's order (``Store.per_run`` reads an export's runs so). :func:`text_bytes` is the weight the
trajectory exports use: the bytes of step text each run key holds.
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


# Per run key (its run id, or the session id of a session no run holds): the bytes of its steps'
# text, and the sessions under it. DuckDB streams the aggregate; no text leaves the store.
_TEXT_BYTES = """
SELECT coalesce(m.run_id, t.session_id) AS run_key, t.session_id, coalesce(sum(strlen(t.text)), 0)::BIGINT AS bytes
FROM texts t LEFT JOIN (SELECT session_id, any_value(run_id) AS run_id FROM run_sessions GROUP BY 1) m USING (session_id)
GROUP BY ALL
"""


def text_bytes(store: Store) -> dict[str, int]:
    """Run key -> bytes of step text its sessions hold (keys with no text are absent)."""
    df = store.query(_TEXT_BYTES)
    if not df.height:
        return {}
    sums = df.group_by("run_key").agg(pl.col("bytes").sum())
    return dict(sums.iter_rows())


def session_text_bytes(store: Store) -> dict[str, int]:
    """Session id -> bytes of step text it holds."""
    df = store.query(_TEXT_BYTES)
    return dict(df.group_by("session_id").agg(pl.col("bytes").sum()).iter_rows()) if df.height else {}


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
