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

from collections.abc import Callable, Iterator
from dataclasses import dataclass
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


def session_tables(store: Store) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(sessions, attempts) with their run membership, tokens and dollars, not yet partitioned."""
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
    return sessions, attempts


# Rows of a table without text read from the store at once: a chunk, which the writer hashes and
# writes before it reads the next (the Parquet export's memory is one chunk, not the table).
CHUNK_ROWS = 20_000


@dataclass(frozen=True)
class _Read:
    """A table read from the store chunk by chunk: ``sql`` gives its rows (with ``_harness``),
    ``ts`` is the column whose UTC month partitions them and ``order`` their order in a partition;
    ``finish`` completes a chunk's rows in polars."""

    sql: str
    ts: str
    order: tuple[str, ...]
    finish: Callable[[pl.DataFrame], pl.DataFrame] | None = None


def _masked(edges: pl.DataFrame) -> pl.DataFrame:
    # masked at ingest already, unless the store was written before masking
    return edges.with_columns(pl.col("command", "description").map_elements(mask, return_dtype=pl.String))


def _artifact_ids(artifacts: pl.DataFrame) -> pl.DataFrame:
    key = pl.concat_str([pl.col("path"), pl.col("version").cast(pl.String)], separator="\x1f")
    return artifacts.with_columns(artifact_id=stable_id("a_", key))


def _edges_sql(privacy: str) -> str:
    return _EDGES.format(
        text=", c.command, c.description" if privacy == "full" else "",
        calls=_EDGE_CALLS if privacy == "full" else "",
    )


def _reads(privacy: str) -> dict[str, _Read]:
    return {
        "edges": _Read(_edges_sql(privacy), "ts", ("edge_id", "src", "dst"), _masked if privacy == "full" else None),
        "artifacts": _Read(_ARTIFACTS, "ts", ("path", "version"), _artifact_ids),
        "usage": _Read(_USAGE, "ts", ("session_id", "source_path", "line", "message_id")),
        "outcomes": _Read(_OUTCOMES, "ts", tuple(OUTCOMES)),
        "steps": _Read(_STEPS, "_start", ("session_id", "source_path", "seq")),
        "commits": _Read(_COMMITS, "ts", ("session_id", "source_path", "line", "kind", "pr_url")),
    }


# A row's partition as SQL: its harness as the folder names it, and its UTC month as a number
# (the folder's name is polars' spelling of it, from _part, so both say the same month).
_HARNESS = "coalesce(_harness, 'unknown')"
_MONTH = "(year(timezone('UTC', {ts})) * 12 + month(timezone('UTC', {ts})))"
# Each partition's values of the first order key, with their rows: where the chunks are cut.
_KEYS = """
SELECT {harness} AS h, {month} AS mi, min({ts}) AS at, {lead} AS k, count(*) AS n
FROM ({sql}) GROUP BY ALL
"""

Chunks = Callable[[], Iterator[pl.DataFrame]]


