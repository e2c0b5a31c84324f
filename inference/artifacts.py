"""artifact: a file one session wrote and another read.

Writes and reads are the ``file_events`` frame: from file tools (verified, or reported for Codex's
own ``parsed_cmd`` reads) and from shell commands (``ingest.shell_facts``: heuristic). Every
write is a new **version** of its path; a read joins the latest earlier version written by another
session, and the edge takes the weaker tier of its two ends (both are kept, with the lag). One
edge per version and reading session: the first read, at the strongest tier seen. Reads of files
nobody wrote, and reads before the first write, are counted per session, not dropped.
``codex exec -o FILE`` is written by the launched Codex session, not the shell that ran it.
"""

from __future__ import annotations

import polars as pl

from sessiongraph.inference.edges import ARTIFACTS, EDGES, Inferred, PassResult, conform, diag_rows
from sessiongraph.inference.tiers import rank, weakest
from sessiongraph.ingest.frames import TS, Frames

NAME = "artifacts"
CODEX_OUTPUT = "codex -o"  # the `how` ingest.shell gives a `codex exec -o FILE` write
_EVENT = pl.Schema(
    {
        "session_id": pl.String,
        "call_id": pl.String,
        "ts": TS,
        "path": pl.String,
        "op": pl.String,
        "how": pl.String,
        "tier": pl.String,
        "line": pl.Int64,
    }
)


def all_events(frames: Frames, done: Inferred) -> pl.DataFrame:
    # A `codex exec -o FILE` write is recorded on the shell call that ran it; the file is
    # written by the session that call launched (the last one, as a loop may launch several).
    launched = (
        done.edges.filter(pl.col("kind") == "launch")
        .select(
            pl.col("src").alias("session_id"), pl.col("src_call_id").alias("call_id"), pl.col("dst").alias("writer")
        )
        .unique(["session_id", "call_id"], keep="last", maintain_order=True)
    )
    events = (
        frames.file_events.select(list(_EVENT))
        .join(launched, on=["session_id", "call_id"], how="left", maintain_order="left")
        .with_columns(
            session_id=pl.when((pl.col("how") == CODEX_OUTPUT) & pl.col("writer").is_not_null())
            .then(pl.col("writer"))
            .otherwise(pl.col("session_id"))
        )
        .drop("writer")
    )
    # The same touch seen twice (a Codex parsed_cmd read and our own parse of that command):
    # keep the strongest tier.
    return (
        events.filter(pl.col("ts").is_not_null())
        .with_columns(r=rank("tier"))
        .sort("r")
        .unique(["session_id", "call_id", "path", "op"], keep="first", maintain_order=True)
        .drop("r")
        .sort("path", "ts", "session_id", "line")
    )


def artifacts(frames: Frames, done: Inferred) -> PassResult:
    events = all_events(frames, done)
    writes = (
        events.filter(pl.col("op") == "write")
        .with_columns(version=pl.int_range(1, pl.len() + 1, dtype=pl.Int32).over("path"))
        .select(
            "path",
            "version",
            pl.col("session_id").alias("src"),
            pl.col("call_id").alias("src_call_id"),
            pl.col("ts").alias("wts"),
            pl.col("tier").alias("src_tier"),
            "how",
        )
    )
    reads = (
        events.filter(pl.col("op") == "read")
        .select(
            "path",
            pl.col("session_id").alias("dst"),
            pl.col("call_id").alias("dst_call_id"),
            pl.col("ts").alias("ts"),
            pl.col("tier").alias("dst_tier"),
        )
        .with_row_index("read_no")
    )
    pairs = _latest_other_write(reads, writes)
    edges = (
        pairs.with_columns(
            tier=weakest("src_tier", "dst_tier"),
            lag_s=(pl.col("ts") - pl.col("wts")).dt.total_microseconds() / 1_000_000,
        )
        .with_columns(r=rank("tier"))
        .sort("r", "ts", "read_no")  # ties: the earlier read (file order)
        .group_by("path", "version", "dst", maintain_order=True)
        .first()
        .with_columns(
            kind=pl.lit("artifact"),
            **{"pass": pl.lit(NAME)},
            evidence=pl.lit("write (") + pl.col("how") + pl.lit(") then read by another session"),
        )
        .sort("path", "version", "dst")
    )

    written_paths = writes.select("path").unique()
    unwritten = reads.join(written_paths, on="path", how="anti")
    early = reads.join(written_paths, on="path", how="semi").join(pairs.select("read_no"), on="read_no", how="anti")
    diags = pl.concat(
        [
            diag_rows(NAME, "read_unwritten", _per_session(unwritten), "reads of files no logged session wrote"),
            diag_rows(NAME, "read_before_write", _per_session(early), "reads before any other session wrote the file"),
        ]
    )
    return PassResult(
        conform(edges.drop("r", "read_no", "wts", "how"), EDGES), diags, {"artifacts": _versions(writes, pairs)}
    )


