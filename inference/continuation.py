"""continuation / fork: a new session that carries on from an earlier one.

- Claude plan hand-off or ``/clear`` (harness-log-formats.md 1.7): the new transcript starts with a
  copied record of the old session or cites "read the full transcript at <old>.jsonl": ``continue``,
  verified. Sessions that share only a ``slug``: ``continue``, heuristic (consecutive pairs).
  A snake-case ``session_id`` naming an ancestor: ``continue``, reported (a community finding).
- Codex ``forked_from_id``: ``fork``, verified (the harness wrote it when it forked).
"""

from __future__ import annotations

import polars as pl

from ingest.frames import Frames
from inference.edges import EDGES, Inferred, PassResult, conform, diag_rows
from inference.nodes import nodes
from inference.tiers import rank

NAME = "continuation"


def continuation(frames: Frames, done: Inferred) -> PassResult:
    ns = nodes(frames)
    main = ns.filter(pl.col("session_kind") == "main")
    claims = pl.concat(
        [
            _claim(main.filter(pl.col("harness") == "claude-code"), "continued_from_id", "claude-code:", "continue",
                   "verified", "hand-off: copied record or cited transcript"),
            _claim(main.filter(pl.col("harness") == "claude-code"), "forked_from_id", "claude-code:", "continue",
                   "reported", "session_id ancestor"),
            _claim(ns.filter(pl.col("harness") == "codex"), "forked_from_id", "codex:", "fork",
                   "verified", "forked_from_id"),
            _same_slug(main),
        ]
    )
    known = ns.select(pl.col("session_id").alias("src"))
    found = claims.join(known, on="src", how="semi").filter(pl.col("src") != pl.col("dst"))
    missing = claims.join(known, on="src", how="anti").filter(pl.col("tier") != "heuristic")
    best = (
        found.with_columns(r=rank("tier"))
        .sort("dst", "r")
        .group_by("dst", maintain_order=True)
        .first()
        .drop("r")
    )
    starts = ns.select(pl.col("session_id").alias("dst"), pl.col("started_at").alias("ts"))
    ends = ns.select(pl.col("session_id").alias("src"), pl.col("ended_at").alias("src_end"))
    edges = (
        best.join(starts, on="dst", how="left")
        .join(ends, on="src", how="left")
        .with_columns(
            lag_s=(pl.col("ts") - pl.col("src_end")).dt.total_microseconds() / 1_000_000,
            **{"pass": pl.lit(NAME)},
        )
        .drop("src_end")
    )
    diags = diag_rows(
        NAME, "continuation_source_missing", missing.rename({"dst": "session_id"}),
        pl.lit("continues ") + pl.col("src") + pl.lit(", which is not in the store"),
    )
    return PassResult(conform(edges, EDGES), diags)


def _claim(ns: pl.DataFrame, col: str, prefix: str, kind: str, tier: str, evidence: str) -> pl.DataFrame:
    return ns.filter(pl.col(col).is_not_null()).select(
        pl.lit(kind).alias("kind"),
        (pl.lit(prefix) + pl.col(col)).alias("src"),
        pl.col("session_id").alias("dst"),
        pl.lit(tier).alias("tier"),
        pl.lit(evidence).alias("evidence"),
    )


def _same_slug(main: pl.DataFrame) -> pl.DataFrame:
    """Claude keeps a conversation's slug across hand-offs: each session continues the previous."""
    s = (
        main.filter((pl.col("harness") == "claude-code") & pl.col("slug").is_not_null())
        .sort("slug", "started_at")
        .with_columns(prev=pl.col("session_id").shift(1).over("slug"))
        .filter(pl.col("prev").is_not_null())
    )
    return s.select(
        pl.lit("continue").alias("kind"),
        pl.col("prev").alias("src"),
        pl.col("session_id").alias("dst"),
        pl.lit("heuristic").alias("tier"),
        pl.lit("same slug").alias("evidence"),
    )
