"""runs: a root session plus everything it spawned or launched, transitively (and
its compaction runs, warm-ups and harness-run reviewers, which are spend but not spawns).

Subagents (and compaction runs, warm-ups ...) whose parent transcript is absent but whose folder
or records name the same parent id (``parent_native_id``) form one run headed by a **placeholder**
for that parent: a ``run_sessions`` row (depth 0, role ``lead``) with no ``sessions`` row, its id the
one the parent would have, so its run id is the one the parent's transcript gives when it turns
up. Its members hang off it by ``parent_session_id`` and ``via`` (``spawn`` for subagents), with
no edge: no call of the parent is known (the OCP writer draws a ``reported`` spawn edge, only the
children say so). Not one run per orphan.

Run ids are stable (a hash of the root's session id), so the same logs always give the same
ids. Edges whose two ends fall in one run get its ``run_id``; artifact and continuation edges
that cross runs keep ``run_id`` null and go to the store's ``lineage`` table.
"""

from __future__ import annotations

import polars as pl

from sessiongraph.inference.declared import declared
from sessiongraph.inference.edges import (
    ARTIFACTS,
    EDGES,
    RUN_SESSIONS,
    RUNS,
    Inferred,
    PassResult,
    conform,
    diag_rows,
    stable_id,
)
from sessiongraph.inference.nodes import nodes
from sessiongraph.inference.roles import roles
from sessiongraph.ingest.frames import Frames

NAME = "runs"
TREE_KINDS = ("spawn", "launch")
MAX_DEPTH = 64  # deeper spawn chains than any harness allows; beyond it we assume a cycle


def runs(frames: Frames, done: Inferred) -> PassResult:
    ns = nodes(frames).filter(pl.col("session_kind") != "imported")  # their runs are declared
    tree = (
        done.edges.filter(pl.col("kind").is_in(TREE_KINDS))
        .sort(pl.col("kind") != "spawn", "ts")  # a child both spawned and launched: the spawn wins
        .unique("dst", keep="first", maintain_order=True)
        .select(
            pl.col("dst").alias("session_id"), pl.col("src").alias("parent_session_id"), pl.col("kind").alias("via")
        )
    )
    tree = pl.concat([tree.with_columns(tie=pl.lit(None, pl.String)), _helpers(ns, tree)])
    orphans = _orphans(ns, tree)
    tree = pl.concat([tree, orphans.select(tree.columns)])
    absent = orphans.select(
        pl.col("parent_session_id").alias("session_id"), pl.col("parent_harness").alias("harness")
    ).unique("session_id", keep="first", maintain_order=True)
    members, cycles = _roots(pl.concat([ns.select("session_id"), absent.select("session_id")]), tree)
    members = members.with_columns(run_id=stable_id("run_", pl.col("root")))

    run_of = members.select("session_id", "run_id")
    edges = (
        done.edges.drop("run_id")
        .join(run_of.rename({"session_id": "src", "run_id": "src_run"}), on="src", how="left")
        .join(run_of.rename({"session_id": "dst", "run_id": "dst_run"}), on="dst", how="left")
        .with_columns(run_id=pl.when(pl.col("src_run") == pl.col("dst_run")).then(pl.col("src_run")))
        .drop("src_run", "dst_run")
    )
    info = pl.concat(
        [
            ns.select("session_id", "harness", "model", "started_at", "ended_at", on_disk=pl.lit(True)),
            absent.with_columns(on_disk=pl.lit(False)),
        ],
        how="diagonal",
    )
    counts = (
        edges.filter(pl.col("run_id").is_not_null())
        .group_by("run_id")
        .agg(
            n_spawns=(pl.col("kind") == "spawn").sum(),
            n_launches=(pl.col("kind") == "launch").sum(),
            n_artifact_edges=(pl.col("kind") == "artifact").sum(),
        )
    )
    table = (
        members.join(info, on="session_id", how="left")
        .group_by("run_id")
        .agg(
            root_session_id=pl.col("root").first(),
            root_harness=pl.col("harness").filter(pl.col("session_id") == pl.col("root")).first(),
            started_at=pl.col("started_at").min(),
            ended_at=pl.col("ended_at").max(),
            n_sessions=pl.col("on_disk").sum(),  # a placeholder is no session
            max_depth=pl.col("depth").max(),
            harnesses=pl.col("harness").drop_nulls().unique().sort(),
            models=pl.col("model").drop_nulls().unique().sort(),
        )
        .join(counts, on="run_id", how="left")
        .with_columns(pl.col("n_spawns", "n_launches", "n_artifact_edges").fill_null(0))
        .sort("started_at", "run_id", nulls_last=True)
    )
    run_sessions = roles(frames, members.join(tree, on="session_id", how="left").drop("root"), edges)
    # A placeholder heads its run, even when its only members are helpers (no spawn edge).
    run_sessions = run_sessions.with_columns(
        role=pl.when(pl.col("session_id").is_in(absent["session_id"].implode()))
        .then(pl.lit("lead"))
        .otherwise(pl.col("role"))
    )
    stated = declared(frames, set(table["run_id"]))
    diags = pl.concat(
        [
            diag_rows(NAME, "cycle_broken", cycles, "spawn/launch cycle; this session made a root"),
            stated.diagnostics,
        ]
    )
    return PassResult(
        edges.head(0),
        diags,
        {
            "edges": pl.concat([conform(edges, EDGES), stated.edges]),
            "runs": pl.concat([conform(table, RUNS), stated.runs]),
            "run_sessions": pl.concat([conform(run_sessions, RUN_SESSIONS), stated.run_sessions]),
            "artifacts": pl.concat([conform(done.artifacts, ARTIFACTS), stated.artifacts]),
        },
    )


