"""What a store holds: its schema version, its tables by kind, and the DDL and views of
``sql/`` (``sql/schema.sql``: a schema change bumps SCHEMA_VERSION)."""

from __future__ import annotations

from importlib import resources

import polars as pl

from sessiongraph.inference import partitions
from sessiongraph.inference.edges import ARTIFACTS, EDGES, RUN_SESSIONS, RUNS
from sessiongraph.ingest.frames import SCHEMAS

# 10 -> 11: canonical paths, hashes, teams, dollars, end status, diagnostic counts; 11 -> 12: commits;
# 12 -> 13: commit_checks (ingest --git)
SCHEMA_VERSION = "13"
FRAME_TABLES: tuple[str, ...] = tuple(SCHEMAS)
INFERENCE_TABLES: dict[str, pl.Schema] = {
    "edges": EDGES,
    "lineage": EDGES,
    "runs": RUNS,
    "run_sessions": RUN_SESSIONS,
    "artifacts": ARTIFACTS,
    "inference_diagnostics": partitions.STORED_DIAGNOSTICS,
}
# Rows kept per source file besides the frames, replaced with them.
FILE_TABLES: tuple[str, ...] = (*FRAME_TABLES, "ingested_files", "checkpoints", "partition_keys")


def sql(name: str) -> str:
    return resources.files("sessiongraph.sql").joinpath(name).read_text(encoding="utf-8")


def view_sql() -> list[str]:
    views = resources.files("sessiongraph.sql").joinpath("views")
    # In the order they read each other: costs reads usage_dedup, session_overview both.
    first = ("usage_dedup.sql", "costs.sql")
    names = sorted(p.name for p in views.iterdir() if p.name.endswith(".sql"))
    names.sort(key=lambda n: first.index(n) if n in first else len(first))
    return [views.joinpath(n).read_text(encoding="utf-8") for n in names]
