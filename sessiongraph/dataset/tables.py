"""The tables of the Parquet dataset, built from a store (``sessiongraph export parquet``).

Every table is declared once here (``TABLES``); ``DATASET.md`` documents each column and
``tests/test_parquet.py`` fails when the two disagree. A table is built by SQL over the store
(the same tables and views ``runs``/``show`` read) and finished in polars; each row carries the
two partition keys ``_harness`` and ``_month`` that the writer turns into folders and drops.

Stable ids join the tables: ``run_id`` (runs, sessions, attempts, usage, outcomes, run_features,
and edges/artifacts inside a run), ``session_id`` (sessions, attempts, usage, outcomes, edges
``src``/``dst``, artifacts ``producer``), ``attempt_id``, ``edge_id``, ``artifact_id``; an outcome
row names its attempt as a usage row does (``source_path`` and ``attempt``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import polars as pl
import pyarrow as pa

from sessiongraph.dataset import messages
from sessiongraph.dataset.messages import MESSAGE
from sessiongraph.inference import edges as inference_edges
from sessiongraph.inference.edges import stable_id
from sessiongraph.inference.task import task
from sessiongraph.ingest.frames import (  # the frames contract's dtypes, token columns
    STRS,
    TIERS,
    TS,
    USAGE_TOKENS,
)
from sessiongraph.ingest.secrets import mask
from sessiongraph.store import Store, batches

# Bumped whenever a column is added, removed, renamed or changes type or meaning.
SCHEMA_VERSION = "9"
UNKNOWN = "unknown"  # partition value for a null harness or month
TOKENS = USAGE_TOKENS
_TOKEN_COLS = {t: pl.Int64 for t in TOKENS}

# A run as the store holds it: the inference schema itself (runs are written as inferred).
RUNS = inference_edges.RUNS

SESSIONS = pl.Schema(
    {
        "session_id": pl.String,
        "run_id": pl.String,
        "parent_session_id": pl.String,
        "via": pl.String,
        "depth": pl.Int32,
        "role": pl.String,
        "role_tier": pl.String,
        "phase": pl.String,
        "native_id": pl.String,
        "agent_id": pl.String,
        "session_kind": pl.String,
        "agent_type": pl.String,
        "entrypoint": pl.String,
        "model": pl.String,
        "cwd": pl.String,
        "git_repo": pl.String,
        "git_branch": pl.String,
        "git_commit": pl.String,
        "started_at": TS,
        "ended_at": TS,
        "wall_s": pl.Float64,
        "n_files": pl.Int64,
        "n_attempts": pl.Int64,
        "state": pl.String,
        "waiting_on": pl.String,
        "requests": pl.Int64,
        **_TOKEN_COLS,
        "total_tokens": pl.Int64,
        "usd": pl.Float64,
    }
)

ATTEMPTS = pl.Schema(
    {
        "attempt_id": pl.String,
        "session_id": pl.String,
        "run_id": pl.String,
        "n": pl.Int32,
        "attempt": pl.Int32,
        "source_path": pl.String,
        "source_bytes": pl.Int64,
        "native_id": pl.String,
        "agent_id": pl.String,
        "session_kind": pl.String,
        "layout": pl.String,
        "harness_version": pl.String,
        "cwd": pl.String,
        "cwd_as_written": pl.String,
        "git_branch": pl.String,
        "git_commit": pl.String,
        "git_repo": pl.String,
        "started_at": TS,
        "ended_at": TS,
        "model": pl.String,
        "entrypoint": pl.String,
        "originator": pl.String,
        "slug": pl.String,
        "parent_native_id": pl.String,
        "parent_agent_id": pl.String,
        "parent_tool_use_id": pl.String,
        "spawn_depth": pl.Int32,
        "agent_type": pl.String,
        "agent_name": pl.String,
        "team_name": pl.String,
        "forked_from_id": pl.String,
        "root_native_id": pl.String,
        "continued_from_id": pl.String,
        "caused_by_id": pl.String,
        "depends_on": STRS,
        "first_prompt_hash": pl.String,
        "final_answer_hash": pl.String,
        "n_records": pl.Int64,
        "n_copied": pl.Int64,
        "state": pl.String,
        "waiting_on": pl.String,
        "status": pl.String,
        "outcome_tier": pl.String,
        "end_status": pl.String,
        "end_line": pl.Int64,
        "requests": pl.Int64,
        **_TOKEN_COLS,
        "usd": pl.Float64,
    }
)

# An edge as inferred, with the runs of its two ends.
EDGES = pl.Schema({**inference_edges.EDGES, "src_run_id": pl.String(), "dst_run_id": pl.String()})
# Log text: only under the ``full`` privacy profile.
EDGES_FULL = pl.Schema({**EDGES, "command": pl.String(), "description": pl.String()})

ARTIFACTS = pl.Schema(
    {
        "artifact_id": pl.String,
        "path": pl.String,
        "version": pl.Int32,
        "producer": pl.String,
        "run_id": pl.String,
        "call_id": pl.String,
        "ts": TS,
        "how": pl.String,
        "tier": pl.String,
        "n_writes": pl.Int64,
        "n_reads": pl.Int64,
        "writers": STRS,
        "consumers": STRS,
    }
)

USAGE = pl.Schema(
    {
        "session_id": pl.String,
        "run_id": pl.String,
        "attempt": pl.Int32,
        "ts": TS,
        "model": pl.String,
        "message_id": pl.String,
        "request_id": pl.String,
        **_TOKEN_COLS,
        "scope": pl.String,
        "usd": pl.Float64,
        "reported_usd": pl.Float64,
        "price_source": pl.String,
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

# The store's outcomes (state history, evidence, verdicts), so a loaded store exports them to OCP.
OUTCOMES = pl.Schema(
    {
        "session_id": pl.String,
        "run_id": pl.String,
        "attempt": pl.Int32,
        "ts": TS,
        "kind": pl.String,
        "native_state": pl.String,
        "waiting_on": pl.String,
        "evidence_kind": pl.String,
        "verifier": pl.String,
        "criterion": pl.Int32,
        "accepted": pl.Boolean,
        "tier": pl.String,
        "ref": pl.String,
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

RUN_FEATURES = pl.Schema(
    {
        "run_id": pl.String,
        "root_session_id": pl.String,
        "producer": pl.String,
        "started_at": TS,
        "ended_at": TS,
        "wall_s": pl.Float64,
        "harness_mix": pl.String,
        "harnesses": STRS,
        "n_harnesses": pl.Int64,
        "models": STRS,
        "n_models": pl.Int64,
        "top_model": pl.String,
        "n_sessions": pl.Int64,
        "n_subagents": pl.Int64,
        "n_launched": pl.Int64,
        "n_helpers": pl.Int64,
        **{f"n_{kind}_{tier}": pl.Int64 for kind in ("spawns", "launches", "artifact_flows") for tier in TIERS},
        "n_artifact_flows_in": pl.Int64,
        "n_artifact_flows_out": pl.Int64,
        "n_continued_from": pl.Int64,
        "n_calls": pl.Int64,
        "n_shell_calls": pl.Int64,
        "n_error_calls": pl.Int64,
        "requests": pl.Int64,
        **_TOKEN_COLS,
        "total_tokens": pl.Int64,
        "usd": pl.Float64,
        "usd_priced": pl.Float64,
        "unpriced_requests": pl.Int64,
        "task_type": pl.String,
        "task_size": pl.String,
        "task_touches": pl.String,
        "task_has_tests": pl.Boolean,
        "task_lang": pl.String,
        "files_written": pl.Int64,
        "tree_depth": pl.Int32,
        "tree_width": pl.Int64,
        "max_fanout": pl.Int64,
    }
)

STEP_TOKENS = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "reasoning_tokens")

# What each session did, step by step (the store's steps): never text.
STEPS = pl.Schema(
    {
        "session_id": pl.String,
        "run_id": pl.String,
        "attempt": pl.Int32,
        "seq": pl.Int64,
        "ts": TS,
        "role": pl.String,
        "kind": pl.String,
        "call_id": pl.String,
        "tool": pl.String,
        "is_error": pl.Boolean,
        "model": pl.String,
        "request_id": pl.String,
        **{t: pl.Int64 for t in STEP_TOKENS},
        "n_bytes": pl.Int64,
        "content_sha256": pl.String,
        "parent_seq": pl.Int64,
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

# One row per session with text (full only): its messages and labels (sessiongraph.dataset.trajectories).
TRAJECTORIES = pl.Schema(
    {
        "session_id": pl.String,
        "run_id": pl.String,
        "parent_session_id": pl.String,
        "spawn_call_id": pl.String,
        "spawn_seq": pl.Int64,
        "via": pl.String,
        "role": pl.String,
        "model": pl.String,
        "started_at": TS,
        "ended_at": TS,
        "n_steps": pl.Int64,
        "n_tool_calls": pl.Int64,
        "n_errors": pl.Int64,
        "requests": pl.Int64,
        **_TOKEN_COLS,
        "total_tokens": pl.Int64,
        "usd": pl.Float64,
        "state": pl.String,
        "status": pl.String,
        "outcome_tier": pl.String,
        "end_state": pl.String,
        "end_state_tier": pl.String,
        "n_test_runs": pl.Int64,
        "tests_passed": pl.Boolean,
        "tests_tier": pl.String,
        "n_commits": pl.Int64,
        "commits_tier": pl.String,
        "commits_in_branch": pl.Boolean,
        "cut_chars": pl.Int64,
        "trajectory_sha256": pl.String,
        "messages": pl.List(MESSAGE),
    }
)

# Commits, pushes and PRs a session's log shows it made (the store's commits, ingest/commits.py):
# hashes, branches and URLs, never a message or title.
COMMITS = pl.Schema(
    {
        "session_id": pl.String,
        "run_id": pl.String,
        "call_id": pl.String,
        "ts": TS,
        "kind": pl.String,
        "tier": pl.String,
        "evidence": pl.String,
        "repo": pl.String,
        "branch": pl.String,
        "commit_hash": pl.String,
        "pr_url": pl.String,
        "pr_number": pl.Int64,
        "in_branch": pl.Boolean,
        "source_path": pl.String,
        "line": pl.Int64,
    }
)

TABLES: dict[str, pl.Schema] = {
    "runs": RUNS,
    "sessions": SESSIONS,
    "attempts": ATTEMPTS,
    "edges": EDGES,
    "artifacts": ARTIFACTS,
    "usage": USAGE,
    "outcomes": OUTCOMES,
    "run_features": RUN_FEATURES,
    "steps": STEPS,
    "commits": COMMITS,
    "trajectories": TRAJECTORIES,
}
# Tables written only under the full privacy profile (they hold log text).
FULL_ONLY = frozenset({"trajectories"})

# List items are named "element", as Parquet's LIST type names them, so a file read back has
# exactly the schema it was written with.
_ARROW = {
    pl.String: pa.string(),
    pl.Int64: pa.int64(),
    pl.Int32: pa.int32(),
    pl.Float64: pa.float64(),
    pl.Boolean: pa.bool_(),
    TS: pa.timestamp("us", tz="UTC"),
    STRS: pa.list_(pa.field("element", pa.string())),
}


def schema(table: str, privacy: str = "metadata_only") -> pl.Schema:
    return EDGES_FULL if table == "edges" and privacy == "full" else TABLES[table]


def arrow_type(dtype: Any) -> pa.DataType:
    """The Arrow type a dataset column is written with (nested types item by item)."""
    if isinstance(dtype, pl.Struct):
        return pa.struct([pa.field(f.name, arrow_type(f.dtype)) for f in dtype.fields])
    if isinstance(dtype, pl.List):
        return pa.list_(pa.field("element", arrow_type(dtype.inner)))
    return _ARROW[dtype]


def arrow_schema(table: str, privacy: str = "metadata_only") -> pa.Schema:
    """The Arrow schema of the files of ``table`` (partition columns are folders, not columns)."""
    return pa.schema([pa.field(name, arrow_type(dtype)) for name, dtype in schema(table, privacy).items()])


# -- SQL over the store ---------------------------------------------------------------------------

# One row per session: session_overview + its run membership + the facts of its first file.
_SESSIONS = """
WITH f AS (
    SELECT session_id,
           first(native_id ORDER BY started_at NULLS LAST, source_path) FILTER (WHERE native_id IS NOT NULL) AS native_id,
           first(agent_id ORDER BY started_at NULLS LAST, source_path) FILTER (WHERE agent_id IS NOT NULL) AS agent_id,
           first(agent_type ORDER BY started_at NULLS LAST, source_path) FILTER (WHERE agent_type IS NOT NULL) AS agent_type,
           first(git_repo ORDER BY started_at NULLS LAST, source_path) FILTER (WHERE git_repo IS NOT NULL) AS git_repo,
           first(git_branch ORDER BY started_at NULLS LAST, source_path) FILTER (WHERE git_branch IS NOT NULL) AS git_branch,
           first(git_commit ORDER BY started_at NULLS LAST, source_path) FILTER (WHERE git_commit IS NOT NULL) AS git_commit,
           first(cwd ORDER BY started_at NULLS LAST, source_path) FILTER (WHERE cwd IS NOT NULL) AS first_cwd,
           count(*) AS n_attempts, {node_state}
    FROM sessions GROUP BY session_id
)
SELECT o.session_id, m.run_id, m.parent_session_id, m.via, m.depth, m.role, m.role_tier, m.phase,
       f.native_id, f.agent_id, o.session_kind, f.agent_type, o.entrypoint, o.model,
       f.first_cwd AS cwd, f.git_repo, f.git_branch, f.git_commit, o.started_at, o.ended_at,
       o.n_files, f.n_attempts, f.state, f.waiting_on, o.total_tokens, o.usd, o.harness AS _harness,
       {tokens}