class Dataset:
    """The dataset's tables read from a store partition by partition, and a partition chunk by
    chunk (:meth:`partitions`). What several tables need (sessions, attempts, runs: a row per
    session, file or run, no text) is read once and held."""

    def __init__(self, store: Store, privacy: str = "metadata_only") -> None:
        self.store, self.privacy = store, privacy
        self.sessions, self.attempts = session_tables(store)
        self.runs = store.query("SELECT *, root_harness AS _harness FROM runs")

    def partitions(self, name: str, chunk_rows: int | None = None) -> Iterator[tuple[str, str, Chunks]]:
        """``name``'s partitions, sorted, each as (harness, month, chunks): ``chunks()`` yields its
        rows in order, a chunk at a time (and may be called again for the same rows)."""
        sch = schema(name, self.privacy)
        whole = self._whole(name)
        if whole is not None:
            df = _conform(whole, sch)
            parts = df.partition_by("_harness", "_month", as_dict=True, maintain_order=True) if df.height else {}
            for (harness, month), part in sorted(parts.items()):
                yield str(harness), str(month), _once(part)
            return
        read = _reads(self.privacy)[name]
        yield from self._chunked(read, sch, chunk_rows or CHUNK_ROWS)

    def table(self, name: str) -> pl.DataFrame:
        """The whole table (all partitions), rows in its order."""
        whole = self._whole(name)
        if whole is not None:
            return _conform(whole, schema(name, self.privacy))
        read = _reads(self.privacy)[name]
        parts = [chunk for _, _, chunks in self.partitions(name) for chunk in chunks()]
        if not parts:
            return self._finish(
                self.store.query(f"SELECT * FROM ({read.sql}) LIMIT 0"), read, schema(name, self.privacy)
            )
        return pl.concat(parts).sort(*read.order, nulls_last=True, maintain_order=True)

    def _whole(self, name: str) -> pl.DataFrame | None:
        """The tables of a row per run, session or file, built whole; None for the others."""
        if name == "runs":
            return _part(self.runs, "started_at", "run_id")
        if name == "sessions":
            return _part(self.sessions, "started_at", "session_id")
        if name == "attempts":
            return _part(self.attempts, "started_at", "session_id", "n")
        if name == "run_features":
            return _part(_run_features(self.store, self.runs, self.sessions), "started_at", "run_id")
        return None

    def _finish(self, df: pl.DataFrame, read: _Read, sch: pl.Schema) -> pl.DataFrame:
        if read.finish is not None:
            df = read.finish(df)
        return _conform(_part(df, read.ts, *read.order), sch)

    def _chunked(self, read: _Read, sch: pl.Schema, chunk_rows: int) -> Iterator[tuple[str, str, Chunks]]:
        """A partition larger than ``chunk_rows`` is cut into pieces (runs of consecutive values
        of the first order key); small partitions and pieces are packed into reads of at most
        ``chunk_rows`` rows, one query each, held until the next read is needed (the writer's
        second pass over a partition finds its read still there when the partition fits one)."""
        lead = read.order[0]
        month = _MONTH.format(ts=read.ts)
        keys = self.store.query(_KEYS.format(harness=_HARNESS, month=month, ts=read.ts, lead=lead, sql=read.sql))
        if not keys.height:
            return
        keys = keys.with_columns(m=pl.col("at").cast(TS).dt.strftime("%Y-%m").fill_null(UNKNOWN))
        # one name per partition (every row of a harness and month number has the month's name)
        names = keys.group_by("h", "mi").agg(pl.col("m").min(), pl.col("n").sum())
        pieces: list[list[_Piece]] = []  # per partition, in order
        for h, mi, m, n in sorted(names.iter_rows(), key=lambda r: (r[0], r[2])):
            if n <= chunk_rows:
                pieces.append([_Piece(h, mi, m, n)])
                continue
            part = keys.filter((pl.col("h") == h) & pl.col("mi").eq_missing(mi))
            part = part.group_by("k").agg(pl.col("n").sum()).sort("k", nulls_last=True)
            pieces.append(
                [
                    _Piece(h, mi, m, rows, (lo, hi))
                    for lo, hi, rows in _cut(part["k"].to_list(), part["n"].to_list(), chunk_rows)
                ]
            )
        reads: list[list[_Piece]] = [[]]
        for piece in (p for ps in pieces for p in ps):
            size = sum(p.rows for p in reads[-1])
            if reads[-1] and (size + piece.rows > chunk_rows or len(reads[-1]) >= MAX_PIECES):
                reads.append([])
            reads[-1].append(piece)
            piece.read = len(reads) - 1
        held: dict[int, pl.DataFrame] = {}

        def rows_of(piece: _Piece) -> pl.DataFrame:
            if piece.read not in held:
                held.clear()  # one read at a time
                conds, params = zip(*(p.condition(_HARNESS, month, lead) for p in reads[piece.read]), strict=True)
                sql = f"SELECT * FROM ({read.sql}) WHERE " + " OR ".join(conds)
                held[piece.read] = self._finish(self.store.query(sql, [x for ps in params for x in ps]), read, sch)
            return held[piece.read].filter(piece.mine(lead))

        def chunks(ps: list[_Piece]) -> Chunks:
            return lambda: (rows_of(p) for p in ps)

        for ps in pieces:
            yield str(ps[0].h), str(ps[0].m), chunks(ps)


def _once(part: pl.DataFrame) -> Chunks:
    """A partition held whole, as its one chunk."""
    return lambda: iter([part])


MAX_PIECES = 200  # pieces (small partitions) one read's query names at most


