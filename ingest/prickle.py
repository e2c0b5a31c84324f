"""Prickle task objects -> frames (the task schema of ``shared/seeds/prickle-task-states.md``).

Input: task objects as a JSON array, as JSON Lines, or one object per ``.json`` file. One file
may hold several snapshots of the same task (a task event stream): they are merged, and the
snapshot with the latest ``updated_at`` gives the task's current fields (file order breaks ties).
Snapshots are merged within a file only, so keep one task's snapshots in one file.

Mapping (every task is a node):
- session ``prickle:<task id>`` (harness ``prickle``, layout ``task``), one row per attempt: one
  attempt per ``result.revision`` (revision ``N`` implies attempts ``1..N``; attempt 1 starts at
  ``created_at``, attempt ``k`` at the return of revision ``k-1``; the last attempt ends at the
  latest ``updated_at``, earlier ones at their ``returned_at``; a revision without a readable
  ``returned_at`` came back by the first snapshot that carries it). ``n_records`` of an attempt is the
  number of snapshots of it (a snapshot belongs to its ``result.revision``, or to attempt 1 before
  any result): the length of its state history.
- ``assignee`` (the agent that does the task) is ``agent_type``: the column that names the agent
  a session ran as; ``requester`` is the ``originator``; ``route.via`` (how it came: ``handoff`` or
  ``request_capability``) the ``entrypoint``; the hash of ``packet.task`` the ``first_prompt_hash``.
- ``parent_task_id`` -> ``parent_native_id`` with ``session_kind`` ``subagent`` (the spawn pass
  makes a verified spawn edge); ``result.lineage.cause`` of kind ``task`` -> ``caused_by_id`` (the
  continuation pass: ``continue``, verified); ``packet.depends_on`` entries shaped like task ids
  -> ``depends_on`` (``dep`` edges, reported; one naming a task not in the store is counted by the
  pass). Other ``depends_on`` entries (free text) are left out.
- ``result.artifacts`` are writes of the attempt whose revision returned them, at its return (the
  instant that attempt ends and the next begins; the OCP writer gives such a write to the attempt
  that ends then): path ``sha256:<hex>`` for a content hash, ``git:<commit>`` for a commit (tier
  verified, ``how`` ``result.artifacts``). Every ``result.lineage.context`` item with a ``sha256``
  (a packet, memory fact or checkpoint the result used) is a read of ``sha256:<hex>`` at
  ``lineage.recorded_at``: the artifact pass joins it to the task that wrote that hash (verified
  artifact edge), or counts it as a read of something no logged task wrote.
- Outcome (``ingest/prickle_outcome.py``). The latest snapshot's ``state`` -> ``sessions.state``,
  an OCP node state, on every attempt row; a valid ``waiting_on`` -> ``sessions.waiting_on``:

  ==============  ==========  =====================================================
  task state      node state  why
  ==============  ==========  =====================================================
  requested       queued      a handoff created it; the permission gate comes next
  routed          queued      sent to an assignee who has not taken it up
  accepted        queued      taken up; work (and checkpoints) start with working
  working         working
  waiting         blocked     on ``waiting_on`` (owner_approval, human, agent, stopped)
  verifying       review      a result came back; its evidence is being checked
  approval        review      a result awaits its owner's approval
  returned        review      back with its requester (the seed documents no more;
                              the schema does not count it among the 3 end states)
  completed       done
  rejected        rejected
  cancelled       canceled    OCP's spelling
  ==============  ==========  =====================================================

  Each attempt's ``status`` (OCP attempt status): its revision's ``result.status`` when that
  decides (``accepted`` done, ``rejected`` rejected, ``cancelled`` canceled, ``superseded``
  settled_unverified); an earlier attempt otherwise ``settled_unverified`` (a later revision
  followed; no verdict on it is recorded). The current attempt otherwise follows the task state:
  an end state settles it (done, rejected, canceled); a returned result not yet judged is
  ``settled_unverified``; with no result, ``queued`` before work starts (requested, routed,
  accepted, or waiting on ``owner_approval``: the gate holds it before routing), else ``working``.
  A state outside the 11 leaves state and status null (the OCP writer then writes
  ``settled_unverified``, as for a bare log).
  ``outcome_tier`` (how the outcome is known) for a settled attempt: ``done`` takes the strongest
  tier of its evidence (``ci`` verified: a mechanical check; ``requester``/``person`` reported;
  ``assignee`` or no verifier asserted: the worker's own claim), raised to reported by verdicts;
  rejected, canceled and a returned result awaiting a verdict are the server's record, reported
  (the evidence backs the work, not the refusal); an attempt known only from a later revision
  number is heuristic.
  ``outcomes`` rows: ``state``, one per change of (state, waiting_on) across the snapshots in
  ``updated_at`` order (the sequence of states; OCP ``note`` events), attempt = the snapshot's
  revision; ``evidence``, one per ``result.evidence`` item of each revision (``evidence_kind``,
  ``verifier``, ``tier``, ``ts`` = ``observed_at`` else ``returned_at``, ``ref`` = the result
  artifact its ``artifact`` index names, else its ``url``; a ``data:`` url is content and is
  dropped); ``verdict``, one per ``result.verdicts`` item (``criterion``, ``accepted``, tier
  reported, at the first snapshot that carried the revision's verdicts; OCP run signals), with
  the result's ``decided_by`` as the signal source: ``verifier`` its OCP source kind (a ``person``
  is ``user``, an ``agent`` ``judge``, the ``system`` ``orchestrator``), ``ref`` the person's handle
  or the agent's id (none for the system or an erased decider).
- Text: packet text and context, result and evidence summaries, evidence content, verdict notes,
  ``reason`` and checkpoints are never read into the frames. The ingest has no ``full`` profile
  yet; when it has, they belong in its ``texts`` frame only.

Bad input is a diagnostics row, never an exception: an entry that is not an object
``not_object``; a task without a valid ``id`` (left out) or missing required keys (kept)
``bad_document``; a ``state``/``waiting_on`` (or an evidence ``kind``/``verifier``) outside the
schema's values or a field of the wrong shape ``wrong_type`` (the field is ignored, a bad evidence
or verdict item left out); an unparseable time ``bad_timestamp``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime

import orjson

from sessiongraph.ingest import prickle_outcome as outcome
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_dict,
    as_str,
    file_size,
    json_type,
    parse_ts,
    read_document,
    read_records,
    text_hash,
)
from sessiongraph.ingest.prickle_outcome import NODE_STATE, WAITING_ON, known

NAME = "prickle"
STATES = frozenset(NODE_STATE)  # the schema's 11 task states
REQUIRED = (
    "id",
    "project",
    "state",
    "waiting_on",
    "requester",
    "assignee",
    "packet",
    "result",
    "latest_checkpoint",
    "parent_task_id",
    "created_at",
    "updated_at",
)
# A file is Prickle's when its first task carries these (the rest may be missing: a diagnostic).
DETECT_KEYS = ("id", "project", "state", "assignee", "packet", "parent_task_id", "created_at", "updated_at")
MAX_BYTES = 128 * 1024 * 1024  # a task file is one JSON document, parsed whole
MAX_REVISION = 1000  # the schema allows 2**53; more resubmissions than this is not a real task

_TASK_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^(?:[0-9a-f]{40}|[0-9a-f]{64})$")
# result.artifacts keys -> the path their write is logged under (a content hash, else a commit)
ARTIFACT_KEYS = (("sha256", _SHA256, "sha256:"), ("commit_sha", _COMMIT, "git:"))


def detect(path: str, head: bytes) -> bool:
    """A task object (or an array or lines of them) with the schema's identifying keys."""
    try:
        return _detect(head)
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def _is_task(obj: object) -> bool:
    return (
        isinstance(obj, dict)
        and all(k in obj for k in DETECT_KEYS)
        and isinstance(obj.get("id"), str)
        and isinstance(obj.get("packet"), dict)
    )


