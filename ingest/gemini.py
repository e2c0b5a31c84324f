"""Gemini CLI chats (``~/.gemini/tmp/<projectHash>/chats/session-*.json`` and ``.jsonl``) -> frames.

One chat file is one session, ``gemini-cli:<sessionId>`` (harness-log-formats.md section 6).

Two storage forms parse here:
- the JSON document ``{sessionId, projectHash, startTime, lastUpdated, messages: [...]}``;
- the JSON Lines chat of newer builds: a header line ``{sessionId, projectHash, startTime,
  lastUpdated, kind}``, message lines ``{id, timestamp, type, ...}`` and ``{"$set": {...}}`` lines.
  A message line whose ``id`` was seen before rewrites that message in place (a streamed answer is
  logged again when it completes: the last version wins, so its tokens count once). ``$set`` sets
  header fields; a ``$set`` of ``messages`` upserts those messages by id (the history snapshot a
  resume writes), so a message present before and in the snapshot is still counted once and one
  the snapshot leaves out is not dropped (its tokens were spent).

Decisions, from the format facts:
- **Working directory.** A chat names only ``projectHash`` = sha256 of the project root. The
  adapter collects candidate folders (every ancestor of an absolute path the chat names, in tool
  arguments or in the paths file tools report back, and the folder of the ``<session_context>``
  "Workspace Directories" a JSONL chat starts with) and takes the one whose sha256 is the
  ``projectHash``. Without such a match it takes the session context's workspace, else the folder
  a ``write_file``/``replace`` result reveals (the result names the absolute path of a relative
  ``file_path``). With no cwd known, relative paths cannot be placed: they are left out of
  ``paths`` and ``file_events`` (absolute paths are kept as they are).
- **Tokens.** One usage row per ``gemini`` message with ``tokens``. Gemini's ``input`` includes
  ``cached``; ``tool`` (tool-use prompt tokens) is more input; ``thoughts`` are generated reasoning
  that ``output`` does not include (``total = input + output + thoughts + tool``). So
  ``input_tokens = input - cached + tool``, ``cache_read_tokens = cached``,
  ``output_tokens = output + thoughts``, ``reasoning_tokens = thoughts``. No cache writes.
- **Calls.** ``read_file``/``read_many_files`` are reads, ``write_file`` a write, ``replace`` an
  edit, ``run_shell_command`` a shell call (exit code from ``Exit Code: N`` in its output, session
  ids printed in the output become ``output_ids``), ``delegate_to_agent`` a spawn: its
  ``agent_name`` is the ``subagent_type``, the name in the result text ("Subagent '<name>'
  finished") the ``result_agent_id``, the ``objective`` hash the ``prompt_hash``. No child
  transcript is written, so the spawn pass reports the call as a dangling spawn. Everything else
  (``list_directory``, ``search_file_content``, ``glob``, ``write_todos``, web tools, MCP tools) is
  ``other``; the folder a search or listing names goes to ``paths`` but is not a file read. A call
  starts at the time in its id (``<tool>-<epoch ms>-<random>``) and ends at its ``timestamp``; a
  status other than ``success`` is an error and touches no file.
- **Sub-agents.** A sub-agent's chat is written under the chat folder of the session that ran it,
  ``chats/<parent sessionId>/<sessionId>.jsonl``, with ``"kind": "subagent"`` in its header: a
  ``subagent`` session whose ``parent_native_id`` is that folder. The parent's call that ran it is
  named after the agent (``save_memory``, ``codebase_investigator`` ...) or is a
  ``delegate_to_agent``; its result text says ``Subagent '<name>' finished`` (or ``failed``), which
  makes any such call a spawn. A chat under ``chats/skill-extraction-<id>/`` is a background
  helper the CLI ran for session ``<id>`` (``session_kind`` ``helper``): spend, not a spawn.
- **logs.json** (``~/.gemini/tmp/<projectHash>/logs.json``) is the prompt history of the project's
  chats, which the chats themselves hold: it is claimed so it is not reported, and parses to empty
  frames.
"""

from __future__ import annotations

import hashlib
import os
import posixpath
import re
from collections import Counter
from datetime import UTC, datetime

import orjson

from sessiongraph.ingest.frames import Frames
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
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "gemini-cli"

