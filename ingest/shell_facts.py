"""Shell calls read at ingest: the agent-CLI runs and the file touches a command line states.

A command line is log text, and the ingest privacy profile (``ingest.privacy``) may drop it before
the store sees it. So everything the inference passes need from a command is drawn out here, in the
worker that read the file, as metadata rows: a ``launches`` row per agent-CLI run and a heuristic
``file_events`` row per file the command reads, writes or deletes (``how`` names the construct).
The passes read those rows and never a command.
"""

from __future__ import annotations

import dataclasses
import os
import stat

from sessiongraph.ingest.files import open_regular
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.paths import canonical_frames, normalise, on_this_machine
from sessiongraph.ingest.shell import SHELLS, Launchers, ScriptRun, analyse

# The roles step calls a launched print-mode session a reviewer when the command that started it
# says so (`codex exec review`, `claude -p "review the diff"`); only that bit of the text is kept.
REVIEW_WORD = "review"
# A script a shell call runs is read (on the machine doing the ingest) only when it is a small
# regular file inside the session's workspace once symlinks are resolved; it and the scripts it
# runs, one level down, are scanned for agent-CLI runs. Anything else is counted, never followed.
MAX_SCRIPT_BYTES = 64 * 1024
# A script without a shebang is read only when its name says it is one.
SHELL_SUFFIXES = (".sh", ".bash", ".zsh", ".ksh")
SCRIPT_LEVELS = 2  # the script the call ran, and a script that one runs
SCRIPT_DIAGNOSTIC = "script_not_followed"


def shell_facts(frames: Frames, carried: dict | None = None, launchers: Launchers = ()) -> Frames:
    """``frames`` plus the launches and heuristic file events of its shell calls' commands, and
    a ``script_not_followed`` diagnostic per script a command ran that could not be read.

    Every parse goes through here before the privacy profile, so this is where the frames get
    their canonical paths (``ingest.paths.canonical_frames``), first: the commands are read
    against canonical cwds, and every adapter's rows get the one form.

    ``carried`` are the rows of calls whose command is no longer at hand: a grown transcript read
    from its checkpoint, under a profile that kept no command text in it (see :func:`carry`).
    Apply it once per parse: the rows are appended, not merged. ``launchers`` are wrapper CLIs
    (program, harness) beyond the built-in ones (``ingest.shell.BUILTIN_LAUNCHERS``).
    """
    frames = canonical_frames(frames)
    workspaces = {s.get("session_id"): s.get("cwd") for s in frames.rows("sessions")}
    runs, events, diags = derive(frames.rows("calls"), workspaces, launchers)
    if carried:
        ends = {
            (c.get("session_id"), c.get("line")): c.get("ended_at") or c.get("started_at") for c in frames.rows("calls")
        }
        runs = carried["launches"] + runs
        # A call answered after the checkpoint: its file events take the time of its answer.
        events = [{**e, "ts": ends.get((e["session_id"], e["line"]), e["ts"])} for e in carried["file_events"]] + events
        diags = carried.get("diagnostics", []) + diags
    if not runs and not events and not diags:
        return frames  # canonical
    return frames.replace(
        launches=frames.rows("launches") + runs,
        file_events=frames.rows("file_events") + events,
        diagnostics=frames.rows("diagnostics") + diags,
    )


def carry(frames: Frames, up_to_line: int) -> dict:
    """The shell rows (``launches``, ``file_events``) of calls on lines up to ``up_to_line`` (a
    checkpoint's), from frames that went through :func:`shell_facts`: kept with a checkpoint
    whose state holds no commands, they are what those commands said. Plain data, no text."""
    shells = {
        (c.get("session_id"), c.get("line"))
        for c in frames.rows("calls")
        if c.get("kind") == "shell" and c.get("line") is not None and c["line"] <= up_to_line
    }
    lines = {line for _, line in shells}
    return {
        "launches": [r for r in frames.rows("launches") if (r["session_id"], r["line"]) in shells],
        "file_events": [
            r for r in frames.rows("file_events") if r["tier"] == "heuristic" and (r["session_id"], r["line"]) in shells
        ],
        "diagnostics": [
            r for r in frames.rows("diagnostics") if r["code"] == SCRIPT_DIAGNOSTIC and r.get("line") in lines
        ],
    }