def _latest_other_write(reads: pl.DataFrame, writes: pl.DataFrame) -> pl.DataFrame:
    """Each read with the latest write of its path strictly before it by another session.

    An as-of join, not a join of every read with every write of the path (quadratic on a file
    that thousands of sessions read and hundreds wrote): the latest earlier write is found, and
    when the reader wrote it itself, the last write before that run of its own writes is taken
    instead (the writes in between are all the reader's)."""
    w = writes.sort("path", "wts", maintain_order=True).with_columns(
        run=(pl.col("src") != pl.col("src").shift(1).over("path")).fill_null(True).cast(pl.Int32).cum_sum()
    )
    # The last write of each run of one session's writes, and the run before each run's.
    last_of_run = w.group_by("run", maintain_order=True).last().select("run", "version")
    w = w.join(
        last_of_run.with_columns(run=pl.col("run") + 1).rename({"version": "prev_other"}),
        on="run",
        how="left",
        maintain_order="left",
    )
    w = w.with_columns(
        prev_other=pl.when(pl.col("run") == pl.col("run").min().over("path")).then(None).otherwise(pl.col("prev_other"))
    )
    latest = reads.sort("path", "ts").join_asof(
        w.select("path", "wts", "version", "src", "prev_other"),
        left_on="ts",
        right_on="wts",
        by="path",
        strategy="backward",
        allow_exact_matches=False,
        check_sortedness=False,  # both sorted above
    )
    picked = pl.when(pl.col("src") != pl.col("dst")).then(pl.col("version")).otherwise(pl.col("prev_other"))
    chosen = latest.select("read_no", version=picked).filter(pl.col("version").is_not_null())
    return (
        reads.join(chosen, on="read_no", how="inner").join(writes, on=["path", "version"], how="inner").sort("read_no")
    )


def _per_session(reads: pl.DataFrame) -> pl.DataFrame:
    return reads.group_by("dst").agg(count=pl.len()).rename({"dst": "session_id"}).sort("session_id")


def _versions(writes: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    per_path = writes.group_by("path").agg(n_writes=pl.len(), writers=pl.col("src").unique(maintain_order=True))
    per_version = pairs.group_by("path", "version").agg(
        n_reads=pl.len(), consumers=pl.col("dst").unique(maintain_order=True)
    )
    out = (
        writes.join(per_path, on="path", how="left")
        .join(per_version, on=["path", "version"], how="left")
        .select(
            "path",
            "version",
            pl.col("src").alias("producer"),
            pl.col("src_call_id").alias("call_id"),
            pl.col("wts").alias("ts"),
            "how",
            pl.col("src_tier").alias("tier"),
            "n_writes",
            pl.col("n_reads").fill_null(0),
            # On the latest version only: repeated on every version, a file that n sessions each
            # wrote once would hold n x n names (quadratic in a team archive's hot paths).
            pl.when(pl.col("version") == pl.col("n_writes"))
            .then(pl.col("writers"))
            .otherwise(pl.lit([], dtype=pl.List(pl.String)))
            .alias("writers"),
            pl.col("consumers").fill_null(pl.lit([], dtype=pl.List(pl.String))),
        )
    )
    return conform(out, ARTIFACTS)
