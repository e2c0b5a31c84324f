"""oh-my-pi session files (``~/.omp/agent/sessions/<enc-cwd>/<ts>_<id>.jsonl``) and the
transcripts of its ``task`` subagents -> frames.

The format is pi's v3 tree (``ingest.pi``) plus: a fixed-width ``{"type": "title"}`` slot as the
first physical line (current builds), more entry types (``session_init``, ``mode_change``, ...),
message roles ``developer``/``pythonExecution``/``fileMention``, ``model_change.model`` as
``provider/id`` and ``usage.reasoningTokens`` (harness-log-formats.md section 4; oh-my-pi
``docs/session.md`` and ``docs/tools/task.md``).

Sessions and ids:
- a main transcript is ``omp:<header id>``; ``parentSession`` (an opaque id or a session path) is
  its ``forked_from_id``;
- a subagent transcript is ``<main stem>/<taskId>.jsonl``: the artifacts folder of the main session,
  shared by every subagent of that tree, nested ones included (``Parent.Child``). Its session id is
  ``omp:<root>/<taskId>`` (root = the main session's header id, read from the sibling
  ``<main stem>.jsonl``, else the id in the folder name), ``agent_id`` the task id,
  ``parent_native_id`` ``<root>`` or ``<root>/<Parent>`` for a nested id: the folder and the dotted
  id are how the tool lays children out, so the layout names the parent. ``native_id`` is the
  child's own header id. ``__advisor*`` transcripts share the folder but are the advisor's
  reviews, not spawns (kind ``review``).

The ``task`` tool:
- a call with ``arguments.tasks[]`` (Jan-2026 builds) becomes one spawn call per task, call id
  ``<toolCallId>#<n>`` when there are several (so each child, or its absence, is counted on its
  own); a call with ``agent``/``id`` (later builds: one call, one agent) is one spawn call;
- the allocated id (``Name``, ``Name-2``, ``Parent.Child``: the tool renames repeats) is taken from
  the result: ``details.results[].id``, ``details.progress[].id|taskId``, ``details.async.jobId`` or
  the text ``Spawned agent `<id>` ``; it is the call's ``result_agent_id``;
- async delivery: an async call's own result only says the agent started; the call ends when the
  ``async-result`` message (``custom_message``, ``details.jobs[].agentId``) arrives, at that time;
- ``resume: "<id>"`` continues an existing agent: not a spawn (kind ``other``, ``result_agent_id``
  the resumed id). In the child, the resumed assignment is appended to the same ``<id>.jsonl``:
  a new ATTEMPT starts at the first user message after the agent settled, i.e. after its ``yield``
  call came back or a ``custom``/``session_exit`` record (the agent was parked). Reminder prompts a
  child gets before it yields stay in the same attempt. Attempts are numbered 1, 2, ... on
  subagent rows (sessions and usage); main transcripts are one try (null).

Artifacts (canonical paths, so writer and reader meet on one ``path`` across files):
- ``agent://<root>/<taskId>``: the subagent's output (``<taskId>.md``, rewritten by each
  assignment). Each attempt writes it when its last ``yield`` came back (else at its last reply);
  any read-like tool (``read``, ``fetch``) of ``agent://<id>`` reads it. ``agent://A/B`` is the
  nested agent ``A.B`` when ``B`` looks like an agent id (starts with a capital: ids are CamelCase
  names), otherwise a JSON path into ``A``'s output; selectors (``:raw``, ``:10-20``, ``?q=``) are
  dropped;
- ``agent://<root>/<taskId>.patch``: an isolated run's patch. The child writes it when
  ``<taskId>.patch`` sits beside its transcript; the parent reads (merges) it when the task result
  names its ``patchPath`` (verified), or when an ``isolated`` call's async result arrives
  (heuristic: the merge is not logged);
- ``local://<root>/<path>``: the session scratch root, shared by the main session and all its
  subagents;
- other internal schemes (``history://``, ``skill://``, ``artifact://``, ``omp://``) and
  ``write agent://`` (agent messaging) are not file events.
"""

from __future__ import annotations

import os
import posixpath
import re
from datetime import datetime

from sessiongraph.ingest import pi
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import as_dict, as_int, as_str, json_type, text_hash
from sessiongraph.ingest.pi_family import OMP_ONLY_ROLES, OMP_ONLY_TYPES, is_omp, place

NAME = "omp"