def derive(
    calls: list[dict], workspaces: dict | None = None, launchers: Launchers = ()
) -> tuple[list[dict], list[dict], list[dict]]:
    """(launches rows, file_events rows, diagnostics rows) of the shell calls that still carry
    their command; ``workspaces`` maps a session id to its cwd, where its scripts may lie."""
    # Plain Python, no polars expressions: this runs in forked pool workers, where a polars
    # operation that reaches the parent's thread pool can hang.
    runs, events, diags = [], [], []
    for call in calls:
        command, cwd = call.get("command"), call.get("cwd")
        if call.get("kind") != "shell" or not isinstance(command, str):
            continue
        where = {"source_path": call.get("source_path"), "line": call.get("line")}
        review = REVIEW_WORD in command.lower()
        direct, ops, scripts = analyse(command, cwd, launchers)
        found = list(direct)
        workspace = (workspaces or {}).get(call.get("session_id"))
        for run in scripts:
            more, problems = script_launches(run, workspace, launchers)
            found += [dataclasses.replace(ln, segment=len(found) + i) for i, ln in enumerate(more)]
            harness = (call.get("session_id") or "").partition(":")[0] or None
            diags += [
                {**where, "code": SCRIPT_DIAGNOSTIC, "detail": p, "harness": harness, "count": 1} for p in problems
            ]
        for ln in found:
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
                    # The effective cwd, one definition for the launch pass and the partition
                    # keys: the launch's own (`cd`, `-C`), else its call's, else its session's.
                    "cwd": ln.cwd or cwd or workspace,
                    "output_file": ln.output_file,
                    "script": ln.script,
                    "review": review,
                    **where,
                }
            )
        at = call.get("ended_at") or call.get("started_at")
        for op in ops:
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
    return runs, events, diags


def script_launches(run: ScriptRun, workspace: str | None, launchers: Launchers = (), level: int = 1):
    """(launches, reasons not followed) of the script ``run`` names: its agent-CLI runs, each
    naming the script (the one the call ran), backgrounded or looped where the call was."""
    reason, text, path = _read_script(run, workspace)
    if text is None:
        return [], [reason]
    direct, _ops, nested = analyse(text, run.cwd, launchers)
    found = [
        dataclasses.replace(ln, script=path, background=ln.background or run.background, looped=ln.looped or run.looped)
        for ln in direct
    ]
    problems: list[str] = []
    for sub in nested:
        if level >= SCRIPT_LEVELS:
            problems.append("too_deep")
            continue
        sub = dataclasses.replace(sub, background=sub.background or run.background, looped=sub.looped or run.looped)
        more, deeper = script_launches(sub, workspace, launchers, level + 1)
        found += [dataclasses.replace(ln, script=path) for ln in more]
        problems += deeper
    return found, problems


def _read_script(run: ScriptRun, workspace: str | None) -> tuple[str, str | None, str | None]:
    """(reason it cannot be read, its text, its path): the text only for a small regular text
    file inside ``workspace`` (after symlinks) that is a shell script (a shell shebang, or a
    ``.sh``-like name). The log's author chose ``workspace``: it counts only as a folder of this
    machine that is neither ``/`` nor the home folder (nor above it), so a log cannot make an
    ingest read host files, and nothing outside it is said to be ``missing``."""
    path = normalise(run.word, run.cwd) if run.word is not None and run.cwd else None
    if path is None or not workspace:
        return "unresolvable", None, path
    real, root = os.path.realpath(on_this_machine(path)), os.path.realpath(on_this_machine(workspace))
    if not _workspace(root) or os.path.commonpath([real, root]) != root:
        return "outside_workspace", None, path
    try:
        st = os.stat(real)
    except OSError:
        return "missing", None, path
    if not stat.S_ISREG(st.st_mode):
        return "not_regular", None, path
    if st.st_size > MAX_SCRIPT_BYTES:
        return "too_large", None, path
    try:
        with open_regular(real) as fh:
            data = fh.read(MAX_SCRIPT_BYTES + 1)
    except OSError:
        return "missing", None, path
    if b"\0" in data:
        return "binary", None, path
    if data.startswith(b"#!"):
        interp = data[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        if interp and os.path.basename(interp[0]) == "env":
            interp = [w for w in interp[1:] if not w.startswith("-")]
        if interp and os.path.basename(interp[0]) not in SHELLS:
            return "not_shell", None, path
    elif not real.endswith(SHELL_SUFFIXES):
        return "not_shell", None, path
    return "", data.decode("utf-8", "replace"), path


def _workspace(root: str) -> bool:
    """A folder of this machine that may hold a workspace's scripts (``root`` is real)."""
    home = os.path.realpath(os.path.expanduser("~"))
    return (
        root != os.path.dirname(root)  # not "/" (or a drive's root)
        and os.path.commonpath([root, home]) != root  # neither the home folder nor above it
        and os.path.isdir(root)
    )
