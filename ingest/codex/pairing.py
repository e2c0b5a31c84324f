"""Codex rollouts: results and the calls they answer.

An output may come before its call and end events override outputs, so results are paired with
their calls only once the file is read. Until then each is kept as the few facts pairing needs,
read when its record is (outputs are most of a rollout's bytes, and parser state may be stored):
one list per kind of result, each row a NamedTuple of that kind, kept in a checkpoint as a plain
tuple (:data:`PENDING`).
"""

from __future__ import annotations

import re
from datetime import datetime
from operator import attrgetter
from typing import NamedTuple

import orjson

from sessiongraph.ingest import commits
from sessiongraph.ingest.codex.decoding import _texts
from sessiongraph.ingest.jsonl import Diagnostics, as_str, find_uuids, json_type, raw_value
from sessiongraph.ingest.paths import normalise

# Keys of a spawn_agent output object naming the child thread, first found wins (0.12x-0.14x).
SPAWN_RESULT_KEYS = ("agent_id", "new_thread_id", "thread_id")
# patch_apply_end change type (codex-rs FileChange) -> file op.
CHANGE_OPS = {"add": "write", "update": "write", "delete": "delete"}

# Output headers: "Exit code: N" (shell_command, unified exec) / "Process exited with code N".
_EXIT = re.compile(r"^(?:Exit code:|Process exited with code)\s*(-?\d+)", re.M)
_PROC = re.compile(r"^Process running with session ID (\d+)", re.M)
_PROC_TEXT = "Process running with session ID "
_MAX_IDS = 20


class Output(NamedTuple):
    """A function_call_output or custom_tool_call_output."""

    call_id: str | None
    ts: datetime | None
    line: int
    bad: str | None  # the JSON type of an output that is neither text nor an object
    exit_code: int | None
    procs: list[str]  # unified-exec process ids it says are still running
    ids: list[str]  # UUIDs it printed (only where they may become the call's output_ids)
    agents: list[str] | None  # a spawn's child thread id (or none); None when no JSON object
    made: list[tuple]  # commits.output_facts of a shell call's output (never its text)


class ExecEnd(NamedTuple):
    """An exec_command_end event."""

    call_id: str | None
    ts: datetime | None
    line: int
    exit_code: int | None
    ids: list[str]  # UUIDs its output printed
    made: list[tuple]  # commits.output_facts of its output


class PatchEnd(NamedTuple):
    """A patch_apply_end event."""

    call_id: str | None
    ts: datetime | None
    line: int
    success: bool | None
    changes: list[tuple] | str | None  # _change_facts


class SpawnEnd(NamedTuple):
    """A collab_agent_spawn_end event: the spawn call's child thread."""

    call_id: str | None
    ts: datetime | None
    line: int
    thread_id: str | None


class AgentStarted(NamedTuple):
    """A sub_agent_activity ``started`` event (0.14x multi-agent): the spawn_agent output names
    only a task path; this ties the call (``event_id``) to the child thread (``agent_thread_id``)."""

    call_id: str | None
    ts: datetime | None
    line: int
    thread_id: str | None


# Parser attribute -> the kind of its rows (stored as plain tuples: see resume.loads).
PENDING = {
    "outputs": Output,
    "exec_ends": ExecEnd,
    "patch_ends": PatchEnd,
    "spawn_ends": SpawnEnd,
    "agent_starts": AgentStarted,
}


def _output_parts(value: object) -> tuple[str | None, dict | None]:
    """(text, JSON object) of a tool output: plain text, a JSON-encoded object or items."""
    obj = value if isinstance(value, dict) else None
    if isinstance(value, str) and value.startswith("{"):
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            parsed = None
        obj = parsed if isinstance(parsed, dict) else None
    if obj is not None:  # {"output": ..., "metadata": {"exit_code": ...}} and agent ids
        return _texts(obj.get("output", obj.get("content"))), obj
    return _texts(value), None


def _header(text: str) -> str:
    """What precedes a unified-exec output's ``Output:`` line (all of it when there is none)."""
    cut = text.find("\nOutput:")
    return text if cut < 0 else text[:cut]


def _exit_from(head: str, obj: dict | None) -> int | None:
    """The exit code of an output whose :func:`_header` is ``head``."""
    meta = obj.get("metadata") if obj else None
    if isinstance(meta, dict) and (code := _exit_code(meta.get("exit_code"))) is not None:
        return code
    m = _EXIT.search(head[:1000]) if head else None
    return int(m.group(1)) if m else None


def _exit_code(value: object) -> int | None:
    """An exit code: an integer in the store's INTEGER range (anything else is none)."""
    return value if type(value) is int and -(2**31) <= value < 2**31 else None


