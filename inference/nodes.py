"""One row per session, whatever number of files it was logged in."""

from __future__ import annotations

import polars as pl

from sessiongraph.ingest.frames import Frames

# A Codex thread resumed into a new rollout is one session in several files.
_FIRST_NON_NULL = [
    "harness",
    "native_id",
    "agent_id",
    "session_kind",
    "layout",
    "harness_version",
    "cwd",
    "git_branch",
    "git_commit",
    "git_repo",
    "model",
    "entrypoint",
    "originator",
    "slug",
    "parent_native_id",
    "parent_agent_id",
    "parent_tool_use_id",
    "spawn_depth",
    "agent_type",
    "agent_name",
    "team_name",
    "forked_from_id",
    "root_native_id",
    "continued_from_id",
    "caused_by_id",
    "depends_on",
    "first_prompt_hash",
]


def nodes(frames: Frames) -> pl.DataFrame:
    s = frames.sessions.sort("started_at", "source_path", nulls_last=True)
    return (
        s.group_by("session_id", maintain_order=True)
        .agg(
            *[pl.col(c).drop_nulls().first().alias(c) for c in _FIRST_NON_NULL],
            # the answer of the latest file of the session: what its last run printed
            pl.col("final_answer_hash").drop_nulls().last(),
            pl.col("started_at").min(),
            pl.col("ended_at").max(),
        )
        .sort("started_at", "session_id", nulls_last=True)
    )


def call_sessions(frames: Frames, ns: pl.DataFrame) -> pl.DataFrame:
    """Calls with the harness, native id and agent id of the session that made them."""
    return frames.calls.join(
        ns.select("session_id", "harness", "native_id", pl.col("agent_id").alias("caller_agent_id")),
        on="session_id",
        how="left",
    )
