"""Everything one run's OCP document is made of, read from the store in bulk.

The store is read once per export (not once per run): each table is filtered to the chosen runs
and split by run id, so exporting ten thousand runs costs a handful of queries.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from sessiongraph.ingest.frames import USAGE_TOKENS
from sessiongraph.pricing import Prices, usd_sum
from sessiongraph.store import Store


@dataclass(frozen=True, slots=True)
class RunBundle:
    run: dict
    members: pl.DataFrame  # one row per session: run_sessions + session facts + role/phase
    attempts: pl.DataFrame  # one row per (session, source file, attempt in the file): each try at a node
    usage: pl.DataFrame  # token sums and dollars per (session, source file, attempt, model)
    edges: pl.DataFrame  # edges with both ends in this run
    versions: pl.DataFrame  # artifact versions written in this run (consumers may lie outside it)
    writes: pl.DataFrame  # (session_id, path) of every write in the run, for task features
    outcomes: pl.DataFrame  # state history, evidence and verdicts the logs record, in time order


_MEMBERS = (
    """
SELECT m.run_id, m.session_id, m.parent_session_id, m.via, m.depth, m.role, m.role_tier, m.phase,
       s.harness, s.native_id, s.session_kind, s.agent_type, s.cwd, s.git_repo, s.git_commit,
       s.entrypoint, s.model, s.started_at, s.ended_at, s.state, s.waiting_on
FROM run_sessions m
JOIN (
    SELECT session_id, any_value(harness) AS harness, any_value(native_id) AS native_id,
           any_value(session_kind) AS session_kind, any_value(agent_type) AS agent_type,
           arg_min(cwd, started_at) AS cwd, max(git_repo) AS git_repo, arg_min(git_commit, started_at) AS git_commit,
           any_value(entrypoint) AS entrypoint, arg_max(model, n_records) AS model,
           min(started_at) AS started_at, max(ended_at) AS ended_at, """
    + Store.NODE_STATE
    + """
    FROM sessions GROUP BY session_id
) s USING (session_id)
WHERE m.run_id IN (SELECT run_id FROM chosen)
ORDER BY m.run_id, m.depth, s.started_at NULLS LAST, m.session_id
"""
)

_ATTEMPTS = """
SELECT m.run_id, s.session_id, s.source_path, coalesce(s.attempt, 1) AS attempt, s.started_at, s.ended_at,
       s.model, s.harness_version, s.cwd, s.status, s.outcome_tier
FROM sessions s JOIN run_sessions m USING (session_id)
WHERE m.run_id IN (SELECT run_id FROM chosen)
ORDER BY s.session_id, s.started_at NULLS LAST, s.source_path, attempt
"""

# One row per request: priced one by one (at its date, its own long-context tier), then summed.
_USAGE = """
SELECT m.run_id, u.session_id, u.source_path, coalesce(u.attempt, 1) AS attempt, u.model, s.harness,
       coalesce(u.ts, s.started_at) AS ts,
       u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_creation_tokens,
       u.cache_creation_5m_tokens, u.cache_creation_1h_tokens, u.reasoning_tokens
FROM usage_dedup u JOIN run_sessions m USING (session_id)
JOIN (SELECT session_id, any_value(harness) AS harness, min(started_at) AS started_at
      FROM sessions GROUP BY session_id) s USING (session_id)
WHERE m.run_id IN (SELECT run_id FROM chosen)
"""


def _usage(requests: pl.DataFrame, prices: Prices) -> pl.DataFrame:
    """Token sums and dollars per (run, session, file, attempt, model); ``usd`` null when a request
    has no price, ``sources`` the price sources used, ``day`` the last request's UTC date."""
    priced = prices.price(requests)
    return (
        priced.group_by("run_id", "session_id", "source_path", "attempt", "model")
        .agg(
            pl.len().alias("requests"),
            *[pl.col(t).sum().cast(pl.Int64) for t in USAGE_TOKENS],
            usd=usd_sum(),
            sources=pl.col("price_source").drop_nulls().unique().sort(),
            day=pl.col("ts").max().dt.convert_time_zone("UTC").dt.date(),
        )
        .sort("run_id", "session_id", "source_path", "attempt", "model", nulls_last=True)
    )


# The call's command and description ride along for the ``full`` profile only.
_EDGES = """
SELECT e.*, c.command, c.description
FROM edges e
LEFT JOIN (SELECT DISTINCT ON (session_id, call_id) session_id, call_id, command, description FROM calls) c
       ON c.session_id = e.src AND c.call_id = e.src_call_id
WHERE e.run_id IN (SELECT run_id FROM chosen)
ORDER BY e.run_id, e.ts, e.kind, e.edge_id
"""

_VERSIONS = """
SELECT m.run_id, a.path, a.version, a.producer, a.ts, a.tier, a.how, a.n_writes, a.n_reads, a.consumers
FROM artifacts a JOIN run_sessions m ON m.session_id = a.producer
WHERE m.run_id IN (SELECT run_id FROM chosen)
ORDER BY m.run_id, a.path, a.version
"""

# Writes a file tool made or the harness reported: a guess read from a command line (`> log.txt`)
# says little about what the run was for.
_WRITES = """
SELECT DISTINCT m.run_id, f.session_id, f.path
FROM file_events f JOIN run_sessions m USING (session_id)
WHERE f.op = 'write' AND f.tier <> 'heuristic' AND NOT contains(f.path, '://')
  AND m.run_id IN (SELECT run_id FROM chosen)
ORDER BY ALL
"""


_OUTCOMES = """
SELECT m.run_id, o.* EXCLUDE (ingest_id, attempt), coalesce(o.attempt, 1) AS attempt
FROM outcomes o JOIN run_sessions m USING (session_id)
WHERE m.run_id IN (SELECT run_id FROM chosen)
ORDER BY ALL
"""


def chosen_runs(store: Store, runs: list[str], since: datetime | None) -> pl.DataFrame:
    """The runs to export: the named ones (any id `sessiongraph show` accepts), else all,
    keeping those active on or after ``since``."""
    table = store.query("SELECT * FROM runs ORDER BY started_at NULLS LAST, run_id")
    if runs:
        wanted = [store.resolve_run(r) for r in runs]
        table = table.filter(pl.col("run_id").is_in(wanted))
    if since is not None:
        table = table.filter(pl.col("ended_at").is_null() | (pl.col("ended_at") >= since))
    return table


def bundles(store: Store, chosen: pl.DataFrame, prices: Prices) -> Iterator[RunBundle]:
    store.con.register("chosen", chosen.select("run_id").to_arrow())
    try:
        parts = {
            name: _split(_usage(store.query(sql), prices) if name == "usage" else store.query(sql))
            for name, sql in (
                ("members", _MEMBERS),
                ("attempts", _ATTEMPTS),
                ("usage", _USAGE),
                ("edges", _EDGES),
                ("versions", _VERSIONS),
                ("writes", _WRITES),
                ("outcomes", _OUTCOMES),
            )
        }
    finally:
        store.con.unregister("chosen")
    for run in chosen.iter_rows(named=True):
        rid = run["run_id"]
        yield RunBundle(run=run, **{name: _get(split, rid) for name, split in parts.items()})


def _split(df: pl.DataFrame) -> tuple[dict[str, pl.DataFrame], pl.DataFrame]:
    groups = {key[0]: part for key, part in df.partition_by("run_id", as_dict=True).items()} if df.height else {}
    return groups, df.head(0)


def _get(split: tuple[dict[str, pl.DataFrame], pl.DataFrame], run_id: str) -> pl.DataFrame:
    groups, empty = split
    return groups.get(run_id, empty)
