"""roles and phases: heuristic labels for each session of a run (the OCP ``role``/``phase``).

- A root that spawned or launched anything is the ``lead``, one that did not is ``solo``.
- A subagent whose declared type names a planner or reviewer takes that role, ``reported``
  (only the session asserts it); one that wrote files is an ``implementer`` (heuristic); other
  subagents are ``subagent``. A launched print-mode session is ``cli``, or ``reviewer`` when the
  command that launched it says review (``launches.review``; heuristic). Compaction runs and
  warm-ups (and Gemini background helpers) are ``worker``s; Codex review and guardian sub-agents are ``reviewer``s, with the tier
  of what tied them to the session they served (runs._codex_reviewers). Writes count when a file tool made them or the harness reported them.
- Phase: ``post`` for sessions that started after the run's last write, else ``build``.
"""

from __future__ import annotations

import polars as pl

from sessiongraph.inference.edges import RUN_SESSIONS, conform
from sessiongraph.inference.nodes import nodes
from sessiongraph.ingest.frames import Frames

# Declared subagent types (Claude agentType/subagent_type, Codex agent_role) -> role.
TYPE_ROLES = {"plan": "planner", "architect": "planner", "review": "reviewer", "audit": "reviewer"}


def _declared(col: str) -> pl.Expr:
    expr = pl.lit(None, pl.String)
    for word, role in TYPE_ROLES.items():
        expr = pl.when(pl.col(col).str.to_lowercase().str.contains(word)).then(pl.lit(role)).otherwise(expr)
    return expr


def roles(frames: Frames, members: pl.DataFrame, edges: pl.DataFrame) -> pl.DataFrame:
    """``members``: run_id, session_id, parent_session_id, via, tie, depth."""
    ns = nodes(frames).select("session_id", "agent_type", "started_at")
    parents = edges.filter(pl.col("kind").is_in(("spawn", "launch"))).select(pl.col("src").alias("session_id")).unique()
    # agent:// and local:// outputs are how subagents answer, not files they changed; a write
    # guessed from a command line (`> /tmp/log`) neither makes an implementer nor ends a build.
    writes = frames.file_events.filter(
        (pl.col("op") == "write") & (pl.col("tier") != "heuristic") & ~pl.col("path").str.contains("://")
    )
    writers = writes.select("session_id").unique()
    review_calls = frames.launches.group_by(
        pl.col("session_id").alias("src"), pl.col("call_id").alias("src_call_id")
    ).agg(launch_review=pl.col("review").any())
    launch_review = (
        edges.filter(pl.col("kind") == "launch")
        .join(review_calls, on=["src", "src_call_id"], how="left")
        .select(pl.col("dst").alias("session_id"), "launch_review")
    )
    last_write = (
        writes.join(members.select("session_id", "run_id"), on="session_id")
        .group_by("run_id")
        .agg(last_write=pl.col("ts").max())
    )
    df = (
        members.join(ns, on="session_id", how="left")
        .join(launch_review, on="session_id", how="left")
        .join(last_write, on="run_id", how="left")
        .with_columns(
            is_parent=pl.col("session_id").is_in(parents["session_id"].implode()),
            wrote=pl.col("session_id").is_in(writers["session_id"].implode()),
            declared=_declared("agent_type"),
        )
    )
    root = pl.col("via").is_null()
    launched = pl.col("via") == "launch"
    reviews = pl.col("launch_review").fill_null(False)
    helper = pl.col("via").is_in(("compaction", "warmup", "helper"))
    reviewer = pl.col("via").is_in(("review", "guardian"))
    role = (
        pl.when(helper)
        .then(pl.lit("worker"))
        .when(reviewer)
        .then(pl.lit("reviewer"))
        .when(root & pl.col("is_parent"))
        .then(pl.lit("lead"))
        .when(root)
        .then(pl.lit("solo"))
        .when(launched & reviews)
        .then(pl.lit("reviewer"))
        .when(launched)
        .then(pl.lit("cli"))
        .when(pl.col("declared").is_not_null())
        .then(pl.col("declared"))
        .when(pl.col("wrote"))
        .then(pl.lit("implementer"))
        .otherwise(pl.lit("subagent"))
    )
    role_tier = (
        pl.when(reviewer)
        .then(pl.col("tie"))
        .when(~root & ~launched & pl.col("declared").is_not_null())
        .then(pl.lit("reported"))
        .otherwise(pl.lit("heuristic"))
    )
    phase = (
        pl.when(pl.col("last_write").is_not_null() & (pl.col("started_at") > pl.col("last_write")))
        .then(pl.lit("post"))
        .otherwise(pl.lit("build"))
    )
    return conform(
        df.select(
            "run_id",
            "session_id",
            "parent_session_id",
            "via",
            "depth",
            role.alias("role"),
            role_tier.alias("role_tier"),
            phase.alias("phase"),
        ),
        RUN_SESSIONS,
    ).sort("run_id", "depth", "session_id")