ENTRY_TYPES = pi.ENTRY_TYPES | OMP_ONLY_TYPES
MESSAGE_ROLES = pi.MESSAGE_ROLES | OMP_ONLY_ROLES
SPAWN_TOOL = "task"
YIELD_TOOL = "yield"  # the hidden tool a subagent finishes through (docs/tools/task.md flow 16)
# Tools that read a path or URL argument; their agent:// and local:// targets are artifacts.
READ_TOOLS = frozenset({"read", "fetch"})
TARGET_KEYS = ("path", "url", "file_path")
ASYNC_RESULT = "async-result"  # customType of the delivery message (session/async-job-delivery.ts)
PARKED = "session_exit"  # custom record written when a finished agent's session is disposed
FAILED_JOBS = frozenset({"failed", "aborted", "cancelled"})
ADVISOR_PREFIX = "__advisor"  # advisor transcripts in the artifacts folder (spec 4.1)

SCHEME = re.compile(r"^(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<rest>.*)$", re.S)
SELECTOR = re.compile(r":(?:raw|\d+(?:-\d+)?)$")
NESTED_ID = re.compile(r"^[A-Z][A-Za-z0-9_-]*$")
SPAWNED_TEXT = re.compile(r"(?:Spawned|Resumed) agent `([^`]+)`")


def detect(path: str, head: bytes) -> bool:
    """An oh-my-pi file (``pi_family.is_omp`` says how it is told from a pi one)."""
    return is_omp(path, head)


def parse(path: str) -> Frames:
    """Parse one oh-my-pi transcript (main or subagent); bad input becomes diagnostics rows."""
    return _Omp(path).run()


