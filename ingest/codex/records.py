"""Codex rollouts, record by record: :class:`_Rollout` reads each envelope record (or bare
pre-envelope item) into calls, file events, usage and steps; ``pairing`` pairs results with their
calls and ``replay`` tells copied history apart.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import datetime

import orjson

from sessiongraph.ingest import apply_patch, copies, resume
from sessiongraph.ingest.codex.decoding import ENVELOPE_KINDS, IGNORED_KINDS, _texts
from sessiongraph.ingest.codex.pairing import (
    PENDING,
    AgentStarted,
    ExecEnd,
    Output,
    PatchEnd,
    SpawnEnd,
    _output_parts,
    _Pairing,
)
from sessiongraph.ingest.codex.replay import _Replay
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_int,
    as_str,
    json_type,
    parse_ts,
    raw_value,
    string_literal,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "codex"  # the adapter's NAME (the package's __init__ gives it)

# response_item payload types: spec 2.4, codex-rs core/src/rollout/policy.rs (late 2025) and
# the corpus (0.125.0, 0.128.0-alpha.1).
KNOWN_RESPONSE_ITEMS = frozenset(
    {
        "message",
        "reasoning",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "web_search_call",
        "ghost_snapshot",
        "compaction",
        # 0.12x-0.14x (rollout/src/policy.rs): tool discovery, image output, final answers as
        # their own item, context compaction and extra tool lists carry no call we count.
        "agent_message",
        "tool_search_call",
        "tool_search_output",
        "image_generation_call",
        "context_compaction",
        "additional_tools",
    }
)
# event_msg payload types: spec 2.5, rollout/policy.rs (late 2025) and the corpus.
KNOWN_EVENTS = frozenset(
    {
        "task_started",
        "task_complete",
        "user_message",
        "agent_message",
        "agent_reasoning",
        "agent_reasoning_raw_content",
        "token_count",
        "exec_command_end",
        "patch_apply_end",
        "web_search_end",
        "turn_aborted",
        "context_compacted",
        "entered_review_mode",
        "exited_review_mode",
        "undo_completed",
        "collab_agent_spawn_end",
        "collab_waiting_end",
        # 0.11x-0.14x. Read: sub_agent_activity (a spawn call's child). The others are known
        # and ignored: a rollback undoes turns but their tokens were spent (their token_count
        # events stay counted), a rename or a guardian verdict names no call, token or file.
        "sub_agent_activity",
        "item_completed",
        "thread_rolled_back",
        "thread_name_updated",
        "thread_settings_applied",
        "thread_goal_updated",
        "guardian_assessment",
        "guardian_warning",
        "collab_agent_interaction_end",
        "collab_close_end",
        "collab_resume_end",
        "mcp_tool_call_end",
        "image_generation_end",
        "view_image_tool_call",
        "dynamic_tool_call_request",
        "dynamic_tool_call_response",
        "warning",
        "error",
    }
)
# Events that say how the thread stands (sessions.end_status); None: a turn is under way again.
_ENDS = {
    "task_complete": "completed",
    "turn_aborted": "interrupted",
    "error": "error",
    "task_started": None,
    "user_message": None,
}
# SessionSource strings (codex-rs protocol.rs) -> entrypoint.
SOURCE_ENTRYPOINTS = {"cli": "cli", "exec": "exec", "vscode": "vscode", "mcp": "mcp"}
# Rollouts older than `source` (< ~0.4x) only name the originator.
ORIGINATOR_ENTRYPOINTS = {"codex_cli_rs": "cli", "codex-tui": "cli", "codex_exec": "exec"}
# SubAgentSource helpers that are not tool spawns: {"subagent": "review" | "compact"} and
# {"subagent": {"other": "guardian"}} (the approval reviewer judging one planned action).
SUBAGENT_KINDS = {"review": "review", "compact": "compaction"}
OTHER_SUBAGENT_KINDS = {"guardian": "guardian"}
# Tool -> call kind. Shell tools by era: shell (<= 0.4x), shell_command (~0.5x-0.6x),
# exec_command (unified exec, 0.1xx); local_shell_call is the older built-in shell item.
TOOL_KINDS = {
    "shell": "shell",
    "shell_command": "shell",
    "exec_command": "shell",
    "local_shell_call": "shell",
    "apply_patch": "patch",
    "spawn_agent": "spawn",
}
# argv[0] of `[sh, -lc, SCRIPT]` wrappers whose script is the real command.
WRAPPER_SHELLS = frozenset({"bash", "zsh", "sh"})

_ROLLOUT_ID = re.compile(r"([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$")


def _id_from_name(path: str) -> str:
    """A rollout's thread id from its name (``rollout-<time>-<id>.jsonl``), else the stem."""
    name = os.path.basename(path)
    m = _ROLLOUT_ID.search(name)
    return m.group(1).lower() if m else name.removesuffix(".jsonl")


