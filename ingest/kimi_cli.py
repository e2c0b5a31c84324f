"""Kimi CLI sessions (``~/.kimi/sessions/<md5(work dir)>/<session uuid>/wire.jsonl``) -> frames.

Kimi CLI (MoonshotAI ``kimi-cli``, the Python predecessor of Kimi Code, ``ingest.kimi_code``;
more-harness-formats.md section 2) keeps per session a ``wire.jsonl`` (the UI event log: times,
tokens, every event of its subagents), a ``context.jsonl`` (the model context, no times) and, from
v1.17, one ``context_sub[_N].jsonl`` per Task subagent. The wire is the log read: one file gives
the main session ``kimi-cli:<uuid>`` and one ``subagent`` session per subagent it ran,
``kimi-cli:<uuid>/<agent>`` (layout ``inline``: its events sit in the parent's wire).

Decisions, from the format facts:
- **Records.** Line 1 ``{type: "metadata", protocol_version}``, then ``{timestamp (epoch
  seconds), message: {type, payload}}``: ``TurnBegin``/``SteerInput`` (``user_input``) a prompt,
  ``ContentPart`` (``think``/``text``), ``ToolCall`` (``{id, function: {name, arguments}}``, the
  arguments a JSON string), ``ToolResult`` (``tool_call_id``, ``return_value.is_error``),
  ``CompactionBegin`` a compaction.
- **Subagents.** A ``SubagentEvent`` carries one event of a subagent, ``{task_tool_call_id
  (legacy) | parent_tool_call_id, agent_id?, subagent_type?, event}``: the id of the parent's
  ``Task`` (later ``Agent``) call that ran it, so the call and the child are tied by id
  (``parent_tool_use_id``; the call's ``result_agent_id`` names the child, verified). The child's
  agent key is its ``agent_id`` when logged, else the name of its own context file
  (``context_sub_3``), found by its first prompt (the file's first user message is the Task
  prompt, and files are numbered in the order the calls ran), else the call id. Those context
  files are side files of the wire (:func:`log_of`); the main context and the rotated
  ``context_N.jsonl`` hold nothing the wire lacks and are no sessions (:func:`not_a_session`).
  Later source (no real file seen) gives each subagent a folder ``<session>/subagents/<agent
  id>/`` with a wire of its own: that wire is the subagent's session (layout ``nested``), and the
  parent's SubagentEvents for that agent id are not read again.
- **Tokens.** One usage row per ``StatusUpdate`` with ``token_usage`` (``input_other``
  uncached input, ``input_cache_read``, ``input_cache_creation``, ``output``), one per step; a
  subagent's come inside its ``SubagentEvent`` and are the child's. The model is in no session
  file (only in ``config.toml``'s current default): usage rows have no model.
- **cwd** is the work dir ``~/.kimi/kimi.json`` lists whose md5 names the session's folder
  (``<kaos>_<md5>`` for a non-local kaos); no record names it.
"""

from __future__ import annotations

import os
from datetime import datetime

import orjson

from sessiongraph.ingest import kimi_cli_folder, kimi_family
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    arguments,
    as_dict,
    as_int,
    as_str,
    file_size,
    find_uuids,
    json_arguments,
    json_type,
    read_records,
    text_hash,
)
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "kimi-cli"
WIRE, SUBAGENTS, SUB_CONTEXT = kimi_cli_folder.WIRE, kimi_cli_folder.SUBAGENTS, kimi_cli_folder.SUB_CONTEXT
# Tool names of kimi-cli 0.x-1.x (src/kimi_cli/tools): tool -> (call kind, file op).
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "ReadFile": ("read", "read"),
    "WriteFile": ("write", "write"),
    "StrReplaceFile": ("edit", "write"),
}
SHELL_TOOLS = frozenset({"Shell", "Bash"})
SPAWN_TOOLS = frozenset({"Task", "Agent"})  # Task up to the subagents/ rework, Agent after it
MAX_OUTPUT_IDS = 20
MAX_DEPTH = 8  # subagents of subagents, as deep as this
# Context records that only a Kimi CLI context file holds (markers, not messages).
CONTEXT_MARKERS = frozenset({"_checkpoint", "_usage", "_system_prompt"})
# Wire message types read as bookkeeping (no frame rows); any other type is counted.
KNOWN = frozenset(
    {
        "TurnEnd",
        "StepBegin",
        "StepInterrupted",
        "CompactionEnd",
        "ToolCallPart",
        "StatusUpdate",
        "ApprovalRequest",
        "ApprovalResponse",
        "ApprovalRequestResolved",
        "ToolCallRequest",
        "QuestionRequest",
        "QuestionResponse",
        "HookTriggered",
        "HookResolved",
        "MCPLoadingBegin",
        "MCPLoadingEnd",
        "Notification",
        "PlanDisplay",
    }
)