FROM session_overview o LEFT JOIN run_sessions m USING (session_id) LEFT JOIN f USING (session_id)
UNION ALL BY NAME
-- a run member with no session: the placeholder of a parent transcript not on disk (inference/runs.py)
SELECT m.session_id, m.run_id, m.parent_session_id, m.via, m.depth, m.role, m.role_tier, m.phase,
       substr(m.session_id, strpos(m.session_id, ':') + 1) AS native_id, 0::BIGINT AS n_files,
       0::BIGINT AS n_attempts, 0::BIGINT AS total_tokens, split_part(m.session_id, ':', 1) AS _harness,
       {zeros}
FROM run_sessions m WHERE m.session_id NOT IN (SELECT session_id FROM sessions)
"""

_ATTEMPTS = """
SELECT s.* EXCLUDE (ingest_id, harness), s.harness AS _harness, m.run_id,
       row_number() OVER (PARTITION BY s.session_id
                          ORDER BY s.started_at NULLS LAST, s.source_path, coalesce(s.attempt, 1))::INTEGER AS n
FROM sessions s LEFT JOIN run_sessions m USING (session_id)
"""

_EDGES = """
SELECT e.* EXCLUDE (run_id), e.run_id, ms.run_id AS src_run_id, md.run_id AS dst_run_id, o.harness AS _harness
       {text}