def _first_ids(texts: list[str]) -> list[str]:
    """The first _MAX_IDS distinct UUIDs (lowercased) in ``texts``. A call keeps the first
    _MAX_IDS of all its outputs' ids, so an id past that in any one text can never count."""
    found: dict[str, None] = {}
    for text in texts:
        for uuid in find_uuids(text, bounded=True):
            found[uuid.lower()] = None
            if len(found) == _MAX_IDS:
                return list(found)
    return list(found)


def _change_facts(raw: object) -> list[tuple] | str | None:
    """patch_apply_end ``changes`` without the diffs: (path, op or None, JSON type of the change
    ``type``, move path) per change; the JSON type of ``changes`` when it is not an object."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        return json_type(raw)  # reported when the event is paired with its call
    facts = []
    for key, val in raw.items():
        kind = val.get("type") if isinstance(val, dict) else None
        move = val.get("move_path") if isinstance(val, dict) else None
        op = CHANGE_OPS.get(kind) if isinstance(kind, str) else None
        facts.append((key, op, json_type(kind), as_str(move)))
    return facts


class _Pairing:
    """Results read and paired by :class:`records._Rollout` (a mixin: the parser's state is its own)."""

    path: str
    diags: Diagnostics
    calls: list[dict]
    by_id: dict[str, int]
    patch_text: dict[int, list[tuple[str, str]]]
    stdin_proc: dict[str, str]
    events: list[dict]
    commits: list[dict]
    outputs: list[Output]
    exec_ends: list[ExecEnd]
    patch_ends: list[PatchEnd]
    spawn_ends: list[SpawnEnd]
    agent_starts: list[AgentStarted]

    def _may_own_ids(self, call_id: str | None) -> bool:
        """Whether a result's UUIDs may end up in a call's output_ids. Only a call already known
        not to be a shell call (nor a write_stdin poll of one) rules that out; the scan is the
        costly part of reading an output."""
        i = self.by_id.get(call_id) if call_id else None
        return i is None or self.calls[i]["kind"] == "shell" or self.calls[i]["tool"] == "write_stdin"

    def _may_make_commits(self, call_id: str | None) -> bool:
        """Whether a result may be the output of a commit-making shell command: its call runs
        one, is a write_stdin poll (of a command known only when pairing) or is not read yet."""
        i = self.by_id.get(call_id) if call_id else None
        if i is None or self.calls[i]["tool"] == "write_stdin":
            return True
        return self.calls[i]["kind"] == "shell" and commits.made_by(self.calls[i].get("command"))

    def _output_facts(self, p: dict, ts, n: int) -> Output:
        """What a function or custom tool output says, for pairing. Whose they are is settled when pairing, which may put them on a write_stdin poll's exec
        call."""
        call_id, value = as_str(p.get("call_id")), raw_value(p.get("output"))
        text, obj = _output_parts(value)
        bad = json_type(value) if text is None and obj is None else None
        # A substring test first: the anchored pattern would be tried at every line of the header.
        # Both look at the header only, which ends early in a unified-exec output.
        head = _header(text) if text else ""
        procs = [m.group(1) for m in _PROC.finditer(head)] if _PROC_TEXT in head else []
        ids = _first_ids([text]) if text and self._may_own_ids(call_id) else []
        made = commits.output_facts([text]) if text and self._may_make_commits(call_id) else []
        agents = None
        if obj:  # any JSON object answers a spawn, with or without an agent id
            agents = [obj[k] for k in SPAWN_RESULT_KEYS if isinstance(obj.get(k), str)][:1]
        return Output(call_id, ts, n, bad, _exit_from(head, obj), procs, ids, agents, made)

    def _exec_end(self, p: dict, ts, n: int) -> ExecEnd:
        call_id = as_str(p.get("call_id"))
        ids, made = [], []
        if self._may_own_ids(call_id):
            outs = [raw_value(p.get(k)) for k in ("aggregated_output", "stdout", "stderr")]
            ids = _first_ids([o for o in outs if isinstance(o, str)])
            if self._may_make_commits(call_id):  # stdout is often aggregated_output again
                made = commits.output_facts(dict.fromkeys(o for o in outs if isinstance(o, str)))
        return ExecEnd(call_id, ts, n, _exit_code(p.get("exit_code")), ids, made)

    def _patch_end(self, p: dict, ts, n: int) -> PatchEnd:
        ok = p.get("success")
        changes = _change_facts(raw_value(p.get("changes")))
        return PatchEnd(as_str(p.get("call_id")), ts, n, ok if isinstance(ok, bool) else None, changes)

    def _pair(self) -> None:
        ids: dict[int, list[str]] = {}  # call index -> ids its results printed
        made: dict[int, list[tuple]] = {}  # call index -> commits.output_facts of its results
        running = self._pair_outputs(ids, made)
        applied = self._pair_ends(ids, made)
        for i, row in enumerate(self.calls):
            if row["kind"] == "shell":
                row["output_ids"] = list(dict.fromkeys(ids.get(i, [])))[:_MAX_IDS]
                if i in made:
                    self.commits += commits.from_facts(row, made[i])
                # Its result came back with the process still running and no exit was ever
                # seen: it went on in the background (what it started may start later).
                if i in running and row.get("exit_code") is None:
                    row["run_in_background"] = True
            if row.get("is_error") is None and row.get("exit_code") is not None:
                row["is_error"] = row["exit_code"] != 0
            if row["kind"] == "patch":
                self._patch_events(i, applied.get(i))

    def _pair_outputs(self, ids: dict[int, list[str]], made: dict[int, list[tuple]]) -> set[int]:
        """Pairs outputs with calls; returns the shell calls an output left running."""
        procs: dict[str, int] = {}  # unified-exec process id -> index of the exec_command running it
        # File order, so process ids map correctly.
        for call_id, ts, n, bad, code, proc_ids, out_ids, agents, facts in self.outputs:
            if bad is not None:
                self.diags.add("wrong_type", n, f"output: {bad}")
            i = self.by_id.get(call_id) if call_id else None
            if i is None:
                self.diags.add("unmatched_result", n, "output names no call of this file")
                continue
            row = self.calls[i]
            row["ended_at"] = ts
            owner: int | None = i
            if row["tool"] == "write_stdin":  # a poll reports on the exec call's process
                owner = procs.get(self.stdin_proc.get(call_id or "", ""))
            if owner is not None and (own := self.calls[owner])["kind"] in ("shell", "patch"):
                if code is not None:  # a write_stdin poll that saw the exit ends its exec call
                    own["exit_code"], own["ended_at"] = code, ts
                if own["kind"] == "shell":
                    ids.setdefault(owner, []).extend(out_ids)
                    if facts:
                        made.setdefault(owner, []).extend(facts)
                    for proc in proc_ids:
                        procs[proc] = owner
            if row["kind"] == "spawn" and agents is not None:
                row["result_agent_id"] = agents[0] if agents else None
        return set(procs.values())

    def _pair_ends(self, ids: dict[int, list[str]], made: dict[int, list[tuple]]) -> dict[int, tuple]:
        """End events override what outputs said; returns call index -> (ops, ts, line) of its
        last patch_apply_end. Read in file order: the last end event of a call wins."""
        applied: dict[int, tuple] = {}
        ends: list[ExecEnd | PatchEnd | SpawnEnd | AgentStarted] = [
            *self.exec_ends,
            *self.patch_ends,
            *self.spawn_ends,
            *self.agent_starts,
        ]
        for end in sorted(ends, key=attrgetter("line")):
            i = self.by_id.get(end.call_id) if end.call_id else None
            if i is None:
                continue  # e.g. a user `!cmd` shell command: no model call to attach to
            row = self.calls[i]
            if not isinstance(end, AgentStarted):  # the child starting is not the call ending
                row["ended_at"] = end.ts
            if isinstance(end, ExecEnd):
                if end.exit_code is not None:
                    row["exit_code"] = end.exit_code
                ids.setdefault(i, []).extend(end.ids)
                if end.made:
                    made.setdefault(i, []).extend(end.made)
            elif isinstance(end, PatchEnd):
                if end.success is not None:
                    row["is_error"] = not end.success
                applied[i] = (self._changes(end.changes, row["cwd"], end.line), end.ts, end.line)
            elif end.thread_id is not None:
                row["result_agent_id"] = end.thread_id
        return applied

    def _changes(self, facts: list[tuple] | str | None, cwd: str | None, n: int) -> list[tuple[str, str]] | None:
        """(path, op) pairs of a patch_apply_end's _change_facts; a move deletes the old path."""
        if facts is None or isinstance(facts, str):
            if facts is not None:
                self.diags.add("wrong_type", n, f"patch_apply_end.changes: {facts}")
            return None
        ops: list[tuple[str, str]] = []
        for key, op, kind, move in facts:
            path = normalise(key, cwd)
            if op is None:
                self.diags.add("wrong_type", n, f"patch_apply_end.changes[].type: {kind}")
            move = normalise(move, cwd) if move is not None else None
            if op and path:
                ops += [(path, "delete"), (move, "write")] if move else [(path, op)]
        return ops

    def _patch_events(self, i: int, applied: tuple | None) -> None:
        row = self.calls[i]
        if applied is not None and applied[0] is not None:
            ops, ts, line = applied
            row["paths"] = list(dict.fromkeys(row["paths"] + [path for path, _ in ops]))
        else:
            ops, ts, line = self.patch_text.get(i, []), row["started_at"], row["line"]
        if not row.get("is_error"):  # a failed patch changed nothing we can vouch for
            for path, op in ops:
                self._file_event(row["call_id"], ts, path, op, "apply_patch", "verified", line)

    def _file_event(self, call_id, ts, path, op, how, tier, line) -> None:
        self.events.append(
            {
                "call_id": call_id,
                "ts": ts,
                "path": path,
                "op": op,
                "how": how,
                "tier": tier,
                "source_path": self.path,
                "line": line,
            }
        )
