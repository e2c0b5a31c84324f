"""The inference contract: what every pass returns and what the store keeps of it.

A pass is ``name(frames: Frames, done: Inferred) -> PassResult``: a pure function of the ingest
frames (and the edges earlier passes found), returning edges plus diagnostics rows. Nothing here
re-reads a log.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field

import polars as pl

from sessiongraph.ingest.frames import STRS, TS

EDGE_KINDS: tuple[str, ...] = ("spawn", "launch", "artifact", "continue", "fork", "dep")

EDGES = pl.Schema(
    {
        "edge_id": pl.String,  # stable: the same logs always give the same id
        "kind": pl.String,  # one of EDGE_KINDS
        "src": pl.String,  # session_id
        "dst": pl.String,  # session_id
        "tier": pl.String,  # verified | heuristic | reported
        "evidence": pl.String,  # which log facts support it, e.g. "toolUseResult.agentId + meta.json toolUseId"
        "pass": pl.String,  # the pass that produced it
        "src_call_id": pl.String,  # the call that caused it (spawn/launch call, or the write)
        "dst_call_id": pl.String,  # artifact: the read
        "ts": TS,  # when it happened: the spawn/launch call, or the read
        "lag_s": pl.Float64,  # child start - call start; read - write
        "path": pl.String,  # artifact: the file
        "version": pl.Int32,  # artifact: which write of the file (1-based)
        "src_tier": pl.String,  # artifact: tier of the write
        "dst_tier": pl.String,  # artifact: tier of the read
        "run_id": pl.String,  # the run holding both ends; null for edges across runs
    }
)

# Everything a pass could not establish or chose not to claim, counted per code.
INFERENCE_DIAGNOSTICS = pl.Schema(
    {
        "pass": pl.String,
        "code": pl.String,
        "session_id": pl.String,
        "call_id": pl.String,
        "detail": pl.String,
        "count": pl.Int64,  # events this row stands for (reads of unwritten files are summed)
    }
)

RUNS = pl.Schema(
    {
        "run_id": pl.String,
        "root_session_id": pl.String,
        "root_harness": pl.String,
        "started_at": TS,
        "ended_at": TS,
        "n_sessions": pl.Int64,
        "n_spawns": pl.Int64,
        "n_launches": pl.Int64,
        "n_artifact_edges": pl.Int64,
        "max_depth": pl.Int32,
        "harnesses": STRS,
        "models": STRS,
        "producer": pl.String,  # null for runs inferred from logs; else the imported document's
    }
)

RUN_SESSIONS = pl.Schema(
    {
        "run_id": pl.String,
        "session_id": pl.String,
        "parent_session_id": pl.String,
        "via": pl.String,  # spawn | launch | compaction | warmup | null for the root
        "depth": pl.Int32,
        "role": pl.String,  # lead | solo | planner | implementer | reviewer | cli | subagent | worker (OCP vocabulary)
        "role_tier": pl.String,
        "phase": pl.String,  # build | post
    }
)

ARTIFACTS = pl.Schema(
    {
        "path": pl.String,
        "version": pl.Int32,
        "producer": pl.String,  # session that wrote this version
        "call_id": pl.String,
        "ts": TS,
        "how": pl.String,
        "tier": pl.String,
        "n_writes": pl.Int64,  # versions of this path
        "n_reads": pl.Int64,  # reads by other sessions joined to this version
        "writers": pl.List(pl.String),  # every session that wrote this path; on its latest version's row only
        "consumers": pl.List(pl.String),  # sessions that read this version
    }
)


# The columns sql/schema.sql declares NOT NULL (tests/test_schema.py holds the two equal): a row
# missing one would abort the store's whole inference transaction, so the partition that made
# it is refused before the write (partitions.infer_safely). ``edges`` holds lineage too, whose
# run_id is null.
NOT_NULL: dict[str, tuple[str, ...]] = {
    "edges": ("edge_id", "kind", "src", "dst", "tier", "pass"),
    "runs": ("run_id", "root_session_id", "n_sessions", "n_spawns", "n_launches", "n_artifact_edges"),
    "run_sessions": ("run_id", "session_id", "depth"),
    "artifacts": ("path", "version", "producer", "n_writes", "n_reads"),
    "inference_diagnostics": ("pass", "code", "count"),
}


@dataclass(frozen=True, slots=True)
class PassResult:
    edges: pl.DataFrame
    diagnostics: pl.DataFrame
    # Tables a pass owns besides edges ("artifacts", "runs", "run_sessions"), replacing them.
    tables: dict[str, pl.DataFrame] = field(default_factory=dict)

    @classmethod
    def empty(cls) -> PassResult:
        return cls(pl.DataFrame(schema=EDGES), pl.DataFrame(schema=INFERENCE_DIAGNOSTICS))


@dataclass
class Inferred:
    """What the passes found so far; the runs pass adds runs, members and artifact versions."""

    edges: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=EDGES))
    diagnostics: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=INFERENCE_DIAGNOSTICS))
    runs: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=RUNS))
    run_sessions: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=RUN_SESSIONS))
    artifacts: pl.DataFrame = field(default_factory=lambda: pl.DataFrame(schema=ARTIFACTS))

    def add(self, result: PassResult) -> None:
        # Lags are whole microseconds; rounding keeps float noise (0.39999...) out of the outputs.
        edges = conform(result.edges, EDGES).with_columns(pl.col("lag_s").round(6))
        self.edges = pl.concat([self.edges, edge_ids(edges)])
        self.diagnostics = pl.concat([self.diagnostics, conform(result.diagnostics, INFERENCE_DIAGNOSTICS)])
        schemas = {"runs": RUNS, "run_sessions": RUN_SESSIONS, "artifacts": ARTIFACTS, "edges": EDGES}
        for name, df in result.tables.items():
            setattr(self, name, conform(df, schemas[name]))

    def tables(self) -> dict[str, pl.DataFrame]:
        return {
            "edges": self.edges,
            "inference_diagnostics": self.diagnostics,
            "runs": self.runs,
            "run_sessions": self.run_sessions,
            "artifacts": self.artifacts,
        }


def conform(df: pl.DataFrame, schema: pl.Schema) -> pl.DataFrame:
    """Columns of ``schema`` in its order and types; missing ones null. Extra columns are a bug."""
    extra = set(df.columns) - set(schema)
    if extra:
        raise ValueError(f"columns {sorted(extra)} are not in the schema")
    return df.select(
        [
            pl.col(name).cast(dtype) if name in df.columns else pl.lit(None, dtype=dtype).alias(name)
            for name, dtype in schema.items()
        ]
    )


def edge_ids(df: pl.DataFrame) -> pl.DataFrame:
    """A stable id from what identifies an edge (kind, ends, call, path, version)."""
    key = pl.concat_str(
        [
            pl.col("kind"),
            pl.col("src"),
            pl.col("dst"),
            pl.col("src_call_id").fill_null(""),
            pl.col("dst_call_id").fill_null(""),
            pl.col("path").fill_null(""),
            pl.col("version").cast(pl.String).fill_null(""),
        ],
        separator="\x1f",
    )
    return df.with_columns(edge_id=stable_id("e_", key))


def short_hash(*parts: object) -> str:
    """16 hex of sha256 over ``parts`` joined by a unit separator: a short name for a long one
    (OCP ids, task ids, file names) that is the same across versions and machines."""
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode("utf-8", "replace")).hexdigest()[:16]


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def file_name(run_id: str, suffix: str) -> str:
    """A file name for any run id (the exports' one file per run): no separators, no dot-dot, no
    NUL, bounded length; an id that had to change keeps a hash of itself, so two never collide."""
    name = _UNSAFE.sub("_", run_id).strip("._") or "run"
    if name != run_id or len(name) > 120:
        name = f"{name[:100]}-{short_hash(run_id)}"
    return name + suffix


def stable_id(prefix: str, key: pl.Expr) -> pl.Expr:
    """``prefix`` + 16 hex of sha256(key): unlike polars' hash, the same across versions."""
    return key.map_elements(
        lambda k: prefix + hashlib.sha256(k.encode("utf-8", "replace")).hexdigest()[:16],
        return_dtype=pl.String,
    )


def diag_rows(pass_name: str, code: str, df: pl.DataFrame, detail: pl.Expr | str = "") -> pl.DataFrame:
    """Diagnostics rows for every row of ``df`` (which must have session_id, may have call_id
    and a ``count``)."""
    return df.select(
        pl.lit(pass_name).alias("pass"),
        pl.lit(code).alias("code"),
        pl.col("session_id") if "session_id" in df.columns else pl.lit(None, pl.String).alias("session_id"),
        pl.col("call_id") if "call_id" in df.columns else pl.lit(None, pl.String).alias("call_id"),
        (pl.lit(detail) if isinstance(detail, str) else detail).cast(pl.String).alias("detail"),
        pl.col("count").cast(pl.Int64) if "count" in df.columns else pl.lit(1, pl.Int64).alias("count"),
    )
