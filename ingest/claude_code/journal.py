"""Claude Code workflow runs: ``<sessionId>/subagents/workflows/wf_<runId>/journal.jsonl``.

A ``Workflow`` call (2.1.2xx) runs a script whose ``agent()`` calls each start an agent, written
beside the journal as ``agent-<id>.jsonl`` (meta.json ``agentType: workflow-subagent``, no
``toolUseId``). The journal is the run's own log: ``{"type":"launched"}``, then per agent
``{"type":"started","agentId","key","label","phase"}`` and later ``{"type":"result","agentId",
"key","result"}``; a restarted agent is a second ``started`` line with the same ``key`` and a new
``agentId``. It holds no conversation, tokens or cwd.

Read as one session, the run's: ``claude-code:<sessionId>/wf_<runId>`` (its agent id is the
folder name, which the lead's ``Workflow`` result names as ``runId``), kind ``workflow``, layout
``journal``. Each ``started`` line is one of its calls (tool ``journal:started``, kind ``spawn``)
naming the agent it started, answered by that agent's ``result`` line; the spawn pass makes the
agents children of the run and the run a child of the ``Workflow`` call. The ``label`` is kept as
the call's description (log text: emptied under ``metadata_only``); the ``result`` values are
never read.
"""

from __future__ import annotations

import os
from datetime import datetime

from sessiongraph.ingest import resume
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import Diagnostics, as_str, file_size, json_type, parse_ts

NAME = "claude-code"
JOURNAL = "journal.jsonl"
RUN_PREFIX = "wf_"  # subagents/workflows/wf_<runId>/: a run's folder
STARTED_TOOL = "journal:started"  # the tool name of a started line's call
# Journal events seen in workflow runs (third-party readers of 2.1.2xx runs; no vendor docs).
EVENTS = frozenset({"launched", "started", "result"})


def run_of(path: str) -> tuple[str, str] | None:
    """(sessionId, ``wf_<runId>``) when ``path`` is a workflow run's journal, else None."""
    parts = os.path.normpath(path).split(os.sep)
    if len(parts) < 5 or parts[-1] != JOURNAL:
        return None
    sid, subagents, workflows, run = parts[-5], parts[-4], parts[-3], parts[-2]
    if subagents != "subagents" or workflows != "workflows" or not run.startswith(RUN_PREFIX) or not sid:
        return None
    return sid, run


class _Journal:
    """The parser of one journal (``ingest.resume``'s Parser protocol)."""

    _STATE = ("calls", "by_agent", "first_ts", "last_ts", "n_records")

    def __init__(self, path: str):
        self.path = path
        self.diags = Diagnostics(path, NAME)
        self.native, self.run = run_of(path) or ("", "")
        self.calls: list[dict] = []
        self.by_agent: dict[str, int] = {}  # agentId -> index of its latest started call
        self.first_ts: datetime | None = None
        self.last_ts: datetime | None = None
        self.n_records = 0

    def state(self) -> dict:
        return resume.save_fields(self, self._STATE)

    @classmethod
    def restore(cls, path: str, state: dict) -> _Journal:
        return resume.load_fields(cls(path), cls._STATE, state)

    def feed(self, n: int, rec: dict) -> None:
        etype = rec.get("type")
        if not isinstance(etype, str):
            self.diags.add("unknown_record_type", n, f"type is {json_type(etype)}")
            return
        if etype not in EVENTS:
            self.diags.add("unknown_record_type", n, f"type={etype[:60]}")
            return
        self.n_records += 1
        ts = parse_ts(rec.get("timestamp"))  # journals seen so far carry none; runs say when
        if ts is not None:
            self.first_ts = ts if self.first_ts is None or ts < self.first_ts else self.first_ts
            self.last_ts = ts if self.last_ts is None or ts > self.last_ts else self.last_ts
        if etype == "launched":
            return
        agent = rec.get("agentId")
        if not isinstance(agent, str) or not agent:
            self.diags.add("wrong_type", n, f"{etype}.agentId: {json_type(agent)}")
            return
        if etype == "started":
            self.by_agent[agent] = len(self.calls)
            self.calls.append(
                {
                    "call_id": f"line{n}",
                    "tool": STARTED_TOOL,
                    "kind": "spawn",
                    "started_at": ts,
                    "description": as_str(rec.get("label")),
                    "result_agent_id": agent,
                    "paths": [],
                    "output_ids": [],
                    "line": n,
                    "is_error": False,
                }
            )
        elif agent in self.by_agent:
            self.calls[self.by_agent[agent]]["ended_at"] = ts
        else:
            self.diags.add("unmatched_result", n, "result names no started agent of this journal")

    def frames(self) -> Frames:
        if not self.native:
            self.diags.add("no_session", None, "not under <sessionId>/subagents/workflows/wf_<runId>/")
            return Frames.from_rows(diagnostics=self.diags.rows)
        sid = f"{NAME}:{self.native}/{self.run}"
        session = {
            "session_id": sid,
            "harness": NAME,
            "native_id": self.native,
            "agent_id": self.run,
            "session_kind": "workflow",
            "layout": "journal",
            "source_path": self.path,
            "source_bytes": file_size(self.path),
            "started_at": self.first_ts,
            "ended_at": self.last_ts,
            "parent_native_id": self.native,
            "n_records": self.n_records,
        }
        calls = [{**c, "session_id": sid, "source_path": self.path} for c in self.calls]
        return Frames.from_rows(sessions=[session], calls=calls, diagnostics=self.diags.rows)
