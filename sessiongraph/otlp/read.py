"""Everything one run's trace is made of, read from the store in bulk.

Each query runs once per export, for all the chosen runs (Store.per_run).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import polars as pl

from sessiongraph.ingest.frames import TIERS
from sessiongraph.store import Store


@dataclass(frozen=True, slots=True)
class RunRows:
    run: dict
    members: pl.DataFrame  # one row per session: facts, usage sums, dollars, the edge to its parent
    calls: pl.DataFrame  # one row per tool call of a member (its first copy when a log repeats it)
    flows: pl.DataFrame  # artifact edges into this run's sessions, from this run or another


_TIER_RANK = "CASE tier " + " ".join(f"WHEN '{t}' THEN {i}" for i, t in enumerate(TIERS)) + f" ELSE {len(TIERS)} END"

# A member's parent edge: of the spawn or launch edges from its parent (``via`` says which), the
# best-evidenced one; none for the root, a placeholder's children and helpers (compaction,
# warm-ups, reviewers: tied to their session without an edge, inference/runs.py).
# Usage as the views sum it (usage_costs; usd_total, and n_requests: a session's totals are no
# request, sql/views/costs.sql); a token sum stays null where no row records it (Crush), and the
# harness's own dollars ride along apart (reported_total).
_MEMBERS = f"""
WITH s AS (
    SELECT session_id, any_value(harness) AS harness, any_value(native_id) AS native_id,
           any_value(session_kind) AS session_kind, any_value(agent_type) AS agent_type,
           any_value(agent_name) AS agent_name, arg_max(model, n_records) AS model,
           arg_min(cwd, started_at) AS cwd, min(started_at) AS started_at, max(ended_at) AS ended_at,
           arg_max(end_status, coalesce(ended_at, 'epoch'::TIMESTAMPTZ)) AS end_status
    FROM sessions GROUP BY session_id
), u AS (
    SELECT session_id, n_requests(scope) AS requests,
           sum(input_tokens)::BIGINT AS input_tokens,
           sum(output_tokens)::BIGINT AS output_tokens,
           sum(cache_read_tokens)::BIGINT AS cache_read_tokens,
           sum(cache_creation_tokens)::BIGINT AS cache_creation_tokens,
           sum(reasoning_tokens)::BIGINT AS reasoning_tokens,
           usd_total(usd) AS usd, reported_total(reported_usd) AS reported_usd,
           min(ts) AS first_request, max(ts) AS last_request
    FROM usage_costs WHERE run_id IN (SELECT run_id FROM chosen) GROUP BY session_id
), e AS (
    SELECT DISTINCT ON (dst, src, kind) dst, src, kind, edge_id, tier, evidence, src_call_id, ts
    FROM edges WHERE kind IN ('spawn', 'launch') AND run_id IN (SELECT run_id FROM chosen)
    ORDER BY dst, src, kind, {_TIER_RANK}, ts NULLS LAST, edge_id
)
SELECT m.run_id, m.session_id, m.parent_session_id, m.via, m.depth, m.role,
       coalesce(s.harness, split_part(m.session_id, ':', 1)) AS harness,
       coalesce(s.native_id, substr(m.session_id, strpos(m.session_id, ':') + 1)) AS native_id,
       s.session_id IS NOT NULL AS on_disk,
       s.session_kind, s.agent_type, s.agent_name, s.model, s.cwd, s.end_status,
       coalesce(s.started_at, u.first_request) AS started_at, coalesce(s.ended_at, u.last_request) AS ended_at,
       coalesce(u.requests, 0) AS requests, u.input_tokens, u.output_tokens, u.cache_read_tokens,
       u.cache_creation_tokens, u.reasoning_tokens, u.usd, u.reported_usd,
       e.edge_id, e.tier AS edge_tier, e.evidence AS edge_evidence, e.src_call_id AS edge_call_id, e.ts AS edge_ts
FROM run_sessions m
LEFT JOIN s USING (session_id)
LEFT JOIN u USING (session_id)
LEFT JOIN e ON e.dst = m.session_id AND e.src = m.parent_session_id AND e.kind = m.via
WHERE m.run_id IN (SELECT run_id FROM chosen)
ORDER BY m.run_id, m.depth, started_at NULLS LAST, m.session_id
"""

# The command and description ride along for the ``full`` profile only (spans.py).
_CALLS = """
SELECT * FROM (
    SELECT DISTINCT ON (c.session_id, coalesce(c.call_id, c.source_path || ':' || c.line))
           m.run_id, c.session_id, c.call_id, c.tool, c.kind, c.started_at, c.ended_at, c.is_error, c.exit_code,
           c.command, c.description, c.source_path, c.line
    FROM calls c JOIN run_sessions m USING (session_id)
    WHERE m.run_id IN (SELECT run_id FROM chosen)
    ORDER BY c.session_id, coalesce(c.call_id, c.source_path || ':' || c.line), c.started_at NULLS LAST,
             c.source_path, c.line
)
ORDER BY run_id, session_id, coalesce(started_at, ended_at) NULLS LAST, source_path, line, call_id
"""

# An artifact edge runs from the writer to the reader; the link goes on the reader's span. A flow
# across runs (the lineage table) names the writer's run, whose trace holds the writer's span.
_FLOWS = """
WITH a AS (
    SELECT * FROM edges WHERE kind = 'artifact'
    UNION ALL BY NAME
    SELECT * FROM lineage WHERE kind = 'artifact'
)
SELECT d.run_id, a.dst, a.dst_call_id, a.src, a.src_call_id, s.run_id AS src_run_id,
       a.path, a.version, a.tier, a.evidence, a.edge_id, a.ts
FROM a
JOIN run_sessions d ON d.session_id = a.dst
JOIN run_sessions s ON s.session_id = a.src
WHERE d.run_id IN (SELECT run_id FROM chosen)
ORDER BY d.run_id, a.ts NULLS LAST, a.edge_id
"""


def run_rows(store: Store, chosen: pl.DataFrame) -> Iterator[RunRows]:
    for run, parts in store.per_run(chosen, {"members": _MEMBERS, "calls": _CALLS, "flows": _FLOWS}):
        yield RunRows(run=run, **parts)