def _detect(head: bytes) -> bool:
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if not text.startswith((b"[", b"{")):
        return False
    try:
        whole = orjson.loads(text)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, list):
        return bool(whole) and _is_task(whole[0])
    if whole is not None:
        return _is_task(whole)
    if text.startswith(b"{"):
        first = text.partition(b"\n")[0]
        try:
            return _is_task(orjson.loads(first))
        except orjson.JSONDecodeError:
            pass
    # Cut off by the head (a long array or object): its opening bytes name the task keys.
    opening = text[:16384]
    return b'"ocp"' not in opening and all(b'"%s"' % k.encode() in opening for k in DETECT_KEYS)


def parse(path: str) -> Frames:
    """Parse one file of task objects; bad input becomes diagnostics rows, never an exception."""
    return _Tasks(path).run()


@dataclass
class _Snapshot:
    obj: dict
    line: int | None
    where: str
    order: int
    updated: datetime | None = None
    revision: int = 1  # the result.revision it carries; 1 before any result


@dataclass
class _Task:
    tid: str
    snapshots: list[_Snapshot] = field(default_factory=list)


class _Tasks:
    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)
        self.tasks: dict[str, _Task] = {}
        self.n = 0

    def run(self) -> Frames:
        text = read_document(self.path, self.d, MAX_BYTES)
        if text is None:
            return Frames.from_rows(diagnostics=self.d.rows)
        whole = None
        if not self.path.endswith(".jsonl"):  # JSON Lines are read line by line, whatever they hold
            try:
                whole = orjson.loads(text)
            except orjson.JSONDecodeError:
                if text.startswith(b"["):
                    self.d.add("invalid_json", None, f"task array of {len(text)} bytes does not parse")
                    return Frames.from_rows(diagnostics=self.d.rows)
        if isinstance(whole, list):
            for i, item in enumerate(whole):
                self._record(item, None, f"[{i}]")
        elif isinstance(whole, dict):
            self._record(whole, None, "task")
        elif whole is not None:
            self.d.add("not_object", None, f"top level is a JSON {json_type(whole)}")
        else:  # .jsonl, or task objects one per line in a .json file
            for n, rec in read_records(self.path, self.d):
                self._record(rec, n, f"line {n}")
        rows: dict[str, list[dict]] = {"sessions": [], "file_events": [], "outcomes": []}
        for task in self.tasks.values():
            self._task(task, rows)
        return Frames.from_rows(**rows, diagnostics=self.d.rows)

    # -- one snapshot --------------------------------------------------------------------------

    def _record(self, obj: object, line: int | None, where: str) -> None:
        if not isinstance(obj, dict):
            self.d.add("not_object", line, f"{where}: a JSON {json_type(obj)}")
            return
        tid = obj.get("id")
        if not isinstance(tid, str) or not _TASK_ID.match(tid):
            self.d.add("bad_document", line, f"{where}: task id {json_type(tid)} missing or not a task id; left out")
            return
        missing = [k for k in REQUIRED if k not in obj]
        if missing:
            self.d.add("bad_document", line, f"{where} task {tid}: missing required keys {', '.join(missing)}")
        state = obj.get("state")
        if known(state, STATES) is None:
            shown = f"{state[:30]!r}" if isinstance(state, str) else json_type(state)
            self.d.add("wrong_type", line, f"{where} task {tid}: state {shown} is not one of the 11 task states")
        waiting = obj.get("waiting_on")
        if waiting is not None and known(waiting, WAITING_ON) is None:
            shown = f"{waiting[:30]!r}" if isinstance(waiting, str) else json_type(waiting)
            self.d.add("wrong_type", line, f"{where} task {tid}: waiting_on {shown} is not a waiting reason")
        snap = _Snapshot(obj, line, where, self.n)
        self.n += 1
        raw = obj.get("updated_at")
        snap.updated = parse_ts(raw)
        if snap.updated is None and raw is not None:
            self.d.add("bad_timestamp", line, f"{where} task {tid}: updated_at unparseable {json_type(raw)}")
        self.tasks.setdefault(tid, _Task(tid)).snapshots.append(snap)

    # -- one task --------------------------------------------------------------------------------

    def _task(self, task: _Task, rows: dict[str, list[dict]]) -> None:
        snaps = sorted(task.snapshots, key=lambda s: (s.updated is not None, s.updated or datetime.min, s.order))
        latest = snaps[-1]
        obj, line, tid = latest.obj, latest.line, task.tid
        sid = f"{NAME}:{tid}"
        created = self._ts(obj, "created_at", line, tid) or snaps[0].updated
        # revision -> (result, snapshot) from the latest snapshot that carries it
        revisions: dict[int, tuple[dict, _Snapshot]] = {}
        judged: dict[int, datetime | None] = {}  # revision -> the first snapshot that carries verdicts
        seen: dict[int, datetime | None] = {}  # revision -> the first snapshot that carries it
        per_attempt: Counter[int] = Counter()
        for s in snaps:
            result = s.obj.get("result")
            if isinstance(result, dict):
                s.revision = self._revision(result, s, tid)
                revisions[s.revision] = (result, s)
                seen.setdefault(s.revision, s.updated)
                if result.get("verdicts") and s.revision not in judged:
                    judged[s.revision] = s.updated
            elif result is not None:
                self.d.add("wrong_type", s.line, f"task {tid}: result: {json_type(result)}")
            per_attempt[s.revision] += 1
        n_attempts = max([1, *revisions])
        # One instant ends a revision's attempt, starts the next and dates its writes, so every write
        # lies in its own attempt: returned_at, else the first snapshot that shows the revision.
        returned = {
            rev: self._ts(r, "returned_at", s.line, tid) or seen[rev] or s.updated for rev, (r, s) in revisions.items()
        }
        cause = self._cause(revisions, tid)
        for rev, (result, s) in sorted(revisions.items()):
            rows["file_events"] += self._writes(sid, result, s, tid, returned[rev])
            rows["file_events"] += self._reads(sid, result, s, tid, returned[rev])
        state, waiting = known(obj.get("state"), STATES), known(obj.get("waiting_on"), WAITING_ON)
        history = [(s.obj.get("state"), s.obj.get("waiting_on"), s.updated, s.revision, s.line) for s in snaps]
        rows["outcomes"] += outcome.state_rows(self.path, sid, history)
        ended = self._outcomes(sid, tid, n_attempts, revisions, returned, judged, state, waiting, rows)
        packet = as_dict(obj.get("packet"))
        if not isinstance(obj.get("packet"), dict) and "packet" in obj:
            self.d.add("wrong_type", line, f"task {tid}: packet: {json_type(obj.get('packet'))}")
        deps = packet.get("depends_on", [])
        if not isinstance(deps, list):
            self.d.add("wrong_type", line, f"task {tid}: packet.depends_on: {json_type(deps)}")
            deps = []
        depends = list(dict.fromkeys(d for d in deps if isinstance(d, str) and _TASK_ID.match(d) and d != tid))
        parent = obj.get("parent_task_id")
        if parent is not None and not (isinstance(parent, str) and _TASK_ID.match(parent)):
            self.d.add("wrong_type", line, f"task {tid}: parent_task_id: {json_type(parent)}")
            parent = None
        route = as_dict(obj.get("route"))
        prompt = packet.get("task")
        start = created
        for k in range(1, n_attempts + 1):
            end = returned.get(k)
            if k == n_attempts:
                end = latest.updated or end
            rows["sessions"].append(
                {
                    "session_id": sid,
                    "attempt": k,
                    "harness": NAME,
                    "native_id": tid,
                    "session_kind": "subagent" if parent else "main",
                    "layout": "task",
                    "source_path": self.path,
                    "source_bytes": file_size(self.path),
                    "started_at": start,
                    "ended_at": end,
                    "entrypoint": as_str(route.get("via")),
                    "originator": as_str(obj.get("requester")),
                    "parent_native_id": parent,
                    "agent_type": as_str(obj.get("assignee")),
                    "caused_by_id": cause,
                    "depends_on": depends,
                    "first_prompt_hash": text_hash(prompt) if isinstance(prompt, str) else None,
                    "n_records": per_attempt.get(k, 0),
                    "state": NODE_STATE.get(state) if state else None,
                    "waiting_on": waiting,
                    "status": ended[k][0],
                    "outcome_tier": ended[k][1],
                }
            )
            start = returned.get(k) or start

    def _outcomes(
        self,
        sid: str,
        tid: str,
        n_attempts: int,
        revisions: dict[int, tuple[dict, _Snapshot]],
        returned: dict[int, datetime | None],
        judged: dict[int, datetime | None],
        state: str | None,
        waiting: str | None,
        rows: dict[str, list[dict]],
    ) -> dict[int, tuple[str | None, str | None]]:
        """Evidence and verdict rows of every returned revision; (status, outcome tier) per attempt."""
        out = {}
        for k in range(1, n_attempts + 1):
            result, s = revisions.get(k, (None, None))
            tiers, n_verdicts, decided = [], 0, None
            if result is not None and s is not None:  # stored together
                decided = outcome.result_status(self.d, s.line, tid, result)
                arts = result.get("artifacts", [])
                at = returned[k]
                evidence = outcome.evidence_rows(
                    self.d,
                    self.path,
                    sid,
                    k,
                    result,
                    s.line,
                    tid,
                    at,
                    [_artifact_ref(a) for a in arts] if isinstance(arts, list) else None,
                )
                verdicts = outcome.verdict_rows(self.d, self.path, sid, k, result, s.line, tid, judged.get(k) or at)
                rows["outcomes"] += evidence + verdicts
                tiers, n_verdicts = [r["tier"] for r in evidence], len(verdicts)
            status = outcome.attempt_status(result, decided, k == n_attempts, state, waiting)
            out[k] = (status, outcome.outcome_tier(status, result, tiers, n_verdicts))
        return out

    def _ts(self, obj: dict, key: str, line: int | None, tid: str) -> datetime | None:
        raw = obj.get(key)
        ts = parse_ts(raw)
        if ts is None and raw is not None:
            self.d.add("bad_timestamp", line, f"task {tid}: {key} unparseable {json_type(raw)}")
        return ts

    def _revision(self, result: dict, s: _Snapshot, tid: str) -> int:
        rev = result.get("revision", 1)
        if type(rev) is not int or not 1 <= rev <= MAX_REVISION:
            self.d.add("wrong_type", s.line, f"task {tid}: result.revision: {json_type(rev)}")
            return 1
        return rev

    def _lineage(self, result: dict, s: _Snapshot, tid: str, *, report: bool = True) -> dict:
        lineage = result.get("lineage")
        if lineage is None:
            return {}
        if not isinstance(lineage, dict):
            if report:
                self.d.add("wrong_type", s.line, f"task {tid}: result.lineage: {json_type(lineage)}")
            return {}
        return lineage

    def _cause(self, revisions: dict[int, tuple[dict, _Snapshot]], tid: str) -> str | None:
        for _rev, (result, s) in sorted(revisions.items(), reverse=True):
            cause = self._lineage(result, s, tid, report=False).get("cause")
            if cause is None:
                continue
            if not isinstance(cause, dict):
                self.d.add("wrong_type", s.line, f"task {tid}: result.lineage.cause: {json_type(cause)}")
                continue
            if cause.get("kind") == "task":
                other = cause.get("task_id")
                if isinstance(other, str) and _TASK_ID.match(other) and other != tid:
                    return other
                self.d.add("wrong_type", s.line, f"task {tid}: result.lineage.cause.task_id: {json_type(other)}")
            return None
        return None

    def _writes(self, sid: str, result: dict, s: _Snapshot, tid: str, at: datetime | None) -> list[dict]:
        arts = result.get("artifacts", [])
        if not isinstance(arts, list):
            self.d.add("wrong_type", s.line, f"task {tid}: result.artifacts: {json_type(arts)}")
            return []
        paths = []
        for i, art in enumerate(arts):
            if not isinstance(art, dict):
                self.d.add("wrong_type", s.line, f"task {tid}: result.artifacts[{i}]: {json_type(art)}")
                continue
            for key, pattern, prefix in ARTIFACT_KEYS:
                value = art.get(key)
                if value is None:
                    continue
                if isinstance(value, str) and pattern.match(value):
                    paths.append(prefix + value)
                else:
                    self.d.add("wrong_type", s.line, f"task {tid}: result.artifacts[{i}].{key}: {json_type(value)}")
        return [self._event(sid, at, p, "write", "result.artifacts", s.line) for p in dict.fromkeys(paths)]

    def _reads(self, sid: str, result: dict, s: _Snapshot, tid: str, fallback: datetime | None) -> list[dict]:
        lineage = self._lineage(result, s, tid)
        context = lineage.get("context", [])
        if not isinstance(context, list):
            self.d.add("wrong_type", s.line, f"task {tid}: result.lineage.context: {json_type(context)}")
            return []
        at = parse_ts(lineage.get("recorded_at")) or fallback
        paths = []
        for i, item in enumerate(context):
            value = item.get("sha256") if isinstance(item, dict) else None
            if isinstance(value, str) and _SHA256.match(value):
                paths.append("sha256:" + value)
            else:
                self.d.add("wrong_type", s.line, f"task {tid}: result.lineage.context[{i}].sha256: {json_type(value)}")
        return [self._event(sid, at, p, "read", "lineage.context", s.line) for p in dict.fromkeys(paths)]

    def _event(self, sid: str, at: datetime | None, path: str, op: str, how: str, line: int | None) -> dict:
        return {
            "session_id": sid,
            "call_id": None,
            "ts": at,
            "path": path,
            "op": op,
            "how": how,
            "tier": "verified",
            "source_path": self.path,
            "line": line,
        }


def _artifact_ref(art: object) -> str | None:
    """The path one result artifact's write is logged under (its content hash, else its commit)."""
    if isinstance(art, dict):
        for key, pattern, prefix in ARTIFACT_KEYS:
            value = art.get(key)
            if isinstance(value, str) and pattern.match(value):
                return prefix + value
    return None