# MessageRecord types (gemini-cli chatRecordingService; "warning" in newer builds).
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
SPAWN_TOOLS = frozenset({"delegate_to_agent"})
SHELL_TOOLS = frozenset({"run_shell_command"})
# tool -> (call kind, file op); the argument naming the file is one of FILE_ARGS.
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "read_file": ("read", "read"),
    "read_many_files": ("read", "read"),
    "write_file": ("write", "write"),
    "replace": ("edit", "write"),
}
FILE_ARGS = ("file_path", "absolute_path", "path")
MANY_ARGS = ("paths", "file_paths")
# Tools that name a folder they search or list (a locator, not a file read).
SEARCH_TOOLS = frozenset({"list_directory", "search_file_content", "grep_search", "glob"})
DIR_ARGS = ("dir_path", "path", "directory")
MAX_OUTPUT_IDS = 20
MAX_BYTES = 128 * 1024 * 1024  # a chat is one JSON document, parsed whole (about 4x its size in memory)

_CALL_MS = re.compile(r"-(\d{13})-[0-9A-Za-z]+$")
_EXIT = re.compile(r"^Exit Code:\s*(-?\d+)", re.M)
_SUBAGENT = re.compile(r"Subagent '([^'\s]+)'")
_SUBAGENT_DONE = re.compile(r"^Subagent '([^'\s]+)' (?:finished|failed)")
HELPER_FOLDER = "skill-extraction-"
_ABS_PATH = re.compile(r"(?<![\w.])(/[^\s\"'`()<>]+)")
_WORKSPACE = re.compile(r"Workspace Directories:[^\n]*\n\s*-\s*([^\n]+)")
_GLOB = re.compile(r"[*?\[]")
_PROMPT_LOG_KEYS = ("sessionId", "messageId", "type", "message", "timestamp")


def detect(path: str, head: bytes) -> bool:
    """A Gemini chat (JSON document or JSONL header line) or a project's prompt log."""
    try:
        return _detect(head)
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def _detect(head: bytes) -> bool:
    text = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if text.startswith(b"["):
        return _is_prompt_log(text)
    if not text.startswith(b"{"):
        return False
    first, newline, _ = text.partition(b"\n")
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        obj = None
    if obj is None:  # a pretty-printed chat document, maybe cut off by the head
        try:
            obj = orjson.loads(text)
        except orjson.JSONDecodeError:
            opening = text[:2048]
            return all(k in opening for k in (b'"sessionId"', b'"projectHash"', b'"startTime"'))
    return isinstance(obj, dict) and _is_header(obj)


def _is_header(obj: dict) -> bool:
    """A chat header: a session id and chat fields, none of a message's or another log's keys."""
    if not isinstance(obj.get("sessionId"), str) or "type" in obj or "$set" in obj:
        return False
    return "projectHash" in obj or ("startTime" in obj and ("messages" in obj or "kind" in obj))


def _is_prompt_log(text: bytes) -> bool:
    try:
        items = orjson.loads(text)
    except orjson.JSONDecodeError:
        end = text.find(b"}")  # the head may cut the array: look at its first object
        try:
            items = [orjson.loads(text[1 : end + 1])] if end > 0 else []
        except orjson.JSONDecodeError:
            return False
    return (
        isinstance(items, list)
        and bool(items)
        and isinstance(items[0], dict)
        and all(k in items[0] for k in _PROMPT_LOG_KEYS)
    )


def parse(path: str) -> Frames:
    """Parse one chat; bad input becomes diagnostics rows, never an exception."""
    return _Chat(path).run()


