"""opencode sessions -> frames: the JSON storage tree and the SQLite ``opencode.db``.

Two sources (harness-log-formats.md section 5):
- **JSON storage** (through v1.1.x), ``$XDG_DATA_HOME/opencode/storage/``. The unit is one
  ``session/<projectID>/<sessionID>.json``: parsing it reads the object files that make up that
  session, ``message/<sessionID>/*.json`` and each message's ``part/<messageID>/*.json``. Every row
  (diagnostics too) carries the session file as ``source_path``, so a changed session replaces
  all of its rows. ``message``, ``part`` and ``project`` files are never claimed on their own.
  opencode keeps the legacy tree when it migrates it into ``opencode.db``: a session file whose
  session is also in the ``opencode.db`` beside ``storage/`` parses to empty frames (the database
  is the source), so a migrated session is not counted twice.
- **SQLite** (v1.2.x), ``opencode.db``, opened read-only: tables ``session`` (``parent_id``),
  ``message`` and ``part`` (each row's object in a ``data`` JSON column), read with the columns
  ``sqlite_master``/``PRAGMA table_info`` show; an expected column that is missing is a
  ``bad_document`` diagnostic. One file gives every session it holds.

Mapping:
- session ``opencode:<id>``; ``directory`` is the cwd; a ``parentID``/``parent_id`` (set on the
  sessions the ``task`` tool creates) is ``parent_native_id`` with ``session_kind`` ``subagent``,
  whose ``agent_type`` is the session's ``agent`` (SQLite) or its first message's ``agent``/``mode``.
- tool parts are calls: ``bash`` shell (``metadata.exit`` is the exit code), ``read`` read,
  ``write`` write, ``edit``/``multiedit`` edit (``input.filePath``), ``patch``/``apply_patch`` patch
  (files from the ``*** Add/Update/Delete File:`` lines of ``patchText``), ``task`` spawn:
  ``subagent_type``, ``description``, the prompt's hash, and the child session its
  ``metadata.sessionId`` (or its output's ``task_id``) names as ``result_agent_id``. ``list``,
  ``glob`` and ``grep`` name a folder (``paths``, no file read); other tools are ``other``. A part
  whose status is ``error`` is an error and touches no file.
- tokens: one usage row per assistant message, from ``message.tokens``. opencode stores ``input``
  without the cache (it subtracts cache reads itself) and prices ``reasoning`` as a bucket of its
  own beside ``output``, so ``output_tokens = output + reasoning`` and ``reasoning_tokens =
  reasoning``; ``cache.read`` is ``cache_read_tokens``; ``cache.write`` is the cache-creation total,
  counted as 5-minute writes (the providers' default TTL; opencode does not split it).
"""

from __future__ import annotations

import os
import re
import sqlite3
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.request import pathname2url

import orjson

from sessiongraph.ingest import apply_patch
from sessiongraph.ingest.files import open_regular, read_bounded
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import Diagnostics, as_dict, as_int, as_str, find_uuids, json_type, text_hash
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog, json_content

NAME = "opencode"
SQLITE_MAGIC = b"SQLite format 3\x00"
SPAWN_TOOLS = frozenset({"task"})
TOOL_KINDS = {
    "bash": "shell",
    "read": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "patch": "patch",
    "apply_patch": "patch",
    "task": "spawn",
}
FILE_OPS = {"read": "read", "write": "write", "edit": "write", "multiedit": "write"}
SEARCH_TOOLS = frozenset({"list", "glob", "grep"})
# Columns this adapter reads; the first of each table is required.
DB_COLUMNS = {
    "session": ("id", "parent_id", "directory", "version", "time_created", "time_updated"),
    "message": ("id", "session_id", "data", "time_created"),
    "part": ("id", "message_id", "data"),
}
MAX_OUTPUT_IDS = 20
MAX_OBJECT_BYTES = 64 * 1024 * 1024

_TASK_ID = re.compile(r"(?:task_id:\s*|<task id=\")(ses_[A-Za-z0-9]+)")


def detect(path: str, head: bytes) -> bool:
    """An ``opencode.db`` (its session/message/part tables) or a storage-tree session file."""
    try:
        if head.startswith(SQLITE_MAGIC):
            return _db_tables(path) >= {"session", "message", "part"}
        return _is_session_file(path, head)
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def _is_session_file(path: str, head: bytes) -> bool:
    if "session" not in path:  # cheap: most files are not in a session/ folder (Path costs more)
        return False
    p = Path(path)
    if p.suffix != ".json" or len(p.parts) < 3 or p.parent.parent.name != "session":
        return False
    try:
        obj = orjson.loads(head)
    except orjson.JSONDecodeError:
        return False
    return (
        isinstance(obj, dict)
        and obj.get("id") == p.stem
        and p.stem.startswith("ses")
        and "projectID" in obj
        and isinstance(obj.get("time"), dict)
    )