def _command_text(value: object) -> str | None:
    """Shell command text of an argv list (the script of `sh -lc SCRIPT`) or a string."""
    if isinstance(value, str):
        return value
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    wrapped = len(value) == 3 and value[1] in ("-lc", "-c")
    if wrapped and os.path.basename(value[0]) in WRAPPER_SHELLS:
        return value[2]
    return " ".join(value)


def _patch_ops(text: str, cwd: str | None) -> list[tuple[str, str]]:
    """(path, op) pairs an apply_patch text names (``ingest.apply_patch``), resolved against ``cwd``."""
    return apply_patch.file_ops(text, lambda path: normalise(path, cwd))


def _identity(m: dict) -> dict:
    """The session fields a header (session_meta payload or pre-envelope header line) gives,
    as plain values: the header's instructions text is not kept."""
    git = g if isinstance(g := m.get("git"), dict) else {}
    source, originator = raw_value(m.get("source")), as_str(m.get("originator"))
    entry, kind, bad_source = None, "main", None
    spawn: dict = {}
    if isinstance(source, str):
        entry = SOURCE_ENTRYPOINTS.get(source, source)
    elif isinstance(source, dict) and "subagent" in source:
        entry, sub = "subagent", source["subagent"]
        kind = SUBAGENT_KINDS.get(sub, "subagent") if isinstance(sub, str) else "subagent"
        given = sub.get("thread_spawn") if isinstance(sub, dict) else None
        spawn = given if isinstance(given, dict) else {}
        other = sub.get("other") if isinstance(sub, dict) else None
        if isinstance(other, str):
            kind = OTHER_SUBAGENT_KINDS.get(other, "subagent")
    elif source is None:
        entry = ORIGINATOR_ENTRYPOINTS.get(originator or "")
    else:
        bad_source = json_type(source)  # reported with the session row
    depth = spawn.get("depth")
    return {
        "native_id": as_str(m.get("id")),
        "cwd": as_str(m.get("cwd")),
        "harness_version": as_str(m.get("cli_version")),
        "git_branch": as_str(git.get("branch")),
        "git_commit": as_str(git.get("commit_hash")),
        "git_repo": as_str(git.get("repository_url")),
        "started_at": parse_ts(m.get("timestamp")),
        "entrypoint": entry,
        "originator": originator,
        "session_kind": kind,
        "parent_native_id": as_str(spawn.get("parent_thread_id")) or as_str(m.get("parent_thread_id")),
        "spawn_depth": depth if type(depth) is int else None,
        "agent_type": as_str(spawn.get("agent_role")) or as_str(m.get("agent_role")) or as_str(spawn.get("agent_path")),
        "forked_from_id": as_str(m.get("forked_from_id")),
        "root_native_id": as_str(m.get("session_id")),
        "bad_source": bad_source,
    }