FROM all_edges e
LEFT JOIN run_sessions ms ON ms.session_id = e.src
LEFT JOIN run_sessions md ON md.session_id = e.dst
LEFT JOIN (SELECT session_id, any_value(harness) AS harness FROM sessions GROUP BY session_id) o
       ON o.session_id = e.src
{calls}
"""
_EDGE_CALLS = """
LEFT JOIN (SELECT DISTINCT ON (session_id, call_id) session_id, call_id, command, description
           FROM calls ORDER BY session_id, call_id, source_path, line) c
       ON c.session_id = e.src AND c.call_id = e.src_call_id
"""

_ARTIFACTS = """
SELECT a.*, m.run_id, o.harness AS _harness
FROM artifacts a
LEFT JOIN run_sessions m ON m.session_id = a.producer
LEFT JOIN (SELECT session_id, any_value(harness) AS harness FROM sessions GROUP BY session_id) o
       ON o.session_id = a.producer
"""

# Each usage row (a request, or a session's totals) with the dollars it was priced at ingest
# (sessiongraph/costs.py).
_USAGE = """
SELECT u.* EXCLUDE (ingest_id, usd, priced_as, model_id, priced_with, scope), coalesce(u.scope, 'request') AS scope,
       u.usd::DOUBLE AS usd, m.run_id, o.harness AS _harness