class _Omp(pi.Transcript):
    harness = NAME
    entry_types = ENTRY_TYPES
    roles = MESSAGE_ROLES

    def __init__(self, path: str) -> None:
        super().__init__(path)
        self.task_id, self.root = place(path)
        self.child = self.task_id is not None
        # A child's header may name its spawner in parentSession: that is not a fork.
        self.copies_are_forks = not self.child
        self.settled = False
        self.outputs: dict[int, tuple] = {}  # attempt -> (ts, call_id, line) of its last yield
        self.task_meta: dict[str, dict] = {}  # call_id -> index, isolated flag
        self.waiting: list[dict] = []  # async task calls whose result has not arrived yet
        self.records = 0

    @property
    def tree_root(self) -> str | None:
        """The id every canonical agent:// and local:// path of this session tree hangs from."""
        return self.root if self.child else (self.header or {}).get("id")

    # -- reading -----------------------------------------------------------------------------

    def _record(self, n: int, rec: dict) -> None:
        self.records += 1
        super()._record(n, rec)

    def _extra_record(self, n: int, rec: dict, kind: object) -> bool:
        return kind == "title" and self.records == 1  # the slot is only ever the first line

    def _boundary(self, rec: dict, kind: str, ts: datetime | None) -> None:
        msg = rec.get("message")
        if self.child and self.settled and kind == "message" and isinstance(msg, dict) and msg.get("role") == "user":
            self.attempts.append(pi.Attempt(len(self.attempts) + 1))
            self.settled = False

    def _model_change(self, rec: dict) -> None:
        model = as_str(rec.get("model"))  # "provider/id"
        if model:
            self.model_hint = model.rsplit("/", 1)[-1]
        else:
            super()._model_change(rec)

    def _other_entry(self, n: int, rec: dict, kind: str, ts: datetime | None) -> None:
        if kind == "session_init":
            task = rec.get("task")
            if isinstance(task, str) and self.cur.first_prompt is None:
                self.cur.first_prompt = task  # the assignment as the tool passed it
        elif kind == "custom" and rec.get("customType") == PARKED:
            self.settled = True
        elif kind == "custom_message" and rec.get("customType") == ASYNC_RESULT:
            self._delivery(rec.get("details"), ts, n)

    def _other_message(self, n: int, rec: dict, msg: dict, role: str, ts: datetime | None) -> None:
        if role == "custom" and msg.get("customType") == ASYNC_RESULT:
            self._delivery(msg.get("details"), ts, n)

    # -- calls -------------------------------------------------------------------------------

    def _classify(self, row: dict, tool: str, args: dict) -> list[dict]:
        if tool == SPAWN_TOOL:
            return self._task_call(row, args)
        target = next((args[k] for k in TARGET_KEYS if isinstance(args.get(k), str)), None)
        internal = self._internal(target) if target is not None else None
        if internal is None or tool not in READ_TOOLS | {"write", "edit"}:
            return super()._classify(row, tool, args)
        scheme, canonical = internal
        if tool == "fetch" and scheme not in ("agent", "local"):
            return [row]  # a web fetch: no file
        if tool in READ_TOOLS:
            row.update(kind="read", paths=[canonical] if canonical else [])
        else:  # write/edit: only local:// files are files (write agent://x is a message)
            row.update(kind=tool, paths=[canonical] if canonical and scheme == "local" else [])
        return [row]

    def _task_call(self, row: dict, args: dict) -> list[dict]:
        agent = as_str(args.get("agent"))
        tasks = args.get("tasks")
        if isinstance(tasks, list):  # Jan-2026: one call, several tasks
            items = [t for t in tasks if isinstance(t, dict)]
            rows = []
            for i, t in enumerate(items or [{}]):
                r = dict(
                    row,
                    call_id=row["call_id"] if len(items) <= 1 else f"{row['call_id']}#{i + 1}",
                    paths=[],
                    output_ids=[],
                )
                self._spawn_fields(
                    r,
                    as_str(t.get("agent")) or agent,
                    t.get("description"),
                    t.get("task") if "task" in t else t.get("assignment"),
                )
                self.task_meta[r["call_id"]] = {"index": i, "isolated": t.get("isolated") is True}
                rows.append(r)
            return rows
        resumed = as_str(args.get("resume"))
        self._spawn_fields(row, agent, args.get("description"), args.get("assignment", args.get("task")))
        if resumed:  # a follow-up at an existing node, not a new one
            row.update(kind="other", result_agent_id=resumed)
        self.task_meta[row["call_id"]] = {"index": 0, "isolated": args.get("isolated") is True}
        return [row]

    @staticmethod
    def _spawn_fields(row: dict, agent: str | None, description: object, prompt: object) -> None:
        row.update(kind="spawn", subagent_type=agent, description=as_str(description))
        if isinstance(prompt, str):
            row["prompt_hash"] = text_hash(prompt)

    def _result(self, rows: list[dict], msg: dict, ts: datetime | None, n: int) -> None:
        if rows[0]["tool"] == SPAWN_TOOL:
            self._task_result(rows, msg, ts, n)
            return
        super()._result(rows, msg, ts, n)
        if rows[0]["tool"] == YIELD_TOOL and not rows[0]["is_error"]:
            self.settled = True
            self.outputs[self.cur.n] = (ts, rows[0]["call_id"], n)

    def _task_result(self, rows: list[dict], msg: dict, ts: datetime | None, n: int) -> None:
        details = as_dict(msg.get("details"))
        for key in ("results", "progress"):
            if details.get(key) is not None and not isinstance(details[key], list):
                self.diags.add("wrong_type", n, f"task.details.{key}: {json_type(details[key])}")
        results = _dicts(details.get("results"))
        progress = _dicts(details.get("progress"))
        job = as_dict(details.get("async"))
        said = SPAWNED_TEXT.search(pi.message_text(msg.get("content")) or "")
        for i, row in enumerate(rows):
            meta = self.task_meta.get(row["call_id"], {"index": i, "isolated": False})
            res, prog = _nth(results, meta["index"], i), _nth(progress, meta["index"], i)
            one = len(rows) == 1
            agent = (
                _agent_of(res)
                or _agent_of(prog)
                or (as_str(job.get("jobId")) if one else None)
                or (said.group(1) if one and said else None)
            )
            if agent and row["kind"] == "spawn":
                row["result_agent_id"] = agent
            if res is None and job.get("state") in ("running", "queued") and msg.get("isError") is not True:
                self.waiting.append(row)  # the result is delivered later (async)
                continue
            code = res.get("exitCode") if res else None
            row["ended_at"] = ts
            row["is_error"] = (
                msg.get("isError") is True
                or (type(code) is int and code != 0)
                or bool(res and res.get("aborted") is True)
            )
            patch = as_str(res.get("patchPath")) if res else None
            if patch and not row["is_error"]:
                self._patch_read(row, _stem(patch), ts, n, "verified")

    def _delivery(self, details: object, ts: datetime | None, n: int) -> None:
        """An async-result message: the task calls whose agents it names end now."""
        for job in _dicts(details.get("jobs") if isinstance(details, dict) else None):
            if job.get("type") not in (None, "task"):
                continue
            names = {as_str(job.get("agentId")), as_str(job.get("jobId"))} - {None}
            row = next((r for r in self.waiting if r.get("result_agent_id") in names), None)
            if row is None:
                continue
            self.waiting.remove(row)
            row["ended_at"] = ts
            row["is_error"] = job.get("status") in FAILED_JOBS
            if self.task_meta.get(row["call_id"], {}).get("isolated") and not row["is_error"]:
                self._patch_read(row, row["result_agent_id"], ts, n, "heuristic")

    def _patch_read(self, row: dict, agent: str, ts: datetime | None, n: int, tier: str) -> None:
        if self.tree_root and agent:
            self.events.append(
                {
                    "call_id": row["call_id"],
                    "ts": ts,
                    "op": "read",
                    "tier": tier,
                    "line": n,
                    "path": f"agent://{self.tree_root}/{agent}.patch",
                    "how": "merge isolated patch",
                }
            )

    # -- canonical internal paths --------------------------------------------------------------

    def _internal(self, target: str) -> tuple[str, str | None] | None:
        """(scheme, canonical path or None) of an internal URL; None for a plain path."""
        m = SCHEME.match(target)
        if not m:
            return None
        scheme, rest = m.group("scheme"), m.group("rest")
        root = self.tree_root
        if not root:
            return scheme, None
        if scheme == "agent":
            return scheme, _agent_path(root, rest)
        if scheme == "local":
            return scheme, _local_path(root, rest)
        return scheme, None

    # -- building frames ---------------------------------------------------------------------

    def identity(self) -> dict:
        if not self.child:
            return super().identity()
        task, root = self.task_id, self.root
        assert task is not None and root is not None and self.header is not None  # a child file has all three
        parent = task.rsplit(".", 1)[0] if "." in task else None
        return {
            "session_id": f"{NAME}:{root}/{task}",
            "native_id": self.header["id"],
            "agent_id": task,
            "session_kind": "review" if task.startswith(ADVISOR_PREFIX) else "subagent",
            "layout": "nested",
            "parent_native_id": f"{root}/{parent}" if parent else root,
            "root_native_id": root,
            "spawn_depth": task.count(".") + 1,
        }

    def attempt_number(self, a: pi.Attempt) -> int | None:
        return a.n if self.child else None

    def extra_events(self) -> list[dict]:
        events = list(self.events)
        if not self.child or not self.root:
            return events
        out = f"agent://{self.root}/{self.task_id}"
        last = None
        for a in self.attempts:
            at = self.outputs.get(a.n) or a.last_reply
            if at is None or at[0] is None:
                continue
            last = at
            events.append(
                {
                    "call_id": at[1],
                    "ts": at[0],
                    "path": out,
                    "op": "write",
                    "how": "task output",
                    "tier": "verified",
                    "line": at[2],
                }
            )
        patch = os.path.join(os.path.dirname(self.path), f"{self.task_id}.patch")
        if last is not None and os.path.isfile(patch):
            events.append(
                {
                    "call_id": last[1],
                    "ts": last[0],
                    "path": f"{out}.patch",
                    "op": "write",
                    "how": "isolated patch",
                    "tier": "verified",
                    "line": last[2],
                }
            )
        return events