class _Rollout(_Replay, _Pairing):
    """One parse: identity, the current turn, calls keyed by call_id and what results said
    (paired with their calls only in :meth:`frames`: ``pairing``)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.diags = Diagnostics(path, harness=NAME)
        self.meta: dict | None = None  # _identity of the header
        self.legacy = False
        self.first_ts: datetime | None = None
        self.last_ts: datetime | None = None
        self.n_records = 0
        self.models: Counter[str] = Counter()
        self.model: str | None = None
        self.turn_cwd: str | None = None
        # Prompt hashes, never prompt text (state may be stored).
        self.prompt_hash: str | None = None  # first event_msg user_message; "" if it was empty
        self.item_prompt_hash: str | None = None  # first typed user message item (fallback)
        self.calls: list[dict] = []
        self.by_id: dict[str, int] = {}  # call_id -> index in calls (ids stay valid in state)
        self.patch_text: dict[int, list[tuple[str, str]]] = {}  # call index -> ops from its text
        self.stdin_proc: dict[str, str] = {}  # write_stdin call_id -> unified-exec process id
        # Results, one list per kind, in file order; the end events are paired after the outputs (they win).
        self.outputs: list[Output] = []
        self.exec_ends: list[ExecEnd] = []
        self.patch_ends: list[PatchEnd] = []
        self.spawn_ends: list[SpawnEnd] = []
        self.agent_starts: list[AgentStarted] = []
        self.events: list[dict] = []
        self.commits: list[dict] = []  # ingest.commits rows, filled when pairing
        self.usage: list[dict] = []
        self.max_total = 0
        self.prev = (0, 0, 0, 0)
        self.steps = StepLog()
        self.response_step: int | None = None  # first model step since the last token_count
        # Copied history (module doc): the thread whose replay is being read, how many records
        # were copied, the first copied line and the time of the last copied record.
        self.copy_of: str | None = None
        self.copy_runs: list[list] = []  # ingest.copies runs
        self.last_own = 0  # line of the last record of the thread's own
        self.n_copied = 0
        self.copy_last_ts: datetime | None = None
        self.fresh_counter = False  # the next own token_count is the first after a replay
        # How the thread's own log ends so far (frames.END_STATUSES; None: a turn is under way)
        # and the line of the event that says so.
        self.end: str | None = None
        self.end_line: int | None = None

    # -- state (ingest.resume) -----------------------------------------------------------------

    _STATE = (
        "meta",
        "legacy",
        "first_ts",
        "last_ts",
        "n_records",
        "models",
        "model",
        "turn_cwd",
        "prompt_hash",
        "item_prompt_hash",
        "calls",
        "by_id",
        "patch_text",
        "stdin_proc",
        "outputs",
        "exec_ends",
        "patch_ends",
        "spawn_ends",
        "agent_starts",
        "events",
        "usage",
        "max_total",
        "prev",
        "response_step",
        "copy_of",
        "copy_runs",
        "last_own",
        "n_copied",
        "copy_last_ts",
        "fresh_counter",
        "end",
        "end_line",
    )

    def state(self) -> dict:
        out = resume.save_fields(self, self._STATE)
        for name in PENDING:
            out[name] = [tuple(row) for row in out[name]]
        return {**out, "steps": self.steps.state()}

    @classmethod
    def restore(cls, path: str, state: dict) -> _Rollout:
        parser = resume.load_fields(cls(path), cls._STATE, state)
        for name, kind in PENDING.items():
            setattr(parser, name, [kind(*row) for row in state[name]])
        parser.steps = StepLog.restore(state["steps"])
        return parser

    # -- reading -------------------------------------------------------------------------------

    def frames(self) -> Frames:
        """The file's frames; called once, after the last record."""
        native = self.meta["native_id"] if self.meta else None
        if native is None and not self.legacy and (self.meta or self.calls or self.usage or self.first_ts):
            # Envelope records but no session_meta (a trimmed or exported rollout): the id is
            # the one in the file name (rollout-<time>-<id>.jsonl), else the file's stem.
            native = _id_from_name(self.path)
            self.diags.add("missing_session_id", None, "no session_meta: id from the file name")
        if native is None:
            if self.n_records:
                self.diags.add("no_session", None, f"{self.n_records} records, no session_meta id")
            return Frames.from_rows(diagnostics=self.diags.rows)
        copies.report(self.copy_runs, self.diags, "replayed from thread")
        self._pair()
        session = self._session_row(native)
        for row in self.commits:
            row["source_path"] = self.path
        for row in (*self.calls, *self.events, *self.usage, *self.commits):
            row["session_id"] = session["session_id"]
        for row in self.calls:  # calls logged before a late session_meta named the cwd
            row["cwd"] = row["cwd"] or session["cwd"]
        for row in self.usage:  # a count before the first turn_context: the session's model
            row["model"] = row["model"] or session["model"]
        self.steps.pair_results({c["call_id"]: (c["tool"], c.get("is_error")) for c in self.calls if c["call_id"]})
        steps, texts = self.steps.finish(session["session_id"], self.path)
        return Frames.from_rows(
            sessions=[session],
            calls=self.calls,
            file_events=self.events,
            usage=self.usage,
            diagnostics=self.diags.rows,
            steps=steps,
            texts=texts,
            commits=self.commits,
        )

    def feed(self, n: int, rec: dict) -> None:
        self.n_records += 1
        if "record_type" in rec:  # pre-envelope state marker
            return
        kind = rec.get("type")
        if kind is None and self.meta is None and isinstance(rec.get("id"), str):
            self.legacy, self.meta = True, _identity(rec)  # pre-envelope header
            self._ts(rec, n)
            return
        if self.legacy and "payload" not in rec:
            self._item(rec, None, n)  # bare items carry no timestamp in this layout
            return
        p = rec.get("payload")
        if self.copied(kind, p, rec.get("timestamp")):
            self.n_copied += 1
            copies.note(self.copy_runs, n, self.copy_of, self.last_own)
            if kind == "event_msg" and isinstance(p, dict) and p.get("type") == "token_count":
                self._tokens(p, None, n, copied=True)
            return
        self.last_own = n
        ts = self._ts(rec, n)
        if isinstance(kind, str) and kind in IGNORED_KINDS:  # a list or object kind is not hashable
            return
        if not isinstance(kind, str) or kind not in ENVELOPE_KINDS:
            detail = kind if isinstance(kind, str) else f"type: {json_type(kind)}"
            self.diags.add("unknown_record_type", n, detail)
            return
        if not isinstance(p, dict):
            self.diags.add("wrong_type", n, f"{kind}.payload: {json_type(p)}")
        elif kind == "session_meta" and self.meta is None:
            if isinstance(p.get("id"), str):
                self.meta = _identity(p)
                if self.n_records > 1:  # records came before it: their cwd is filled in at the end
                    self.meta["late"] = True
                    self.diags.add("late_session_meta", n, f"session_meta after {self.n_records - 1} records")
            else:  # the id then comes from the file name (frames)
                self.diags.add("wrong_type", n, f"session_meta.id: {json_type(p.get('id'))}")
        elif kind == "session_meta":
            pass  # the thread's own header again (a resumed thread)
        elif kind == "turn_context":
            if isinstance(p.get("model"), str):
                self.model = p["model"]
                self.models[self.model] += 1
            self.turn_cwd = as_str(p.get("cwd")) or self.turn_cwd
        elif kind == "response_item":
            self._item(p, ts, n)
        elif kind == "event_msg":
            self._event(p, ts, n)
        elif kind == "compacted":
            self.steps.add(0, n, ts, "system", "compaction", as_str(raw_value(p.get("message"))))

    def _ts(self, rec: dict, n: int):
        raw = rec.get("timestamp")
        ts = parse_ts(raw)
        if ts is None:
            detail = "timestamp missing" if raw is None else f"timestamp: unparseable {json_type(raw)}"
            self.diags.add("bad_timestamp", n, detail)
            return None
        self.first_ts = self.first_ts or ts
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        return ts

    def _cwd(self) -> str | None:
        return self.turn_cwd or (self.meta["cwd"] if self.meta else None)

    def _item(self, p: dict, ts, n: int) -> None:
        t = p.get("type")
        if not isinstance(t, str) or t not in KNOWN_RESPONSE_ITEMS:
            name = t if isinstance(t, str) else json_type(t)
            self.diags.add("unknown_record_type", n, f"response_item:{name}")
            return
        self._item_step(p, t, ts, n)
        if t == "function_call":
            self._function_call(p, ts, n)
        elif t == "custom_tool_call":
            row, text = self._add_call(p, as_str(p.get("name")), ts, n), p.get("input")
            if not isinstance(text, str):
                self.diags.add("wrong_type", n, f"custom_tool_call.input: {json_type(text)}")
            elif row["kind"] == "patch":
                self._set_patch(row, text)
        elif t == "local_shell_call":
            action = raw_value(p.get("action"))
            if not isinstance(action, dict):
                self.diags.add("wrong_type", n, f"local_shell_call.action: {json_type(action)}")
                action = {}
            row = self._add_call(p, "local_shell_call", ts, n)
            self._shell(row, action.get("command"), action.get("working_directory"), n)
        elif t == "web_search_call":
            self._add_call(p, "web_search_call", ts, n, call_id=as_str(p.get("id")))
        elif t in ("function_call_output", "custom_tool_call_output"):
            self.outputs.append(self._output_facts(p, ts, n))
        elif t == "message" and p.get("role") == "user" and self.item_prompt_hash is None:
            # Injected context (<environment_context>, <user_instructions>, AGENTS.md) is not
            # the prompt; pre-envelope files have no user_message event to tell them apart.
            text = _texts(raw_value(p.get("content")))
            if text and not text.lstrip().startswith(("<", "# AGENTS.md")):
                self.item_prompt_hash = text_hash(text)

    def _item_step(self, p: dict, t: str, ts, n: int) -> None:
        """The step a response item is (the event_msg copies of messages are not steps)."""
        role, kind, call_id, tool = "assistant", None, None, None
        text: str | bytes | memoryview | None = None
        if t == "message":
            text, who = _texts(raw_value(p.get("content"))), p.get("role")
            if who == "assistant":
                kind = "text"
            elif who == "user" and not (text or "").lstrip().startswith(("<", "# AGENTS.md")):
                role, kind = "user", "prompt"
            else:  # developer/system instructions, injected environment and AGENTS.md
                role, kind = "system", "context"
        elif t == "reasoning":  # readable only as its summary (or raw content); else encrypted
            kind, text = "thinking", _texts(raw_value(p.get("summary"))) or _texts(raw_value(p.get("content")))
        elif t in ("function_call", "custom_tool_call", "local_shell_call", "web_search_call"):
            kind, call_id = "tool_call", as_str(p.get("call_id"))
            tool = {"local_shell_call": t, "web_search_call": t}.get(t) or as_str(p.get("name"))
            raw = {"function_call": "arguments", "custom_tool_call": "input"}.get(t)
            text = json_content(p.get(raw) if raw else raw_value(p.get("action")))
            if t == "web_search_call":
                call_id = as_str(p.get("id"))
        elif t in ("function_call_output", "custom_tool_call_output"):
            role, kind, call_id = "tool", "tool_result", as_str(p.get("call_id"))
            value = p.get("output")
            text = None if self.steps.keep else string_literal(value)  # hashed as logged (ingest.steps)
            if text is None:
                value = raw_value(value)
                text = value if isinstance(value, str) else _output_parts(value)[0]
        elif t == "compaction":
            role, kind = "system", "compaction"
        if kind is None:
            return
        model = self.model if role == "assistant" else None
        idx = self.steps.add(0, n, ts, role, kind, text, call_id=call_id, tool=tool, model=model)
        if role == "assistant" and self.response_step is None:
            self.response_step = idx

    def _function_call(self, p: dict, ts, n: int) -> None:
        name, raw, args = as_str(p.get("name")), p.get("arguments"), {}
        if not isinstance(raw, str):
            self.diags.add("wrong_type", n, f"function_call.arguments: {json_type(raw)}")
        else:
            try:
                parsed = orjson.loads(raw)
            except orjson.JSONDecodeError:
                self.diags.add("bad_arguments", n, f"{name}: arguments are not JSON ({len(raw)} chars)")
            else:
                if isinstance(parsed, dict):
                    args = parsed
                else:
                    self.diags.add("bad_arguments", n, f"{name}: arguments are a JSON {json_type(parsed)}")
        row = self._add_call(p, name, ts, n)
        if name in ("shell", "shell_command"):
            self._shell(row, args.get("command"), args.get("workdir"), n)
        elif name == "exec_command":
            self._shell(row, args.get("cmd"), args.get("workdir"), n)
        elif name == "write_stdin" and row["call_id"] and args.get("session_id") is not None:
            self.stdin_proc[row["call_id"]] = str(args["session_id"])
        elif name == "apply_patch" and isinstance(args.get("input"), str):
            self._set_patch(row, args["input"])
        elif name == "spawn_agent":
            row["subagent_type"] = as_str(args.get("agent_type")) or as_str(args.get("agent_role"))
            row["description"] = as_str(args.get("task_name"))
            if isinstance(args.get("message"), str):  # becomes the child's first prompt
                row["prompt_hash"] = text_hash(args["message"])

    def _add_call(self, p: dict, tool: str | None, ts, n: int, *, call_id=None) -> dict:
        call_id = call_id or as_str(p.get("call_id"))
        row = {
            "call_id": call_id,
            "tool": tool,
            "kind": TOOL_KINDS.get(tool or "", "other"),
            "started_at": ts,
            "cwd": self._cwd(),
            "paths": [],
            "output_ids": [],
            "source_path": self.path,
            "line": n,
        }
        self.calls.append(row)
        if call_id:
            self.by_id.setdefault(call_id, len(self.calls) - 1)
        return row

    def _shell(self, row: dict, command: object, workdir: object, n: int) -> None:
        if isinstance(workdir, str) and workdir:
            row["cwd"] = normalise(workdir, self._cwd()) or workdir
        if isinstance(command, list) and command and command[0] in ("apply_patch", "applypatch"):
            # Codex runs an `apply_patch PATCH` argv itself (mid-2025 models called it via shell).
            row["kind"] = "patch"
            if len(command) == 2 and isinstance(command[1], str):
                self._set_patch(row, command[1])
            return
        row["command"] = _command_text(command)
        if row["command"] is None and command is not None:
            self.diags.add("wrong_type", n, f"{row['tool']}.command: {json_type(command)}")

    def _set_patch(self, row: dict, text: str) -> None:
        # Only ever for the call _add_call has just added: the last one.
        self.patch_text[len(self.calls) - 1] = ops = _patch_ops(text, row["cwd"])
        row["paths"] = list(dict.fromkeys(path for path, _ in ops))

    def _event(self, p: dict, ts, n: int) -> None:
        t = p.get("type")
        if isinstance(t, str) and t in _ENDS:  # a turn ends (completed, aborted, failed) or a new one starts
            self.end, self.end_line = _ENDS[t], n if _ENDS[t] else None
        if not isinstance(t, str) or t not in KNOWN_EVENTS:
            name = t if isinstance(t, str) else json_type(t)
            self.diags.add("unknown_record_type", n, f"event_msg:{name}")
        elif t == "token_count":
            self._tokens(p, ts, n)
        elif t == "turn_aborted":
            self.steps.add(0, n, ts, "user", "interrupt", None)
        elif t == "user_message" and self.prompt_hash is None and isinstance(msg := raw_value(p.get("message")), str):
            self.prompt_hash = text_hash(msg) if msg else ""
        elif t == "exec_command_end":
            self.exec_ends.append(self._exec_end(p, ts, n))
            self._reads(p, ts, n)
        elif t == "patch_apply_end":
            self.patch_ends.append(self._patch_end(p, ts, n))
        elif t == "collab_agent_spawn_end":
            self.spawn_ends.append(SpawnEnd(as_str(p.get("call_id")), ts, n, as_str(p.get("new_thread_id"))))
        elif t == "sub_agent_activity" and p.get("kind") == "started":
            self.agent_starts.append(AgentStarted(as_str(p.get("event_id")), ts, n, as_str(p.get("agent_thread_id"))))

    def _reads(self, p: dict, ts, n: int) -> None:
        """The harness's own parse of the command: its `read` items are reported reads."""
        parsed = raw_value(p.get("parsed_cmd"))
        if parsed is not None and not isinstance(parsed, list):
            self.diags.add("wrong_type", n, f"exec_command_end.parsed_cmd: {json_type(parsed)}")
            return
        cwd, seen = as_str(p.get("cwd")) or self._cwd(), set()
        for item in parsed or []:
            if isinstance(item, dict) and item.get("type") == "read":
                path = normalise(item["path"], cwd) if isinstance(item.get("path"), str) else None
                if path and path not in seen:
                    seen.add(path)
                    self._file_event(as_str(p.get("call_id")), ts, path, "read", "parsed_cmd", "reported", n)

    def _tokens(self, p: dict, ts, n: int, copied: bool = False) -> None:
        """A cumulative count becomes the difference from the last one. A copied count (a
        replayed parent's) only moves that baseline: the thread's own totals go on from it."""
        info = raw_value(p.get("info"))
        if info is None:  # a rate-limits-only update
            return
        if not isinstance(info, dict):
            if not copied:
                self.diags.add("wrong_type", n, f"token_count.info: {json_type(info)}")
            return
        total = info.get("total_token_usage")
        if not isinstance(total, dict):
            if not copied:
                self.diags.add("wrong_type", n, f"token_count.info.total_token_usage: {json_type(total)}")
            return
        grand = as_int(total.get("total_tokens"))
        if self.fresh_counter and not copied:
            # The first own count after a replay: multi-agent v2 children count from zero again
            # (their total is their last call's), older forks go on from the replayed totals.
            self.fresh_counter = False
            last = info.get("last_token_usage")
            if grand < self.max_total and isinstance(last, dict) and as_int(last.get("total_tokens")) == grand:
                self.prev, self.max_total = (0, 0, 0, 0), 0
        if grand <= self.max_total:  # cumulative totals: an equal or lower one is a re-emit/replay
            return
        cached = as_int(total.get("cached_input_tokens"))
        cur = (
            as_int(as_int(total.get("input_tokens")) - cached),
            cached,
            as_int(total.get("output_tokens")),
            as_int(total.get("reasoning_output_tokens")),
        )
        # as_int again: a difference of two counts near the BIGINT bounds may leave that range.
        inp, cache, out, reason = (as_int(c - q) for c, q in zip(cur, self.prev, strict=True))
        self.prev, self.max_total = cur, grand
        if copied:
            return
        # The response this count closes is the one whose first step came after the last count.
        self.steps.tokens(
            self.response_step,
            {
                "input_tokens": inp,
                "cache_read_tokens": cache,
                "output_tokens": out,
                "reasoning_tokens": reason,
                "cache_creation_tokens": 0,
            },
        )
        self.response_step = None
        self.usage.append(
            {
                "ts": ts,
                "model": self.model,
                "message_id": f"cum:{grand}",
                "input_tokens": inp,
                "cache_read_tokens": cache,
                "output_tokens": out,
                "reasoning_tokens": reason,
                "cache_creation_tokens": 0,
                "cache_creation_5m_tokens": 0,
                "cache_creation_1h_tokens": 0,
                "source_path": self.path,
                "line": n,
            }
        )

    def _session_row(self, native: str) -> dict:
        ident = dict(self.meta or {})
        late = ident.pop("late", False)
        bad_source = ident.pop("bad_source", None)
        if bad_source is not None:
            self.diags.add("wrong_type", None, f"session_meta.source: {bad_source}")
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = None
        # An empty first user_message ("") gives way to the item prompt, as a missing one does.
        prompt = self.prompt_hash or self.item_prompt_hash
        return {
            **ident,
            "session_id": f"{NAME}:{native}",
            "harness": NAME,
            "layout": "rollout",
            "source_path": self.path,
            "source_bytes": size,
            "session_kind": ident.get("session_kind") or "main",  # no session_meta: a main thread
            "cwd": ident.get("cwd") or self.turn_cwd,
            # A late session_meta may be stamped after the records that preceded it.
            "started_at": min(t for t in (ident.get("started_at"), self.first_ts) if t)
            if late and self.first_ts
            else ident.get("started_at") or self.first_ts,
            "ended_at": self.last_ts,
            "model": self.models.most_common(1)[0][0] if self.models else None,
            "first_prompt_hash": prompt,
            "n_records": self.n_records - self.n_copied,
            "n_copied": self.n_copied,
            "end_status": self.end or "unknown",
            "end_line": self.end_line,
        }
