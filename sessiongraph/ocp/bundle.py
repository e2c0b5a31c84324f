"""Everything one run's OCP document is made of, read from the store in bulk.

The store is read once per export (not once per run): each table is filtered to the chosen runs
and split by run id, so exporting ten thousand runs costs a handful of queries.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl

from sessiongraph.ingest.frames import USAGE_TOKENS
from sessiongraph.store import Store
from sessiongraph.store.database import PER_RUN_SESSIONS


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
       -- a member with no sessions row is the placeholder of a parent transcript not on disk
       coalesce(s.harness, split_part(m.session_id, ':', 1)) AS harness,
       coalesce(s.native_id, substr(m.session_id, strpos(m.session_id, ':') + 1)) AS native_id,
       s.session_id IS NOT NULL AS on_disk,
       s.session_kind, s.agent_type, s.cwd, s.git_repo, s.git_commit, pr.pr_repo,
       s.entrypoint, s.model, s.started_at, s.ended_at, s.state, s.waiting_on
FROM run_sessions m
LEFT JOIN (
    SELECT session_id, any_value(harness) AS harness, any_value(native_id) AS native_id,
           any_value(session_kind) AS session_kind, any_value(agent_type) AS agent_type,
           arg_min(cwd, started_at) AS cwd, max(git_repo) AS git_repo, arg_min(git_commit, started_at) AS git_commit,
           any_value(entrypoint) AS entrypoint, arg_max(model, n_records) AS model,
           min(started_at) AS started_at, max(ended_at) AS ended_at, """
    + Store.NODE_STATE
    + """
    FROM sessions GROUP BY session_id
) s USING (session_id)
-- a Claude Code session names no repository, but a pr-link record it wrote names the PR's
LEFT JOIN (
    SELECT session_id, arg_min(repo, line) AS pr_repo FROM commits
    WHERE evidence = 'pr_link' AND repo IS NOT NULL GROUP BY session_id
) pr USING (session_id)
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

# Token sums and dollars per (run, session, file, attempt, model), from the usage rows priced at
# ingest, summed by the store's one rule (usd_total, sql/views/costs.sql); ``requests`` the
# request rows (n_requests), ``session_rows`` the rows of a session's totals, a token sum null
# where no row records it; ``attempt_usd`` the attempt's whole dollars by the same rule,
# ``reported_usd`` the harness's own (reported_total), ``sources`` the price sources used, ``day``
# the last row's UTC date.
_USAGE = """
WITH r AS (SELECT * FROM usage_costs WHERE run_id IN (SELECT run_id FROM chosen)),
a AS (SELECT session_id, source_path, attempt, usd_total(usd) AS attempt_usd FROM r GROUP BY ALL)
SELECT r.run_id, r.session_id, r.source_path, r.attempt, r.model, n_requests(r.scope) AS requests,
       count(*) FILTER (WHERE NOT is_request(r.scope)) AS session_rows, TOKEN_SUMS,
       usd_total(r.usd) AS usd, any_value(a.attempt_usd) AS attempt_usd,
       reported_total(r.reported_usd) AS reported_usd,
       coalesce(list(DISTINCT r.price_source ORDER BY r.price_source) FILTER (r.price_source IS NOT NULL), [])
           AS sources,
       max(r.day) AS day
FROM r JOIN a USING (session_id, source_path, attempt)
GROUP BY r.run_id, r.session_id, r.source_path, r.attempt, r.model
ORDER BY r.run_id, r.session_id, r.source_path, r.attempt, r.model NULLS LAST
""".replace("TOKEN_SUMS", ", ".join(f"sum(r.{t})::BIGINT AS {t}" for t in USAGE_TOKENS))


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


def bundles(store: Store, chosen: pl.DataFrame, batch_sessions: int = PER_RUN_SESSIONS) -> Iterator[RunBundle]:
    """Each chosen run's bundle, in ``chosen``'s order, read in groups of whole runs of about
    ``batch_sessions`` sessions (``Store.per_run``): memory is one group's rows, not the store's."""
    queries = {
        "members": _MEMBERS,
        "attempts": _ATTEMPTS,
        "usage": _USAGE,
        "edges": _EDGES,
        "versions": _VERSIONS,
        "writes": _WRITES,
        "outcomes": _OUTCOMES,
    }
    for run, parts in store.per_run(chosen, queries, batch_sessions=batch_sessions):
        yield RunBundle(run=run, **parts)
