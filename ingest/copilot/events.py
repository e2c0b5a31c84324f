"""Copilot CLI event logs (``events.jsonl``, flat ``<uuid>.jsonl``) -> frames (the package doc)."""

from __future__ import annotations

import os

import orjson
import yaml

from sessiongraph.ingest.copilot.calls import call_row, close, finish_calls
from sessiongraph.ingest.copilot.runs import METRICS, Run, run_usage, usage_row
from sessiongraph.ingest.files import read_bounded
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_dict,
    as_int,
    as_str,
    file_size,
    json_type,
    parse_ts,
    read_records,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "copilot-cli"  # the adapter's NAME (the package's __init__ gives it)
EVENTS = "events.jsonl"
WORKSPACE = "workspace.yaml"
MAX_WORKSPACE_BYTES = 1024 * 1024
# Event types read as bookkeeping (no frame rows); any other type is counted.
KNOWN = frozenset(
    {
        "session.info",
        "session.error",
        "session.warning",
        "session.truncation",
        "session.compaction_start",
        "session.usage_checkpoint",
        "session.mode_changed",
        "session.context_changed",
        "session.plan_changed",
        "session.task_complete",
        "session.title_changed",
        "assistant.turn_start",
        "assistant.turn_end",
        "assistant.usage",
        "hook.start",
        "hook.end",
        "permission.requested",
        "permission.completed",
        "skill.invoked",
        "system.notification",
        "subagent.selected",
        "tool.user_requested",
    }
)


class _Agent:
    def __init__(self, key: str | None) -> None:
        self.key = key  # None: the main agent
        self.run = Run(0)  # a subagent's own span (a main agent's are its runs)
        self.call_id: str | None = None
        self.agent_type: str | None = None
        self.calls: dict[str, dict] = {}
        self.answer: list[int] = []


