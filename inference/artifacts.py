"""artifact: a file one session wrote and another read.

Writes and reads come from file tools (the adapters' ``file_events``: verified, or reported for
Codex's own ``parsed_cmd`` reads) and from shell commands (``inference.shell``: heuristic). Every
write is a new **version** of its path; a read joins the latest earlier version written by another
session, and the edge takes the weaker tier of its two ends (both are kept, with the lag). One
edge per version and reading session: the first read, at the strongest tier seen. Reads of files
nobody wrote, and reads before the first write, are counted per session, not dropped.
``codex exec -o FILE`` is written by the launched Codex session, not the shell that ran it.
"""

from __future__ import annotations

import polars as pl

from ingest.frames import Frames
from inference.edges import ARTIFACTS, EDGES, Inferred, PassResult, conform, diag_rows
from inference.shell import file_ops
from inference.tiers import rank, weakest

NAME = "artifacts"
_EVENT = pl.Schema(
    {
        "session_id": pl.String,
        "call_id": pl.String,
        "ts": pl.Datetime("us", "UTC"),
        "path": pl.String,
        "op": pl.String,
        "how": pl.String,
        "tier": pl.String,
        "line": pl.Int64,
    }
)


def shell_events(frames: Frames, done: Inferred) -> pl.DataFrame:
    """File reads and writes parsed out of shell commands (heuristic)."""
    shell = frames.calls.filter((pl.col("kind") == "shell") & pl.col("command").is_not_null())
    launched = {
        (r["src"], r["src_call_id"]): r["dst"]
        for r in done.edges.filter(pl.col("kind") == "launch").select("src", "src_call_id", "dst").iter_rows(named=True)
    }
    rows = []
    for call in shell.iter_rows(named=True):
        at = call["ended_at"] or call["started_at"]
        for op in file_ops(call["command"], call["cwd"]):
            who = call["session_id"]
            if op.how == "codex -o":
                who = launched.get((call["session_id"], call["call_id"]), who)
            rows.append(
                {
                    "session_id": who,
                    "call_id": call["call_id"],
                    "ts": at,
                    "path": op.path,
                    "op": op.op,
                    "how": op.how,
                    "tier": "heuristic",
                    "line": call["line"],
                }
            )
    return pl.DataFrame(rows, schema=_EVENT)


def all_events(frames: Frames, done: Inferred) -> pl.DataFrame:
    tools = frames.file_events.select(list(_EVENT))
    events = pl.concat([tools, shell_events(frames, done)])
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
            "path", "version",
            pl.col("session_id").alias("src"), pl.col("call_id").alias("src_call_id"),
            pl.col("ts").alias("wts"), pl.col("tier").alias("src_tier"), "how",
        )
    )
    reads = events.filter(pl.col("op") == "read").select(
        "path", pl.col("session_id").alias("dst"), pl.col("call_id").alias("dst_call_id"),
        pl.col("ts").alias("ts"), pl.col("tier").alias("dst_tier"),
    ).with_row_index("read_no")
    pairs = (
        reads.join(writes, on="path", how="inner")
        .filter((pl.col("src") != pl.col("dst")) & (pl.col("wts") < pl.col("ts")))
        .sort("wts")
        .group_by("read_no", maintain_order=True)
        .last()
    )
    edges = (
        pairs.with_columns(
            tier=weakest("src_tier", "dst_tier"),
            lag_s=(pl.col("ts") - pl.col("wts")).dt.total_microseconds() / 1_000_000,
        )
        .with_columns(r=rank("tier"))
        .sort("r", "ts")
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
    early = reads.join(written_paths, on="path", how="semi").join(
        pairs.select("read_no"), on="read_no", how="anti"
    )
    diags = pl.concat(
        [
            diag_rows(NAME, "read_unwritten", _per_session(unwritten), "reads of files no logged session wrote"),
            diag_rows(NAME, "read_before_write", _per_session(early), "reads before any other session wrote the file"),
        ]
    )
    return PassResult(
        conform(edges.drop("r", "read_no", "wts", "how"), EDGES), diags, {"artifacts": _versions(writes, pairs)}
    )


def _per_session(reads: pl.DataFrame) -> pl.DataFrame:
    return reads.group_by("dst").agg(count=pl.len()).rename({"dst": "session_id"}).sort("session_id")


def _versions(writes: pl.DataFrame, pairs: pl.DataFrame) -> pl.DataFrame:
    per_path = writes.group_by("path").agg(
        n_writes=pl.len(), writers=pl.col("src").unique(maintain_order=True)
    )
    per_version = pairs.group_by("path", "version").agg(
        n_reads=pl.len(), consumers=pl.col("dst").unique(maintain_order=True)
    )
    out = (
        writes.join(per_path, on="path", how="left")
        .join(per_version, on=["path", "version"], how="left")
        .select(
            "path", "version",
            pl.col("src").alias("producer"), pl.col("src_call_id").alias("call_id"),
            pl.col("wts").alias("ts"), "how", pl.col("src_tier").alias("tier"),
            "n_writes", pl.col("n_reads").fill_null(0), "writers",
            pl.col("consumers").fill_null(pl.lit([], dtype=pl.List(pl.String))),
        )
    )
    return conform(out, ARTIFACTS)
