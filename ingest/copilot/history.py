"""Copilot CLI legacy history objects (``history-session-state/*.json``) -> frames."""

from __future__ import annotations

import os
import re

import orjson

from sessiongraph.ingest.copilot.calls import call_row, close, finish_calls
from sessiongraph.ingest.copilot.events import NAME
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import (
    Diagnostics,
    as_dict,
    as_str,
    file_size,
    json_arguments,
    json_type,
    parse_ts,
    read_document,
    text_hash,
)
from sessiongraph.ingest.steps import StepLog, json_content

MAX_HISTORY_BYTES = 256 * 1024 * 1024


class History:
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
                    close(call, None, None, text or "")
            else:
                self.d.add("unknown_record_type", None, f"chatMessages[{i}] role: {json_type(role)}")
        rows = list(calls.values())
        events = finish_calls(rows, sid, None, self.path)
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
        return log.frames(sid, self.path, sessions=[session], calls=rows, file_events=events, diagnostics=self.d.rows)

    def _call(self, log: StepLog, tc: dict, i: int, calls: dict) -> None:
        fn = as_dict(tc.get("function"))
        tool = as_str(fn.get("name")) or ""
        call_id = as_str(tc.get("id")) or f"message{i}:{tool}"
        raw = fn.get("arguments")
        args = json_arguments(raw, self.d, None, tool)
        log.add(0, None, None, "assistant", "tool_call", raw if isinstance(raw, str) else json_content(raw),
                call_id=call_id, tool=tool)  # fmt: skip
        calls[call_id] = call_row(self.path, call_id, tool, args, None, None, self.d)  # type: ignore[arg-type]
