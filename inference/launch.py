"""launch: a shell call that ran another harness's CLI <-> the session that CLI wrote.

A launched session must be of the launched harness, a top-level session, in the call's effective
cwd (never another workspace, however close in time), and must start while the call ran (plus
``SLACK``; a backgrounded call (``&``, ``nohup``, ``run_in_background``, a result that came back
with the process still running) or an unanswered one gets ``BACKGROUND_WINDOW`` after its start).
It is ``verified`` when its id was printed into the call's captured output (``codex exec`` prints
``session id: ...``, ``claude -p --output-format json`` prints ``session_id``), or when its final
answer is the call's captured output (``claude -p`` prints only the answer: the two sha256s taken at
parse time, ``sessions.final_answer_hash`` and ``calls.output_hash``, are equal) and it started in the
call's window, in whatever cwd; else ``heuristic``. The child's own print-mode marker corroborates; an interactive child is never
matched to a print-mode call. Any harness's session can be a launcher. A launch read from a
workspace script the call ran (``ingest.shell_facts``) names the script in its evidence. A shell
call whose command names no agent CLI (an unnamed wrapper, ``node claude-wrapper.js --print``) is a
launcher only through that output hash, of a child whose entry point marks a print-mode run.

Claims are made strongest first, then closest in time: each launch claims one session (a looped
one, any number within its window) and no session is claimed twice, so a launch whose closest
session went to a better claim takes its next one. A launch with no valid time joins nothing and
is counted (``invalid_time``).
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from sessiongraph.inference.edges import EDGES, Inferred, PassResult, conform, diag_rows
from sessiongraph.inference.nodes import nodes
from sessiongraph.ingest.frames import STRS, TS, Frames

NAME = "launch"
SLACK = timedelta(seconds=5)  # log flush and clock skew between two processes on one machine
BACKGROUND_WINDOW = timedelta(minutes=30)  # the evidence text says "30 min"
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
        "script": pl.String,
        "call_start": TS,
        "call_end": TS,
        "output_ids": STRS,
        "output_hash": pl.String,
        "tied": pl.Boolean,  # a call read as no launch, held only for the output-hash tie
    }
)


def launch_table(frames: Frames) -> pl.DataFrame:
    """Every launch found in a shell command (the ``launches`` frame), with its call's end and
    printed ids: one row per launched CLI invocation."""
    keys = ["session_id", "call_id", "source_path", "line"]
    calls = frames.calls.select(*keys, pl.col("ended_at").alias("call_end"), "output_ids", "output_hash").unique(
        keys, keep="first", maintain_order=True
    )
    table = frames.launches.join(calls, on=keys, how="left", nulls_equal=True, maintain_order="left")
    # Shell calls read as no launch that printed something: candidates for the output-hash tie.
    tied = (
        frames.calls.filter((pl.col("kind") == "shell") & pl.col("output_hash").is_not_null())
        .join(frames.launches.select(keys), on=keys, how="anti", nulls_equal=True)
        .unique(keys, keep="first", maintain_order=True)
        .select(
            "session_id",
            "call_id",
            segment=pl.lit(0, pl.Int32),
            target=pl.lit(None, pl.String),
            print_mode=pl.lit(False),
            launch_cwd="cwd",
            background=pl.col("run_in_background").fill_null(False),
            looped=pl.lit(False),
            resume=pl.lit(False),
            script=pl.lit(None, pl.String),
            call_start="started_at",
            call_end="ended_at",
            output_ids=pl.lit([], dtype=pl.List(pl.String)),
            output_hash="output_hash",
            tied=pl.lit(True),
        )
    )
    launched = table.select(
        "session_id",
        "call_id",
        "segment",
        pl.col("harness").alias("target"),
        pl.col("print_mode").fill_null(False),
        pl.col("cwd").alias("launch_cwd"),
        pl.col("background").fill_null(False),
        pl.col("looped").fill_null(False),
        pl.col("resume").fill_null(False),
        "script",
        pl.col("ts").alias("call_start"),
        "call_end",
        pl.col("output_ids").fill_null(pl.lit([], dtype=pl.List(pl.String))),
        "output_hash",
        tied=pl.lit(False),
    )
    return pl.concat([launched.cast(_LAUNCH), tied.cast(_LAUNCH)])


def launch(frames: Frames, done: Inferred) -> PassResult:
    table = launch_table(frames)
    if table.height == 0:
        # No launch and no shell call to tie by its output: every edge and diagnostic below comes
        # from a row of ``table``, so there are none (most partitions a watch batch re-infers).
        return PassResult.empty()
    ns = nodes(frames)
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
            pl.col("final_answer_hash").alias("answer_hash"),
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

    # Only two kinds of pair can match: same harness and cwd with the child starting inside the
    # call's window, or a child whose id the call printed. The first is joined on harness, cwd and
    # a time bucket the window covers, so a repository launched from thousands of times still
    # pairs each launch only with the sessions that started near it. Copies of one session that
    # share a cwd and their times still pair every launch with every child, so pairs are built,
    # filtered, ranked and claimed on narrow integer columns; the wide ones join the claims only.
    live = (
        table.filter(~pl.col("resume"))
        .with_row_index("launch_no")
        .with_columns(key_cwd=pl.col("launch_cwd").str.strip_chars_end("/"), window_end=window_end)
    )
    children = children.sort("child", nulls_last=True).with_row_index("child_no")
    # Launch identity and sort rank (the claim order's session_id, call_id, segment), as integers.
    keys = ["session_id", "call_id", "segment"]
    key_no = live.select(keys).unique().sort(keys, nulls_last=True).with_row_index("key_no")
    # (harness, cwd) as one integer, so the bucket join carries no strings; a null harness or cwd
    # matches nothing, as in a plain join.
    places = (
        pl.concat(
            [live.select("target", cwd="key_cwd"), children.select("target", cwd="child_cwd")], how="vertical_relaxed"
        )
        .unique()
        .with_row_index("place")
    )
    thin = (
        live.join(key_no, on=keys, how="left", nulls_equal=True)
        .join(places, left_on=["target", "key_cwd"], right_on=["target", "cwd"], how="left")
        .join(children.select("child", self_no="child_no"), left_on="session_id", right_on="child", how="left")
        .select("launch_no", "key_no", "place", "self_no", "call_start", "window_end", "print_mode", "looped")
    )
    kids = (
        children.with_columns(interactive=interactive)
        .join(places, left_on=["target", "child_cwd"], right_on=["target", "cwd"], how="left")
        .select("child_no", "place", "child_start", "interactive")
    )
    bucket_s = int(BUCKET.total_seconds())
    by_cwd = (
        thin.lazy()
        .with_columns(
            bucket=pl.int_ranges(
                pl.col("call_start").dt.epoch("s") // bucket_s, pl.col("window_end").dt.epoch("s") // bucket_s + 1
            )
        )
        .explode("bucket")
        .join(kids.lazy().with_columns(bucket=pl.col("child_start").dt.epoch("s") // bucket_s), on=["place", "bucket"])
        .drop("bucket")
        .with_columns(same_cwd=pl.lit(True))
    )
    out_ids = (
        live.select("launch_no", "target", out_id="output_ids")
        .explode("out_id")
        .join(children, left_on=["target", "out_id"], right_on=["target", "child_native"])
        .select("launch_no", "child_no")
        .unique()
    )
    # A printed id pairs its launch with that child (by_id); a pair the bucket join also made is
    # kept once, from the bucket join (the same test the join applies).
    pair_key = pl.col("launch_no").cast(pl.UInt64) * (children.height + 1) + pl.col("child_no")
    printed = out_ids.select(pair_key.alias("key"))["key"]
    bucket = (pl.col("call_start").dt.epoch("s") // bucket_s, pl.col("window_end").dt.epoch("s") // bucket_s)
    child_bucket = pl.col("child_start").dt.epoch("s") // bucket_s
    joined = (pl.col("place") == pl.col("place_right")) & child_bucket.is_between(*bucket)
    by_out = (
        out_ids.lazy()
        .join(thin.lazy(), on="launch_no")
        .join(kids.lazy(), on="child_no")
        .filter(~joined.fill_null(False))
        .with_columns(same_cwd=(pl.col("place") == pl.col("place_right")).fill_null(False))
        .drop("place_right")
    )
    # Output hash = final answer, the child starting in the call's window: a tie in any cwd. A
    # call read as no launch ties only a child of a print-mode entry point, of any harness.
    in_time = (pl.col("child_start") >= pl.col("call_start")) & (pl.col("child_start") <= pl.col("window_end"))
    by_hash_ids = (
        live.filter(pl.col("output_hash").is_not_null())
        .select("launch_no", "target", "tied", "output_hash", "call_start", "window_end")
        .join(
            children.with_columns(marker=marker).select(
                "child_no", pl.col("target").alias("child_target"), "answer_hash", "child_start", "marker"
            ),
            left_on="output_hash",
            right_on="answer_hash",
        )
        .filter(
            in_time
            & pl.when(pl.col("tied")).then(pl.col("marker")).otherwise(pl.col("target") == pl.col("child_target"))
        )
        .select("launch_no", "child_no")
        .unique()
    )
    hashed = by_hash_ids.select(pair_key.alias("key"))["key"]
    by_hash = (
        by_hash_ids.lazy()
        .join(thin.lazy(), on="launch_no")
        .join(kids.lazy(), on="child_no")
        .filter(~joined.fill_null(False) & ~pair_key.is_in(printed.implode()))
        .with_columns(same_cwd=(pl.col("place") == pl.col("place_right")).fill_null(False))
        .drop("place_right")
    )
    cols = by_cwd.collect_schema().names()
    pairs = pl.concat([by_cwd, by_out.select(cols), by_hash.select(cols)]).with_columns(
        by_id=pair_key.is_in(printed.implode()), by_hash=pair_key.is_in(hashed.implode())
    )
    pending = (
        pairs.filter(pl.col("self_no").is_null() | (pl.col("child_no") != pl.col("self_no")))
        .filter(pl.col("child_start") >= pl.col("call_start"))  # never a session that began earlier
        .filter(~(pl.col("print_mode") & pl.col("interactive")))
        .with_columns(
            by_id=pl.col("by_id").fill_null(False),
            by_hash=pl.col("by_hash").fill_null(False),
            in_window=((pl.col("child_start") <= pl.col("window_end")) & pl.col("same_cwd")).fill_null(False),
        )
        .filter(pl.col("by_id") | pl.col("by_hash") | pl.col("in_window"))
        .with_columns(lag_us=(pl.col("child_start") - pl.col("call_start")).dt.total_microseconds())
        .select("launch_no", "key_no", "child_no", "call_start", "looped", "by_id", "by_hash", "in_window", "lag_us")
    )
    # One child per launch (a loop may start several), one launcher per child; the strongest
    # evidence first (a printed id, then the output hash), then the smallest lag: two calls of
    # one prompt a few seconds apart each take the session that started in their own window.
    # Extra candidates are counted as ambiguous.
    order = [~pl.col("by_id"), ~pl.col("by_hash"), "lag_us", "call_start", "key_no", "child_no"]
    cands = pending.sort(order, nulls_last=True).drop("call_start").collect()
    claimed = cands.filter(pl.Series(_claims(cands), dtype=pl.Boolean))
    # Candidates per launch and launches per child, for the ambiguity counts.
    n = cands.group_by("key_no").agg(n=pl.len())
    n_child = cands.group_by("child_no").agg(n_child=pl.len())
    firsts = cands.filter(pl.col("key_no").is_first_distinct())
    wide = live.drop("window_end", "key_cwd")
    wide_kids = children.drop("child_cwd")

    def widen(rows: pl.DataFrame) -> pl.DataFrame:
        return (
            rows.drop("looped")
            .join(n, on="key_no", how="left", maintain_order="left")
            .join(n_child, on="child_no", how="left", maintain_order="left")
            .join(wide, on="launch_no", how="left", maintain_order="left")
            .join(wide_kids, on="child_no", how="left", maintain_order="left")
            .with_columns(
                target=pl.coalesce("target", "target_right"),  # a tied call: the child's harness
                tier=pl.when(pl.col("by_id") | pl.col("by_hash"))
                .then(pl.lit("verified"))
                .otherwise(pl.lit("heuristic")),
                lag_s=pl.col("lag_us") / 1_000_000,
                marker=marker.fill_null(False),
            )
        )

    edges = widen(claimed)
    chosen = edges
    evidence = pl.concat_str(
        [
            pl.col("target") + pl.lit(" launched from a shell call"),
            pl.when(pl.col("tied")).then(pl.lit("a command read as no agent CLI (a wrapper)")),
            pl.when(pl.col("by_id")).then(pl.lit("session id in the call's output")),
            pl.when(pl.col("by_hash")).then(pl.lit("final answer = the call's output (sha256)")),
            pl.when(pl.col("in_window") & pl.col("background"))
            .then(pl.lit("same cwd, started within 30 min of the backgrounded call"))
            .when(pl.col("in_window") & pl.col("call_end").is_null())
            .then(pl.lit("same cwd, started within 30 min of the unanswered call"))
            .when(pl.col("in_window"))
            .then(pl.lit("same cwd, started during the call")),
            pl.when(pl.col("marker")).then(pl.lit("entrypoint ") + pl.col("child_entry")),
            pl.when(pl.col("script").is_not_null()).then(pl.lit("through the workspace script ") + pl.col("script")),
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
                widen(firsts.filter(~pl.col("looped"))).filter(pl.col("n") > 1),
                pl.col("n").cast(pl.String) + pl.lit(" candidate sessions; kept the closest unclaimed one"),
            ),
            diag_rows(
                NAME,
                "ambiguous_launcher",
                chosen.filter(pl.col("n_child") > 1).rename({"session_id": "launcher", "child": "session_id"}),
                pl.col("n_child").cast(pl.String) + pl.lit(" calls could have launched it; kept the closest"),
            ),
            diag_rows(
                NAME,
                "invalid_time",
                table.filter(pl.col("call_start").is_null() & ~pl.col("tied"))
                .group_by("session_id")
                .agg(count=pl.len()),
                "launches whose call has no valid time: joined nothing",
            ),
        ]
    )
    return PassResult(conform(out, EDGES), diags)


def _claims(cands: pl.DataFrame) -> list[bool]:
    """Which candidate pairs (sorted best first) are claimed: greedily, each launch one session
    (a looped launch any number), each session by one launch."""
    taken: set[int] = set()
    used: set[int] = set()
    out = []
    for key, child, looped in cands.select("key_no", "child_no", "looped").iter_rows():
        ok = child not in taken and (looped or key not in used)
        if ok:
            taken.add(child)
            used.add(key)
        out.append(ok)
    return out
