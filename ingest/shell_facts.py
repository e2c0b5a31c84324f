"""Shell calls read at ingest: the agent-CLI runs and the file touches a command line states.

A command line is log text, and the ingest privacy profile (``ingest.privacy``) may drop it before
the store sees it. So everything the inference passes need from a command is drawn out here, in the
worker that read the file, as metadata rows: a ``launches`` row per agent-CLI run and a heuristic
``file_events`` row per file the command reads, writes or deletes (``how`` names the construct).
The passes read those rows and never a command.
"""

from __future__ import annotations

from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.shell import file_ops, launches

# The roles step calls a launched print-mode session a reviewer when the command that started it
# says so (`codex exec review`, `claude -p "review the diff"`); only that bit of the text is kept.
REVIEW_WORD = "review"


def shell_facts(frames: Frames, carried: dict | None = None) -> Frames:
    """``frames`` plus the launches and heuristic file events of its shell calls' commands.

    ``carried`` are the rows of calls whose command is no longer at hand: a grown transcript read
    from its checkpoint, under a profile that kept no command text in it (see :func:`carry`).
    Apply it once per parse: the rows are appended, not merged.
    """
    runs, events = derive(frames.rows("calls"))
    if carried:
        ends = {
            (c.get("session_id"), c.get("line")): c.get("ended_at") or c.get("started_at") for c in frames.rows("calls")
        }
        runs = carried["launches"] + runs
        # A call answered after the checkpoint: its file events take the time of its answer.
        events = [{**e, "ts": ends.get((e["session_id"], e["line"]), e["ts"])} for e in carried["file_events"]] + events
    if not runs and not events:
        return frames
    return frames.replace(launches=frames.rows("launches") + runs, file_events=frames.rows("file_events") + events)


def carry(frames: Frames, up_to_line: int) -> dict:
    """The shell rows (``launches``, ``file_events``) of calls on lines up to ``up_to_line`` (a
    checkpoint's), from frames that went through :func:`shell_facts`: kept with a checkpoint
    whose state holds no commands, they are what those commands said. Plain data, no text."""
    shells = {
        (c.get("session_id"), c.get("line"))
        for c in frames.rows("calls")
        if c.get("kind") == "shell" and c.get("line") is not None and c["line"] <= up_to_line
    }
    return {
        "launches": [r for r in frames.rows("launches") if (r["session_id"], r["line"]) in shells],
        "file_events": [
            r for r in frames.rows("file_events") if r["tier"] == "heuristic" and (r["session_id"], r["line"]) in shells
        ],
    }


def derive(calls: list[dict]) -> tuple[list[dict], list[dict]]:
    """(launches rows, file_events rows) of the shell calls that still carry their command."""
    # Plain Python, no polars expressions: this runs in forked pool workers, where a polars
    # operation that reaches the parent's thread pool can hang.
    runs, events = [], []
    for call in calls:
        command, cwd = call.get("command"), call.get("cwd")
        if call.get("kind") != "shell" or not isinstance(command, str):
            continue
        where = {"source_path": call.get("source_path"), "line": call.get("line")}
        review = REVIEW_WORD in command.lower()
        for ln in launches(command, cwd):
            runs.append(
                {
                    "session_id": call.get("session_id"),
                    "call_id": call.get("call_id"),
                    "segment": ln.segment,
                    "ts": call.get("started_at"),
                    "harness": ln.harness,
                    "print_mode": ln.print_mode,
                    "resume": ln.resume,
                    "background": ln.background or bool(call.get("run_in_background")),
                    "looped": ln.looped,
                    "cwd": ln.cwd,
                    "output_file": ln.output_file,
                    "review": review,
                    **where,
                }
            )
        at = call.get("ended_at") or call.get("started_at")
        for op in file_ops(command, cwd):
            events.append(
                {
                    "session_id": call.get("session_id"),
                    "call_id": call.get("call_id"),
                    "ts": at,
                    "path": op.path,
                    "op": op.op,
                    "how": op.how,
                    "tier": "heuristic",
                    **where,
                }
            )
    return runs, events
