"""pi session files (``~/.pi/agent/sessions/--<cwd>--/<ts>_<uuid>.jsonl``) -> frames.

Formats (harness-log-formats.md section 3; pi-mono ``packages/coding-agent/docs/session.md``):
- v1 (2025): a header ``{type: session, id, timestamp, cwd, provider, modelId, thinkingLevel,
  branchedFrom?}`` then linear entries without ``id``/``parentId``;
- v2/v3: a header ``{type: session, version, id, timestamp, cwd, parentSession?}`` then tree entries
  (``id``/``parentId``; branching in place leaves every entry in the file). v3 renamed the message
  role ``hookMessage`` to ``custom``.

One file is one session, ``pi:<header id>``. Mapping:
- calls: each ``toolCall`` block of an assistant message, paired with the ``role: toolResult``
  message carrying its ``toolCallId``. ``bash`` is a shell call; ``read``/``write``/``edit`` name one
  file (``arguments.path``); ``grep``/``find``/``ls`` read the path they name. A user ``!cmd``
  (``role: bashExecution``) is a shell call too, with tool name ``bashExecution`` and the entry id
  (v1: ``line<n>``) as call id. A bash result ending ``Command exited with code N`` (pi appends it
  when a command fails) gives the exit code; a result without error is exit 0. Session ids printed
  into a shell result (``codex exec`` prints ``session id: <uuid>``) become ``output_ids``.
- file events: one per path of a file call whose result came back without error (verified).
- usage: one row per assistant message carrying ``usage``: ``input`` is uncached input,
  ``cacheRead`` cached input, ``cacheWrite`` the 5-minute bucket (pi does not log the 1-hour one),
  ``output`` all generated tokens; ``cost`` stays out (prices are ours to apply). ``message_id`` is
  the entry id (v1: ``line:<n>``).
- forks: the header's ``parentSession`` (v2+) or ``branchedFrom`` (v1) is the file of the session
  this one was forked from; the id in its name (``<ts>_<id>.jsonl``) is ``forked_from_id``. A fork
  file starts with copies of the parent's entries up to the fork point (same ids and timestamps), so
  in a fork the entries older than the header are the parent's: they are left out of the frames (one
  ``foreign_record`` row counts them) and their tokens and calls are not counted twice.
- model: the label most assistant messages carry, else the last ``model_change``/header model.

:class:`Transcript` reads any pi-family file; ``ingest.omp`` extends it for oh-my-pi.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import orjson

from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_int,
    as_str,
    file_size,
    find_uuids,
    json_type,
    parse_ts,
    read_records,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.pi_family import head_records, is_header, is_omp
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "pi"

# Entry types of session format v1-v3 (pi-mono docs/session.md @83378aad, spec 3.2).
ENTRY_TYPES = frozenset(
    {
        "message",
        "model_change",
        "thinking_level_change",
        "compaction",
        "branch_summary",
        "custom",
        "custom_message",
        "label",
        "session_info",
    }
)
# AgentMessage roles (spec 3.2); hookMessage is the v1/v2 name of v3's custom.
MESSAGE_ROLES = frozenset(
    {
        "user",
        "assistant",
        "toolResult",
        "bashExecution",
        "custom",
        "branchSummary",
        "compactionSummary",
        "hookMessage",
    }
)
SHELL_TOOLS = frozenset({"bash"})
# built-in tool -> (call kind, file op); all name their file in arguments.path (spec 3.2).
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "read": ("read", "read"),
    "write": ("write", "write"),
    "edit": ("edit", "write"),
}
# grep/find/ls (enabled with --tools) read the folder or file they name, when they name one.
SEARCH_TOOLS = frozenset({"grep", "find", "ls"})

SESSION_FILE = re.compile(r"(?:^|_)(?P<id>[^_/\\]+)\.jsonl$")  # <ts>_<id>.jsonl
EXIT_LINE = re.compile(r"Command exited with code (-?\d+)\s*$")
MAX_OUTPUT_IDS = 20
# Message roles -> (step role, kind) for messages that are neither the model's nor a tool's.
CONTEXT_ROLES: dict[str, tuple[str, str]] = {
    "custom": ("system", "context"),
    "hookMessage": ("system", "context"),
    "developer": ("system", "context"),  # oh-my-pi
    "fileMention": ("system", "context"),  # oh-my-pi
    "branchSummary": ("system", "context"),
    "compactionSummary": ("system", "compaction"),
}
# Entry types that put text in front of the model -> (step role, kind, field holding the text).
TEXT_ENTRIES: dict[str, tuple[str, str, str]] = {
    "compaction": ("system", "compaction", "summary"),
    "branch_summary": ("system", "context", "summary"),
    "custom_message": ("system", "context", "content"),
}
# Commands a person ran from the prompt (`!cmd`; oh-my-pi's `$code`): (input field, output field).
USER_RUNS: dict[str, tuple[str, str]] = {"bashExecution": ("command", "output"), "pythonExecution": ("code", "output")}


def detect(path: str, head: bytes) -> bool:
    """A pi session file: its first record is a ``session`` header; oh-my-pi files (which share
    the format) are left to ``ingest.omp``."""
    try:
        records = head_records(head)
        if not records or not is_header(records[0]):
            return False
        return not is_omp(path, head)
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def session_id_of(ref: str | None) -> str | None:
    """The session id a ``parentSession``/``branchedFrom`` names: the ``<id>`` of a
    ``<ts>_<id>.jsonl`` path, else the value itself (oh-my-pi may write a bare id)."""
    if not ref:
        return None
    base = re.split(r"[\\/]", ref)[-1]
    m = SESSION_FILE.search(base)
    return m.group("id") if m else base


def parse(path: str) -> Frames:
    """Parse one pi session file; bad input becomes diagnostics rows, never an exception."""
    return Transcript(path).run()


@dataclass(slots=True)
class Attempt:
    """One stretch of a transcript: the whole file for pi (oh-my-pi splits resumed agents)."""

    n: int
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    n_records: int = 0
    first_prompt: str | None = None
    models: Counter = field(default_factory=Counter)
    usage: list[dict] = field(default_factory=list)
    # (ts, call_id, line) of the last assistant message: when the attempt last spoke.
    last_reply: tuple | None = None

    def see(self, ts: datetime | None) -> None:
        self.n_records += 1
        if ts is not None:
            self.first_ts = ts if self.first_ts is None or ts < self.first_ts else self.first_ts
            self.last_ts = ts if self.last_ts is None or ts > self.last_ts else self.last_ts


class Transcript:
    """One pi-family session file, read top to bottom. Subclasses (oh-my-pi) widen the known
    entry types and roles and override the ``_classify``/``_result``/``_other_*`` hooks."""

    harness = NAME
    entry_types = ENTRY_TYPES
    roles = MESSAGE_ROLES

    def __init__(self, path: str) -> None:
        self.path = path
        self.diags = Diagnostics(path, self.harness)
        self.header: dict | None = None
        self.header_ts: datetime | None = None
        self.cwd: str | None = None
        self.attempts: list[Attempt] = [Attempt(1)]
        self.calls: list[dict] = []
        self.by_tool_call: dict[str, list[dict]] = {}  # toolCallId -> its call rows
        self.events: list[dict] = []  # file events that are not one call's paths
        self.model_hint: str | None = None
        self.fork_of: str | None = None  # parentSession / branchedFrom
        self.copies_are_forks = True  # subclasses turn it off where a header names no fork
        self.copies = 0
        self.first_copy: int | None = None
        self.steps = StepLog()

    @property
    def cur(self) -> Attempt:
        return self.attempts[-1]

    # -- reading -----------------------------------------------------------------------------

    def run(self) -> Frames:
        seen = 0
        for n, rec in read_records(self.path, self.diags):
            seen += 1
            self._record(n, rec)
        if self.header is None:
            if seen:
                self.diags.add("no_session", None, "no session header with an id")
            return Frames.from_rows(diagnostics=self.diags.rows)
        if self.copies:
            self.diags.add(
                "foreign_record",
                self.first_copy,
                f"{self.copies} entries copied from the parent session; not counted here",
            )
        return self._frames()

    def _record(self, n: int, rec: dict) -> None:
        kind = rec.get("type")
        if kind == "session" and self.header is None:
            self._header(n, rec)
            return
        if not isinstance(kind, str) or kind not in self.entry_types:
            if not self._extra_record(n, rec, kind):
                detail = f"type={kind[:60]}" if isinstance(kind, str) else f"type: {json_type(kind)}"
                self.diags.add("unknown_record_type", n, detail)
            return
        ts = self._ts(n, rec)
        if self._is_copy(ts):
            self.copies += 1
            self.first_copy = self.first_copy or n
            return
        self._boundary(rec, kind, ts)
        self.cur.see(ts)
        if kind == "message":
            self._message(n, rec, ts)
        elif kind == "model_change":
            self._model_change(rec)
        else:
            if kind in TEXT_ENTRIES:
                role, step, field = TEXT_ENTRIES[kind]
                self._step(n, rec, ts, role, step, message_text(rec.get(field)))
            self._other_entry(n, rec, kind, ts)
        # An entry that made no step still joins the tree (v2+ entries carry id/parentId).
        self.steps.link(as_str(rec.get("id")), as_str(rec.get("parentId")))

    def _step(self, n: int, rec: dict, ts, role: str, kind: str, text: str | bytes | None, **kw) -> int | None:
        return self.steps.add(
            0,
            n,
            ts,
            role,
            kind,
            text,
            attempt=self.attempt_number(self.cur),
            node=as_str(rec.get("id")),
            parent=as_str(rec.get("parentId")),
            **kw,
        )

    def _header(self, n: int, rec: dict) -> None:
        if not isinstance(rec.get("id"), str):
            self.diags.add("wrong_type", n, f"session.id: {json_type(rec.get('id'))}")
            return
        self.header = rec
        self.header_ts = self._ts(n, rec)
        self.cur.see(self.header_ts)
        self.cwd = as_str(rec.get("cwd"))
        self.model_hint = as_str(rec.get("modelId"))
        for key in ("parentSession", "branchedFrom"):
            value = rec.get(key)
            if value is not None and not isinstance(value, str):
                self.diags.add("wrong_type", n, f"session.{key}: {json_type(value)}")
            elif value:
                self.fork_of = self.fork_of or value

    def _ts(self, n: int, rec: dict) -> datetime | None:
        raw = rec.get("timestamp")
        ts = parse_ts(raw)
        if ts is None:
            self.diags.add(
                "bad_timestamp", n, "timestamp missing" if raw is None else f"timestamp: unparseable {json_type(raw)}"
            )
            # A message also carries its own epoch-ms stamp: place the record by that.
            msg = rec.get("message")
            ms = msg.get("timestamp") if isinstance(msg, dict) else None
            if type(ms) is int and 0 < ms < 10**14:
                ts = datetime.fromtimestamp(ms / 1000, UTC)
        return ts

    def _is_copy(self, ts: datetime | None) -> bool:
        return (
            self.copies_are_forks
            and self.fork_of is not None
            and ts is not None
            and self.header_ts is not None
            and ts < self.header_ts
        )

    def _message(self, n: int, rec: dict, ts: datetime | None) -> None:
        msg = rec.get("message")
        if not isinstance(msg, dict):
            self.diags.add("wrong_type", n, f"message: {json_type(msg)}")
            return
        role = msg.get("role")
        if not isinstance(role, str) or role not in self.roles:
            detail = f"message.role={role[:60]}" if isinstance(role, str) else f"message.role: {json_type(role)}"
            self.diags.add("unknown_record_type", n, detail)
            return
        if role == "user":
            content = msg.get("content")
            self._step(n, rec, ts, "user", "prompt", message_text(content))
            if not isinstance(content, str | list):
                self.diags.add("wrong_type", n, f"message.content: {json_type(content)}")
            elif self.cur.first_prompt is None:
                self.cur.first_prompt = message_text(content)
        elif role == "assistant":
            self._assistant(n, rec, msg, ts)
        elif role == "toolResult":
            call_id = as_str(msg.get("toolCallId"))
            tool = as_str(msg.get("toolName"))
            text = message_text(msg.get("content"))
            error = msg.get("isError") is True
            self._step(n, rec, ts, "tool", "tool_result", text, call_id=call_id, tool=tool, is_error=error)
            rows = self.by_tool_call.get(call_id or "")
            if rows is None:
                self.diags.add("unmatched_result", n, "toolResult names no toolCall of this file")
            else:
                self._result(rows, msg, ts, n)
        else:
            if role in USER_RUNS:  # a person's `!cmd`: the call and what came back
                inp, out = USER_RUNS[role]
                run_id = as_str(rec.get("id")) or f"line{n}"
                self._step(n, rec, ts, "user", "tool_call", as_str(msg.get(inp)), call_id=run_id, tool=role)
                code = msg.get("exitCode")
                error = msg.get("cancelled") is True or (type(code) is int and code != 0)
                text = as_str(msg.get(out))
                self._step(n, rec, ts, "tool", "tool_result", text, call_id=run_id, tool=role, is_error=error)
            elif role in CONTEXT_ROLES:
                step_role, kind = CONTEXT_ROLES[role]
                self._step(n, rec, ts, step_role, kind, message_text(msg.get("content")) or as_str(msg.get("summary")))
            if role == "bashExecution":
                self._bash_execution(n, rec, msg, ts)
            else:
                self._other_message(n, rec, msg, role, ts)

    def _assistant(self, n: int, rec: dict, msg: dict, ts: datetime | None) -> None:
        model = as_str(msg.get("model"))
        if model:
            self.cur.models[model] += 1
        self.cur.last_reply = (ts, f"line{n}", n)
        content = msg.get("content")
        request = as_str(msg.get("responseId"))
        first = None
        if isinstance(content, str):
            first = self._step(n, rec, ts, "assistant", "text", content, model=model, request_id=request)
        elif isinstance(content, list):
            for i, block in enumerate(content):
                if not isinstance(block, dict):
                    continue
                btype, step = block.get("type"), None
                if btype == "toolCall":
                    self._tool_call(n, ts, block, i)
                    call_id, tool = as_str(block.get("id")) or f"line{n}:{i}", as_str(block.get("name"))
                    step = self._step(
                        n,
                        rec,
                        ts,
                        "assistant",
                        "tool_call",
                        json_content(block.get("arguments")),
                        call_id=call_id,
                        tool=tool,
                        model=model,
                        request_id=request,
                    )
                elif btype in ("text", "thinking"):
                    kind = "text" if btype == "text" else "thinking"
                    text = as_str(block.get(btype))
                    step = self._step(n, rec, ts, "assistant", kind, text, model=model, request_id=request)
                first = first if first is not None else step
        elif content is not None:
            self.diags.add("wrong_type", n, f"message.content: {json_type(content)}")
        usage = msg.get("usage")
        if usage is None:
            return
        if not isinstance(usage, dict):
            self.diags.add("wrong_type", n, f"message.usage: {json_type(usage)}")
            return
        written = as_int(usage.get("cacheWrite"))
        self.cur.usage.append(
            {
                "ts": ts,
                "model": model,
                "message_id": as_str(rec.get("id")) or f"line:{n}",
                "request_id": as_str(msg.get("responseId")),
                "input_tokens": as_int(usage.get("input")),
                "output_tokens": as_int(usage.get("output")),
                "cache_read_tokens": as_int(usage.get("cacheRead")),
                "cache_creation_tokens": written,
                "cache_creation_5m_tokens": written,
                "cache_creation_1h_tokens": 0,
                "reasoning_tokens": as_int(usage.get("reasoningTokens")),
                "source_path": self.path,
                "line": n,
            }
        )
        self.steps.tokens(first, self.cur.usage[-1])

    def _tool_call(self, n: int, ts: datetime | None, block: dict, i: int) -> None:
        call_id = as_str(block.get("id")) or f"line{n}:{i}"
        tool = as_str(block.get("name")) or ""
        args = self._arguments(n, tool, block.get("arguments"))
        row: dict[str, Any] = {
            "call_id": call_id,
            "tool": tool,
            "kind": "other",
            "started_at": ts,
            "cwd": self.cwd,
            "paths": [],
            "output_ids": [],
            "source_path": self.path,
            "line": n,
        }
        rows = self._classify(row, tool, args)
        self.calls.extend(rows)
        self.by_tool_call[call_id] = rows

    def _arguments(self, n: int, tool: str, value: object) -> dict:
        if isinstance(value, dict):
            return value
        if isinstance(value, str):  # some providers hand arguments over as JSON text
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                self.diags.add("bad_arguments", n, f"{tool[:60]}: arguments are not JSON ({len(value)} chars)")
                return {}
            if isinstance(parsed, dict):
                return parsed
            value = parsed
        if value is not None:
            self.diags.add("bad_arguments", n, f"{tool[:60]}: arguments are a JSON {json_type(value)}")
        return {}

    def _classify(self, row: dict, tool: str, args: dict) -> list[dict]:
        """Kind, command and paths of one call; a subclass may split a call into several rows."""
        if tool in SHELL_TOOLS:
            row.update(kind="shell", command=as_str(args.get("command")))
        elif tool in FILE_TOOLS:
            row.update(kind=FILE_TOOLS[tool][0], paths=self._paths(args.get("path")))
        elif tool in SEARCH_TOOLS:
            row["paths"] = self._paths(args.get("path"))
        return [row]

    def _paths(self, value: object) -> list[str]:
        p = normalise(value, self.cwd) if isinstance(value, str) else None
        return [p] if p else []

    def _result(self, rows: list[dict], msg: dict, ts: datetime | None, n: int) -> None:
        text = message_text(msg.get("content")) or ""
        for row in rows:
            row["ended_at"] = ts
            row["is_error"] = msg.get("isError") is True
            if row["kind"] == "shell":
                m = EXIT_LINE.search(text[-200:])
                details = msg.get("details")
                code = details.get("exitCode") if isinstance(details, dict) else None
                if type(code) is int:
                    row["exit_code"] = code
                elif m:
                    row["exit_code"] = int(m.group(1))
                elif not row["is_error"]:
                    row["exit_code"] = 0
                row["output_ids"] = _uuids(text)

    def _bash_execution(self, n: int, rec: dict, msg: dict, ts: datetime | None) -> None:
        code = msg.get("exitCode")
        code = code if type(code) is int else None
        output = msg.get("output")
        self.calls.append(
            {
                "call_id": as_str(rec.get("id")) or f"line{n}",
                "tool": "bashExecution",
                "kind": "shell",
                "started_at": ts,
                "ended_at": ts,
                "cwd": self.cwd,
                "command": as_str(msg.get("command")),
                "paths": [],
                "output_ids": _uuids(output) if isinstance(output, str) else [],
                "exit_code": code,
                "is_error": msg.get("cancelled") is True or (code is not None and code != 0),
                "source_path": self.path,
                "line": n,
            }
        )

    def _model_change(self, rec: dict) -> None:
        self.model_hint = as_str(rec.get("modelId")) or self.model_hint

    # Hooks a subclass overrides; pi itself has nothing more to read in these.
    def _extra_record(self, n: int, rec: dict, kind: object) -> bool:
        return False

    def _boundary(self, rec: dict, kind: str, ts: datetime | None) -> None:
        return None

    def _other_entry(self, n: int, rec: dict, kind: str, ts: datetime | None) -> None:
        return None

    def _other_message(self, n: int, rec: dict, msg: dict, role: str, ts: datetime | None) -> None:
        return None

    # -- building frames ---------------------------------------------------------------------

    def identity(self) -> dict:
        """The session's id and lineage columns (the same for every attempt)."""
        assert self.header is not None  # run() stops before the frames without a header
        native = self.header["id"]
        return {
            "session_id": f"{self.harness}:{native}",
            "native_id": native,
            "session_kind": "main",
            "layout": "main",
            "forked_from_id": session_id_of(self.fork_of),
        }

    def attempt_number(self, a: Attempt) -> int | None:
        return None  # a pi file is one try

    def extra_events(self) -> list[dict]:
        return []

    def _frames(self) -> Frames:
        ident = self.identity()
        sid = ident["session_id"]
        size = file_size(self.path)
        sessions, usage = [], []
        for a in self.attempts:
            model = a.models.most_common(1)[0][0] if a.models else self.model_hint
            sessions.append(
                {
                    **ident,
                    "attempt": self.attempt_number(a),
                    "harness": self.harness,
                    "source_path": self.path,
                    "source_bytes": size,
                    "cwd": self.cwd,
                    "started_at": a.first_ts,
                    "ended_at": a.last_ts,
                    "model": model,
                    "first_prompt_hash": text_hash(a.first_prompt) if a.first_prompt is not None else None,
                    "n_records": a.n_records,
                    "n_copied": self.copies if a.n == 1 else 0,  # the copies precede the first attempt
                }
            )
            usage += [{**u, "session_id": sid, "attempt": self.attempt_number(a)} for u in a.usage]
        for row in self.calls:
            row["session_id"] = sid
        events = [e for row in self.calls for e in self._call_events(row)] + self.extra_events()
        for e in events:
            e.update(session_id=sid, source_path=self.path)
        steps, texts = self.steps.finish(sid, self.path)
        return Frames.from_rows(
            sessions=sessions,
            calls=self.calls,
            file_events=events,
            usage=usage,
            diagnostics=self.diags.rows,
            steps=steps,
            texts=texts,
        )

    def _call_events(self, row: dict) -> list[dict]:
        if row.get("ended_at") is None or row.get("is_error") or not row["paths"]:
            return []  # no result, or a failed one: nothing says the file was touched
        if row["kind"] in ("write", "edit"):
            op = "write"
        elif row["kind"] == "read" or row["tool"] in SEARCH_TOOLS:
            op = "read"
        else:
            return []
        return [
            {
                "call_id": row["call_id"],
                "ts": row["ended_at"],
                "path": p,
                "op": op,
                "how": row["tool"],
                "tier": "verified",
                "line": row["line"],
            }
            for p in row["paths"]
        ]


def message_text(content: object) -> str | None:
    """A message's text: a string, or its ``text`` blocks joined (images and the rest skipped)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [b["text"] for b in content if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(texts) if texts else None
    return None


def _uuids(text: str) -> list[str]:
    return list(dict.fromkeys(u.lower() for u in find_uuids(text, bounded=True)))[:MAX_OUTPUT_IDS]
