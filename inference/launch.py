"""launch: a shell call that ran another harness's CLI <-> the session that CLI wrote.

A launched session must be of the launched harness, a top-level session, in the call's effective
cwd, and must start while the call ran (plus ``SLACK``; a backgrounded or unanswered call gets
``BACKGROUND_WINDOW`` after its start). It is ``verified`` when its id was printed into the call's
captured output (``codex exec`` prints ``session id: ...``, ``claude -p --output-format json``
prints ``session_id``), else ``heuristic``. The child's own print-mode marker corroborates; an
interactive child is never matched to a print-mode call. Any harness's session can be a launcher.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from sessiongraph.inference.edges import EDGES, Inferred, PassResult, conform, diag_rows
from sessiongraph.inference.nodes import nodes
from sessiongraph.ingest.frames import STRS, TS, Frames

NAME = "launch"
SLACK = timedelta(seconds=5)  # log flush and clock skew between two processes on one machine
BACKGROUND_WINDOW = timedelta(minutes=30)
BUCKET = timedelta(minutes=10)  # time buckets of the same-cwd join (any width gives the same pairs)
# Entry points a print-mode run writes (harness-log-formats.md 1.8, 2.6): they corroborate.
PRINT_MARKERS: dict[str, tuple[str, ...]] = {"codex": ("exec",), "claude-code": ("sdk-cli",)}
# Entry points of interactive sessions: never the child of a print-mode call.
INTERACTIVE: dict[str, tuple[str, ...]] = {"codex": ("cli", "vscode"), "claude-code": ("cli",)}

_LAUNCH = pl.Schema(
    {
        "session_id": pl.String,
        "call_id": pl.String,
        "segment": pl.Int32,
        "target": pl.String,
        "print_mode": pl.Boolean,
        "launch_cwd": pl.String,
        "background": pl.Boolean,
        "looped": pl.Boolean,
        "resume": pl.Boolean,
        "call_start": TS,
        "call_end": TS,
        "output_ids": STRS,
    }
)


def launch_table(frames: Frames) -> pl.DataFrame:
    """Every launch found in a shell command (the ``launches`` frame), with its call's end and
    printed ids: one row per launched CLI invocation."""
    keys = ["session_id", "call_id", "source_path", "line"]
    calls = frames.calls.select(*keys, pl.col("ended_at").alias("call_end"), "output_ids").unique(
        keys, keep="first", maintain_order=True
    )
    table = frames.launches.join(calls, on=keys, how="left", nulls_equal=True, maintain_order="left")
    return table.select(
        "session_id",
        "call_id",
        "segment",
        pl.col("harness").alias("target"),
        pl.col("print_mode").fill_null(False),
        pl.col("cwd").alias("launch_cwd"),
        pl.col("background").fill_null(False),
        pl.col("looped").fill_null(False),
        pl.col("resume").fill_null(False),
        pl.col("ts").alias("call_start"),
        "call_end",
        pl.col("output_ids").fill_null(pl.lit([], dtype=pl.List(pl.String))),
    ).cast(_LAUNCH)


def launch(frames: Frames, done: Inferred) -> PassResult:
    ns = nodes(frames)
    table = launch_table(frames)
    spawned = done.edges.filter(pl.col("kind") == "spawn").select(pl.col("dst").alias("child"))
    children = (
        ns.filter(pl.col("session_kind") == "main")
        .select(
            pl.col("session_id").alias("child"),
            pl.col("harness").alias("target"),
            pl.col("native_id").alias("child_native"),
            pl.col("cwd").str.strip_chars_end("/").alias("child_cwd"),
            pl.col("started_at").alias("child_start"),
            pl.col("entrypoint").alias("child_entry"),
        )
        .join(spawned, on="child", how="anti")
    )

    window_end = (
        pl.when(pl.col("background") | pl.col("call_end").is_null())
        .then(pl.col("call_start") + BACKGROUND_WINDOW)
        .otherwise(pl.col("call_end") + SLACK)
    )
    marker = pl.lit(False)
    interactive = pl.lit(False)
    for harness, entries in PRINT_MARKERS.items():
        marker = marker | ((pl.col("target") == harness) & pl.col("child_entry").is_in(entries))
    for harness, entries in INTERACTIVE.items():
        interactive = interactive | ((pl.col("target") == harness) & pl.col("child_entry").is_in(entries))
    by_id = pl.col("output_ids").list.contains(pl.col("child_native"))
    same_cwd = pl.col("child_cwd") == pl.col("launch_cwd").str.strip_chars_end("/")
    in_window = (pl.col("child_start") <= window_end) & same_cwd

    # Only two kinds of pair can match: same harness and cwd with the child starting inside the
    # call's window, or a child whose id the call printed. The first is joined on harness, cwd and
    # a time bucket the window covers, so a repository launched from thousands of times still
    # pairs each launch only with the sessions that started near it.
    live = table.filter(~pl.col("resume")).with_row_index("launch_no")
    bucket_s = int(BUCKET.total_seconds())
    by_cwd = (
        live.with_columns(
            key_cwd=pl.col("launch_cwd").str.strip_chars_end("/"),
            bucket=pl.int_ranges(
                pl.col("call_start").dt.epoch("s") // bucket_s, window_end.dt.epoch("s") // bucket_s + 1
            ),
        )
        .explode("bucket")
        .join(
            children.with_columns(bucket=pl.col("child_start").dt.epoch("s") // bucket_s),
            left_on=["target", "key_cwd", "bucket"],
            right_on=["target", "child_cwd", "bucket"],
            how="inner",
            coalesce=False,
        )
        .drop("key_cwd", "target_right", "bucket", "bucket_right")
    )
    by_out = (
        live.with_columns(out_id=pl.col("output_ids"))
        .explode("out_id")
        .join(children, left_on=["target", "out_id"], right_on=["target", "child_native"], how="inner", coalesce=False)
        .drop("out_id", "target_right")
    )
    pairs = pl.concat([by_cwd, by_out.select(by_cwd.columns)]).unique(["launch_no", "child"], maintain_order=True)
    cands = (
        pairs.drop("launch_no")
        .filter(pl.col("child") != pl.col("session_id"))
        .filter(pl.col("child_start") >= pl.col("call_start"))  # never a session that began earlier
        .filter(~(pl.col("print_mode") & interactive))
        .with_columns(
            by_id=by_id.fill_null(False), in_window=in_window.fill_null(False), marker=marker.fill_null(False)
        )
        .filter(pl.col("by_id") | pl.col("in_window"))
        .with_columns(
            tier=pl.when(pl.col("by_id")).then(pl.lit("verified")).otherwise(pl.lit("heuristic")),
            lag_s=(pl.col("child_start") - pl.col("call_start")).dt.total_microseconds() / 1_000_000,
        )
    )
    # One child per launch (a loop may start several), one launcher per child; the strongest
    # tier first, then the smallest lag. Extra candidates are counted as ambiguous.
    order = [pl.col("tier") != "verified", "lag_s"]
    per_launch = cands.sort(order).with_columns(
        n=pl.len().over("session_id", "call_id", "segment"),
        pos=pl.int_range(pl.len()).over("session_id", "call_id", "segment"),
    )
    chosen = per_launch.filter(pl.col("looped") | (pl.col("pos") == 0))
    chosen = chosen.sort(order).with_columns(
        n_child=pl.len().over("child"), pos_child=pl.int_range(pl.len()).over("child")
    )
    edges = chosen.filter(pl.col("pos_child") == 0)

    evidence = pl.concat_str(
        [
            pl.col("target") + pl.lit(" launched from a shell call"),
            pl.when(pl.col("by_id")).then(pl.lit("session id in the call's output")),
            pl.when(pl.col("in_window")).then(pl.lit("same cwd, started during the call")),
            pl.when(pl.col("marker")).then(pl.lit("entrypoint ") + pl.col("child_entry")),
        ],
        separator="; ",
        ignore_nulls=True,
    )
    out = edges.select(
        pl.lit("launch").alias("kind"),
        pl.col("session_id").alias("src"),
        pl.col("child").alias("dst"),
        "tier",
        evidence.alias("evidence"),
        pl.lit(NAME).alias("pass"),
        pl.col("call_id").alias("src_call_id"),
        pl.col("call_start").alias("ts"),
        "lag_s",
    )
    matched = out.select(pl.col("src").alias("session_id"), pl.col("src_call_id").alias("call_id")).unique()
    unmatched = table.filter(pl.col("print_mode")).join(matched, on=["session_id", "call_id"], how="anti")
    diags = pl.concat(
        [
            diag_rows(NAME, "unmatched_launch", unmatched, pl.col("target") + pl.lit(" run with no session found")),
            diag_rows(
                NAME,
                "ambiguous_launch",
                per_launch.filter((pl.col("pos") == 0) & (pl.col("n") > 1) & ~pl.col("looped")),
                pl.col("n").cast(pl.String) + pl.lit(" candidate sessions; kept the closest"),
            ),
            diag_rows(
                NAME,
                "ambiguous_launcher",
                chosen.filter((pl.col("pos_child") == 0) & (pl.col("n_child") > 1)).rename(
                    {"session_id": "launcher", "child": "session_id"}
                ),
                pl.col("n_child").cast(pl.String) + pl.lit(" calls could have launched it; kept the closest"),
            ),
        ]
    )
    return PassResult(conform(out, EDGES), diags)