@dataclass
class _Piece:
    """Rows of one partition (harness ``h``, month number ``mi`` named ``m``): all of them, or
    those whose first order key lies in ``keys`` (first, last; (None, None): the null key)."""

    h: str
    mi: int | None
    m: str
    rows: int
    keys: tuple | None = None
    read: int = 0  # which read of the table holds them

    def condition(self, harness: str, month: str, lead: str) -> tuple[str, list]:
        cond, params = f"{harness} = ? AND {month} IS NOT DISTINCT FROM ?", [self.h, self.mi]
        if self.keys is not None and self.keys[0] is None:
            cond += f" AND {lead} IS NULL"
        elif self.keys is not None:
            cond += f" AND {lead} BETWEEN ? AND ?"
            params += list(self.keys)
        return f"({cond})", params

    def mine(self, lead: str) -> pl.Expr:
        """The piece's rows among its read's (after ``_finish``: ``_harness``, ``_month``)."""
        expr = (pl.col("_harness") == self.h) & (pl.col("_month") == self.m)
        if self.keys is not None and self.keys[0] is None:
            expr &= pl.col(lead).is_null()
        elif self.keys is not None:
            expr &= pl.col(lead).is_between(pl.lit(self.keys[0]), pl.lit(self.keys[1]))
        return expr


def _cut(keys: list, counts: list[int], budget: int) -> Iterator[tuple]:
    """Sorted key values (null last) with their rows -> (first, last, rows) of consecutive runs of
    keys of at most ``budget`` rows (a heavier key alone); the null key, if any, a piece of its own."""
    lo = hi = None
    total = 0
    for key, n in zip(keys, counts, strict=True):
        if key is None:
            break
        if lo is not None and total + n > budget:
            yield lo, hi, total
            lo, total = None, 0
        if lo is None:
            lo = key
        hi, total = key, total + n
    if lo is not None:
        yield lo, hi, total
    if keys and keys[-1] is None:
        yield None, None, counts[-1]


def unpriced(store: Store) -> pl.DataFrame:
    """The usage table's requests without a price, by model (model, n), models in order."""
    return store.query(f"SELECT model, count(*) AS n FROM ({_USAGE}) WHERE usd IS NULL GROUP BY model").sort("model")


def build(store: Store, *, privacy: str = "metadata_only") -> dict[str, pl.DataFrame]:
    """Every dataset table whole, with ``_harness``/``_month`` partition keys, rows in a fixed
    order (``trajectories`` only under ``full``). ``export parquet`` reads them in chunks instead
    (:class:`Dataset`); this is for a small store, or a look at one table."""
    data = Dataset(store, privacy)
    tables = {name: data.table(name) for name in TABLES if name != "trajectories"}
    if privacy == "full":
        traj = messages.build_grouped(store, data.sessions, data.attempts)
        tables["trajectories"] = _conform(_part(traj, "started_at", "session_id"), schema("trajectories", privacy))
    return tables


# Step text read at once for the Parquet ``trajectories`` table (its rows are a few times this).
TRAJECTORY_BATCH_BYTES = 8_000_000


def trajectory_partitions(
    data: Dataset, batch_bytes: int = TRAJECTORY_BATCH_BYTES
) -> Iterator[tuple[str, str, Iterator[pl.DataFrame]]]:
    """The ``trajectories`` table (``full``) partition by partition, each partition's rows in slices
    of sessions of about ``batch_bytes`` of step text, in the table's order (by session id): the
    partitions and the order are decided from the sessions first, no text read, so the writer
    holds one slice at a time, not the table."""
    store, sessions, attempts = data.store, data.sessions, data.attempts
    keyed = store.query(messages.CONVERSED).join(
        sessions.select("session_id", "_harness", "started_at"), on="session_id", how="left"
    )
    keyed = _part(keyed, "started_at", "session_id")
    weights = batches.session_text_bytes(store)
    context = messages.labels(store, attempts)
    rows_at = messages.row_index(store)
    sch = schema("trajectories", "full")

    def slices(ids: list[str]) -> Iterator[pl.DataFrame]:
        for group in batches.groups(ids, weights, batch_bytes):
            rows = messages.build(store, sessions, attempts, only=group, context=context, rows=rows_at)
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


# Per run and model: the output tokens and requests (the run's top model, run_features).
_RUN_MODELS = """
SELECT m.run_id, u.model, coalesce(sum(u.output_tokens), 0)::BIGINT AS output_tokens, count(*) AS len
FROM usage_dedup u JOIN run_sessions m USING (session_id)
WHERE u.model IS NOT NULL GROUP BY ALL
"""


def _run_features(store: Store, runs: pl.DataFrame, sessions: pl.DataFrame) -> pl.DataFrame:
    edges = store.query(f"SELECT run_id, kind, tier, src_run_id, dst_run_id FROM ({_edges_sql('metadata_only')})")
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
    money = store.query(_RUN_MONEY)
    top = (
        store.query(_RUN_MODELS)
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
