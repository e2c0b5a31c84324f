"""continuation / fork: a new session that carries on from an earlier one.

- Claude plan hand-off or ``/clear`` (harness-log-formats.md 1.7): the new transcript starts with a
  copied record of the old session or cites "read the full transcript at <old>.jsonl": ``continue``,
  verified. Sessions that share only a ``slug``: ``continue``, heuristic (consecutive pairs).
  A snake-case ``session_id`` naming an ancestor: ``continue``, reported (a community finding).
- Codex ``forked_from_id``: ``fork``, verified (the harness wrote it when it forked).
- Other harnesses: pi/oh-my-pi ``parentSession``/``branchedFrom`` -> ``fork``, reported; a recorded
  continuation or Prickle ``lineage.cause`` -> ``continue``, verified; Prickle
  ``packet.depends_on`` -> ``dep``, reported.
"""

from __future__ import annotations

import polars as pl

from sessiongraph.inference.edges import EDGES, Inferred, PassResult, conform, diag_rows
from sessiongraph.inference.nodes import nodes
from sessiongraph.inference.tiers import rank
from sessiongraph.ingest.frames import Frames

NAME = "continuation"


def continuation(frames: Frames, done: Inferred) -> PassResult:
    ns = nodes(frames)
    main = ns.filter(pl.col("session_kind") == "main")
    claims = pl.concat(
        [
            _claim(
                main.filter(pl.col("harness") == "claude-code"),
                "continued_from_id",
                "claude-code:",
                "continue",
                "verified",
                "hand-off: copied record or cited transcript",
            ),
            _claim(
                main.filter(pl.col("harness") == "claude-code"),
                "forked_from_id",
                "claude-code:",
                "continue",
                "reported",
                "session_id ancestor",
            ),
            _claim(
                ns.filter(pl.col("harness") == "codex"),
                "forked_from_id",
                "codex:",
                "fork",
                "verified",
                "forked_from_id",
            ),
            *_other_harnesses(ns),
            _same_slug(main),
        ]
    )
    known = ns.select(pl.col("session_id").alias("src"))
    found = claims.join(known, on="src", how="semi").filter(pl.col("src") != pl.col("dst"))
    missing = claims.join(known, on="src", how="anti").filter(pl.col("tier") != "heuristic")
    # One continuation per session (the strongest claim); dependencies are kept, each one.
    cont = found.filter(pl.col("kind") != "dep")
    best = pl.concat(
        [
            cont.with_columns(r=rank("tier"))
            .sort("dst", "r")
            .group_by("dst", maintain_order=True)
            .first()
            .select(found.columns),
            found.filter(pl.col("kind") == "dep").unique(["src", "dst"], maintain_order=True),
        ]
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
        NAME,
        "continuation_source_missing",
        missing.rename({"dst": "session_id"}),
        pl.lit("continues ") + pl.col("src") + pl.lit(", which is not in the store"),
    )
    return PassResult(conform(edges, EDGES), diags)


def _other_harnesses(ns: pl.DataFrame) -> list[pl.DataFrame]:
    """pi/oh-my-pi ``parentSession`` / ``branchedFrom`` (the child's own claim: reported), a
    recorded continuation or cause (verified), and declared dependencies (reported)."""
    other = ns.filter(~pl.col("harness").is_in(("claude-code", "codex")))
    prefix = pl.col("harness") + pl.lit(":")
    deps = (
        other.filter(pl.col("depends_on").list.len() > 0)
        .explode("depends_on")
        .select(
            pl.lit("dep").alias("kind"),
            (prefix + pl.col("depends_on")).alias("src"),
            pl.col("session_id").alias("dst"),
            pl.lit("reported").alias("tier"),
            pl.lit("declared dependency").alias("evidence"),
        )
    )
    return [
        _claim(other, "forked_from_id", prefix, "fork", "reported", "parent session named in the header"),
        _claim(other, "continued_from_id", prefix, "continue", "verified", "continuation recorded by the session"),
        _claim(other, "caused_by_id", prefix, "continue", "verified", "cause recorded by the task"),
        deps,
    ]


def _claim(ns: pl.DataFrame, col: str, prefix: str | pl.Expr, kind: str, tier: str, evidence: str) -> pl.DataFrame:
    prefix = pl.lit(prefix) if isinstance(prefix, str) else prefix
    return ns.filter(pl.col(col).is_not_null()).select(
        pl.lit(kind).alias("kind"),
        (prefix + pl.col(col)).alias("src"),
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
