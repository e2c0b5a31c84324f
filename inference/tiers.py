"""Evidence tiers, strongest first, and the weakest-end rule for edges with two ends."""

from __future__ import annotations

import polars as pl

from sessiongraph.ingest.frames import TIERS

RANK = {t: i for i, t in enumerate(TIERS)}


def rank(col: str | pl.Expr) -> pl.Expr:
    """0 for verified, 1 heuristic, 2 reported: sort ascending to put the strongest first."""
    expr = pl.col(col) if isinstance(col, str) else col
    return expr.replace_strict(RANK, default=len(TIERS), return_dtype=pl.Int8)


def weakest(a: str | pl.Expr, b: str | pl.Expr) -> pl.Expr:
    """The weaker of two tiers: an edge is only as sure as its least sure end."""
    ra, rb = rank(a), rank(b)
    return pl.max_horizontal(ra, rb).replace_strict(
        {i: t for t, i in RANK.items()}, default=None, return_dtype=pl.String
    )
