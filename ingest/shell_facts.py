"""Shell calls read at ingest: the agent-CLI runs and the file touches a command line states.

A command line is log text, and the ingest privacy profile (``ingest.privacy``) may drop it before
the store sees it. So everything the inference passes need from a command is drawn out here, in the
worker that read the file, as metadata rows: a ``launches`` row per agent-CLI run and a heuristic
``file_events`` row per file the command reads, writes or deletes (``how`` names the construct).
The passes read those rows and never a command.
"""

from __future__ import annotations

from dataclasses import replace

import polars as pl

from ingest.frames import FILE_EVENTS, LAUNCHES, Frames
from ingest.shell import file_ops, launches

# The roles step calls a launched print-mode session a reviewer when the command that started it
# says so (`codex exec review`, `claude -p "review the diff"`); only that bit of the text is kept.
REVIEW_WORD = "review"


def shell_facts(frames: Frames) -> Frames:
    """``frames`` plus the launches and heuristic file events of its shell calls' commands.

    Apply it once per parse: the rows are appended, not merged.
    """
    # Plain Python over column lists, no polars expressions: this runs in forked pool workers, where
    # a polars operation that reaches the parent's thread pool can hang.
    calls = {c: frames.calls.get_column(c).to_list() for c in _CALL_COLUMNS}
    runs, events = [], []
    for call in (dict(zip(_CALL_COLUMNS, row)) for row in zip(*calls.values())):
        command, cwd = call["command"], call["cwd"]
        if call["kind"] != "shell" or not isinstance(command, str):
            continue
        where = {"source_path": call["source_path"], "line": call["line"]}
        review = REVIEW_WORD in command.lower()
        for ln in launches(command, cwd):
            runs.append({
                "session_id": call["session_id"], "call_id": call["call_id"], "segment": ln.segment,
                "ts": call["started_at"], "harness": ln.harness, "print_mode": ln.print_mode,
                "resume": ln.resume, "background": ln.background or bool(call["run_in_background"]),
                "looped": ln.looped, "cwd": ln.cwd, "output_file": ln.output_file, "review": review, **where,
            })
        at = call["ended_at"] or call["started_at"]
        for op in file_ops(command, cwd):
            events.append({
                "session_id": call["session_id"], "call_id": call["call_id"], "ts": at, "path": op.path,
                "op": op.op, "how": op.how, "tier": "heuristic", **where,
            })
    if not runs and not events:
        return frames
    return replace(
        frames,
        launches=_append(frames.launches, runs, LAUNCHES),
        file_events=_append(frames.file_events, events, FILE_EVENTS),
    )


_CALL_COLUMNS = ("session_id", "call_id", "kind", "command", "cwd", "started_at", "ended_at",
                 "run_in_background", "source_path", "line")


def _append(df: pl.DataFrame, rows: list[dict], schema: pl.Schema) -> pl.DataFrame:
    if not rows:
        return df
    columns = {c: df.get_column(c).to_list() + [r.get(c) for r in rows] for c in schema}
    return pl.DataFrame(columns, schema=schema)
