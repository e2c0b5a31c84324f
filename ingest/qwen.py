"""Qwen Code chats (``~/.qwen/projects/<sanitized cwd>/chats/<sessionId>.jsonl``) -> frames.

One chat file is one session, ``qwen-code:<sessionId>`` (more-harness-formats.md section 3).
Qwen Code is a fork of Gemini CLI whose chats are JSON Lines of ``ChatRecord``s
``{uuid, parentUuid, sessionId, timestamp, type, subtype?, cwd, version, gitBranch?,
message{role, parts[]}, model?, usageMetadata?, toolCallResult?, systemPayload?}``: Claude Code's
envelope (``uuid``/``parentUuid``/``sessionId``) around Gemini's content (``parts``). Detection
therefore looks at the content: a record of these types with Gemini ``parts``, a ``systemPayload``,
``usageMetadata`` or a ``tool_result`` type is Qwen's, never Claude's
(``claude_code.decoding.gemini_shaped`` is the same test on Claude's side).

Decisions, from the format facts:
- **Tokens.** One usage row per ``assistant`` record with ``usageMetadata`` (Gemini API counts:
  ``promptTokenCount`` includes ``cachedContentTokenCount``; ``candidatesTokenCount`` leaves out
  ``thoughtsTokenCount``), so ``input_tokens = prompt - cached``, ``cache_read_tokens = cached``,
  ``output_tokens = candidates + thoughts``, ``reasoning_tokens = thoughts``. The ``system``
  ``ui_telemetry`` records (``qwen-code.api_response``) count the same API calls again: they are
  never usage (counting both would double the spend).
- **Calls.** ``functionCall`` parts of an assistant record; the ``tool_result`` record whose
  ``functionResponse`` (or ``toolCallResult.callId``) names the call ends it, and its
  ``toolCallResult.status`` other than ``success`` makes it an error. ``read_file``/``read_many_files``
  read, ``write_file`` writes, ``edit`` edits, ``run_shell_command`` is a shell call, ``task`` a spawn
  (``subagent_type``, a hash of its ``prompt``).
- **Lineage.** A ``system`` record of subtype ``parent_session`` (``systemPayload.parentSessionId``)
  makes the chat a ``subagent`` of that session (its own file, linked up by the child); one of
  subtype ``session_source`` with ``sourceType: "fork"`` records the chat it was forked from
  (``forked_from_id``).
- **Tree.** ``uuid``/``parentUuid`` give the steps' ``parent_seq``.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime

from sessiongraph.ingest.claude_code.decoding import gemini_shaped
from sessiongraph.ingest.frames import Frames, call_file_events
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_dict,
    as_int,
    as_str,
    file_size,
    find_uuids,
    head_records,
    json_type,
    parse_ts,
    read_records,
    spawn_fields,
    text_hash,
)
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "qwen-code"

RECORD_TYPES = frozenset({"user", "assistant", "tool_result", "system"})
SPAWN_TOOLS = frozenset({"task"})
SHELL_TOOLS = frozenset({"run_shell_command"})
# tool -> (call kind, file op)
FILE_TOOLS: dict[str, tuple[str, str]] = {
    "read_file": ("read", "read"),
    "read_many_files": ("read", "read"),
    "write_file": ("write", "write"),
    "edit": ("edit", "write"),
}
FILE_ARGS = ("file_path", "absolute_path", "path")
MANY_ARGS = ("paths",)
MAX_OUTPUT_IDS = 20
_HEAD_RECORDS = 8  # a chat's first records say what it is


def qwen_shaped(rec: dict) -> bool:
    """A ChatRecord in Qwen's (Gemini's) content shape: what no Claude record carries."""
    return rec.get("type") in RECORD_TYPES and isinstance(rec.get("sessionId"), str) and gemini_shaped(rec)


def detect(path: str, head: bytes) -> bool:
    """A Qwen chat: one of its first records is a ChatRecord in Qwen's shape."""
    try:
        for rec in head_records(head, _HEAD_RECORDS):
            if not isinstance(rec, dict) or "uuid" not in rec:
                return False
            if qwen_shaped(rec):
                return True
        return False
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def parse(path: str) -> Frames:
    """Parse one chat; bad input becomes diagnostics rows, never an exception."""
    return _Chat(path).run()


def _parts(rec: dict) -> list[dict]:
    parts = as_dict(rec.get("message")).get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _response_text(fr: dict) -> str:
    resp = fr.get("response")
    if isinstance(resp, dict):
        return "\n".join(v for k in ("output", "error") if isinstance(v := resp.get(k), str))
    return resp if isinstance(resp, str) else ""


