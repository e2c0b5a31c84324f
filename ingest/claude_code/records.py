"""Claude Code transcripts, record by record: :class:`_Parser` reads each record into the
sessions, calls, usage and steps of the file and builds its frames; ``pairing`` pairs results with
their calls and ``handoff`` tells copied history apart.
"""

from __future__ import annotations

import os
import re
from dataclasses import fields
from datetime import datetime

import orjson

from sessiongraph.ingest import commits, copies, resume
from sessiongraph.ingest.claude_code.decoding import (
    _DATA,
    FLAT_TYPES,
    PR_LINK,
    THREADED_TYPES,
    UUID,
    _block_text,
    _paths,
    _prompt_text,
    _str,
    _val,
)
from sessiongraph.ingest.claude_code.handoff import HANDOFF_CITE, _Handoff
from sessiongraph.ingest.claude_code.journal import RUN_PREFIX
from sessiongraph.ingest.claude_code.pairing import WORKFLOW_TOOL, _Pairing
from sessiongraph.ingest.claude_code.session import _Session
from sessiongraph.ingest.files import read_bounded
from sessiongraph.ingest.frames import Frames, split_cache_writes
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    answer_hash,
    as_int,
    as_str,
    file_size,
    json_type,
    parse_ts,
    string_literal,
    text_hash,
)
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "claude-code"  # the adapter's NAME (the package's __init__ gives it)

SPAWN_TOOLS = frozenset({"Task", "Agent"})  # Task up to 2.1.62, Agent from 2.1.63
SHELL_TOOLS = frozenset({"Bash", "PowerShell"})  # PowerShell on Windows builds
MAX_SIDECAR_BYTES = 1 << 20  # an agent-<id>.meta.json holds a few ids: more is not one
# tool -> (call kind, input key naming the file, file op)
FILE_TOOLS: dict[str, tuple[str, str, str]] = {
    "Read": ("read", "file_path", "read"),
    "NotebookRead": ("read", "notebook_path", "read"),
    "Write": ("write", "file_path", "write"),
    "Edit": ("edit", "file_path", "write"),
    "MultiEdit": ("edit", "file_path", "write"),
    "NotebookEdit": ("edit", "notebook_path", "write"),
}
# Searches read files only where the call names a path (a folder or a file).
SEARCH_TOOLS = frozenset({"Glob", "Grep"})

AGENT_FILE = re.compile(r"^agent-(?P<id>.+)\.jsonl$")
UUID_STEM = re.compile(r"^" + UUID.pattern + r"$")
AGENT_KEY = "agent:"  # session key of inline sidechain records that carry their agentId
WARMUP_PROMPT = "Warmup"  # 2.0.x pre-warm sidechains
# A teammate's transcript (agent teams, 2.1.3x+) opens with its lead's message.
TEAMMATE_PROMPT = '<teammate-message teammate_id="team-lead"'
IN_PROCESS_TEAMMATE = "in_process_teammate"  # meta.json taskKind of later builds
INTERRUPTED = "[Request interrupted by user"  # "...]" or "... for tool use]"
# User-role text the harness wrote, not the person: a background task's result, a local command's
# output, a reminder. (A slash command the person typed, <command-name>, is their prompt.)
HARNESS_TEXT = ("<task-notification>", "<local-command-stdout>", "<local-command-stderr>", "<system-reminder>")