def _helpers(ns: pl.DataFrame, tree: pl.DataFrame) -> pl.DataFrame:
    """Compaction runs, warm-ups and harness-run reviewers are not spawns, but their tokens are
    spend of the session they served: they join its run (no edge, ``via`` says what they are,
    ``tie`` how they were tied)."""
    claude_main = ns.filter((pl.col("harness") == "claude-code") & (pl.col("session_kind") == "main")).select(
        "native_id", pl.col("session_id").alias("parent_session_id")
    )
    claude = (
        ns.filter(pl.col("session_kind").is_in(("compaction", "warmup")) & (pl.col("harness") == "claude-code"))
        .join(claude_main, on="native_id", how="inner")
        .select("session_id", "parent_session_id", pl.col("session_kind").alias("via"), pl.lit("verified").alias("tie"))
    )
    gemini = (
        ns.filter((pl.col("harness") == "gemini-cli") & (pl.col("session_kind") == "helper"))
        .with_columns(parent_session_id=pl.lit("gemini-cli:") + pl.col("parent_native_id"))
        .join(ns.select(pl.col("session_id").alias("parent_session_id")), on="parent_session_id", how="semi")
        .select(
            "session_id", "parent_session_id", pl.col("session_kind").alias("via"), pl.lit("heuristic").alias("tie")
        )
    )
    helpers = pl.concat([claude, _codex_reviewers(ns), gemini])
    return helpers.join(tree.select("session_id"), on="session_id", how="anti")