class _Chat:
    def __init__(self, path: str) -> None:
        self.path = path
        self.d = Diagnostics(path, NAME)

    def run(self) -> Frames:
        records = list(read_records(self.path, self.d))
        ids = Counter(as_str(r.get("sessionId")) for _, r in records if as_str(r.get("sessionId")))
        if not ids:
            if records:
                self.d.add("no_session", None, "no sessionId on any record")
            return Frames.from_rows(diagnostics=self.d.rows)
        native = ids.most_common(1)[0][0]
        sid = f"{NAME}:{native}"
        # First pass: results by call id (a call is placed and closed from its own record).
        results: dict[str, tuple[dict, dict, datetime | None, int]] = {}
        for n, rec in records:
            if rec.get("type") == "tool_result":
                tcr = as_dict(rec.get("toolCallResult"))
                for p in _parts(rec):
                    fr = as_dict(p.get("functionResponse"))
                    call_id = as_str(fr.get("id")) or as_str(tcr.get("callId"))
                    if call_id:
                        results[call_id] = (fr, tcr, parse_ts(rec.get("timestamp")), n)
        log = StepLog()
        models: Counter[str] = Counter()
        calls: list[dict] = []
        usage: list[dict] = []
        first_ts = last_ts = None
        prompt: str | None = None
        meta: dict[str, str | None] = {"cwd": None, "version": None, "gitBranch": None}
        parent = forked = None
        kept = 0
        for n, rec in records:
            rtype = rec.get("type")
            if not isinstance(rtype, str) or rtype not in RECORD_TYPES:
                detail = f"type={rtype[:40]}" if isinstance(rtype, str) else f"type: {json_type(rtype)}"
                self.d.add("unknown_record_type", n, detail)
                continue
            kept += 1
            raw_ts = rec.get("timestamp")
            ts = parse_ts(raw_ts)
            if ts is None:
                self.d.add("bad_timestamp", n, "timestamp missing" if raw_ts is None else "timestamp unparseable")
            else:
                first_ts = ts if first_ts is None or ts < first_ts else first_ts
                last_ts = ts if last_ts is None or ts > last_ts else last_ts
            for key in meta:
                meta[key] = meta[key] or as_str(rec.get(key))
            node, up = as_str(rec.get("uuid")), as_str(rec.get("parentUuid"))
            if rtype == "system":
                payload = as_dict(rec.get("systemPayload"))
                subtype = rec.get("subtype")
                if subtype == "parent_session":
                    parent = parent or as_str(payload.get("parentSessionId"))
                elif subtype == "session_source" and payload.get("sourceType") == "fork":
                    forked = forked or as_str(payload.get("sourceId"))
                log.link(node, up)  # bookkeeping (telemetry, lineage): no step
            elif rtype == "user":
                text = "\n".join(p["text"] for p in _parts(rec) if isinstance(p.get("text"), str))
                if text:
                    prompt = text if prompt is None else prompt
                    log.add(0, n, ts, "user", "prompt", text, node=node, parent=up)
                else:
                    log.link(node, up)
            elif rtype == "assistant":
                model = as_str(rec.get("model"))
                if model:
                    models[model] += 1
                first = self._assistant(log, rec, n, ts, model, node, up, calls, results, sid)
                row = self._usage(rec, n, ts, model, sid)
                if row is not None:
                    usage.append(row)
                    log.tokens(first, row)
            else:  # tool_result
                tcr = as_dict(rec.get("toolCallResult"))
                added = False
                for p in _parts(rec):
                    response = p.get("functionResponse")
                    if isinstance(response, dict):
                        call_id = as_str(response.get("id")) or as_str(tcr.get("callId"))
                        status = tcr.get("status")
                        log.add(
                            0,
                            n,
                            ts,
                            "tool",
                            "tool_result",
                            _response_text(response),
                            call_id=call_id,
                            tool=as_str(response.get("name")),
                            is_error=(status != "success") if isinstance(status, str) else None,
                            node=node,
                            parent=up,
                        )
                        added = True
                if not added:
                    log.link(node, up)
        called = {c["call_id"] for c in calls}
        for call_id in results:
            if call_id not in called:
                self.d.add("unmatched_result", results[call_id][3], "functionResponse names no call of this chat")
        events = [e for c in calls for e in self._events(c)]
        session = {
            "session_id": sid,
            "harness": NAME,
            "native_id": native,
            "session_kind": "subagent" if parent else "main",
            "parent_native_id": parent,
            "forked_from_id": forked,
            "layout": "chat",
            "harness_version": meta["version"],
            "source_path": self.path,
            "source_bytes": file_size(self.path),
            "cwd": normalise(meta["cwd"], None) if meta["cwd"] else None,
            "git_branch": meta["gitBranch"],
            "started_at": first_ts,
            "ended_at": last_ts,
            "model": models.most_common(1)[0][0] if models else None,
            "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
            "n_records": kept,
        }
        return log.frames(
            sid, self.path, sessions=[session], calls=calls, file_events=events, usage=usage, diagnostics=self.d.rows
        )

    def _assistant(self, log, rec, n, ts, model, node, up, calls, results, sid) -> int | None:
        """An assistant record's thoughts, text and function calls; returns its first step's index."""
        idx: list[int | None] = []
        cwd = as_str(rec.get("cwd"))
        for p in _parts(rec):
            fc = p.get("functionCall")
            if isinstance(fc, dict):
                tool = as_str(fc.get("name")) or ""
                call_id = as_str(fc.get("id")) or f"line{n}:{tool}"
                idx.append(
                    log.add(0, n, ts, "assistant", "tool_call", json_content(fc.get("args")), call_id=call_id,
                            tool=tool, model=model, node=node, parent=up)
                )  # fmt: skip
                calls.append(self._call(fc, tool, call_id, n, ts, cwd, results, sid))
            elif isinstance(p.get("text"), str):
                kind = "thinking" if p.get("thought") is True else "text"
                idx.append(log.add(0, n, ts, "assistant", kind, p["text"], model=model, node=node, parent=up))
        if not idx:
            log.link(node, up)
        return next((i for i in idx if i is not None), None)

    def _call(self, fc: dict, tool: str, call_id: str, n: int, ts, cwd, results, sid: str) -> dict:
        args = fc.get("args")
        if not isinstance(args, dict):
            if args is not None:
                self.d.add("bad_arguments", n, f"{tool}: args are a JSON {json_type(args)}")
            args = {}
        fr, tcr, ended, _ = results.get(call_id, ({}, {}, None, 0))
        status = tcr.get("status")
        output = _response_text(fr)
        row: dict = {
            "session_id": sid,
            "call_id": call_id,
            "tool": tool,
            "kind": "other",
            "started_at": ts,
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
            named += [p for k in MANY_ARGS if isinstance(args.get(k), list) for p in args[k] if isinstance(p, str)]
            row["paths"] = list(dict.fromkeys(p for p in (normalise(x, cwd) for x in named) if p))
        elif tool in SHELL_TOOLS:
            row["kind"] = "shell"
            row["command"] = as_str(args.get("command"))
            folder = as_str(args.get("directory"))
            if folder:
                row["cwd"] = normalise(folder, cwd) or cwd
            row["run_in_background"] = args.get("is_background") is True
            ids = list(dict.fromkeys(u.lower() for u in find_uuids(output, bounded=True)))
            row["output_ids"] = ids[:MAX_OUTPUT_IDS]
        elif tool in SPAWN_TOOLS:
            row["kind"] = "spawn"
            row.update(spawn_fields(args))
        return row

    def _events(self, row: dict) -> list[dict]:
        if row["tool"] not in FILE_TOOLS or row["is_error"]:
            return []
        return call_file_events(row, FILE_TOOLS[row["tool"]][1], self.path, row["ended_at"] or row["started_at"])

    def _usage(self, rec: dict, n: int, ts, model, sid: str) -> dict | None:
        meta = rec.get("usageMetadata")
        if meta is None:
            return None
        if not isinstance(meta, dict):
            self.d.add("wrong_type", n, f"usageMetadata: {json_type(meta)}")
            return None
        cached = as_int(meta.get("cachedContentTokenCount"))
        thoughts = as_int(meta.get("thoughtsTokenCount"))
        prompt = as_int(meta.get("promptTokenCount")) + as_int(meta.get("toolUsePromptTokenCount"))
        return {
            "session_id": sid,
            "ts": ts,
            "model": model,
            "message_id": as_str(rec.get("uuid")) or f"line{n}",
            "input_tokens": max(0, prompt - cached),
            "output_tokens": as_int(meta.get("candidatesTokenCount")) + thoughts,
            "cache_read_tokens": cached,
            "cache_creation_tokens": 0,
            "cache_creation_5m_tokens": 0,
            "cache_creation_1h_tokens": 0,
            "reasoning_tokens": thoughts,
            "source_path": self.path,
            "line": n,
        }
