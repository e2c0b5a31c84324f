"""Read-only questions to the store: the library side of ``query``, ``sessions``, ``runs``,
``show`` and ``report``."""

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


RUNS_SQL = """
SELECT run_id, root_session_id, root_harness, started_at, n_sessions, n_spawns, n_launches,
       n_artifact_edges, max_depth, harnesses
FROM runs
ORDER BY started_at NULLS LAST, run_id
"""


def runs(*, db: str | None = None) -> pl.DataFrame:
    with Store(db, read_only=True) as store:
        return store.query(RUNS_SQL)


def show(run: str, *, fmt: str = "tree", db: str | None = None, prices: str | None = None) -> str:
    """One run as an indented tree (``tree``), Graphviz DOT (``dot``) or one HTML page (``html``,
    priced with ``prices``)."""
    from sessiongraph.views import show as render

    if fmt == "html":
        return run_page(run, db=db, prices=prices)
    with Store(db, read_only=True) as store:
        graph = render.run_graph(store, run)
    return render.dot(graph) if fmt == "dot" else render.tree(graph)


def run_page(run: str, *, db: str | None = None, prices: str | None = None) -> str:
    """One run as a self-contained HTML page: timeline, sortable tables, details on selection."""
    from sessiongraph.pricing import Prices
    from sessiongraph.views import html

    table = Prices.load(prices)
    with Store(db, read_only=True) as store:
        return html.run_page(store, run, prices=table)


def report(*, since=None, fmt: str = "text", db: str | None = None, prices: str | None = None) -> str:
    """The store's history at a glance, as ``text`` or one self-contained ``html`` page."""
    from sessiongraph.errors import SessiongraphError
    from sessiongraph.pricing import Prices
    from sessiongraph.views import report as history

    if fmt not in ("text", "html"):
        raise SessiongraphError(f"unknown report format {fmt!r}; use text or html")
    table = Prices.load(prices)
    with Store(db, read_only=True) as store:
        return history.report(store, since=since, fmt=fmt, prices=table)
