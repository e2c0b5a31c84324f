"""GitHub Copilot CLI sessions (``~/.copilot``, ``$COPILOT_HOME``) -> frames.

Three storage generations (more-harness-formats.md section 1), all read:
- ``session-state/<uuid>/events.jsonl`` (1.0.x) with a ``workspace.yaml`` beside it (read with
  the log, :func:`log_of`: ``cwd``, ``repository``, ``branch`` when the events lack them);
- ``session-state/<uuid>.jsonl`` (0.0.3xx-0.0.420): the same events, no side file (layout ``flat``);
- ``history-session-state/session_<uuid>_<epoch ms>.json`` (<= 0.0.33x): one JSON object
  ``{sessionId, startTime, chatMessages[], timeline[]}``, OpenAI-style messages with no times per
  message and no token counts (layout ``history``).

Decisions, from the format facts:
- **Events** are ``{type, data, id, timestamp, parentId}``. ``user.message`` is a prompt,
  ``assistant.message`` text (its ``toolRequests`` the calls), ``assistant.reasoning`` thinking,
  ``tool.execution_start``/``_complete`` a call and its result (``success: false`` an error),
  ``system.message`` context, ``session.compaction_complete`` a compaction, ``abort`` an interrupt.
- **Runs.** ``copilot --resume`` goes on writing the same file: each ``session.resume`` starts a
  new run of the same session, numbered as ``attempt`` 2, 3, ... (1 is the run that started it);
  a file of one run leaves ``attempt`` null.
- **Tokens** are ``session.shutdown.data.modelMetrics`` (per model ``usage{inputTokens,
  outputTokens, cacheReadTokens, cacheWriteTokens, reasoningTokens}``), written when a run ends:
  one usage row per model and run. ``inputTokens`` includes the cache reads and writes, so uncached
  input is what is left of it. Whether a resumed run's shutdown repeats the earlier runs' figures
  is reported both ways (counters reset per run: PanAchy/copilot-arewecooked #45 and
  github/copilot-cli #524; cumulative: ccusage/ccusage #1721), so each shutdown is compared with the
  one before: when every count of every model is at least what it was, the figure is cumulative and
  the run's own use is the difference; any count lower than before means the counter started again
  and the figure is the run's own. (A reset run that used more of everything than the one before it
  reads as cumulative: its first run's figures are not counted twice, but its own are undercounted.)
  A run with no shutdown metrics (cut off, or left with ``/new``, github/copilot-cli #3994) counts the
  only tokens its messages carry, ``assistant.message.outputTokens``.
- **Subagents** (third-party parsers only; no real file shows them): ``subagent.started``
  (``data.toolCallId`` the ``task`` call, ``agentName``, and the agent's ``agentId``) starts a
  ``subagent`` session ``copilot-cli:<uuid>/<agentId>`` (layout ``inline``), and events carrying that
  ``agentId`` are its own. The ``task`` call's ``result_agent_id`` names it (verified by the call
  id). Its tokens are in its parent's shutdown metrics, so it has no usage rows of its own.
- **Calls.** ``view`` reads, ``create`` writes, ``edit``/``str_replace`` edit (``path``; the older
  ``str_replace_editor`` by its ``command``), ``bash``/``powershell`` are shell calls, ``task`` a
  spawn (``agent_type``, a hash of its ``prompt``).
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import datetime

import orjson
import yaml

from sessiongraph.ingest.files import read_bounded
from sessiongraph.ingest.frames import Frames, split_cache_writes
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_dict,
    as_int,
    as_str,
    file_size,
    find_uuids,
    json_type,
    parse_ts,
    read_document,
    read_records,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import FIELDS, StepLog, json_content

NAME = "copilot-cli"
EVENTS = "events.jsonl"
WORKSPACE = "workspace.yaml"
# Event type families of copilot-agent event logs (0.0.3xx-1.0.x).
FAMILIES = frozenset({"session", "user", "assistant", "tool", "subagent", "hook", "permission", "system", "skill"})
# tool -> (call kind, file op); str_replace_editor (<= 0.0.33x) by its command argument.
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "view": ("read", "read"),
    "create": ("write", "write"),
    "edit": ("edit", "write"),
    "str_replace": ("edit", "write"),
    "insert": ("edit", "write"),
}
EDITOR_TOOLS = frozenset({"str_replace_editor"})
SHELL_TOOLS = frozenset({"bash", "powershell"})
SPAWN_TOOLS = frozenset({"task"})
METRICS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens", "reasoningTokens")
MAX_OUTPUT_IDS = 20
MAX_WORKSPACE_BYTES = 1024 * 1024
MAX_HISTORY_BYTES = 256 * 1024 * 1024
_ATTEMPT = FIELDS.index("attempt")
_HISTORY_HEAD = re.compile(rb'^\s*\{\s*"sessionId"\s*:\s*"[^"]*"\s*,')
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


def detect(path: str, head: bytes) -> bool:
    """A copilot-agent event log (its first record an event of a known family), or a legacy
    history object (``{"sessionId": ..., ..., "chatMessages": [``)."""
    try:
        if _HISTORY_HEAD.match(head):
            return b'"chatMessages"' in head
        for raw in head.split(b"\n"):
            if not raw.strip():
                continue
            try:
                rec = orjson.loads(raw)
            except orjson.JSONDecodeError:
                continue  # the head may end mid-line
            return _event_shaped(rec)  # the first record decides
        return False
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def _event_shaped(rec: object) -> bool:
    if not isinstance(rec, dict) or not isinstance(rec.get("data"), dict) or "id" not in rec:
        return False
    rtype = rec.get("type")
    return isinstance(rtype, str) and (rtype == "abort" or rtype.split(".", 1)[0] in FAMILIES) and "." in rtype


def log_of(side_path: str) -> str | None:
    """The event log a session folder's ``workspace.yaml`` is read with."""
    if os.path.basename(side_path) == WORKSPACE:
        return os.path.join(os.path.dirname(side_path), EVENTS)
    return None


def parse(path: str) -> Frames:
    """Parse one session log; bad input becomes diagnostics rows, never an exception."""
    if path.endswith(".json"):
        return _History(path).run()
    return _Events(path).run()


def _tool_kind(tool: str, args: dict) -> tuple[str, str | None]:
    """(call kind, file op) of a call."""
    if tool in EDITOR_TOOLS:
        tool = as_str(args.get("command")) or tool
    if tool in FILE_TOOLS:
        return FILE_TOOLS[tool]
    if tool in SHELL_TOOLS:
        return "shell", None
    if tool in SPAWN_TOOLS:
        return "spawn", None
    return "other", None


def _call_row(path: str, call_id: str, tool: str, args: object, n: int, ts, d: Diagnostics) -> dict:
    if not isinstance(args, dict):
        if args is not None:
            d.add("bad_arguments", n, f"{tool}: arguments are a JSON {json_type(args)}")
        args = {}
    kind, op = _tool_kind(tool, args)
    row: dict = {
        "call_id": call_id,
        "tool": tool,
        "kind": kind,
        "started_at": ts,
        "ended_at": None,
        "cwd": None,
        "paths": [],
        "output_ids": [],
        "source_path": path,
        "line": n,
        "_op": op,
    }
    if op is not None:
        named = as_str(args.get("path"))
        row["paths"] = [named] if named else []
    elif kind == "shell":
        row["command"] = as_str(args.get("command"))
    elif kind == "spawn":
        row["subagent_type"] = as_str(args.get("agent_type"))
        row["description"] = as_str(args.get("description"))
        prompt = as_str(args.get("prompt"))
        row["prompt_hash"] = text_hash(prompt) if prompt is not None else None
    return row


def _close(row: dict, ts, error: bool | None, output: str) -> None:
    row["ended_at"] = ts
    if error is not None:
        row["is_error"] = error
    if row["kind"] == "shell":
        row["output_ids"] = list(dict.fromkeys(u.lower() for u in find_uuids(output, bounded=True)))[:MAX_OUTPUT_IDS]


def _finish_calls(calls: list[dict], sid: str, cwd: str | None, path: str) -> list[dict]:
    """Gives the calls their session and placed paths; returns their file events."""
    events = []
    for row in calls:
        row["session_id"] = sid
        op = row.pop("_op", None)
        row["paths"] = [p for p in (normalise(x, cwd) for x in row["paths"]) if p]
        if op is None or row.get("is_error") or (row["ended_at"] is None and row["started_at"] is not None):
            continue  # no result logged (history: no times at all, so a call stands for itself)
        events += [
            {
                "session_id": sid,
                "call_id": row["call_id"],
                "ts": row["ended_at"] or row["started_at"],
                "path": p,
                "op": op,
                "how": row["tool"],
                "tier": "verified",
                "source_path": path,
                "line": row["line"],
            }
            for p in row["paths"]
        ]
    return events


class _Run:
    """One run of the main agent: from the start (or a resume) to its shutdown."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.first_ts: datetime | None = None
        self.last_ts: datetime | None = None
        self.n_records = 0
        self.prompt: str | None = None
        self.models: Counter[str] = Counter()
        self.metrics: tuple[int, dict[str, tuple[int, ...]]] | None = None  # (line, model -> counts)
        self.metrics_ts: datetime | None = None
        self.fallback: list[dict] = []  # output-token rows, for a run with no metrics

    def see(self, ts) -> None:
        self.n_records += 1
        self.span(ts)

    def span(self, ts) -> None:
        if ts is not None:
            self.first_ts = ts if self.first_ts is None or ts < self.first_ts else self.first_ts
            self.last_ts = ts if self.last_ts is None or ts > self.last_ts else self.last_ts


class _Agent:
    def __init__(self, key: str | None) -> None:
        self.key = key  # None: the main agent
        self.run = _Run(0)  # a subagent's own span (a main agent's are its runs)
        self.call_id: str | None = None
        self.agent_type: str | None = None
        self.calls: dict[str, dict] = {}
        self.answer: list[int] = []


class _Events:
    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)
        self.log = StepLog()
        self.main = _Agent(None)
        self.runs = [_Run(1)]
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
            run = _Run(len(self.runs) + 1)
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

    def _message(self, agent: _Agent, own: _Run, data: dict, n: int, ts) -> None:
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
            row = _usage(
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
        agent.calls[call_id] = _call_row(self.path, call_id, tool, args, n, ts, self.d)

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
        _close(call, ts, error, output)

    def _shutdown(self, run: _Run, data: dict, n: int, ts) -> None:
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
        for run, rows in zip(self.runs, _run_usage(self.runs, self.path), strict=True):
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
            events += _finish_calls(rows, ids[agent], cwd, self.path)
            calls += rows
        if not attempts:  # one run: no attempt numbers
            for step in self.log.rows:
                step[_ATTEMPT] = None
            for t in self.log.texts:
                t["attempt"] = None
        steps, texts = self.log.finish(ids, self.path)
        return Frames.from_rows(
            sessions=sessions,
            calls=calls,
            file_events=events,
            usage=usage,
            diagnostics=self.d.rows,
            steps=steps,
            texts=texts,
        )


def _usage(path: str, n: int, ts, model, message_id: str, counts: tuple[int, ...]) -> dict:
    """A usage row from (input incl. cache, output, cache read, cache write, reasoning)."""
    total_in, out, read, write, reasoning = counts
    five, hour, _ = split_cache_writes(write, write, 0)
    return {
        "ts": ts,
        "model": model,
        "message_id": message_id,
        "input_tokens": max(0, total_in - read - write),
        "output_tokens": out,
        "cache_read_tokens": read,
        "cache_creation_tokens": write,
        "cache_creation_5m_tokens": five,
        "cache_creation_1h_tokens": hour,
        "reasoning_tokens": reasoning,
        "source_path": path,
        "line": n,
    }


def _run_usage(runs: list[_Run], path: str) -> list[list[dict]]:
    """Each run's usage rows: its shutdown's figures, less the previous shutdown's when they are
    cumulative (module doc); its messages' output tokens when it has none."""
    out: list[list[dict]] = []
    before: dict[str, tuple[int, ...]] | None = None
    for run in runs:
        if run.metrics is None:
            out.append(list(run.fallback))
            continue
        line, now = run.metrics
        cumulative = before is not None and all(
            m in now and all(a >= b for a, b in zip(now[m], old, strict=True)) for m, old in before.items()
        )
        rows = []
        for model, counts in now.items():
            if cumulative and before is not None and model in before:
                counts = tuple(a - b for a, b in zip(counts, before[model], strict=True))
            if any(counts):
                rows.append(_usage(path, line, run.metrics_ts, model, f"shutdown:{line}:{model}", counts))
        out.append(rows)
        before = now
    return out


class _History:
    """A legacy ``history-session-state`` object: messages without times or tokens."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)

    def run(self) -> Frames:
        raw = read_document(self.path, self.d, MAX_HISTORY_BYTES)
        if raw is None:
            return Frames.from_rows(diagnostics=self.d.rows)
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.d.add("invalid_json", None, f"{len(raw)} bytes")
            return Frames.from_rows(diagnostics=self.d.rows)
        if not isinstance(doc, dict):
            self.d.add("not_object", None, json_type(doc))
            return Frames.from_rows(diagnostics=self.d.rows)
        stem = os.path.splitext(os.path.basename(self.path))[0]
        m = re.match(r"^session_(.+)_\d+$", stem)
        native = as_str(doc.get("sessionId")) or (m.group(1) if m else stem)
        sid = f"{NAME}:{native}"
        started = parse_ts(doc.get("startTime"))
        times = [started] if started else []
        timeline = doc.get("timeline")
        for item in timeline if isinstance(timeline, list) else ():
            t = parse_ts(as_dict(item).get("timestamp"))
            if t is not None:
                times.append(t)
        messages = doc.get("chatMessages")
        if not isinstance(messages, list):
            self.d.add("wrong_type", None, f"chatMessages: {json_type(messages)}")
            messages = []
        self.d.add("no_token_counts", None, "a history-session-state file records no token counts")
        log = StepLog()
        calls: dict[str, dict] = {}
        prompt = None
        for i, msg in enumerate(messages):
            if not isinstance(msg, dict):
                self.d.add("wrong_type", None, f"chatMessages[{i}]: {json_type(msg)}")
                continue
            role, content = msg.get("role"), msg.get("content")
            text = content if isinstance(content, str) else None
            if role == "user" and text is not None:
                prompt = text if prompt is None else prompt
                log.add(0, None, None, "user", "prompt", text)
            elif role == "system":
                log.add(0, None, None, "system", "context", text)
            elif role == "assistant":
                if text:
                    log.add(0, None, None, "assistant", "text", text)
                tool_calls = msg.get("tool_calls")
                for tc in tool_calls if isinstance(tool_calls, list) else ():
                    self._call(log, as_dict(tc), i, calls)
            elif role == "tool":
                call_id = as_str(msg.get("tool_call_id"))
                call = calls.get(call_id) if call_id else None
                log.add(0, None, None, "tool", "tool_result", text or "", call_id=call_id,
                        tool=call["tool"] if call else None)  # fmt: skip
                if call is None:
                    self.d.add("unmatched_result", None, f"chatMessages[{i}] names no call")
                else:
                    _close(call, None, None, text or "")
            else:
                self.d.add("unknown_record_type", None, f"chatMessages[{i}] role: {json_type(role)}")
        rows = list(calls.values())
        events = _finish_calls(rows, sid, None, self.path)
        steps, texts = log.finish(sid, self.path)
        session = {
            "session_id": sid,
            "harness": NAME,
            "native_id": native,
            "session_kind": "main",
            "layout": "history",
            "source_path": self.path,
            "source_bytes": file_size(self.path),
            "started_at": min(times) if times else None,
            "ended_at": max(times) if times else None,
            "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
            "n_records": len(messages),
        }
        return Frames.from_rows(
            sessions=[session], calls=rows, file_events=events, diagnostics=self.d.rows, steps=steps, texts=texts
        )

    def _call(self, log: StepLog, tc: dict, i: int, calls: dict) -> None:
        fn = as_dict(tc.get("function"))
        tool = as_str(fn.get("name")) or ""
        call_id = as_str(tc.get("id")) or f"message{i}:{tool}"
        raw = fn.get("arguments")
        args: object = raw
        if isinstance(raw, str):
            try:
                args = orjson.loads(raw) if raw.strip() else {}
            except orjson.JSONDecodeError:
                self.d.add("bad_arguments", None, f"{tool}: arguments are not JSON")
                args = None
        log.add(0, None, None, "assistant", "tool_call", raw if isinstance(raw, str) else json_content(raw),
                call_id=call_id, tool=tool)  # fmt: skip
        calls[call_id] = _call_row(self.path, call_id, tool, args, None, None, self.d)  # type: ignore[arg-type]