FROM usage_dedup u
LEFT JOIN run_sessions m USING (session_id)
LEFT JOIN (SELECT session_id, any_value(harness) AS harness FROM sessions GROUP BY session_id) o USING (session_id)
"""
# Dollars per attempt, session and run: summed in SQL by the store's one rule (usd_total), requests
# counted by its one rule (n_requests; sql/views/costs.sql), as the views, the report and OCP
# documents do.
_ATTEMPT_USAGE = """
SELECT session_id, source_path, attempt AS file_attempt, n_requests(scope) AS requests, {sums}, usd_total(usd) AS usd
FROM usage_costs GROUP BY ALL
"""
_RUN_MONEY = "SELECT run_id, usd, usd_priced, unpriced_requests FROM run_costs"

_OUTCOMES = """
SELECT x.* EXCLUDE (ingest_id), m.run_id, o.harness AS _harness
FROM outcomes x
LEFT JOIN run_sessions m USING (session_id)
LEFT JOIN (SELECT session_id, any_value(harness) AS harness FROM sessions GROUP BY session_id) o USING (session_id)
"""

_COMMITS = """
SELECT c.* EXCLUDE (ingest_id), m.run_id, o.harness AS _harness
FROM commits c
LEFT JOIN run_sessions m USING (session_id)
LEFT JOIN (SELECT session_id, any_value(harness) AS harness FROM sessions GROUP BY session_id) o USING (session_id)
"""

# Steps are partitioned by the month their session started, so a session's steps stay together.
_STEPS = """
SELECT s.* EXCLUDE (ingest_id), m.run_id, o.harness AS _harness, o.started_at AS _start
FROM steps s
LEFT JOIN run_sessions m USING (session_id)
LEFT JOIN (SELECT session_id, any_value(harness) AS harness, min(started_at) AS started_at
           FROM sessions GROUP BY session_id) o USING (session_id)
