"""Kimi Code wire logs (``~/.kimi-code/sessions/wd_<slug>_<hash>/session_<uuid>/agents/<id>/wire.jsonl``) -> frames.

One wire file is one agent of a session (more-harness-formats.md section 2, "Kimi Code CLI"):
the ``main`` agent is ``kimi-code:<session uuid>``, any other agent ``kimi-code:<session
uuid>/<agent id>`` (a ``subagent``), as Claude names its subagents. The session's
``state.json`` (beside ``agents/``) is read with it: ``agents{<id>: {type, parentAgentId}}`` gives a
sub-agent's parent agent, and ``workDir`` the cwd.

Line 1 is ``{type: "metadata", protocol_version, created_at}``; the rest are flat operations
``{type, ..., time (epoch ms)}``. Decisions, from the real captures in ``shared/corpus/kimi-code``:
- **Steps.** ``context.append_message`` is a message put into the context: a user message whose
  ``origin.kind`` is ``user`` is a prompt, any other origin (a sub-agent's brief,
  ``system_trigger``) context. ``context.append_loop_event`` carries the model's output:
  ``content.part`` (``think`` -> thinking, ``text`` -> text), ``tool.call`` and ``tool.result``;
  ``context.apply_compaction`` is a compaction. ``turn.prompt`` repeats the prompt message and
  is not a step.
- **Tokens.** One usage row per ``usage.record`` (``inputOther`` uncached input,
  ``inputCacheRead``, ``inputCacheCreation``, ``output``), the compaction call's
  (``usageScope: "session"``) included: it is one more API call. ``step.end`` repeats the step's
  usage and is not counted again.
- **Calls.** ``Read``/``Write``/``Edit`` name a ``path``; ``Bash`` is a shell call (``cwd`` when
  given); ``Agent`` is a spawn (``subagent_type``, ``prompt`` hash) whose result text names the
  child (``agent_id: <id>``): ``result_agent_id``. A child's ``parent_native_id`` is its parent
  agent's key (``<uuid>`` for ``main``), so the spawn pass pairs the two (verified by the call).
- **Model** is ``usage.record.model`` (else ``config.update.modelAlias``); **cwd** ``state.json``
  ``workDir``, else ``config.update.cwd``.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import datetime

import orjson

from sessiongraph.ingest import kimi_family
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    arguments,
    as_dict,
    as_int,
    as_str,
    file_size,
    find_uuids,
    json_type,
    read_records,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "kimi-code"
MAIN = "main"
SESSION_PREFIX = "session_"
STATE_FILE = "state.json"
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "Read": ("read", "read"),
    "Write": ("write", "write"),
    "Edit": ("edit", "write"),
}
SHELL_TOOLS = frozenset({"Bash"})
SPAWN_TOOLS = frozenset({"Agent"})
MAX_OUTPUT_IDS = 20
MAX_STATE_BYTES = 4 * 1024 * 1024
_AGENT_ID = re.compile(r"^agent_id:\s*(\S+)", re.M)
# Record types read as known bookkeeping (no frame rows); any other type is counted.
KNOWN = frozenset(
    {
        "metadata",
        "config.update",
        "tools.set_active_tools",
        "turn.prompt",
        "turn.steer",
        "turn.cancel",
        "turn.ended",
        "llm.tools_snapshot",
        "llm.request",
        "permission.set_mode",
        "permission.record_approval_result",
        "profile.bind",
        "plugin.session_start",
        "runtime.set_binding",
        "token_counting.measured",
        "token_counting.turn_recorded",
        "plan_mode.enter",
        "plan_mode.exit",
        "full_compaction.begin",
        "full_compaction.complete",
    }
)


def detect(path: str, head: bytes) -> bool:
    """A Kimi Code wire: a metadata first line with ``created_at``, then flat ops with ``time``
    (Kimi CLI's wire, ``ingest.kimi_cli``, has neither)."""
    return kimi_family.wire_head(head) == kimi_family.CODE


def parse(path: str) -> Frames:
    """Parse one agent's wire; bad input becomes diagnostics rows, never an exception."""
    return _Wire(path).run()


def _ms(value: object) -> datetime | None:
    return kimi_family.epoch(value, 1000)


def _output(result: object) -> str:
    if isinstance(result, dict):
        out = result.get("output")
        return out if isinstance(out, str) else ""
    return result if isinstance(result, str) else ""


class _Wire:
    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)

    def _layout(self) -> tuple[str | None, str | None, str | None]:
        """(session uuid, agent id, session folder) from .../session_<uuid>/agents/<id>/wire.jsonl."""
        agent_dir = os.path.dirname(self.path)
        agents = os.path.dirname(agent_dir)
        session_dir = os.path.dirname(agents)
        base = os.path.basename(session_dir)
        if os.path.basename(agents) != "agents" or not base.startswith(SESSION_PREFIX):
            return None, None, None
        return base[len(SESSION_PREFIX) :], os.path.basename(agent_dir), session_dir

    def _state(self, session_dir: str | None) -> dict:
        if session_dir is None:
            return {}
        path = os.path.join(session_dir, STATE_FILE)
        try:
            if os.path.getsize(path) > MAX_STATE_BYTES:
                self.d.add("bad_sidecar", None, "state.json too large")
                return {}
            with open(path, "rb") as fh:
                state = orjson.loads(fh.read())
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError) as exc:
            self.d.add("bad_sidecar", None, f"state.json: {type(exc).__name__}")
            return {}
        if not isinstance(state, dict):
            self.d.add("bad_sidecar", None, f"state.json: {json_type(state)}")
            return {}
        return state

    def run(self) -> Frames:
        records = list(read_records(self.path, self.d))
        if not records:
            return Frames.from_rows(diagnostics=self.d.rows)
        uuid, agent, session_dir = self._layout()
        if uuid is None:
            # Outside the sessions tree: the file names the session; the agent is taken as main.
            self.d.add("missing_session_id", None, "not under session_<uuid>/agents/<id>/: named after the file")
            uuid, agent = os.path.splitext(os.path.basename(self.path))[0], MAIN
        state = self._state(session_dir)
        agent_state = as_dict(as_dict(state.get("agents")).get(agent))
        is_main = agent == MAIN
        key = uuid if is_main else f"{uuid}/{agent}"
        sid = f"{NAME}:{key}"
        parent_agent = as_str(agent_state.get("parentAgentId"))
        parent_key = None
        if not is_main:
            parent_agent = parent_agent or MAIN  # the layout alone: a sub-agent of the session's main
            parent_key = uuid if parent_agent == MAIN else f"{uuid}/{parent_agent}"
        cwd = as_str(state.get("workDir"))
        log = StepLog()
        models: Counter[str] = Counter()
        alias: str | None = None
        calls: dict[str, dict] = {}
        usage: list[dict] = []
        prompt: str | None = None
        first_ts = last_ts = None
        answer: list[int | None] = []  # the model's steps since the last usage record
        for n, rec in records:
            rtype = rec.get("type")
            ts = _ms(rec.get("time") if rtype != "metadata" else rec.get("created_at"))
            if ts is not None:
                first_ts = ts if first_ts is None or ts < first_ts else first_ts
                last_ts = ts if last_ts is None or ts > last_ts else last_ts
            elif rtype != "metadata":
                self.d.add("bad_timestamp", n, "time missing" if "time" not in rec else "time unparseable")
            if rtype == "config.update":
                alias = as_str(rec.get("modelAlias")) or alias
                cwd = cwd or as_str(rec.get("cwd"))
            elif rtype == "context.append_message":
                message = as_dict(rec.get("message"))
                text = kimi_family.message_text(message.get("content"))
                if message.get("role") == "user" and text is not None:
                    origin = as_dict(message.get("origin") or rec.get("origin")).get("kind")
                    if origin == "user":
                        prompt = text if prompt is None else prompt
                        log.add(0, n, ts, "user", "prompt", text)
                    else:
                        prompt = text if prompt is None and not is_main else prompt
                        log.add(0, n, ts, "system", "context", text)
            elif rtype == "context.append_loop_event":
                index = self._event(log, as_dict(rec.get("event")), n, ts, alias, calls, sid, cwd)
                if index is not None:
                    answer.append(index)
            elif rtype == "context.apply_compaction":
                log.add(0, n, ts, "system", "compaction", as_str(rec.get("summary")))
            elif rtype == "usage.record":
                row = self._usage(rec, n, ts, sid)
                if row is not None:
                    usage.append(row)
                    # A response's tokens go on its first step (none for a compaction's call).
                    log.tokens(answer[0] if answer else None, row)
                    answer = []
                    if row["model"]:
                        models[row["model"]] += 1
            elif not isinstance(rtype, str) or rtype not in KNOWN:
                detail = f"type={rtype[:40]}" if isinstance(rtype, str) else f"type: {json_type(rtype)}"
                self.d.add("unknown_record_type", n, detail)
        for c in calls.values():
            c["cwd"] = c["cwd"] or cwd
        events = [e for c in calls.values() for e in kimi_family.file_events(c, cwd, FILE_TOOLS, self.path)]
        session = {
            "session_id": sid,
            "harness": NAME,
            "native_id": uuid,
            "agent_id": None if is_main else agent,
            "session_kind": "main" if is_main else "subagent",
            "layout": "main" if is_main else "nested",
            "parent_native_id": parent_key,
            "parent_agent_id": None if is_main else parent_agent,
            "agent_type": as_str(agent_state.get("type")),
            "source_path": self.path,
            "source_bytes": file_size(self.path),
            "cwd": normalise(cwd, None) if cwd else None,
            "started_at": first_ts,
            "ended_at": last_ts,
            "model": models.most_common(1)[0][0] if models else alias,
            "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
            "n_records": len(records),
        }
        return log.frames(
            sid,
            self.path,
            sessions=[session],
            calls=list(calls.values()),
            file_events=events,
            usage=usage,
            diagnostics=self.d.rows,
        )

    def _event(self, log: StepLog, ev: dict, n: int, ts, model, calls: dict, sid: str, cwd) -> int | None:
        """One loop event's step; returns its index when it is the model's (thinking, text, call)."""
        etype = ev.get("type")
        if etype == "content.part":
            part = as_dict(ev.get("part"))
            if part.get("type") == "think":
                return log.add(0, n, ts, "assistant", "thinking", as_str(part.get("think")), model=model)
            if part.get("type") == "text":
                return log.add(0, n, ts, "assistant", "text", as_str(part.get("text")), model=model)
        elif etype == "tool.call":
            tool = as_str(ev.get("name")) or ""
            new_id = as_str(ev.get("toolCallId")) or f"line{n}:{tool}"
            calls[new_id] = self._call(ev, tool, new_id, n, ts, sid, cwd)
            return log.add(0, n, ts, "assistant", "tool_call", json_content(ev.get("args")), call_id=new_id,
                           tool=tool, model=model)  # fmt: skip
        elif etype == "tool.result":
            call_id = as_str(ev.get("toolCallId")) or as_str(ev.get("parentUuid"))
            result = ev.get("result")
            output = _output(result)
            error = as_dict(result).get("isError")
            call = calls.get(call_id) if call_id else None
            log.add(0, n, ts, "tool", "tool_result", output, call_id=call_id, tool=call["tool"] if call else None,
                    is_error=error if isinstance(error, bool) else None)  # fmt: skip
            if call is None:
                self.d.add("unmatched_result", n, "tool.result names no call of this wire")
                return None
            call["ended_at"] = ts
            if isinstance(error, bool):
                call["is_error"] = error
            if call["kind"] == "spawn":
                m = _AGENT_ID.search(output)
                call["result_agent_id"] = m.group(1) if m else None
            elif call["kind"] == "shell":
                ids = list(dict.fromkeys(u.lower() for u in find_uuids(output, bounded=True)))
                call["output_ids"] = ids[:MAX_OUTPUT_IDS]
        return None

    def _call(self, ev: dict, tool: str, call_id: str, n: int, ts, sid: str, cwd) -> dict:
        args = arguments(ev.get("args"), self.d, n, tool, "args are")
        row = kimi_family.call_row(self.path, call_id, tool, args, n, ts, FILE_TOOLS, SHELL_TOOLS, SPAWN_TOOLS)
        row["session_id"] = sid
        if row["kind"] == "shell":
            row["cwd"] = as_str(args.get("cwd"))  # placed under the session's once it is known
        return row

    def _usage(self, rec: dict, n: int, ts, sid: str) -> dict | None:
        u = rec.get("usage")
        if not isinstance(u, dict):
            self.d.add("wrong_type", n, f"usage: {json_type(u)}")
            return None
        return kimi_family.usage_row(
            sid,
            self.path,
            n,
            ts,
            as_str(rec.get("model")),
            f"line{n}",
            as_int(u.get("inputOther")),
            as_int(u.get("output")),
            as_int(u.get("inputCacheRead")),
            as_int(u.get("inputCacheCreation")),
        )
