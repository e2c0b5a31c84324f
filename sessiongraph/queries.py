"""Read-only questions to the store: the library side of ``query`` and ``sessions``."""

from __future__ import annotations

import polars as pl

from sessiongraph.store import Store

SESSIONS_SQL = """
SELECT session_id, harness, session_kind AS kind, started_at, model,
       input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, total_tokens
FROM session_overview
ORDER BY started_at NULLS LAST, session_id
"""


def query(sql: str, *, db: str | None = None) -> pl.DataFrame:
    """Run ``sql`` on a read-only connection: statements that write are refused by DuckDB."""
    with Store(db, read_only=True) as store:
        return store.query(sql)


def sessions(*, db: str | None = None) -> pl.DataFrame:
    with Store(db, read_only=True) as store:
        return store.query(SESSIONS_SQL)