"""

_RUN_CALLS = """
SELECT m.run_id, count(*) AS n_calls, count(*) FILTER (c.kind = 'shell') AS n_shell_calls,
       count(*) FILTER (c.is_error) AS n_error_calls
FROM calls c JOIN run_sessions m USING (session_id) GROUP BY m.run_id
"""

# As ocp.bundle._WRITES: the writes a tool made or the harness reported, not command-line guesses.
RUN_WRITES = """
SELECT DISTINCT m.run_id, f.path
FROM file_events f JOIN run_sessions m USING (session_id) WHERE f.op = 'write' AND f.tier <> 'heuristic'
"""


def session_tables(store: Store) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    """(sessions, attempts, usage) with their run membership, tokens and dollars, not yet partitioned."""
    usage = store.query(_USAGE)
    sums = ", ".join(f"sum({t})::BIGINT AS {t}" for t in TOKENS)
    attempts = _attempts(store.query(_ATTEMPTS), store.query(_ATTEMPT_USAGE.format(sums=sums)))
    sessions = _sessions(
        store.query(
            _SESSIONS.format(
                tokens=", ".join(f"o.{t}" for t in TOKENS),
                zeros=", ".join(f"0::BIGINT AS {t}" for t in TOKENS),
                node_state=Store.NODE_STATE,
            )
        ),
        attempts,
    )
    return sessions, attempts, usage


def build(store: Store, *, privacy: str = "metadata_only", streamed: bool = False) -> dict[str, pl.DataFrame]:
    """Every dataset table, with ``_harness``/``_month`` partition keys, rows in a fixed order
    (``trajectories`` only under ``full``, and not with ``streamed``: see trajectory_partitions)."""
    sessions, attempts, usage = session_tables(store)
    edges = store.query(
        _EDGES.format(
            text=", c.command, c.description" if privacy == "full" else "",
            calls=_EDGE_CALLS if privacy == "full" else "",
        )
    )
    if privacy == "full":  # masked at ingest already, unless the store was written before masking
        edges = edges.with_columns(pl.col("command", "description").map_elements(mask, return_dtype=pl.String))
    runs = store.query("SELECT *, root_harness AS _harness FROM runs")
    tables = {
        "runs": _part(runs, "started_at", "run_id"),
        "sessions": _part(sessions, "started_at", "session_id"),
        "attempts": _part(attempts, "started_at", "session_id", "n"),
        "edges": _part(edges, "ts", "edge_id", "src", "dst"),
        "artifacts": _part(
            store.query(_ARTIFACTS).with_columns(
                artifact_id=stable_id(
                    "a_", pl.concat_str([pl.col("path"), pl.col("version").cast(pl.String)], separator="\x1f")
                )
            ),
            "ts",
            "path",
            "version",
        ),
        "usage": _part(usage, "ts", "session_id", "source_path", "line", "message_id"),
        "outcomes": _part(store.query(_OUTCOMES), "ts", *OUTCOMES),
        "run_features": _part(_run_features(store, runs, sessions, edges, usage), "started_at", "run_id"),
        "steps": _part(store.query(_STEPS), "_start", "session_id", "source_path", "seq"),
        "commits": _part(store.query(_COMMITS), "ts", "session_id", "source_path", "line", "kind", "pr_url"),
    }
    if privacy == "full" and not streamed:
        traj = messages.build_grouped(store, sessions, attempts)
        tables["trajectories"] = _part(traj, "started_at", "session_id")
    return {name: _conform(df, schema(name, privacy)) for name, df in tables.items()}


# Step text read at once for the Parquet ``trajectories`` table (its rows are a few times this).
TRAJECTORY_BATCH_BYTES = 8_000_000


def trajectory_partitions(
    store: Store, batch_bytes: int = TRAJECTORY_BATCH_BYTES
) -> Iterator[tuple[str, str, Iterator[pl.DataFrame]]]:
    """The ``trajectories`` table (``full``) partition by partition, each partition's rows in slices
    of sessions of about ``batch_bytes`` of step text, in the table's order (by session id): the
    partitions and the order are decided from the sessions first, no text read, so the writer
    holds one slice at a time, not the table."""
    sessions, attempts, _ = session_tables(store)
    keyed = store.query(messages.CONVERSED).join(
        sessions.select("session_id", "_harness", "started_at"), on="session_id", how="left"
    )
    keyed = _part(keyed, "started_at", "session_id")
    weights = batches.session_text_bytes(store)
    context = messages.labels(store, attempts)
    sch = schema("trajectories", "full")

    def slices(ids: list[str]) -> Iterator[pl.DataFrame]:
        for group in batches.groups(ids, weights, batch_bytes):
            rows = messages.build(store, sessions, attempts, only=group, context=context)
            yield _conform(_part(rows, "started_at", "session_id"), sch)

    parts = keyed.partition_by("_harness", "_month", as_dict=True, maintain_order=True) if keyed.height else {}
    for (harness, month), part in sorted(parts.items()):
        yield str(harness), str(month), slices(part["session_id"].to_list())


def _conform(df: pl.DataFrame, sch: pl.Schema) -> pl.DataFrame:
    return df.select(
        *[pl.col(c).cast(t) if c in df.columns else pl.lit(None, t).alias(c) for c, t in sch.items()],
        "_harness",
        "_month",
    )


def _part(df: pl.DataFrame, ts: str, *order: str) -> pl.DataFrame:
    """Add the month partition key (UTC) and put rows in a total order."""
    return df.with_columns(
        pl.col("_harness").cast(pl.String).fill_null(UNKNOWN),
        pl.col(ts).cast(TS).dt.strftime("%Y-%m").fill_null(UNKNOWN).alias("_month"),
    ).sort(*order, nulls_last=True, maintain_order=True)


def _attempts(attempts: pl.DataFrame, per: pl.DataFrame) -> pl.DataFrame:
    return (
        attempts.with_columns(file_attempt=pl.col("attempt").fill_null(1))
        .join(per, on=["session_id", "source_path", "file_attempt"], how="left")
        .with_columns(
            attempt_id=pl.col("session_id") + "#" + pl.col("n").cast(pl.String),
            # no request, no spend; an unpriced request leaves usd null (usd_total)
            usd=pl.when(pl.col("requests").is_null()).then(0.0).otherwise(pl.col("usd")),
        )
        .with_columns(pl.col(*TOKENS, "requests").fill_null(0))
        .drop("file_attempt")
    )


def _sessions(sessions: pl.DataFrame, attempts: pl.DataFrame) -> pl.DataFrame:
    per = attempts.group_by("session_id").agg(pl.col("requests").sum())
    wall = (pl.col("ended_at") - pl.col("started_at")).dt.total_microseconds() / 1e6
    none = pl.col("n_attempts") == 0  # a placeholder: no request, nothing spent
    return sessions.join(per, on="session_id", how="left").with_columns(
        wall_s=wall,
        requests=pl.when(none).then(0).otherwise(pl.col("requests")),
        usd=pl.when(none).then(0.0).otherwise(pl.col("usd")),
    )


def _run_features(
    store: Store, runs: pl.DataFrame, sessions: pl.DataFrame, edges: pl.DataFrame, usage: pl.DataFrame
) -> pl.DataFrame:
    members = sessions.filter(pl.col("run_id").is_not_null())
    counts = members.group_by("run_id").agg(
        n_subagents=(pl.col("via") == "spawn").sum().cast(pl.Int64),
        n_launched=(pl.col("via") == "launch").sum().cast(pl.Int64),
        n_helpers=pl.col("via").is_in(("compaction", "warmup")).sum().cast(pl.Int64),
        requests=pl.col("requests").sum(),
        **{t: pl.col(t).sum() for t in (*TOKENS, "total_tokens")},
    )
    by_depth = members.group_by("run_id", "depth").len()
    shape = by_depth.group_by("run_id").agg(tree_depth=pl.col("depth").max(), tree_width=pl.col("len").max())
    fanout = (
        members.filter(pl.col("parent_session_id").is_not_null())
        .group_by("run_id", "parent_session_id")
        .len()
        .group_by("run_id")
        .agg(max_fanout=pl.col("len").max())
    )
    inside = edges.filter(pl.col("run_id").is_not_null())
    tiers = inside.group_by("run_id").agg(
        **{
            f"n_{name}_{tier}": ((pl.col("kind") == kind) & (pl.col("tier") == tier)).sum().cast(pl.Int64)
            for name, kind in (("spawns", "spawn"), ("launches", "launch"), ("artifact_flows", "artifact"))
            for tier in TIERS
        },
    )
    across = edges.filter(pl.col("run_id").is_null())
    flows_in = (
        across.filter(pl.col("kind") == "artifact")
        .group_by(pl.col("dst_run_id").alias("run_id"))
        .agg(n_artifact_flows_in=pl.len().cast(pl.Int64))
    )
    flows_out = (
        across.filter(pl.col("kind") == "artifact")
        .group_by(pl.col("src_run_id").alias("run_id"))
        .agg(n_artifact_flows_out=pl.len().cast(pl.Int64))
    )
    continued = (
        across.filter(pl.col("kind").is_in(("continue", "fork")))
        .group_by(pl.col("dst_run_id").alias("run_id"))
        .agg(n_continued_from=pl.len().cast(pl.Int64))
    )
    spent = usage.filter(pl.col("run_id").is_not_null())
    money = store.query(_RUN_MONEY)
    top = (
        spent.filter(pl.col("model").is_not_null())
        .group_by("run_id", "model")
        .agg(pl.col("output_tokens").sum(), pl.len())
        .sort("run_id", "output_tokens", "len", "model", descending=[False, True, True, False])
        .group_by("run_id", maintain_order=True)
        .agg(top_model=pl.col("model").first())
    )
    out = runs.select(
        "run_id",
        "root_session_id",
        "producer",
        "started_at",
        "ended_at",
        "_harness",
        "n_sessions",
        "harnesses",
        "models",
        "max_depth",
        wall_s=(pl.col("ended_at") - pl.col("started_at")).dt.total_microseconds() / 1e6,
        harness_mix=pl.col("harnesses").list.join("+"),
        n_harnesses=pl.col("harnesses").list.len().cast(pl.Int64),
        n_models=pl.col("models").list.len().cast(pl.Int64),
    )
    for part in (
        counts,
        shape,
        fanout,
        tiers,
        flows_in,
        flows_out,
        continued,
        money,
        top,
        store.query(_RUN_CALLS),
        _tasks(store, runs),
    ):
        out = out.join(part, on="run_id", how="left")
    zero = [c for c, t in RUN_FEATURES.items() if t == pl.Int64 and c.startswith("n_")]
    zero += ["requests", *TOKENS, "total_tokens", "max_fanout", "files_written"]
    return out.with_columns(
        pl.col(zero).fill_null(0),
        tree_depth=pl.coalesce("tree_depth", "max_depth"),
    )


def _tasks(store: Store, runs: pl.DataFrame) -> pl.DataFrame:
    """Task type and features of each run, by the same rules as OCP ``run.task``."""
    writes = store.query(RUN_WRITES)
    paths = {rid: part["path"].to_list() for (rid,), part in writes.partition_by("run_id", as_dict=True).items()}
    rows = []
    for rid in runs["run_id"]:
        t = task(rid, paths.get(rid, []))
        f = t["features"]
        rows.append(
            {
                "run_id": rid,
                "task_type": t["type"],
                "task_size": f["size"],
                "task_touches": f["touches"],
                "task_has_tests": f["has_tests"],
                "task_lang": f.get("lang"),
                "files_written": f["files_written"],
            }
        )
    return pl.DataFrame(
        rows,
        schema={
            "run_id": pl.String,
            "task_type": pl.String,
            "task_size": pl.String,
            "task_touches": pl.String,
            "task_has_tests": pl.Boolean,
            "task_lang": pl.String,
            "files_written": pl.Int64,
        },
    )