def _connect(path: str) -> sqlite3.Connection:
    con = sqlite3.connect(f"file:{pathname2url(os.path.abspath(path))}?mode=ro", uri=True)
    con.execute("PRAGMA query_only = ON")
    return con


def _db_tables(path: str) -> set[str]:
    con = _connect(path)
    try:
        return {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    finally:
        con.close()


def parse(path: str) -> Frames:
    """Parse one session file of the storage tree, or a whole ``opencode.db``."""
    try:
        with open_regular(path) as fh:
            magic = fh.read(len(SQLITE_MAGIC))
    except OSError as exc:
        d = Diagnostics(path, NAME)
        d.add("unreadable_file", None, type(exc).__name__)
        return Frames.from_rows(diagnostics=d.rows)
    if magic == SQLITE_MAGIC:
        return _Db(path).run()
    return _Tree(path).run()


def _ms(value: object) -> datetime | None:
    """opencode times are Unix milliseconds."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _time(obj: dict, key: str) -> datetime | None:
    t = obj.get("time")
    return _ms(t.get(key)) if isinstance(t, dict) else None


class _Builder:
    """Turns opencode session/message/part objects into frame rows (shared by both sources)."""

    def __init__(self, path: str, layout: str) -> None:
        self.path = path
        self.layout = layout
        self.d = Diagnostics(path, NAME)
        self.sessions: list[dict] = []
        self.calls: list[dict] = []
        self.events: list[dict] = []
        self.usage: list[dict] = []
        self.steps = StepLog()

    def session(self, info: dict, messages: list[dict], parts: dict[str, list[dict]], size: int | None) -> None:
        native = info["id"]
        sid = f"{NAME}:{native}"
        cwd = as_str(info.get("directory"))
        messages = sorted(
            messages, key=lambda m: (_time(m, "created") or datetime.max.replace(tzinfo=UTC), str(m.get("id")))
        )
        models: Counter[str] = Counter()
        prompt: str | None = None
        agent = as_str(info.get("agent"))
        times = [t for t in (_time(info, "created"), _time(info, "updated")) if t is not None]
        for msg in messages:
            mid = str(msg.get("id"))
            role = msg.get("role")
            times += [t for t in (_time(msg, "created"), _time(msg, "completed")) if t is not None]
            agent = agent or as_str(msg.get("agent")) or as_str(msg.get("mode"))
            msg_parts = sorted(parts.get(mid, []), key=lambda p: str(p.get("id")))
            if role == "user":
                if prompt is None:
                    texts = [
                        p["text"]
                        for p in msg_parts
                        if p.get("type") == "text" and isinstance(p.get("text"), str) and not p.get("synthetic")
                    ]
                    prompt = "\n".join(texts) if texts else None
            elif role == "assistant":
                model = as_str(msg.get("modelID"))
                if model:
                    models[model] += 1
                self._usage(sid, msg, model)
            else:
                self.d.add("unknown_record_type", None, f"message {mid[:60]}: role {str(role)[:20]}")
                continue
            first = self._steps(sid, msg, msg_parts)
            if role == "assistant" and self.usage and self.usage[-1]["message_id"] == mid:
                self.steps.tokens(first, self.usage[-1])
            msg_cwd = as_dict(msg.get("path")).get("cwd")
            for part in msg_parts:
                if part.get("type") == "tool":
                    self._call(sid, part, msg, as_str(msg_cwd) or cwd)
        parent = as_str(info.get("parentID"))
        self.sessions.append(
            {
                "session_id": sid,
                "harness": NAME,
                "native_id": native,
                "session_kind": "subagent" if parent else "main",
                "layout": self.layout,
                "harness_version": as_str(info.get("version")),
                "source_path": self.path,
                "source_bytes": size,
                "cwd": cwd,
                "started_at": _time(info, "created") or (min(times) if times else None),
                "ended_at": max(times) if times else None,
                "model": models.most_common(1)[0][0] if models else None,
                "parent_native_id": parent,
                "agent_type": agent if parent else None,
                "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
                "n_records": len(messages),
            }
        )

    def _steps(self, sid: str, msg: dict, parts: list[dict]) -> int | None:
        """One message's parts as steps; returns the index of its first."""
        user = msg.get("role") == "user"
        model = None if user else as_str(msg.get("modelID"))
        first = None
        for part in parts:
            ptype, ts = part.get("type"), _time(part, "start") or _time(msg, "created")
            idx = None
            if ptype == "text":
                text = as_str(part.get("text"))
                if part.get("synthetic"):  # the harness's own text (a file's contents, a reminder)
                    idx = self.steps.add(sid, None, ts, "system", "context", text)
                else:
                    idx = self.steps.add(
                        sid, None, ts, *(("user", "prompt") if user else ("assistant", "text")), text, model=model
                    )
            elif ptype == "reasoning":
                idx = self.steps.add(sid, None, ts, "assistant", "thinking", as_str(part.get("text")), model=model)
            elif ptype == "compaction":
                idx = self.steps.add(sid, None, ts, "system", "compaction", None)
            elif ptype == "tool":
                state = as_dict(part.get("state"))
                call_id, tool = as_str(part.get("callID")) or as_str(part.get("id")), as_str(part.get("tool"))
                started = _time(state, "start") or _time(msg, "created")
                idx = self.steps.add(
                    sid,
                    None,
                    started,
                    "assistant",
                    "tool_call",
                    json_content(state.get("input")),
                    call_id=call_id,
                    tool=tool,
                    model=model,
                )
                status = state.get("status")
                if status in ("completed", "error"):
                    out = as_str(state.get("output")) if status == "completed" else as_str(state.get("error"))
                    ended = _time(state, "end") or started
                    error = status == "error"
                    self.steps.add(
                        sid, None, ended, "tool", "tool_result", out, call_id=call_id, tool=tool, is_error=error
                    )
            first = first if first is not None else idx
        return first

    def _usage(self, sid: str, msg: dict, model: str | None) -> None:
        tokens = msg.get("tokens")
        if tokens is None:
            return
        if not isinstance(tokens, dict):
            self.d.add("wrong_type", None, f"message {str(msg.get('id'))[:60]}: tokens: {json_type(tokens)}")
            return
        cache = as_dict(tokens.get("cache"))
        reasoning = as_int(tokens.get("reasoning"))
        written = as_int(cache.get("write"))
        self.usage.append(
            {
                "session_id": sid,
                "ts": _time(msg, "completed") or _time(msg, "created"),
                "model": model,
                "message_id": str(msg.get("id")),
                "input_tokens": as_int(tokens.get("input")),
                "output_tokens": as_int(as_int(tokens.get("output")) + reasoning),
                "cache_read_tokens": as_int(cache.get("read")),
                "cache_creation_tokens": written,
                "cache_creation_5m_tokens": written,
                "cache_creation_1h_tokens": 0,
                "reasoning_tokens": reasoning,
                "source_path": self.path,
            }
        )

    def _call(self, sid: str, part: dict, msg: dict, cwd: str | None) -> None:
        tool = as_str(part.get("tool")) or ""
        where = f"part {str(part.get('id'))[:60]}"
        state = part.get("state")
        if not isinstance(state, dict):
            self.d.add("wrong_type", None, f"{where}: state: {json_type(state)}")
            state = {}
        inp = state.get("input")
        if not isinstance(inp, dict):
            if inp is not None:
                self.d.add("bad_arguments", None, f"{where}: {tool} input is a JSON {json_type(inp)}")
            inp = {}
        meta = as_dict(state.get("metadata"))
        status = state.get("status")
        output = as_str(state.get("output")) or ""
        row: dict[str, Any] = {
            "session_id": sid,
            "call_id": as_str(part.get("callID")) or as_str(part.get("id")),
            "tool": tool,
            "kind": TOOL_KINDS.get(tool, "other"),
            "started_at": _time(state, "start") or _time(msg, "created"),
            "ended_at": _time(state, "end"),
            "cwd": cwd,
            "paths": [],
            "output_ids": [],
            "is_error": status == "error" if isinstance(status, str) else None,
            "source_path": self.path,
        }
        ops: list[tuple[str, str]] = []
        if tool in FILE_OPS or tool in SEARCH_TOOLS:
            key = "filePath" if tool in FILE_OPS else "path"
            placed = normalise(inp[key], cwd) if isinstance(inp.get(key), str) else None
            row["paths"] = [placed] if placed else []
            if tool in FILE_OPS:
                ops = [(p, FILE_OPS[tool]) for p in row["paths"]]
        elif row["kind"] == "patch":
            text = inp.get("patchText")
            ops = apply_patch.file_ops(text if isinstance(text, str) else "", lambda path: normalise(path, cwd))
            row["paths"] = list(dict.fromkeys(p for p, _ in ops))
        elif tool == "bash":
            row["command"] = as_str(inp.get("command"))
            if isinstance(inp.get("workdir"), str):
                row["cwd"] = normalise(inp["workdir"], cwd) or cwd
            row["description"] = as_str(inp.get("description"))
            code = meta.get("exit")
            if type(code) is int and abs(code) < 2**31:
                row["exit_code"] = code
                row["is_error"] = bool(row["is_error"]) or code != 0
            texts = [output] + [v for v in (meta.get("output"), meta.get("stdout")) if isinstance(v, str)]
            ids = dict.fromkeys(u.lower() for t in texts for u in find_uuids(t, bounded=True))
            row["output_ids"] = list(ids)[:MAX_OUTPUT_IDS]
        elif tool in SPAWN_TOOLS:
            row["subagent_type"] = as_str(inp.get("subagent_type"))
            row["description"] = as_str(inp.get("description"))
            if isinstance(inp.get("prompt"), str):
                row["prompt_hash"] = text_hash(inp["prompt"])
            child = as_str(meta.get("sessionId")) or as_str(meta.get("sessionID"))
            if child is None:
                said = _TASK_ID.search(output)
                child = said.group(1) if said else None
            row["result_agent_id"] = child
        self.calls.append(row)
        if row["is_error"] or status != "completed":
            return
        at = row["ended_at"] or row["started_at"]
        for p, op in ops:
            self.events.append(
                {
                    "session_id": sid,
                    "call_id": row["call_id"],
                    "ts": at,
                    "path": p,
                    "op": op,
                    "how": tool,
                    "tier": "verified",
                    "source_path": self.path,
                }
            )

    def frames(self) -> Frames:
        steps, texts = self.steps.finish({s["session_id"]: s["session_id"] for s in self.sessions}, self.path)
        return Frames.from_rows(
            sessions=self.sessions,
            calls=self.calls,
            file_events=self.events,
            usage=self.usage,
            diagnostics=self.d.rows,
            steps=steps,
            texts=texts,
        )


class _Tree:
    """One ``storage/session/<projectID>/<sessionID>.json`` and the objects it owns."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.b = _Builder(path, "storage")
        self.storage = Path(path).parent.parent.parent

    def _load(self, file: Path, what: str) -> dict | None:
        rel = os.path.relpath(file, self.storage)
        try:
            raw = read_bounded(file, MAX_OBJECT_BYTES)  # st_size says 0 for a device: count the bytes
            if raw is None:
                self.b.d.add("unreadable_file", None, f"{rel}: larger than {MAX_OBJECT_BYTES} bytes")
                return None
        except OSError as exc:
            self.b.d.add("unreadable_file", None, f"{rel}: {type(exc).__name__}")
            return None
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError:
            code = "empty_file" if not raw.strip() else "invalid_json"
            self.b.d.add(code, None, f"{rel}: {what} object of {len(raw)} bytes does not parse")
            return None
        if not isinstance(obj, dict):
            self.b.d.add("not_object", None, f"{rel}: {what} is a JSON {json_type(obj)}")
            return None
        return obj

    def _migrated(self, sid: str) -> bool:
        """Whether the opencode.db beside storage/ holds this session (then it is read there)."""
        db = self.storage.parent / "opencode.db"
        if not db.is_file():
            return False
        try:
            con = _connect(str(db))
            try:
                return con.execute("SELECT 1 FROM session WHERE id = ?", (sid,)).fetchone() is not None
            finally:
                con.close()
        except sqlite3.Error:
            return False  # an unreadable database: the tree is all there is

    def _objects(self, folder: Path, what: str) -> list[dict]:
        if not folder.is_dir():
            return []
        out = []
        for file in sorted(folder.glob("*.json")):
            obj = self._load(file, what)
            if obj is not None:
                obj.setdefault("id", file.stem)
                out.append(obj)
        return out

    def run(self) -> Frames:
        info = self._load(Path(self.path), "session")
        if info is None:
            return self.b.frames()
        if not isinstance(info.get("id"), str):
            self.b.d.add("no_session", None, f"session id: {json_type(info.get('id'))}")
            return self.b.frames()
        if self._migrated(info["id"]):
            return Frames.empty()
        messages = self._objects(self.storage / "message" / info["id"], "message")
        parts: dict[str, list[dict]] = {}
        for msg in messages:
            mid = str(msg["id"])
            found = self._objects(self.storage / "part" / mid, "part")
            # Some builds nest parts under the session: part/<sessionID>/<messageID>/.
            found = found or self._objects(self.storage / "part" / info["id"] / mid, "part")
            parts[mid] = found
        try:
            size = os.path.getsize(self.path)
        except OSError:
            size = None
        self.b.session(info, messages, parts, size)
        return self.b.frames()


class _Db:
    """Every session of an ``opencode.db``."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.b = _Builder(path, "sqlite")

    def run(self) -> Frames:
        try:
            con = _connect(self.path)
        except sqlite3.Error as exc:
            self.b.d.add("unreadable_file", None, f"sqlite: {type(exc).__name__}")
            return self.b.frames()
        try:
            self._read(con)
        except sqlite3.Error as exc:
            self.b.d.add("unreadable_file", None, f"sqlite: {type(exc).__name__}: {str(exc)[:80]}")
        finally:
            con.close()
        return self.b.frames()

    def _columns(self, con: sqlite3.Connection) -> dict[str, list[str]] | None:
        tables = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        found: dict[str, list[str]] = {}
        ok = True
        for table, wanted in DB_COLUMNS.items():
            if table not in tables:
                self.b.d.add("bad_document", None, f"opencode.db: table {table} missing")
                ok = False
                continue
            have = {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}
            for col in wanted:
                if col not in have:
                    self.b.d.add("bad_document", None, f"opencode.db: column {table}.{col} missing")
            required = wanted[:1] + (("data",) if table != "session" else ())
            ok = ok and all(c in have for c in required)
            extra = [c for c in ("agent", "title", "project_id") if table == "session" and c in have]
            found[table] = [c for c in wanted if c in have] + extra
        return found if ok else None

    def _rows(self, con: sqlite3.Connection, table: str, cols: list[str], order: str) -> list[dict]:
        sql = f'SELECT {", ".join(chr(34) + c + chr(34) for c in cols)} FROM "{table}"'
        order_by = [c for c in order.split(",") if c in cols]
        if order_by:
            sql += " ORDER BY " + ", ".join(order_by)
        return [dict(zip(cols, r, strict=True)) for r in con.execute(sql)]

    def _data(self, row: dict, what: str) -> dict | None:
        raw = row.get("data")
        try:
            obj = orjson.loads(raw) if isinstance(raw, str | bytes) else raw
        except orjson.JSONDecodeError:
            obj = None
            self.b.d.add("invalid_json", None, f"{what} {str(row.get('id'))[:60]}: data does not parse")
            return None
        if not isinstance(obj, dict):
            self.b.d.add("not_object", None, f"{what} {str(row.get('id'))[:60]}: data is a JSON {json_type(obj)}")
            return None
        return obj

    def _read(self, con: sqlite3.Connection) -> None:
        cols = self._columns(con)
        if cols is None:
            return
        sessions = self._rows(con, "session", cols["session"], "time_created,id")
        by_session: dict[str, list[dict]] = {}
        for row in self._rows(con, "message", cols["message"], "session_id,time_created,id"):
            obj = self._data(row, "message")
            if obj is None:
                continue
            obj["id"] = row["id"]
            if not isinstance(obj.get("time"), dict) and row.get("time_created") is not None:
                obj["time"] = {"created": row["time_created"]}
            by_session.setdefault(str(row.get("session_id")), []).append(obj)
        parts: dict[str, list[dict]] = {}
        for row in self._rows(con, "part", cols["part"], "message_id,id"):
            obj = self._data(row, "part")
            if obj is not None:
                obj["id"] = row["id"]
                parts.setdefault(str(row["message_id"]), []).append(obj)
        known = set()
        size = os.path.getsize(self.path)
        for row in sessions:
            if not isinstance(row.get("id"), str):
                self.b.d.add("no_session", None, f"session row id: {json_type(row.get('id'))}")
                continue
            known.add(row["id"])
            info = {
                "id": row["id"],
                "parentID": row.get("parent_id"),
                "directory": row.get("directory"),
                "version": row.get("version"),
                "agent": row.get("agent"),
                "time": {"created": row.get("time_created"), "updated": row.get("time_updated")},
            }
            self.b.session(info, by_session.get(row["id"], []), parts, size)
        stray = sorted(set(by_session) - known)
        if stray:
            self.b.d.add("no_session", None, f"messages of {len(stray)} session id(s) with no session row")