class Events:
    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)
        self.log = StepLog()
        self.main = _Agent(None)
        self.runs = [Run(1)]
        self.children: dict[str, _Agent] = {}
        self.meta: dict[str, str | None] = {
            "native": None,
            "version": None,
            "cwd": None,
            "branch": None,
            "commit": None,
            "repo": None,
        }
        self.model: str | None = None
        self.started = False

    def run(self) -> Frames:
        records = list(read_records(self.path, self.d))
        if not records:
            return Frames.from_rows(diagnostics=self.d.rows)
        for n, rec in records:
            rtype = rec.get("type")
            ts = parse_ts(rec.get("timestamp"))
            if ts is None:
                self.d.add(
                    "bad_timestamp", n, "timestamp missing" if "timestamp" not in rec else "timestamp unparseable"
                )
            data = rec.get("data")
            if not isinstance(data, dict):
                self.d.add("wrong_type", n, f"data: {json_type(data)}")
                data = {}
            key = as_str(rec.get("agentId"))
            agent = self.main
            if rtype == "subagent.started":  # the parent's record of its child (the child's id on it)
                data = {**data, "agentId": as_str(data.get("agentId")) or key}
            elif key is not None:
                agent = self._child(key)
            self._event(agent, rtype, data, n, ts)
        return self._frames()

    def _child(self, key: str) -> _Agent:
        child = self.children.get(key)
        if child is None:
            child = self.children[key] = _Agent(key)
        return child

    def _event(self, agent: _Agent, rtype: object, data: dict, n: int, ts) -> None:
        run = self.runs[-1]
        if rtype == "session.resume":
            run = Run(len(self.runs) + 1)
            self.runs.append(run)
        own = agent.run if agent.key is not None else run
        own.see(ts)
        log = self.log
        if rtype in ("session.start", "session.resume"):
            self.meta["native"] = self.meta["native"] or as_str(data.get("sessionId"))
            self.meta["version"] = as_str(data.get("copilotVersion")) or self.meta["version"]
            self.model = as_str(data.get("selectedModel")) or self.model
            ctx = as_dict(data.get("context"))
            for key, field in (("cwd", "cwd"), ("branch", "branch"), ("commit", "headCommit"), ("repo", "repository")):
                self.meta[key] = self.meta[key] or as_str(ctx.get(field))
        elif rtype == "session.model_change":
            self.model = as_str(data.get("newModel")) or self.model
        elif rtype == "user.message":
            text = as_str(data.get("content"))
            if text is not None:
                if agent.key is not None and own.prompt is None:  # a subagent's brief, from its parent
                    own.prompt = text
                    log.add(agent, n, ts, "system", "context", text, attempt=self._attempt(agent))
                else:
                    own.prompt = text if own.prompt is None else own.prompt
                    log.add(agent, n, ts, "user", "prompt", text, attempt=self._attempt(agent))
        elif rtype == "system.message":
            log.add(agent, n, ts, "system", "context", as_str(data.get("content")), attempt=self._attempt(agent))
        elif rtype == "assistant.reasoning":
            self._model_step(agent, log.add(agent, n, ts, "assistant", "thinking", as_str(data.get("content")),
                                            attempt=self._attempt(agent)))  # fmt: skip
        elif rtype == "assistant.message":
            self._message(agent, own, data, n, ts)
        elif rtype == "tool.execution_start":
            call_id = as_str(data.get("toolCallId")) or f"line{n}"
            if call_id in agent.calls:
                agent.calls[call_id]["started_at"] = ts or agent.calls[call_id]["started_at"]
            else:
                self._request(agent, call_id, as_str(data.get("toolName")) or "", data.get("arguments"), n, ts)
        elif rtype == "tool.execution_complete":
            self._complete(agent, data, n, ts)
        elif rtype == "subagent.started":
            agent_key = as_str(data.get("agentId")) or as_str(data.get("toolCallId"))
            if agent_key is not None:
                child = self._child(agent_key)
                child.call_id = as_str(data.get("toolCallId"))
                child.agent_type = as_str(data.get("agentName"))
                child.run.span(ts)  # its start; the record is its parent's
        elif rtype in ("subagent.completed", "subagent.failed"):
            pass  # the child's span ends with its last record (this one, counted above)
        elif rtype == "session.shutdown":
            self._shutdown(run, data, n, ts)
        elif rtype == "session.compaction_complete":
            log.add(agent, n, ts, "system", "compaction", attempt=self._attempt(agent))
        elif rtype == "abort":
            log.add(agent, n, ts, "user", "interrupt", attempt=self._attempt(agent))
        elif not isinstance(rtype, str) or rtype not in KNOWN:
            detail = f"type={rtype[:40]}" if isinstance(rtype, str) else f"type: {json_type(rtype)}"
            self.d.add("unknown_record_type", n, detail)

    def _attempt(self, agent: _Agent) -> int | None:
        """The main agent's run so far (nulled in the end when the file holds one run)."""
        return self.runs[-1].n if agent.key is None else None

    def _model_step(self, agent: _Agent, index: int | None) -> None:
        if index is not None:
            agent.answer.append(index)

    def _message(self, agent: _Agent, own: Run, data: dict, n: int, ts) -> None:
        model = as_str(data.get("model")) or self.model
        agent.answer = []
        attempt = self._attempt(agent)
        reasoning = as_str(data.get("reasoningText"))
        if reasoning:
            self._model_step(agent, self.log.add(agent, n, ts, "assistant", "thinking", reasoning, model=model,
                                                 attempt=attempt))  # fmt: skip
        content = as_str(data.get("content"))
        if content:
            self._model_step(agent, self.log.add(agent, n, ts, "assistant", "text", content, model=model,
                                                 attempt=attempt))  # fmt: skip
        requests = data.get("toolRequests")
        for req in requests if isinstance(requests, list) else ():
            req = as_dict(req)
            tool = as_str(req.get("name")) or ""
            call_id = as_str(req.get("toolCallId")) or f"line{n}:{tool}"
            self._request(agent, call_id, tool, req.get("arguments"), n, ts, model)
        if model:
            own.models[model] += 1
        out = data.get("outputTokens")
        if out is not None:
            row = usage_row(
                self.path, n, ts, model, as_str(data.get("messageId")) or f"line{n}", (0, as_int(out), 0, 0, 0)
            )
            own.fallback.append({**row, "_agent": agent})
            self.log.tokens(agent.answer[0] if agent.answer else None, row)

    def _request(self, agent: _Agent, call_id: str, tool: str, args: object, n: int, ts, model=None) -> None:
        if isinstance(args, str):  # some builds log the arguments as a JSON string
            try:
                args = orjson.loads(args)
            except orjson.JSONDecodeError:
                self.d.add("bad_arguments", n, f"{tool}: arguments are not JSON")
                args = None
        self._model_step(agent, self.log.add(agent, n, ts, "assistant", "tool_call", json_content(args), call_id=call_id,
                                             tool=tool, model=model, attempt=self._attempt(agent)))  # fmt: skip
        agent.calls[call_id] = call_row(self.path, call_id, tool, args, n, ts, self.d)

    def _complete(self, agent: _Agent, data: dict, n: int, ts) -> None:
        call_id = as_str(data.get("toolCallId"))
        call = agent.calls.get(call_id) if call_id else None
        if call is None and call_id:  # a subagent's result logged without its agentId
            call = next((c for a in (self.main, *self.children.values()) if (c := a.calls.get(call_id))), None)
        success = data.get("success")
        error = (not success) if isinstance(success, bool) else None
        result = data.get("result")
        output = as_str(as_dict(result).get("content")) if isinstance(result, dict) else as_str(result)
        if output is None:
            output = as_str(as_dict(data.get("error")).get("message")) or ""
        self.log.add(agent, n, ts, "tool", "tool_result", output, call_id=call_id, tool=call["tool"] if call else None,
                     is_error=error, attempt=self._attempt(agent))  # fmt: skip
        if call is None:
            self.d.add("unmatched_result", n, "tool.execution_complete names no call of this log")
            return
        close(call, ts, error, output)

    def _shutdown(self, run: Run, data: dict, n: int, ts) -> None:
        metrics = data.get("modelMetrics")
        if metrics is None:
            return
        if not isinstance(metrics, dict):
            self.d.add("wrong_type", n, f"modelMetrics: {json_type(metrics)}")
            return
        counts = {}
        for model, m in metrics.items():
            usage = as_dict(as_dict(m).get("usage"))
            counts[model] = tuple(as_int(usage.get(k)) for k in METRICS)
        if counts:
            run.metrics = (n, counts)  # a run shut down twice: its last word
            run.metrics_ts = ts

    # -- frames ----------------------------------------------------------------------------------

    def _layout(self) -> tuple[str, str]:
        """(native id from the path, layout)."""
        if os.path.basename(self.path) == EVENTS:
            return os.path.basename(os.path.dirname(self.path)), "main"
        return os.path.splitext(os.path.basename(self.path))[0], "flat"

    def _workspace(self) -> dict:
        path = os.path.join(os.path.dirname(self.path), WORKSPACE)
        try:
            raw = read_bounded(path, MAX_WORKSPACE_BYTES)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self.d.add("bad_sidecar", None, f"workspace.yaml: {type(exc).__name__}")
            return {}
        if raw is None:
            self.d.add("bad_sidecar", None, "workspace.yaml too large")
            return {}
        try:
            data = yaml.safe_load(raw)
        except yaml.YAMLError as exc:
            self.d.add("bad_sidecar", None, f"workspace.yaml: {type(exc).__name__}")
            return {}
        if not isinstance(data, dict):
            self.d.add("bad_sidecar", None, f"workspace.yaml: {json_type(data)}")
            return {}
        return data

    def _frames(self) -> Frames:
        from_path, layout = self._layout()
        ws = self._workspace() if layout == "main" else {}
        native = self.meta["native"] or as_str(ws.get("id")) or from_path
        cwd_raw = self.meta["cwd"] or as_str(ws.get("cwd"))
        cwd = normalise(cwd_raw, None) if cwd_raw else None
        sid = f"{NAME}:{native}"
        ids: dict[object, str] = {self.main: sid}
        for key, child in self.children.items():
            ids[child] = f"{sid}/{key}"
            for a in (self.main, *self.children.values()):
                call = a.calls.get(child.call_id or "")
                if call is not None and call["kind"] == "spawn":
                    call["result_agent_id"] = key
                    child.agent_type = child.agent_type or call.get("subagent_type")
        size = file_size(self.path)
        common = {
            "harness": NAME,
            "native_id": native,
            "harness_version": self.meta["version"],
            "source_path": self.path,
            "source_bytes": size,
            "cwd": cwd,
            "cwd_as_written": cwd_raw,
            "git_branch": self.meta["branch"] or as_str(ws.get("branch")),
            "git_commit": self.meta["commit"],
            "git_repo": self.meta["repo"] or as_str(ws.get("repository")),
        }
        attempts = len(self.runs) > 1
        sessions, usage = [], []
        for run, rows in zip(self.runs, run_usage(self.runs, self.path), strict=True):
            model = run.models.most_common(1)[0][0] if run.models else self.model
            attempt = run.n if attempts else None
            sessions.append(
                {
                    **common,
                    "session_id": sid,
                    "attempt": attempt,
                    "session_kind": "main",
                    "layout": layout,
                    "started_at": run.first_ts,
                    "ended_at": run.last_ts,
                    "model": model,
                    "first_prompt_hash": text_hash(run.prompt) if run.prompt is not None else None,
                    "n_records": run.n_records,
                }
            )
            for row in rows:
                agent = row.pop("_agent", self.main)
                usage.append({**row, "session_id": ids[agent], "attempt": attempt if agent is self.main else None})
        for key, child in self.children.items():
            r = child.run
            sessions.append(
                {
                    **common,
                    "session_id": ids[child],
                    "agent_id": key,
                    "session_kind": "subagent",
                    "layout": "inline",
                    "parent_native_id": native,
                    "parent_tool_use_id": child.call_id,
                    "agent_type": child.agent_type,
                    "started_at": r.first_ts,
                    "ended_at": r.last_ts,
                    "model": r.models.most_common(1)[0][0] if r.models else None,
                    "first_prompt_hash": text_hash(r.prompt) if r.prompt is not None else None,
                    "n_records": r.n_records,
                }
            )
        calls, events = [], []
        for agent in (self.main, *self.children.values()):
            rows = list(agent.calls.values())
            events += finish_calls(rows, ids[agent], cwd, self.path)
            calls += rows
        if not attempts:  # one run: no attempt numbers
            self.log.no_attempts()
        return self.log.frames(
            ids, self.path, sessions=sessions, calls=calls, file_events=events, usage=usage, diagnostics=self.d.rows
        )