def _ms(value: object) -> datetime | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _texts(content: object) -> str | None:
    """Message text: a string, or the joined ``text`` of parts ``[{text}, ...]``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
        return "\n".join(texts) if texts else None
    return None


def _responses(parts: object) -> list[tuple[str | None, str]]:
    """(id, text) of each ``functionResponse`` in a list of parts."""
    out: list[tuple[str | None, str]] = []
    if not isinstance(parts, list):
        return out
    for part in parts:
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        if not isinstance(fr, dict):
            continue
        resp = fr.get("response")
        text = ""
        if isinstance(resp, dict):
            text = "\n".join(v for k in ("output", "error") if isinstance(v := resp.get(k), str))
        elif isinstance(resp, str):
            text = resp
        out.append((as_str(fr.get("id")), text))
    return out


class _Chat:
    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)
        self.header: dict = {}
        self.messages: dict[str, tuple[dict, int | None, str]] = {}  # id -> (message, line, where)
        self.layout = "chat"
        self.n_lines = 0

    # -- reading -----------------------------------------------------------------------------

    def run(self) -> Frames:
        text = read_document(self.path, self.d, MAX_BYTES)
        if text is None:
            return Frames.from_rows(diagnostics=self.d.rows)
        if text.startswith(b"[") and not self.path.endswith(".jsonl"):
            if _is_prompt_log(text):
                return Frames.empty()  # prompt history: the chats hold the same prompts
            self.d.add("not_object", None, "top level is a JSON array")
            return Frames.from_rows(diagnostics=self.d.rows)
        first = text.partition(b"\n")[0]
        try:
            orjson.loads(first)
            jsonl = True
        except orjson.JSONDecodeError:
            jsonl = self.path.endswith(".jsonl")  # a .jsonl file is read line by line, whatever it holds
        self.layout = "chat-jsonl" if self.path.endswith(".jsonl") else "chat"
        if jsonl:  # JSON Lines, or a whole chat document on one line
            for n, rec in read_records(self.path, self.d):
                self.n_lines += 1
                self._line(n, rec)
        else:
            self._document(text)
        native = as_str(self.header.get("sessionId"))
        if native is None:
            if self.messages or self.n_lines:
                self.d.add("no_session", None, "no sessionId in the chat header")
            return Frames.from_rows(diagnostics=self.d.rows)
        return self._frames(native)

    def _document(self, raw: bytes) -> None:
        try:
            doc = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self.d.add("invalid_json", None, f"chat document of {len(raw)} bytes does not parse")
            return
        if not isinstance(doc, dict):
            self.d.add("not_object", None, f"top level is a JSON {json_type(doc)}")
            return
        self._set(doc, None, "chat")

    def _line(self, n: int, rec: dict) -> None:
        if "$set" in rec:
            patch = rec["$set"]
            if isinstance(patch, dict):
                self._set(patch, n, "$set")
            else:
                self.d.add("wrong_type", n, f"$set: {json_type(patch)}")
        elif "$rewindTo" in rec:
            pass  # a rewind hides later messages from the chat; their tokens were spent: kept
        elif "type" in rec:
            self._message(rec, n, f"line {n}")
        elif "sessionId" in rec or "messages" in rec:  # the header (or a whole one-line chat)
            self._set(rec, n, "header")
        else:
            self.d.add("unknown_record_type", n, "no type, $set or sessionId")

    def _set(self, fields: dict, n: int | None, where: str) -> None:
        for key, value in fields.items():
            if key != "messages":
                if key not in self.header or key in ("lastUpdated", "summary"):
                    self.header[key] = value
                continue
            if not isinstance(value, list):
                self.d.add("wrong_type", n, f"{where}.messages: {json_type(value)}")
                continue
            for i, msg in enumerate(value):
                if isinstance(msg, dict):
                    self._message(msg, n, f"{where}.messages[{i}]")
                else:
                    self.d.add("not_object", n, f"{where}.messages[{i}]: {json_type(msg)}")

    def _message(self, msg: dict, n: int | None, where: str) -> None:
        key = as_str(msg.get("id")) or where
        self.messages[key] = (msg, n, where)  # a rewrite keeps the first one's place

    # -- building frames ---------------------------------------------------------------------

    def _frames(self, native: str) -> Frames:
        sid = f"{NAME}:{native}"
        models: Counter[str] = Counter()
        first_ts = last_ts = None
        prompt: str | None = None
        workspace: str | None = None
        raw_calls: list[tuple[dict, dict, datetime | None, int | None]] = []
        answers: dict[str, str] = {}  # call id -> functionResponse text from user messages
        usage: dict[str, dict] = {}
        kept = 0
        for key, (msg, n, where) in self.messages.items():
            mtype = msg.get("type")
            if not isinstance(mtype, str) or mtype not in MESSAGE_TYPES:
                detail = f"type={mtype[:40]}" if isinstance(mtype, str) else f"type: {json_type(mtype)}"
                self.d.add("unknown_record_type", n, f"{where}: {detail}")
                continue
            kept += 1
            raw_ts = msg.get("timestamp")
            ts = parse_ts(raw_ts)
            if ts is None:
                self.d.add(
                    "bad_timestamp",
                    n,
                    f"{where}: timestamp missing"
                    if raw_ts is None
                    else f"{where}: timestamp unparseable {json_type(raw_ts)}",
                )
            else:
                first_ts = ts if first_ts is None or ts < first_ts else first_ts
                last_ts = ts if last_ts is None or ts > last_ts else last_ts
            if mtype == "user":
                content = msg.get("content")
                for call_id, answer in _responses(content):
                    if call_id:
                        answers[call_id] = answer
                text = _texts(content)
                if text is not None and text.lstrip().startswith("<session_context>"):
                    m = _WORKSPACE.search(text)
                    workspace = workspace or (m.group(1).strip() if m else None)
                elif text and prompt is None:
                    prompt = text
            elif mtype == "gemini":
                model = as_str(msg.get("model"))
                if model:
                    models[model] += 1
                calls = msg.get("toolCalls")
                if calls is not None and not isinstance(calls, list):
                    self.d.add("wrong_type", n, f"{where}.toolCalls: {json_type(calls)}")
                    calls = []
                for call in calls or []:
                    if isinstance(call, dict):
                        raw_calls.append((call, msg, ts, n))
                    else:
                        self.d.add("wrong_type", n, f"{where}.toolCalls[]: {json_type(call)}")
                self._usage(usage, key, msg, ts, model, n, where)
        cwd = self._cwd(raw_calls, workspace)
        calls, events = [], []
        for call, _msg, ts, n in raw_calls:
            row = self._call(call, ts, n, cwd, answers)
            row["session_id"] = sid
            calls.append(row)
            events += self._events(row, sid)
        called = {c["call_id"] for c in calls}
        for call_id in answers:
            if call_id not in called:
                self.d.add("unmatched_result", None, "functionResponse names no call of this chat")
        for row in usage.values():
            row["session_id"] = sid
        steps, texts = self._steps(usage, answers).finish(sid, self.path)
        h = self.header
        started = parse_ts(h.get("startTime"))
        if started is None and "startTime" in h:
            self.d.add("bad_timestamp", None, f"startTime: unparseable {json_type(h.get('startTime'))}")
        updated = parse_ts(h.get("lastUpdated"))
        ends = [t for t in (updated, last_ts) if t is not None]
        kind, parent = self._kind()
        session = {
            "session_id": sid,
            "harness": NAME,
            "native_id": native,
            "session_kind": kind,
            "parent_native_id": parent,
            "layout": self.layout,
            "source_path": self.path,
            "source_bytes": file_size(self.path),
            "cwd": cwd,
            "started_at": started or first_ts,
            "ended_at": max(ends) if ends else None,
            "model": models.most_common(1)[0][0] if models else None,
            "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
            "n_records": kept,
        }
        return Frames.from_rows(
            sessions=[session],
            calls=calls,
            file_events=events,
            usage=list(usage.values()),
            diagnostics=self.d.rows,
            steps=steps,
            texts=texts,
        )

    def _kind(self) -> tuple[str, str | None]:
        """(session_kind, parent sessionId) from the header's ``kind`` and the chat's folder."""
        folder = os.path.basename(os.path.dirname(self.path))
        if folder.startswith(HELPER_FOLDER):
            return "helper", folder[len(HELPER_FOLDER) :] or None
        if self.header.get("kind") == "subagent":
            # chats/<parent sessionId>/<sessionId>.jsonl; a renamed folder names no parent
            return "subagent", folder if folder != "chats" else None
        return "main", None

    def _steps(self, usage: dict[str, dict], answers: dict[str, str]) -> StepLog:
        """The chat's steps, message by message (a rewritten message in its first place, as last
        written). A tool's answer follows its call, whether the call or a later user message
        carries it."""
        log = StepLog()
        for key, (msg, n, _where) in self.messages.items():
            mtype = msg.get("type")
            ts = parse_ts(msg.get("timestamp"))
            if mtype == "user":
                text = _texts(msg.get("content"))
                if text is not None:  # functionResponse-only messages are answers, placed below
                    kind = "context" if text.lstrip().startswith("<session_context>") else "prompt"
                    log.add(0, n, ts, "system" if kind == "context" else "user", kind, text)
            elif mtype in ("info", "error", "warning"):
                log.add(0, n, ts, "system", "context", _texts(msg.get("content")))
            elif mtype == "gemini":
                first = self._model_steps(log, msg, n, ts, answers)
                if key in usage:
                    log.tokens(first, usage[key])
        return log

    def _model_steps(self, log: StepLog, msg: dict, n, ts, answers: dict[str, str]) -> int | None:
        """A gemini message's thoughts, text and tool calls (each with its answer); returns the
        index of its first step."""
        model = as_str(msg.get("model"))
        idx = []
        thoughts = msg.get("thoughts")
        for t in thoughts if isinstance(thoughts, list) else []:
            if isinstance(t, dict):
                text = "\n".join(v for k in ("subject", "description") if isinstance(v := t.get(k), str))
                idx.append(
                    log.add(0, n, parse_ts(t.get("timestamp")) or ts, "assistant", "thinking", text, model=model)
                )
        content = _texts(msg.get("content"))
        if content:
            idx.append(log.add(0, n, ts, "assistant", "text", content, model=model))
        calls = msg.get("toolCalls")
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            tool = as_str(call.get("name"))
            call_id = as_str(call.get("id")) or f"line{n}:{tool or ''}"
            idx.append(
                log.add(
                    0,
                    n,
                    ts,
                    "assistant",
                    "tool_call",
                    json_content(call.get("args")),
                    call_id=call_id,
                    tool=tool,
                    model=model,
                )
            )
            results = [t for _, t in _responses(call.get("result"))]
            output = "\n".join(results) if results else answers.get(call_id)
            status = call.get("status")
            error = (status != "success") if isinstance(status, str) else None
            ended = parse_ts(call.get("timestamp")) or ts
            log.add(0, n, ended, "tool", "tool_result", output, call_id=call_id, tool=tool, is_error=error)
        return next((i for i in idx if i is not None), None)

    def _usage(self, usage: dict, key: str, msg: dict, ts, model, n, where: str) -> None:
        tokens = msg.get("tokens")
        if tokens is None:
            return
        if not isinstance(tokens, dict):
            self.d.add("wrong_type", n, f"{where}.tokens: {json_type(tokens)}")
            return
        cached = as_int(tokens.get("cached"))
        thoughts = as_int(tokens.get("thoughts"))
        usage[key] = {
            "ts": ts,
            "model": model,
            "message_id": key,
            "input_tokens": as_int(max(0, as_int(tokens.get("input")) - cached) + as_int(tokens.get("tool"))),
            "output_tokens": as_int(as_int(tokens.get("output")) + thoughts),
            "cache_read_tokens": cached,
            "cache_creation_tokens": 0,
            "cache_creation_5m_tokens": 0,
            "cache_creation_1h_tokens": 0,
            "reasoning_tokens": thoughts,
            "source_path": self.path,
            "line": n,
        }

    def _cwd(self, raw_calls: list, workspace: str | None) -> str | None:
        """The project root: the named folder whose sha256 is the projectHash, else the session
        context's workspace, else the folder a file tool's result reveals."""
        project_hash = as_str(self.header.get("projectHash"))
        candidates: list[str] = []
        revealed: str | None = None
        for call, *_ in raw_calls:
            args = as_dict(call.get("args"))
            named = [v for k in (*FILE_ARGS, *DIR_ARGS) if isinstance(v := args.get(k), str)]
            named += [v for k in MANY_ARGS if isinstance(args.get(k), list) for v in args[k] if isinstance(v, str)]
            outputs = [text for _, text in _responses(call.get("result"))]
            found = [m.rstrip(".,:;") for text in outputs for m in _ABS_PATH.findall(text)]
            for p in named + found:
                if p.startswith("/"):
                    candidates.append(posixpath.normpath(p))
            rel = args.get("file_path")
            if (
                revealed is None
                and call.get("name") in ("write_file", "replace")
                and isinstance(rel, str)
                and rel
                and not rel.startswith("/")
            ):
                suffix = "/" + posixpath.normpath(rel)
                for p in found:
                    if posixpath.normpath(p).endswith(suffix):
                        revealed = posixpath.normpath(p)[: -len(suffix)] or "/"
                        break
        if workspace and workspace.startswith("/"):
            candidates.append(posixpath.normpath(workspace))
        if revealed:
            candidates.append(revealed)
        if project_hash:
            seen: set[str] = set()
            for p in candidates:
                while p not in seen:
                    seen.add(p)
                    if hashlib.sha256(p.encode("utf-8", "replace")).hexdigest() == project_hash:
                        return p
                    if p == "/":
                        break
                    p = posixpath.dirname(p)
        if workspace and workspace.startswith("/"):
            return posixpath.normpath(workspace)
        return revealed

    def _call(self, call: dict, ts, n, cwd: str | None, answers: dict[str, str]) -> dict:
        tool = as_str(call.get("name")) or ""
        call_id = as_str(call.get("id")) or f"line{n}:{tool}"
        args = call.get("args")
        if not isinstance(args, dict):
            if args is not None:
                self.d.add("bad_arguments", n, f"{tool}: args are a JSON {json_type(args)}")
            args = {}
        ended = parse_ts(call.get("timestamp"))
        m = _CALL_MS.search(call_id)
        started = _ms(int(m.group(1))) if m else None
        if started is None or (ended is not None and started > ended):
            started = ts or ended
        status = call.get("status")
        texts = [text for _, text in _responses(call.get("result"))]
        if not texts and call_id in answers:
            texts = [answers[call_id]]
        output = "\n".join(texts)
        row = {
            "call_id": call_id,
            "tool": tool,
            "kind": "other",
            "started_at": started,
            "ended_at": ended,
            "cwd": cwd,
            "paths": [],
            "output_ids": [],
            "is_error": (status != "success") if isinstance(status, str) else None,
            "source_path": self.path,
            "line": n,
        }
        if tool in FILE_TOOLS:
            row["kind"] = FILE_TOOLS[tool][0]
            named = [args[k] for k in FILE_ARGS if isinstance(args.get(k), str)][:1]
            for k in MANY_ARGS:
                if isinstance(args.get(k), list):
                    named += [p for p in args[k] if isinstance(p, str) and not _GLOB.search(p)]
            row["paths"] = _placed(named, cwd)
        elif tool in SEARCH_TOOLS:
            row["paths"] = _placed([args[k] for k in DIR_ARGS if isinstance(args.get(k), str)][:1], cwd)
        elif tool in SHELL_TOOLS:
            row["kind"] = "shell"
            row["command"] = as_str(args.get("command"))
            if row["command"] is None and "command" in args:
                self.d.add("wrong_type", n, f"{tool}.command: {json_type(args.get('command'))}")
            folder = as_str(args.get("dir_path")) or as_str(args.get("directory"))
            if folder:
                row["cwd"] = normalise(folder, cwd) or cwd
            row["run_in_background"] = args.get("is_background") is True
            code = _EXIT.search(output)
            if code and abs(int(code.group(1))) < 2**31:
                row["exit_code"] = int(code.group(1))
                row["is_error"] = row["exit_code"] != 0 or bool(row["is_error"])
            ids = list(dict.fromkeys(u.lower() for u in find_uuids(output, bounded=True)))
            row["output_ids"] = ids[:MAX_OUTPUT_IDS]
        elif tool in SPAWN_TOOLS or _SUBAGENT_DONE.match(output):
            row["kind"] = "spawn"
            row["subagent_type"] = as_str(args.get("agent_name"))
            objective = as_str(args.get("objective"))
            if objective is not None:
                row["prompt_hash"] = text_hash(objective)
            said = _SUBAGENT.search(output)
            row["result_agent_id"] = said.group(1) if said else None
            row["subagent_type"] = row["subagent_type"] or row["result_agent_id"]
        return row

    def _events(self, row: dict, sid: str) -> list[dict]:
        if row["tool"] not in FILE_TOOLS or row["is_error"]:
            return []
        op = FILE_TOOLS[row["tool"]][1]
        at = row["ended_at"] or row["started_at"]
        return [
            {
                "session_id": sid,
                "call_id": row["call_id"],
                "ts": at,
                "path": p,
                "op": op,
                "how": row["tool"],
                "tier": "verified",
                "source_path": self.path,
                "line": row["line"],
            }
            for p in row["paths"]
        ]


def _placed(paths: list[str], cwd: str | None) -> list[str]:
    out = []
    for p in paths:
        placed = normalise(p, cwd)
        if placed and placed not in out:
            out.append(placed)
    return out