def _agent_path(root: str, rest: str) -> str | None:
    rest = SELECTOR.sub("", rest.split("?", 1)[0].split("#", 1)[0])
    parts = [p for p in rest.split("/") if p]
    if not parts:
        return None
    agent = parts[0]
    for part in parts[1:]:
        if not NESTED_ID.match(part):
            break  # a JSON path into the agent's output from here on
        agent = f"{agent}.{part}"
    return f"agent://{root}/{agent}"


def _local_path(root: str, rest: str) -> str | None:
    rest = SELECTOR.sub("", rest)
    path = posixpath.normpath("/" + rest).lstrip("/")  # the root is a jail: ".." cannot leave it
    return f"local://{root}/{path}" if path not in ("", ".") else None


def _dicts(value: object) -> list[dict]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _nth(items: list[dict], index: int, position: int) -> dict | None:
    """The result/progress item of one task: by its ``index`` field, else by position."""
    for item in items:
        if "index" in item and as_int(item["index"]) == index:
            return item
    return items[position] if position < len(items) else None


def _agent_of(item: dict | None) -> str | None:
    if not item:
        return None
    return as_str(item.get("id")) or as_str(item.get("taskId")) or as_str(item.get("agentId"))


def _stem(path: str) -> str:
    base = re.split(r"[\\/]", path)[-1]
    return base[: -len(".patch")] if base.endswith(".patch") else base