def _orphans(ns: pl.DataFrame, tree: pl.DataFrame) -> pl.DataFrame:
    """Sessions with no parent in ``tree`` whose recorded parent (``<harness>:<parent_native_id>``)
    is not among ``ns``: tree rows to that missing parent's placeholder, a spawn for subagents and
    workflow sessions, else the helper's kind."""
    known = ns["session_id"].implode()
    return (
        ns.filter(
            ~pl.col("session_kind").is_in(("main", "imported"))
            & pl.col("parent_native_id").is_not_null()
            & pl.col("harness").is_not_null()
        )
        .join(tree.select("session_id"), on="session_id", how="anti")
        .with_columns(parent_session_id=pl.col("harness") + pl.lit(":") + pl.col("parent_native_id"))
        .filter(~pl.col("parent_session_id").is_in(known) & (pl.col("parent_session_id") != pl.col("session_id")))
        .select(
            "session_id",
            "parent_session_id",
            via=pl.when(pl.col("session_kind").is_in(("subagent", "workflow")))
            .then(pl.lit("spawn"))
            .otherwise(pl.col("session_kind")),
            tie=pl.lit("reported"),
            parent_harness="harness",
            started_at="started_at",
        )
    )


def _codex_reviewers(ns: pl.DataFrame) -> pl.DataFrame:
    """Codex ``review`` and ``guardian`` sub-agents serve one thread: the one their header names
    (``parent_thread_id``, else ``forked_from_id``: verified), else the Codex session of the same
    cwd that was running when they started, the latest started (heuristic)."""
    codex = ns.filter(pl.col("harness") == "codex")
    helpers = codex.filter(pl.col("session_kind").is_in(("review", "guardian")))
    known = codex.select(pl.col("session_id").alias("parent_session_id"))
    named = (
        helpers.with_columns(
            parent_session_id=pl.lit("codex:") + pl.coalesce("parent_native_id", "forked_from_id"),
        )
        .join(known, on="parent_session_id", how="semi")
        .select("session_id", "parent_session_id", pl.col("session_kind").alias("via"), pl.lit("verified").alias("tie"))
    )
    served = codex.filter(~pl.col("session_kind").is_in(("review", "guardian"))).select(
        pl.col("session_id").alias("parent_session_id"), "cwd", pl.col("started_at").alias("p_start"), "ended_at"
    )
    by_time = (
        helpers.join(named.select("session_id"), on="session_id", how="anti")
        .join(served.rename({"ended_at": "p_end"}), on="cwd", how="inner")
        .filter((pl.col("p_start") <= pl.col("started_at")) & (pl.col("started_at") <= pl.col("p_end")))
        .sort("session_id", "p_start", descending=[False, True])
        .unique("session_id", keep="first", maintain_order=True)
        .select(
            "session_id", "parent_session_id", pl.col("session_kind").alias("via"), pl.lit("heuristic").alias("tie")
        )
    )
    return pl.concat([named, by_time])


def _roots(sessions: pl.DataFrame, tree: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Root and depth of every session, walking parent links one level per step."""
    known = sessions["session_id"].implode()
    # A parent that is not a known session cannot head a run: its child is the root.
    links = sessions.join(tree, on="session_id", how="left").select(
        pl.col("session_id").alias("up"),
        pl.when(pl.col("parent_session_id").is_in(known)).then(pl.col("parent_session_id")).alias("next"),
    )
    cur = links.select(pl.col("up").alias("session_id"), pl.col("next").alias("up"))
    cur = cur.with_columns(depth=pl.col("up").is_not_null().cast(pl.Int32))
    for _ in range(MAX_DEPTH):
        step = cur.join(links, on="up", how="left")
        if step["next"].is_null().all():
            break
        cur = step.select(
            "session_id",
            pl.coalesce("next", "up").alias("up"),
            pl.col("depth") + pl.col("next").is_not_null().cast(pl.Int32),
        )
    # Still climbing after MAX_DEPTH levels means a cycle: each such session heads its own run.
    cycles = cur.join(links.filter(pl.col("next").is_not_null()), on="up", how="semi").select("session_id")
    members = cur.select(
        "session_id",
        pl.when(pl.col("session_id").is_in(cycles["session_id"].implode()))
        .then(pl.col("session_id"))
        .otherwise(pl.coalesce("up", "session_id"))
        .alias("root"),
        pl.col("depth").cast(pl.Int32),
    )
    return members, cycles
