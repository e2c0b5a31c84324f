"""Read-only questions to the store: the library side of ``query`` and ``sessions``."""

from __future__ import annotations

import polars as pl

from sessiongraph.store import Store

SORTS = ("start", "cost", "tokens", "sessions")

# One row per session with its cwd, spawned subagents and dollars (session_overview).
SESSIONS_SQL = """
SELECT o.session_id, o.harness, o.session_kind AS kind, o.end_status AS status, o.started_at, o.ended_at,
       o.model, o.cwd,
       (SELECT count(*) FROM run_sessions c WHERE c.parent_session_id = o.session_id AND c.via = 'spawn')
           AS subagents,
       o.total_tokens AS tokens, o.usd, m.run_id
FROM session_overview o LEFT JOIN run_sessions m USING (session_id)
"""
# One row per run with its root's cwd, its subagents and launched sessions, and dollars (run_costs).
RUNS_SQL = """
SELECT r.run_id, r.root_harness, r.started_at, r.ended_at, r.n_sessions,
       (SELECT count(*) FROM run_sessions m WHERE m.run_id = r.run_id AND m.via = 'spawn') AS subagents,
       (SELECT count(*) FROM run_sessions m WHERE m.run_id = r.run_id AND m.via = 'launch') AS launched,
       r.max_depth, o.cwd, c.tokens, c.usd, r.harnesses, r.root_session_id
FROM runs r
LEFT JOIN run_costs c USING (run_id)
LEFT JOIN session_overview o ON o.session_id = r.root_session_id
"""
_ORDER = {
    "start": "started_at NULLS LAST",
    "cost": "usd DESC NULLS LAST",
    "tokens": "tokens DESC NULLS LAST",
}


def _filtered(
    base: str,
    *,
    key: str,
    harness_col: str,
    since=None,
    until=None,
    harnesses: tuple[str, ...] = (),
    cwd: str | None = None,
    sort: str = "start",
    limit: int | None = None,
    status: tuple[str, ...] = (),
    sessions_col: str,
) -> tuple[str, list]:
    """``base`` filtered to the window (active on or after ``since``, started by ``until``), the
    harnesses and the project (a cwd at or under ``cwd``; a relative name: any cwd holding it)."""
    if sort not in SORTS:
        raise ValueError(f"unknown sort {sort!r}; use one of {', '.join(SORTS)}")
    where, params = [], []
    if since is not None:
        params.append(since)
        where.append(f"coalesce(ended_at, started_at) >= ${len(params)}::TIMESTAMPTZ")
    if until is not None:
        params.append(until)
        where.append(f"started_at <= ${len(params)}::TIMESTAMPTZ")
    if harnesses:
        params.append(list(harnesses))
        where.append(f"list_contains(${len(params)}::VARCHAR[], {harness_col})")
    if cwd:
        path = cwd.rstrip("/") or "/"
        params.append(path)
        n = len(params)
        if path.startswith(("/", "~")) or (len(path) > 1 and path[1] == ":"):
            where.append(f"(cwd = ${n} OR starts_with(cwd, rtrim(${n}, '/') || '/'))")
        else:
            where.append(f"contains(cwd, ${n})")
    if status:
        params.append(list(status))
        where.append(f"list_contains(${len(params)}::VARCHAR[], status)")
    order = _ORDER.get(sort) or f"{sessions_col} DESC"
    sql = f"SELECT * FROM ({base}) WHERE {' AND '.join(where) or 'TRUE'} ORDER BY {order}, {key}"
    if limit is not None:
        sql += f" LIMIT {int(limit)}"
    return sql, params


def sessions(*, db: str | None = None, **filters) -> pl.DataFrame:
    """One row per session (``_filtered`` says what ``filters`` take; sort ``sessions``: by subagents)."""
    sql, params = _filtered(SESSIONS_SQL, key="session_id", harness_col="harness", sessions_col="subagents", **filters)
    with Store(db, read_only=True) as store:
        return store.query(sql, params)


def runs(*, db: str | None = None, **filters) -> pl.DataFrame:
    """One row per run (as :func:`sessions`; a run's harness is its root's, sort ``sessions``: by size)."""
    sql, params = _filtered(RUNS_SQL, key="run_id", harness_col="root_harness", sessions_col="n_sessions", **filters)
    with Store(db, read_only=True) as store:
        return store.query(sql, params)


def price_warning(*, db: str | None = None) -> str | None:
    """A warning when the store's dollars are older than the installed genai-prices (costs.stale)."""
    from sessiongraph import costs

    with Store(db, read_only=True) as store:
        return costs.stale(store)


def query(sql: str, *, db: str | None = None) -> pl.DataFrame:
    """Run ``sql`` on a read-only connection: statements that write are refused by DuckDB."""
    with Store(db, read_only=True) as store:
        return store.query(sql)


def show(run: str, *, fmt: str = "tree", db: str | None = None) -> str:
    """One run as an indented tree (``tree``), Graphviz DOT (``dot``) or one HTML page (``html``)."""
    from sessiongraph.views import show as render

    if fmt == "html":
        return run_page(run, db=db)
    with Store(db, read_only=True) as store:
        graph = render.run_graph(store, run)
    return render.dot(graph) if fmt == "dot" else render.tree(graph)


def run_page(run: str, *, db: str | None = None) -> str:
    """One run as a self-contained HTML page: timeline, sortable tables, details on selection."""
    from sessiongraph.views import html

    with Store(db, read_only=True) as store:
        return html.run_page(store, run)


def report(*, since=None, fmt: str = "text", db: str | None = None) -> str:
    """The store's history at a glance, as ``text`` or one self-contained ``html`` page."""
    from sessiongraph.errors import SessiongraphError
    from sessiongraph.views import report as history

    if fmt not in ("text", "html"):
        raise SessiongraphError(f"unknown report format {fmt!r}; use text or html")
    with Store(db, read_only=True) as store:
        return history.report(store, since=since, fmt=fmt)


def report_pages(*, since=None, db: str | None = None) -> dict[str, str]:
    """The pages the HTML report links to (its most expensive runs), by their address beside it."""
    from sessiongraph.views import html
    from sessiongraph.views import report as history

    with Store(db, read_only=True) as store:
        top = history.build(store, since=since).top_runs["run_id"].to_list()
        return {history.run_page_name(rid): html.run_page(store, rid) for rid in top}