class _Parser(_Handoff, _Pairing):
    def __init__(self, path: str):
        self.path = path
        self.diags = Diagnostics(path, NAME)
        name = os.path.basename(path)
        m = AGENT_FILE.match(name)
        self.agent_id = m.group("id") if m else None
        parts = os.path.normpath(path).split(os.sep)
        if self.agent_id is None:
            self.layout = "main"
        elif "workflows" in parts[-4:-1]:
            self.layout = "workflow"
        elif len(parts) >= 2 and parts[-2] == "subagents":
            self.layout = "nested"
        else:
            self.layout = "flat"
        stem = name[: -len(".jsonl")] if name.endswith(".jsonl") else name
        # A main transcript is named by its sessionId; fixtures renamed elsewhere fall back to
        # the records' own sessionId.
        self.native: str | None = stem if self.agent_id is None and UUID_STEM.match(stem) else None
        self.sessions: dict[str, _Session] = {}
        self.calls: dict[str, dict] = {}
        self.call_session: dict[str, str] = {}
        self.prompts: dict[str, str] = {}  # spawn call id -> prompt hash, to place inline sidechains
        self.open_spawns: list[str] = []
        self.usage: dict[tuple[str, str], dict] = {}
        self.progress: dict[str, str] = {}
        self.sidechain_root: dict[str, str] = {}  # record uuid -> root uuid of its inline sidechain
        self.continued_from: str | None = None
        self.missing_id = False  # a record without sessionId was seen (reported once)
        # Copied history (module doc): lines before copy_upto are a hand-off's copy of the old
        # session; n_copied counts them and the records of another sessionId.
        self.copy_upto = 0
        self.copy_runs: list[list] = []  # ingest.copies runs
        self.last_own = 0  # line of the last record of the file's own session
        # ingest.commits rows (session key in "_key"): what a shell call or pr-link record made
        self.commits: list[dict] = []
        self.steps = StepLog()
        self.first_step: dict[tuple[str, str], int | None] = {}  # (session key, message id) -> step index

    # -- state (ingest.resume) -----------------------------------------------------------------

    _STATE = (
        "native",
        "calls",
        "call_session",
        "prompts",
        "open_spawns",
        "usage",
        "progress",
        "sidechain_root",
        "continued_from",
        "missing_id",
        "first_step",
        "copy_upto",
        "copy_runs",
        "last_own",
        "commits",
    )

    def state(self) -> dict:
        out = resume.save_fields(self, self._STATE)
        # fields() not asdict(): asdict would rebuild the Counter from (model, n) pairs.
        out["sessions"] = [{f.name: getattr(s, f.name) for f in fields(s)} for s in self.sessions.values()]
        out["steps"] = self.steps.state()
        return out

    @classmethod
    def restore(cls, path: str, state: dict) -> _Parser:
        parser = resume.load_fields(cls(path), cls._STATE, state)
        parser.sessions = {d["key"]: _Session(**d) for d in state["sessions"]}
        parser.steps = StepLog.restore(state["steps"])
        return parser

    # -- reading -----------------------------------------------------------------------------

    def frames(self) -> Frames:
        """The file's frames; called once, after the last record."""
        if self.native is None:
            if self.sessions or self.calls:
                self.diags.add("no_session", None, "no record carries a sessionId")
            return Frames.from_rows(diagnostics=self.diags.rows)
        return self._frames()

    def feed(self, n: int, rec: dict) -> None:
        rtype = rec.get("type")
        if not isinstance(rtype, str):
            self.diags.add("unknown_record_type", n, f"type is {json_type(rtype)}")
            return
        if rtype == PR_LINK:
            self._pr_link(n, rec)
            return
        if rtype not in THREADED_TYPES:
            if rtype not in FLAT_TYPES:
                self.diags.add("unknown_record_type", n, f"type={rtype[:60]}")
            return
        sid = rec.get("sessionId")
        if sid is None and "sessionId" not in rec:
            sid = self._id_from_name(n)  # trimmed or exported by another tool
        if not isinstance(sid, str):
            self.diags.add("wrong_type", n, f"sessionId: {json_type(sid)}")
            return
        if self.native is None:
            self.native = sid
        elif sid != self.native:
            # A hand-off copies the old session's last record into the new file.
            copies.note(self.copy_runs, n, sid, self.last_own)
            if self.layout == "main":
                self.continued_from = self.continued_from or sid
            return
        raw_ts = rec.get("timestamp")
        ts = parse_ts(raw_ts)
        if ts is None:
            self.diags.add("bad_timestamp", n, "missing" if raw_ts is None else "unparseable")
        sess = self._session_of(rec, n)
        sess.see(rec, ts)
        if rtype == "assistant":
            self._assistant(n, rec, ts, sess)
        elif rtype == "user":
            self._user(n, rec, ts, sess)
        self._end(n, rtype, rec, sess)
        # A record that made no step (system, progress, attachment) still joins the tree.
        self.steps.link(as_str(rec.get("uuid")), as_str(rec.get("parentUuid")))
        if rtype == "progress":
            data = _val(rec.get("data"), _DATA)
            if isinstance(data, dict) and data.get("type") == "agent_progress":
                parent_call, agent = as_str(rec.get("parentToolUseID")), as_str(data.get("agentId"))
                if parent_call and agent:
                    self.progress.setdefault(parent_call, agent)
        self.last_own = n

    def _pr_link(self, n: int, rec: dict) -> None:
        """A pr-link record: the pull request the file's session opened (its own, not a copy)."""
        sid = rec.get("sessionId")
        if isinstance(sid, str) and self.native is not None and sid != self.native:
            return
        self.commits += [{**row, "_key": ""} for row in commits.from_pr_link(rec, parse_ts(rec.get("timestamp")), n)]

    @staticmethod
    def _end(n: int, rtype: str, rec: dict, sess: _Session) -> None:
        """How the session stands after this record: an API error or an answer of the model (a
        message with no tool call), a person's interrupt; a tool call, a tool result or a new prompt
        leaves it waiting (unknown until a later record says more)."""
        msg = rec.get("message")
        content = msg.get("content") if isinstance(msg, dict) else None
        blocks = [b.get("type") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        if rtype == "assistant":
            if rec.get("isApiErrorMessage") is True or rec.get("error") is not None:
                sess.end, sess.end_line = "error", n
            elif "tool_use" in blocks:
                sess.end, sess.end_line = None, None
            elif "text" in blocks or isinstance(content, str):
                sess.end, sess.end_line = "completed", n
        elif rtype == "user" and not rec.get("isMeta") and rec.get("isCompactSummary") is not True:
            listed = content if isinstance(content, list) else []
            # Texts may reach here undecoded (the fast decoder): _val/_str as _user_steps reads them.
            texts = (
                [content]
                if isinstance(content, str)
                else [_str(_val(b.get("text"))) for b in listed if isinstance(b, dict)]
            )
            if any(isinstance(t, str) and t.startswith(INTERRUPTED) for t in texts):
                sess.end, sess.end_line = "interrupted", n
            elif "tool_result" in blocks or any(isinstance(t, str) and not t.startswith(HARNESS_TEXT) for t in texts):
                sess.end, sess.end_line = None, None  # a tool answered or a person asked: a turn goes on

    def _id_from_name(self, n: int) -> str:
        """The session id of records that carry none: the file's session if an earlier record
        named it, else the file's own name (``<sessionId>.jsonl``, ``<sessionId>/subagents/...``,
        or any stem). Reported once per file as ``missing_session_id``."""
        if not self.missing_id:
            self.missing_id = True
            self.diags.add("missing_session_id", n, "records without sessionId: id from the file name")
        if self.native is None:
            parts = os.path.normpath(self.path).split(os.sep)
            stem = parts[-1][: -len(".jsonl")] if parts[-1].endswith(".jsonl") else parts[-1]
            nested = self.layout in ("nested", "workflow") and len(parts) >= 3
            self.native = parts[parts.index("subagents") - 1] if nested and "subagents" in parts else stem
        return self.native

    def _session_of(self, rec: dict, n: int) -> _Session:
        key = ""
        if self.layout == "main" and rec.get("isSidechain") is True:
            uuid, parent = as_str(rec.get("uuid")), as_str(rec.get("parentUuid"))
            # Records that name their agent are that agent's, however their chains run (a
            # resumed agent starts a new chain); older ones are grouped by chain root.
            agent = as_str(rec.get("agentId"))
            root = self.sidechain_root.get(parent) if parent else None
            key = f"{AGENT_KEY}{agent}" if agent else root or uuid or f"line{n}"
            if uuid:
                self.sidechain_root[uuid] = key
        sess = self.sessions.get(key)
        if sess is None:
            sess = self.sessions[key] = _Session(key)
            if key and self.open_spawns:
                sess.parent_tool_use_id = self.open_spawns[-1]
        return sess

    def _message(self, n: int, rec: dict) -> dict | None:
        msg = rec.get("message")
        if msg is None:
            return None
        if not isinstance(msg, dict):
            self.diags.add("wrong_type", n, f"message: {json_type(msg)}")
            return None
        return msg

    def _content(self, n: int, msg: dict) -> list:
        content = msg.get("content")
        if isinstance(content, list):
            return content
        if not isinstance(content, str | None):
            self.diags.add("wrong_type", n, f"message.content: {json_type(content)}")
        return []

    def _assistant(self, n: int, rec: dict, ts: datetime | None, sess: _Session) -> None:
        msg = self._message(n, rec)
        if msg is None:
            return
        model = as_str(msg.get("model"))
        if model and model != "<synthetic>":
            sess.models[model] += 1
        msg_id = as_str(msg.get("id")) or as_str(rec.get("requestId")) or f"line:{n}"
        content = msg.get("content")
        if isinstance(content, str):
            self._step(n, rec, ts, sess, "assistant", "text", content, model=model, msg_id=msg_id)
            sess.final_answer_hash = answer_hash(content) or sess.final_answer_hash
        for block in self._content(n, msg):
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "tool_use":
                call = self._tool_use(n, rec, ts, sess, block)
                text = call.pop("_text")
                self._step(n, rec, ts, sess, "assistant", "tool_call", text, model=model, msg_id=msg_id, call=call)
                sess.final_answer_hash = None
            elif btype == "text":
                text = _val(block.get("text"))
                self._step(n, rec, ts, sess, "assistant", "text", _str(text), model=model, msg_id=msg_id)
                sess.final_answer_hash = answer_hash(text) or sess.final_answer_hash
            elif btype in ("thinking", "redacted_thinking"):
                text = _val(block.get("thinking"))
                self._step(n, rec, ts, sess, "assistant", "thinking", _str(text), model=model, msg_id=msg_id)
        usage = msg.get("usage")
        if usage is None:
            return
        if not isinstance(usage, dict):
            self.diags.add("wrong_type", n, f"message.usage: {json_type(usage)}")
            return
        cache = usage.get("cache_creation")
        cache = cache if isinstance(cache, dict) else {}
        created = as_int(usage.get("cache_creation_input_tokens"))
        one_hour = as_int(cache.get("ephemeral_1h_input_tokens"))
        # Builds before the split report only the total: it was all 5-minute cache then.
        five_min = as_int(cache.get("ephemeral_5m_input_tokens")) if cache else created - one_hour
        five_min, one_hour, repaired = split_cache_writes(created, five_min, one_hour, "5m")
        if repaired:
            self.diags.add("cache_split_repaired", n, f"cache_creation_input_tokens {created} kept; split re-made")
        details = usage.get("output_tokens_details")
        # One response is logged once per content block with the same usage: the last wins
        # (records without a message id are keyed by their request id).
        self.usage[(sess.key, msg_id)] = {
            "ts": ts,
            "model": model,
            "message_id": msg_id,
            "request_id": as_str(rec.get("requestId")),
            "input_tokens": as_int(usage.get("input_tokens")),
            "output_tokens": as_int(usage.get("output_tokens")),
            "cache_read_tokens": as_int(usage.get("cache_read_input_tokens")),
            "cache_creation_tokens": created,
            "cache_creation_5m_tokens": five_min,
            "cache_creation_1h_tokens": one_hour,
            "reasoning_tokens": as_int(details.get("thinking_tokens")) if isinstance(details, dict) else 0,
            "line": n,
        }

    def _step(self, n, rec, ts, sess, role, kind, text, *, model=None, msg_id=None, call=None, error=None):
        """One step of this record (one content block); a record seen before (same ``uuid``: a
        resumed transcript's copy) adds none."""
        uuid = as_str(rec.get("uuid"))
        idx = self.steps.add(
            sess.key,
            n,
            ts,
            role,
            kind,
            text,
            call_id=call["call_id"] if call else None,
            tool=(call["tool"] or None) if call else None,
            is_error=error,
            model=model,
            request_id=as_str(rec.get("requestId")) if role == "assistant" else None,
            node=uuid,
            parent=as_str(rec.get("parentUuid")),
        )
        if msg_id is not None and idx is not None:
            self.first_step.setdefault((sess.key, msg_id), idx)

    def _tool_use(self, n: int, rec: dict, ts, sess: _Session, block: dict) -> dict:
        call_id = as_str(block.get("id")) or f"line{n}:{len(self.calls)}"
        tool = as_str(block.get("name")) or ""
        # Decoded whole and written again: the logged bytes of an object need not be its compact
        # JSON (a number past 64 bits, a duplicate key), and the hash must not depend on the decoder.
        inp = _val(block.get("input"))
        text = json_content(inp)
        if not isinstance(inp, dict):
            self.diags.add("wrong_type", n, f"{tool}.input: {json_type(inp)}")
            inp = {}
        cwd = as_str(rec.get("cwd")) or sess.cwd
        row = {
            "call_id": call_id,
            "tool": tool,
            "kind": "other",
            "started_at": ts,
            "cwd": cwd,
            "paths": [],
            "output_ids": [],
            "line": n,
            "is_error": False,
        }
        if tool in SPAWN_TOOLS:
            row.update(
                kind="spawn",
                subagent_type=as_str(inp.get("subagent_type")),
                description=as_str(inp.get("description")),
                run_in_background=inp.get("run_in_background") is True,
                # a teammate spawn (agent teams) names the teammate and its team
                agent_name=as_str(inp.get("name")),
                team_name=as_str(inp.get("team_name")),
            )
            prompt = as_str(inp.get("prompt"))
            if prompt is not None:
                row["prompt_hash"] = self.prompts[call_id] = text_hash(prompt)
            self.open_spawns.append(call_id)
        elif tool == WORKFLOW_TOOL:
            row.update(kind="spawn", run_in_background=inp.get("run_in_background") is True)
        elif tool in SHELL_TOOLS:
            row.update(
                kind="shell",
                command=as_str(inp.get("command")),
                run_in_background=inp.get("run_in_background") is True,
            )
        elif tool in FILE_TOOLS:
            kind, key, _ = FILE_TOOLS[tool]
            row["kind"] = kind
            row["paths"] = _paths(inp.get(key), cwd)
        elif tool in SEARCH_TOOLS:
            row["paths"] = _paths(inp.get("path"), cwd)
        self.calls[call_id] = row
        self.call_session[call_id] = sess.key
        return {"call_id": call_id, "tool": tool, "_text": text}

    def _user(self, n: int, rec: dict, ts, sess: _Session) -> None:
        msg = self._message(n, rec)
        if msg is None:
            return
        content = msg.get("content")
        if sess.first_prompt_hash is None and not rec.get("isMeta"):
            text = _prompt_text(content)
            if text is not None:
                sess.first_prompt_hash, sess.warmup = text_hash(text), text == WARMUP_PROMPT
                sess.teammate = text.lstrip().startswith(TEAMMATE_PROMPT)
                if sess.key and sess.n_records == 1:
                    self._place_sidechain(sess, text)
                cited = HANDOFF_CITE.search(text) if not sess.key else None
                if cited and cited.group(1) != self.native:
                    self.continued_from = self.continued_from or cited.group(1)
        elif not sess.key and rec.get("parentUuid", "") is None and not rec.get("isMeta") and sess.n_records > 1:
            # A root prompt after the session's first records: a whole-transcript hand-off copy
            # when it cites another session's transcript.
            text = _prompt_text(content)
            cited = HANDOFF_CITE.search(text) if text is not None else None
            if cited and text is not None and cited.group(1) != self.native:
                self._hand_off(n, rec, cited.group(1))
                sess = self.sessions[""]
                sess.first_prompt_hash, sess.warmup = text_hash(text), False
        self._user_steps(n, rec, ts, sess, content)
        results = [b for b in self._content(n, msg) if isinstance(b, dict) and b.get("type") == "tool_result"]
        sidecar = rec.get("toolUseResult") if len(results) == 1 else None
        for block in results:
            call_id = as_str(block.get("tool_use_id"))
            call = self.calls.get(call_id or "")
            step_call = {"call_id": call_id, "tool": call["tool"] if call else None}
            error = block.get("is_error") is True
            self._step(n, rec, ts, sess, "tool", "tool_result", self._result_text(block), call=step_call, error=error)
            if call is None:
                self.diags.add("unmatched_result", n, "tool_result names no call of this file")
                continue
            self._result(call, ts, block, sidecar)

    def _result_text(self, block: dict) -> str | memoryview:
        """A tool result's step text: the content's JSON string literal as logged, not decoded
        (tool outputs are the bulk of a transcript), unless it is no string or texts are kept."""
        logged = None if self.steps.keep else string_literal(block.get("content"))
        return logged if logged is not None else _block_text(block)

    def _user_steps(self, n: int, rec: dict, ts, sess: _Session, content: object) -> None:
        """A user record's text: a prompt, an interrupt, a compaction summary or harness context."""
        texts: list[str | None]
        if isinstance(content, str):
            texts = [content]
        elif isinstance(content, list):
            texts = [_str(_val(b.get("text"))) for b in content if isinstance(b, dict) and b.get("type") == "text"]
        else:
            return
        for text in texts:
            if rec.get("isCompactSummary") is True:
                role, kind = "system", "compaction"
            elif rec.get("isMeta") is True or (text is not None and text.startswith(HARNESS_TEXT)):
                role, kind = "system", "context"
            elif text is not None and text.startswith(INTERRUPTED):
                role, kind = "user", "interrupt"
            else:
                role, kind = "user", "prompt"
            self._step(n, rec, ts, sess, role, kind, text)

    # -- building frames ---------------------------------------------------------------------

    def _frames(self) -> Frames:
        copies.report(self.copy_runs, self.diags, "copied from session")
        ids = {key: self._session_id(key) for key in self.sessions}
        meta = self._sidecar() if self.agent_id else {}
        sessions = [self._session_row(s, ids[s.key], meta) for s in self.sessions.values()]
        calls, events = [], []
        for call_id, row in self.calls.items():
            if self.copied(row["line"]):
                continue
            sid = ids[self.call_session[call_id]]
            if row["kind"] == "spawn" and call_id in self.progress:
                row["progress_agent_id"] = self.progress[call_id]
            row.update(session_id=sid, source_path=self.path)
            calls.append(row)
            events.extend(self._file_events(row))
        usage = [
            {**u, "session_id": ids[key], "source_path": self.path}
            for (key, _), u in self.usage.items()
            if not self.copied(u["line"])
        ]
        for key, u in self.usage.items():
            self.steps.tokens(self.first_step.get(key), u)
        # A file with no copied history spares finish a test per step.
        copied = self.copied if self.copy_upto or self.copy_runs else None
        steps, texts = self.steps.finish(ids, self.path, copied=copied)
        made = []
        for c in self.commits:
            owner = c["_key"] if c["_key"] in ids else self.call_session.get(c.get("call_id") or "", "")
            if owner in ids and not self.copied(c["line"]):
                made.append(
                    {k: v for k, v in c.items() if k != "_key"} | {"session_id": ids[owner], "source_path": self.path}
                )
        return Frames.from_rows(
            sessions=sessions,
            calls=calls,
            file_events=events,
            usage=usage,
            diagnostics=self.diags.rows,
            steps=steps,
            texts=texts,
            commits=made,
        )

    def _session_id(self, key: str) -> str:
        if self.agent_id:
            return f"{NAME}:{self.native}/{self.agent_id}"
        return f"{NAME}:{self.native}" + (f"/{key.removeprefix(AGENT_KEY)}" if key else "")

    def _sidecar(self) -> dict:
        meta_path = self.path[: -len(".jsonl")] + ".meta.json"
        try:
            raw = read_bounded(meta_path, MAX_SIDECAR_BYTES)
            if raw is None:
                self.diags.add(
                    "bad_sidecar", None, f"{os.path.basename(meta_path)}: larger than {MAX_SIDECAR_BYTES} bytes"
                )
                return {}
            meta = orjson.loads(raw)
        except FileNotFoundError:
            return {}
        except (OSError, orjson.JSONDecodeError) as exc:
            self.diags.add("bad_sidecar", None, f"{os.path.basename(meta_path)}: {type(exc).__name__}")
            return {}
        if not isinstance(meta, dict):
            self.diags.add("bad_sidecar", None, f"{os.path.basename(meta_path)}: {json_type(meta)}")
            return {}
        return meta

    def _session_row(self, s: _Session, sid: str, meta: dict) -> dict:
        is_child = bool(self.agent_id or s.key)
        agent_type = as_str(meta.get("agentType"))
        if not is_child:
            kind = "main"
        elif self.agent_id and self.agent_id.startswith("acompact"):
            kind = "compaction"
        elif self.layout == "workflow" or agent_type == "workflow-subagent":
            kind = "workflow"
        elif s.warmup:
            kind = "warmup"
        else:
            kind = "subagent"
        depth = meta.get("spawnDepth")
        model = s.models.most_common(1)[0][0] if s.models else as_str(meta.get("model"))
        # A teammate is named by meta.json name (later builds) or agentType (2.1.8x sets it to the
        # name); only a session that is a teammate gets a name, so a subagent's type never
        # passes for one.
        teammate = is_child and (
            s.teammate or as_str(meta.get("teamName")) is not None or meta.get("taskKind") == IN_PROCESS_TEAMMATE
        )
        parent_agent = as_str(meta.get("parentAgentId"))
        if parent_agent is None and self.layout == "workflow":
            parent_agent = self._run_folder()
        return {
            "session_id": sid,
            "harness": NAME,
            "native_id": self.native,
            "agent_id": self.agent_id or (s.key.removeprefix(AGENT_KEY) if s.key.startswith(AGENT_KEY) else None),
            "session_kind": kind,
            "layout": "inline" if s.key else self.layout,
            "harness_version": s.version,
            "source_path": self.path,
            "source_bytes": file_size(self.path),
            "cwd": s.cwd,
            "git_branch": s.git_branch,
            "started_at": s.first_ts,
            "ended_at": s.last_ts,
            "model": model,
            "entrypoint": s.entrypoint,
            "slug": s.slug,
            "parent_native_id": self.native if is_child else None,
            "parent_agent_id": parent_agent,
            "parent_tool_use_id": as_str(meta.get("toolUseId")) or s.parent_tool_use_id,
            "spawn_depth": depth if isinstance(depth, int) and not isinstance(depth, bool) else None,
            "agent_type": agent_type,
            "agent_name": (as_str(meta.get("name")) or agent_type) if teammate else None,
            "team_name": as_str(meta.get("teamName")) or s.team_name,
            "forked_from_id": s.ancestor,
            "continued_from_id": None if is_child else self.continued_from,
            "first_prompt_hash": s.first_prompt_hash,
            "final_answer_hash": s.final_answer_hash,
            "n_records": s.n_records,
            "n_copied": None if s.key else copies.total(self.copy_runs),
            "end_status": s.end or "unknown",
            "end_line": s.end_line,
        }

    def _run_folder(self) -> str | None:
        """The ``wf_<runId>`` folder a workflow agent's transcript lies in."""
        folder = os.path.basename(os.path.dirname(self.path))
        return folder if folder.startswith(RUN_PREFIX) else None

    def _file_events(self, call: dict) -> list[dict]:
        tool = call["tool"]
        if call["is_error"] or not call.get("paths"):
            return []
        if tool in FILE_TOOLS:
            op = FILE_TOOLS[tool][2]
        elif tool in SEARCH_TOOLS:
            op = "read"
        else:
            return []
        at = call.get("ended_at") or call["started_at"]
        return [
            {
                "session_id": call["session_id"],
                "call_id": call["call_id"],
                "ts": at,
                "path": p,
                "op": op,
                "how": tool,
                "tier": "verified",
                "source_path": self.path,
                "line": call["line"],
            }
            for p in call["paths"]
        ]