def detect(path: str, head: bytes) -> bool:
    """A Kimi CLI wire: a metadata line without ``created_at``, then ``{timestamp, message}``."""
    return kimi_family.wire_head(head) == kimi_family.CLI


def not_a_session(head: bytes) -> bool:
    """A Kimi CLI context file: model messages with the context's own marker records."""
    for raw in head.split(b"\n")[:16]:
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("role") in CONTEXT_MARKERS:
            return True
    return False


def log_of(side_path: str) -> str | None:
    """The wire a subagent's context file is read with (it names the subagent's agent key)."""
    if SUB_CONTEXT.match(os.path.basename(side_path)):
        return os.path.join(os.path.dirname(side_path), WIRE)
    return None


def parse(path: str) -> Frames:
    """Parse one session's wire; bad input becomes diagnostics rows, never an exception."""
    return _Wire(path).run()


class _Agent:
    """One agent of the wire: the main one (key None) or a subagent."""

    def __init__(self, key: str | None, call_id: str | None, parent: _Agent | None) -> None:
        self.key = key
        self.call_id = call_id
        self.parent = parent
        self.agent_id: str | None = None
        self.agent_type: str | None = None
        self.prompt: str | None = None
        self.first_ts: datetime | None = None
        self.last_ts: datetime | None = None
        self.n_records = 0
        self.calls: dict[str, dict] = {}
        self.usage: list[dict] = []
        self.answer: list[int] = []  # the model's steps since its last StatusUpdate

    def model_step(self, index: int | None) -> None:
        if index is not None:
            self.answer.append(index)

    def see(self, ts: datetime | None) -> None:
        self.n_records += 1
        if ts is not None:
            self.first_ts = ts if self.first_ts is None or ts < self.first_ts else self.first_ts
            self.last_ts = ts if self.last_ts is None or ts > self.last_ts else self.last_ts


class _Wire:
    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)
        self.log = StepLog()
        self.main = _Agent(None, None, None)
        self.children: dict[tuple[int, str], _Agent] = {}  # (parent's id, call id) -> child
        self.own_agent: str | None = None  # this wire is subagents/<agent id>/wire.jsonl
        self.own_wires: frozenset[str] = frozenset()  # agent ids with a wire of their own
        self.elsewhere: dict[str, str] = {}  # call id -> the agent id whose own wire logs it

    def run(self) -> Frames:
        records = list(read_records(self.path, self.d))
        if not records:
            return Frames.from_rows(diagnostics=self.d.rows)
        folder = os.path.dirname(self.path)
        uuid = os.path.basename(folder)
        if os.path.basename(os.path.dirname(folder)) == SUBAGENTS:  # <session>/subagents/<agent id>/
            self.own_agent = uuid
            folder = os.path.dirname(os.path.dirname(folder))
            uuid = os.path.basename(folder)
        if os.path.basename(self.path) != WIRE or not uuid:
            self.d.add("missing_session_id", None, "not a <session>/wire.jsonl: named after the file")
            uuid = os.path.splitext(os.path.basename(self.path))[0]
        self.own_wires = kimi_cli_folder.own_wires(folder) if self.own_agent is None else frozenset()
        for n, rec in records:
            if rec.get("type") == "metadata":
                continue
            raw_ts = rec.get("timestamp")
            ts = kimi_family.epoch(raw_ts, 1)
            if ts is None:
                self.d.add("bad_timestamp", n, "timestamp missing" if raw_ts is None else "timestamp unparseable")
            message = rec.get("message")
            if not isinstance(message, dict):
                self.d.add("wrong_type", n, f"message: {json_type(message)}")
                continue
            self._message(self.main, message, n, ts, 0)
        return self._frames(uuid, folder)

    # -- records ---------------------------------------------------------------------------------

    def _message(self, agent: _Agent, message: dict, n: int, ts, depth: int) -> None:
        mtype = message.get("type")
        payload = message.get("payload")
        if not isinstance(payload, dict):
            payload = {}
        if mtype != "SubagentEvent":  # the event it wraps is its subagent's record
            agent.see(ts)
        log = self.log
        if mtype in ("TurnBegin", "SteerInput"):
            text = kimi_family.message_text(payload.get("user_input"))
            if text is not None:
                if agent.key is None:
                    agent.prompt = text if agent.prompt is None else agent.prompt
                    log.add(agent, n, ts, "user", "prompt", text)
                elif agent.prompt is None:  # a subagent's brief is its parent's, not a person's
                    agent.prompt = text
                    log.add(agent, n, ts, "system", "context", text)
                else:
                    log.add(agent, n, ts, "user", "prompt", text)
        elif mtype == "ContentPart":
            ptype = payload.get("type")
            if ptype in ("think", "text"):
                kind = "thinking" if ptype == "think" else "text"
                agent.model_step(log.add(agent, n, ts, "assistant", kind, as_str(payload.get(ptype))))
        elif mtype == "ToolCall":
            self._call(agent, payload, n, ts)
        elif mtype == "ToolResult":
            self._result(agent, payload, n, ts)
        elif mtype == "CompactionBegin":
            log.add(agent, n, ts, "system", "compaction")
        elif mtype == "StatusUpdate":
            self._usage(agent, payload, n, ts)
        elif mtype == "SubagentEvent":
            self._subagent(agent, payload, n, ts, depth)
        elif not isinstance(mtype, str) or mtype not in KNOWN:
            detail = f"type={mtype[:40]}" if isinstance(mtype, str) else f"type: {json_type(mtype)}"
            self.d.add("unknown_record_type", n, detail)

    def _subagent(self, agent: _Agent, payload: dict, n: int, ts, depth: int) -> None:
        call_id = as_str(payload.get("parent_tool_call_id")) or as_str(payload.get("task_tool_call_id"))
        event = payload.get("event")
        if call_id is None or not isinstance(event, dict):
            self.d.add("wrong_type", n, "SubagentEvent without its call id or event")
            return
        if depth >= MAX_DEPTH:
            self.d.add("wrong_type", n, f"SubagentEvent nested deeper than {MAX_DEPTH}")
            return
        agent_id = as_str(payload.get("agent_id"))
        if agent_id is not None and agent_id in self.own_wires:
            self.elsewhere[call_id] = agent_id  # read from its own wire, not twice
            return
        child = self.children.get((id(agent), call_id))
        if child is None:
            child = self.children[(id(agent), call_id)] = _Agent(call_id, call_id, agent)
        child.agent_id = child.agent_id or agent_id
        child.agent_type = child.agent_type or as_str(payload.get("subagent_type"))
        self._message(child, event, n, ts, depth + 1)

    def _call(self, agent: _Agent, payload: dict, n: int, ts) -> None:
        fn = as_dict(payload.get("function"))
        tool = as_str(fn.get("name")) or ""
        call_id = as_str(payload.get("id")) or f"line{n}:{tool}"
        raw_args = fn.get("arguments")
        args = arguments(json_arguments(raw_args, self.d, n, tool), self.d, n, tool)
        content = raw_args if isinstance(raw_args, str) else json_content(raw_args)
        agent.model_step(self.log.add(agent, n, ts, "assistant", "tool_call", content, call_id=call_id, tool=tool))
        row = kimi_family.call_row(self.path, call_id, tool, args, n, ts, FILE_TOOLS, SHELL_TOOLS, SPAWN_TOOLS)
        if row["kind"] == "spawn":  # Kimi CLI's Task names its subagent
            row["subagent_type"] = as_str(args.get("subagent_name")) or row["subagent_type"]
        agent.calls[call_id] = row

    def _result(self, agent: _Agent, payload: dict, n: int, ts) -> None:
        call_id = as_str(payload.get("tool_call_id"))
        value = as_dict(payload.get("return_value"))
        output = value.get("output")
        text = output if isinstance(output, str) else kimi_family.message_text(output) or ""
        error = value.get("is_error")
        call = agent.calls.get(call_id) if call_id else None
        self.log.add(agent, n, ts, "tool", "tool_result", text, call_id=call_id,
                     tool=call["tool"] if call else None, is_error=error if isinstance(error, bool) else None)  # fmt: skip
        if call is None:
            self.d.add("unmatched_result", n, "ToolResult names no call of this agent")
            return
        call["ended_at"] = ts
        if isinstance(error, bool):
            call["is_error"] = error
        if call["kind"] == "shell":
            ids = list(dict.fromkeys(u.lower() for u in find_uuids(text, bounded=True)))
            call["output_ids"] = ids[:MAX_OUTPUT_IDS]

    def _usage(self, agent: _Agent, payload: dict, n: int, ts) -> None:
        u = payload.get("token_usage")
        if u is None:
            return  # a context gauge only
        if not isinstance(u, dict):
            self.d.add("wrong_type", n, f"token_usage: {json_type(u)}")
            return
        row = kimi_family.usage_row(
            "",
            self.path,
            n,
            ts,
            None,
            as_str(payload.get("message_id")) or f"line{n}",
            as_int(u.get("input_other")),
            as_int(u.get("output")),
            as_int(u.get("input_cache_read")),
            as_int(u.get("input_cache_creation")),
        )
        agent.usage.append(row)
        self.log.tokens(agent.answer[0] if agent.answer else None, row)
        agent.answer = []

    # -- frames ----------------------------------------------------------------------------------

    def _frames(self, uuid: str, folder: str) -> Frames:
        self._name_children(folder)
        cwd = kimi_cli_folder.work_dir(folder, self.d)
        ids: dict[object, str] = {}
        own = self.own_agent
        keys: dict[int, str] = {id(self.main): f"{uuid}/{own}" if own else uuid}
        for call in self.main.calls.values():
            if call["call_id"] in self.elsewhere:
                call["result_agent_id"] = self.elsewhere[call["call_id"]]
        agents = [self.main, *self.children.values()]  # parents before their children
        for a in agents:
            if a.parent is not None:
                keys[id(a)] = f"{keys[id(a.parent)]}/{a.key}"
                parent_call = a.parent.calls.get(a.call_id or "")
                if parent_call is not None:
                    parent_call["result_agent_id"] = a.key
                    a.agent_type = a.agent_type or parent_call.get("subagent_type")
            ids[a] = f"{NAME}:{keys[id(a)]}"
        sessions, calls, usage, events = [], [], [], []
        size = file_size(self.path)
        for a in agents:
            sid = ids[a]
            child = a.parent is not None or own is not None
            sessions.append(
                {
                    "session_id": sid,
                    "harness": NAME,
                    "native_id": uuid,
                    "agent_id": (a.key or own) if child else None,
                    "session_kind": "subagent" if child else "main",
                    "layout": ("inline" if a.parent is not None else "nested") if child else "main",
                    "parent_native_id": keys[id(a.parent)] if a.parent is not None else (uuid if own else None),
                    "parent_tool_use_id": a.call_id,
                    "agent_type": a.agent_type,
                    "source_path": self.path,
                    "source_bytes": size,
                    "cwd": cwd,
                    "started_at": a.first_ts,
                    "ended_at": a.last_ts,
                    "first_prompt_hash": text_hash(a.prompt) if a.prompt is not None else None,
                    "n_records": a.n_records,
                }
            )
            for c in a.calls.values():
                c["session_id"] = sid
                calls.append(c)
                events += kimi_family.file_events(c, cwd, FILE_TOOLS, self.path)
            usage += [{**u, "session_id": sid} for u in a.usage]
        return self.log.frames(
            ids,
            self.path,
            sessions=sessions,
            calls=calls,
            file_events=events,
            usage=usage,
            diagnostics=self.d.rows,
        )

    def _name_children(self, folder: str) -> None:
        """Each child's agent key: its logged agent_id, else its context file's name (joined by
        the first prompt, files in their number order, calls in theirs), else its call id."""
        files = kimi_cli_folder.sub_contexts(folder)
        by_prompt: dict[str, list[str]] = {}
        for stem, first in files:
            by_prompt.setdefault(text_hash(first), []).append(stem)
        for child in self.children.values():
            if child.agent_id:
                child.key = child.agent_id
                continue
            stems = by_prompt.get(text_hash(child.prompt)) if child.prompt is not None else None
            if stems:
                child.key = stems.pop(0)
