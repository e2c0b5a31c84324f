"""Crush stores (``.crush/crush.db``, SQLite in WAL mode) -> frames.

One ``crush.db`` holds every session of its project (more-harness-formats.md section 4): tables
``sessions`` (``parent_session_id``, per-session ``prompt_tokens``/``completion_tokens``/``cost``)
and ``messages`` (``role``, ``parts`` JSON, ``model``, times). Detection is by content: the SQLite
header, then the ``sessions`` and ``messages`` tables with Crush's columns.

Decisions, from the format facts:
- **Reading without the harness's lock.** Crush keeps recent writes in ``crush.db-wal``. The db
  (and its WAL, when there is one: a missing WAL is fine) is copied to a temporary folder and
  opened there, so the WAL is applied and the harness's own files are never locked or touched
  (``immutable=1`` on the original would skip the WAL's pages). A change to ``crush.db-wal``
  re-reads its db (:func:`log_of`).
- **Times** are Unix seconds, whatever the schema comments say (real stores hold 10-digit values);
  a value above 10^11 is taken as milliseconds.
- **Lineage.** A child session (the ``agent`` tool's run) has ``parent_session_id`` and the id
  ``<assistant message id>$$<tool call id>``: its parent's ``agent`` call gets that id as
  ``result_agent_id``, so the spawn pass ties them at the verified tier.
- **Dollars, not tokens.** Crush keeps per session only ``cost``, which it adds to at every step
  (its ``updateSessionUsage``), and ``prompt_tokens``/``completion_tokens``, which it *overwrites*
  at every step with that step's context (input + cache writes; output + cache reads) to decide
  when to summarize: not the session's spend, so they are not read as tokens. Each session gets
  one usage row of scope ``session``: its model, no token counts (null: nothing is invented, so
  we price nothing) and Crush's own dollars as ``reported_usd``. When an ``agent`` child finishes,
  Crush adds the child's cost to its parent's; the parent's row keeps its own part (its cost less
  its children's), so the figures of a run add up once. A ``no_token_counts`` diagnostic per
  session says the tokens are missing.
- **Calls.** ``tool_call`` parts (``id``, ``name``, ``input`` a JSON string) matched to
  ``tool_result`` parts (``tool_call_id``, ``content``, ``is_error``) of later tool messages.
  ``bash`` is shell, ``view`` reads, ``write`` writes, ``edit``/``multiedit`` edit (``file_path``),
  ``agent`` spawns; ``ls``/``glob``/``grep`` name a folder; the rest are ``other``.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
from datetime import UTC, datetime
from urllib.request import pathname2url

import orjson

from sessiongraph.ingest.frames import SESSION_SCOPE, Frames
from sessiongraph.ingest.jsonl import Diagnostics, as_dict, as_str, json_type, text_hash
from sessiongraph.ingest.paths import normalise
from sessiongraph.ingest.steps import StepLog

NAME = "crush"
SQLITE_MAGIC = b"SQLite format 3\x00"
WAL_SUFFIX = "-wal"
TOOL_KINDS = {
    "bash": "shell",
    "view": "read",
    "write": "write",
    "edit": "edit",
    "multiedit": "edit",
    "agent": "spawn",
}
FILE_OPS = {"view": "read", "write": "write", "edit": "write", "multiedit": "write"}
SEARCH_TOOLS = frozenset({"ls", "glob", "grep"})
SESSION_COLUMNS = frozenset({"id", "parent_session_id", "prompt_tokens", "completion_tokens", "cost"})
MESSAGE_COLUMNS = frozenset({"id", "session_id", "role", "parts", "created_at"})
CHILD_SEP = "$$"
_MS_ABOVE = 10**11


def _connect(path: str) -> sqlite3.Connection:
    con = sqlite3.connect(f"file:{pathname2url(os.path.abspath(path))}?mode=ro", uri=True)
    con.execute("PRAGMA query_only = ON")
    return con


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {r[1] for r in con.execute(f'PRAGMA table_info("{table}")')}


def _is_store(con: sqlite3.Connection) -> bool:
    return _columns(con, "sessions") >= SESSION_COLUMNS and _columns(con, "messages") >= MESSAGE_COLUMNS


def detect(path: str, head: bytes) -> bool:
    """A Crush store: an SQLite file whose sessions/messages tables have Crush's columns."""
    if not head.startswith(SQLITE_MAGIC):
        return False
    try:
        with _Copy(path) as copy:
            con = _connect(copy)
            try:
                return _is_store(con)
            finally:
                con.close()
    except Exception:  # noqa: BLE001 - detection must never break a scan
        return False


def log_of(side_path: str) -> str | None:
    """``crush.db-wal`` belongs to ``crush.db``: a WAL change re-reads its db."""
    if side_path.endswith(".db" + WAL_SUFFIX) and os.path.basename(side_path) == "crush.db-wal":
        db = side_path[: -len(WAL_SUFFIX)]
        return db if os.path.isfile(db) else None
    return None


class _Copy:
    """The db and its WAL copied to a temporary folder (removed on exit)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.dir: str | None = None

    def __enter__(self) -> str:
        self.dir = tempfile.mkdtemp(prefix="sessiongraph-crush-")
        target = os.path.join(self.dir, "crush.db")
        shutil.copyfile(self.path, target)
        try:
            shutil.copyfile(self.path + WAL_SUFFIX, target + WAL_SUFFIX)
        except FileNotFoundError:
            pass  # a checkpointed (or never-written) store has no WAL
        return target

    def __exit__(self, *exc: object) -> None:
        if self.dir is not None:
            shutil.rmtree(self.dir, ignore_errors=True)


def _time(value: object) -> datetime | None:
    if not isinstance(value, int | float) or isinstance(value, bool) or value <= 0:
        return None
    seconds = value / 1000 if value > _MS_ABOVE else value
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError, ValueError):
        return None


def _cwd(path: str) -> str | None:
    """The project folder: the parent of ``.crush/`` (``~/.crush`` is the home folder)."""
    folder = os.path.dirname(os.path.abspath(path))
    return normalise(os.path.dirname(folder), None) if os.path.basename(folder) == ".crush" else None


def parse(path: str) -> Frames:
    """Every session of one ``crush.db``; bad input becomes diagnostics rows."""
    d = Diagnostics(path, NAME)
    try:
        with _Copy(path) as copy:
            con = _connect(copy)
            try:
                if not _is_store(con):
                    d.add("bad_document", None, "crush.db: sessions/messages tables or columns missing")
                    return Frames.from_rows(diagnostics=d.rows)
                return _Reader(path, d).read(con)
            finally:
                con.close()
    except (OSError, sqlite3.Error) as exc:
        d.add("unreadable_file", None, f"sqlite: {type(exc).__name__}: {str(exc)[:80]}")
        return Frames.from_rows(diagnostics=d.rows)


class _Reader:
    def __init__(self, path: str, d: Diagnostics) -> None:
        self.path = path
        self.d = d
        self.cwd = _cwd(path)
        self.log = StepLog()
        self.sessions: list[dict] = []
        self.calls: list[dict] = []
        self.events: list[dict] = []
        self.usage: list[dict] = []
        self.costs: dict[str, float] = {}  # native id -> Crush's cost (its children's included)

    def read(self, con: sqlite3.Connection) -> Frames:
        s_cols = [
            c
            for c in ("id", "parent_session_id", "title", "cost", "created_at", "updated_at")
            if c in _columns(con, "sessions")
        ]
        m_have = _columns(con, "messages")
        m_cols = [c for c in ("id", "session_id", "role", "parts", "model", "created_at", "finished_at") if c in m_have]
        quoted = ", ".join(f'"{c}"' for c in m_cols)
        messages: dict[str, list[dict]] = {}
        for r in con.execute(f"SELECT {quoted} FROM messages ORDER BY session_id, created_at, rowid"):
            row = dict(zip(m_cols, r, strict=True))
            messages.setdefault(str(row["session_id"]), []).append(row)
        size = os.path.getsize(self.path)
        quoted = ", ".join(f'"{c}"' for c in s_cols)
        for r in con.execute(f"SELECT {quoted} FROM sessions ORDER BY created_at, id"):
            row = dict(zip(s_cols, r, strict=True))
            if not isinstance(row.get("id"), str):
                self.d.add("no_session", None, f"session row id: {json_type(row.get('id'))}")
                continue
            self._session(row, messages.get(row["id"], []), size)
        self._own_costs()
        return self.log.frames(
            {s["native_id"]: s["session_id"] for s in self.sessions},
            self.path,
            sessions=self.sessions,
            calls=self.calls,
            file_events=self.events,
            usage=self.usage,
            diagnostics=self.d.rows,
        )

    def _own_costs(self) -> None:
        """Each session row's own dollars: Crush's cost less its children's, which Crush added to
        it; a parent whose cost is below its children's has not had theirs added yet (a child
        still running or cut off) and keeps its figure as it is."""
        children: dict[str, float] = {}
        for s in self.sessions:
            parent = s["parent_native_id"]
            if parent is not None and s["native_id"] in self.costs:
                children[parent] = children.get(parent, 0.0) + self.costs[s["native_id"]]
        for u in self.usage:
            native = u.pop("_native")
            cost = self.costs.get(native)
            if cost is None:
                continue
            own = cost - children.get(native, 0.0)
            u["reported_usd"] = round(own if own >= 0 else cost, 9)

    def _session(self, row: dict, messages: list[dict], size: int) -> None:
        native = row["id"]
        sid = f"{NAME}:{native}"
        parent = as_str(row.get("parent_session_id")) or None
        self.d.add("no_token_counts", None, f"{native[:60]}: only the cost is recorded per session, not its tokens")
        cost = row.get("cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and cost >= 0:
            self.costs[native] = float(cost)
        elif cost is not None:
            self.d.add("wrong_type", None, f"{native[:60]}: cost is {type(cost).__name__}")
        prompt: str | None = None
        model: str | None = None
        open_calls: dict[str, dict] = {}
        for msg in messages:
            ts = _time(msg.get("created_at"))
            role = as_str(msg.get("role")) or ""
            model = model or as_str(msg.get("model"))
            parts = self._parts(msg)
            for part in parts:
                ptype, data = part.get("type"), as_dict(part.get("data"))
                if ptype == "text" and isinstance(data.get("text"), str):
                    if role == "user":
                        prompt = data["text"] if prompt is None else prompt
                        self.log.add(native, None, ts, "user", "prompt", data["text"])
                    else:
                        self.log.add(
                            native, None, ts, "assistant", "text", data["text"], model=as_str(msg.get("model"))
                        )
                elif ptype == "reasoning":
                    self.log.add(native, None, ts, "assistant", "thinking", as_str(data.get("thinking")))
                elif ptype == "tool_call":
                    call = self._call(sid, native, msg, data, ts)
                    if call is not None:
                        open_calls[call["call_id"]] = call
                elif ptype == "tool_result":
                    self._result(native, data, ts, open_calls)
                elif ptype not in ("finish", "image_url", "binary"):
                    self.d.add("unknown_record_type", None, f"part type={str(ptype)[:40]}")
        self.sessions.append(
            {
                "session_id": sid,
                "harness": NAME,
                "native_id": native,
                "session_kind": "subagent" if parent else "main",
                "parent_native_id": parent,
                "layout": "sqlite",
                "source_path": self.path,
                "source_bytes": size,
                "cwd": self.cwd,
                "model": model,
                "started_at": _time(row.get("created_at")),
                "ended_at": _time(row.get("updated_at")),
                "first_prompt_hash": text_hash(prompt) if prompt is not None else None,
                "n_records": len(messages),
            }
        )
        self.usage.append(
            {
                "session_id": sid,
                "ts": _time(row.get("updated_at")),
                "model": model,
                "message_id": f"session:{native}",
                "scope": SESSION_SCOPE,
                "source_path": self.path,
                "_native": native,
            }
        )

    def _parts(self, msg: dict) -> list[dict]:
        raw = msg.get("parts")
        try:
            parts = orjson.loads(raw) if isinstance(raw, str | bytes) else raw
        except orjson.JSONDecodeError:
            self.d.add("invalid_json", None, f"message {str(msg.get('id'))[:60]}: parts do not parse")
            return []
        if not isinstance(parts, list):
            self.d.add("wrong_type", None, f"message {str(msg.get('id'))[:60]}: parts is a JSON {json_type(parts)}")
            return []
        return [p for p in parts if isinstance(p, dict)]

    def _call(self, sid: str, native: str, msg: dict, data: dict, ts: datetime | None) -> dict | None:
        call_id, tool = as_str(data.get("id")), as_str(data.get("name")) or ""
        if not call_id:
            self.d.add("wrong_type", None, f"tool_call without id ({tool[:40]})")
            return None
        raw = data.get("input")
        self.log.add(
            native,
            None,
            ts,
            "assistant",
            "tool_call",
            raw if isinstance(raw, str) else None,
            call_id=call_id,
            tool=tool,
        )
        try:
            args = orjson.loads(raw) if isinstance(raw, str) and raw else {}
        except orjson.JSONDecodeError:
            args = {}
            self.d.add("bad_arguments", None, f"{tool[:40]}: input does not parse")
        args = as_dict(args)
        kind = TOOL_KINDS.get(tool, "other")
        row: dict = {
            "session_id": sid,
            "call_id": call_id,
            "tool": tool,
            "kind": kind,
            "started_at": ts,
            "paths": [],
            "output_ids": [],
            "source_path": self.path,
        }
        if tool in FILE_OPS or tool in SEARCH_TOOLS:
            named = as_str(args.get("file_path")) or as_str(args.get("path"))
            placed = normalise(named, self.cwd) if named else None
            row["paths"] = [placed] if placed else []
        if kind == "shell":
            row["command"] = as_str(args.get("command"))
            row["cwd"] = self.cwd
        elif kind == "spawn":
            prompt = as_str(args.get("prompt"))
            row["prompt_hash"] = text_hash(prompt) if prompt is not None else None
            # the child session's id is "<this message>$$<this call>"
            row["result_agent_id"] = f"{msg.get('id')}{CHILD_SEP}{call_id}"
        self.calls.append(row)
        return row

    def _result(self, native: str, data: dict, ts: datetime | None, open_calls: dict[str, dict]) -> None:
        call_id = as_str(data.get("tool_call_id"))
        call = open_calls.pop(call_id, None) if call_id else None
        is_error = data.get("is_error") if isinstance(data.get("is_error"), bool) else None
        self.log.add(
            native, None, ts, "tool", "tool_result", as_str(data.get("content")),
            call_id=call_id, tool=call["tool"] if call else None, is_error=is_error,
        )  # fmt: skip
        if call is None:
            self.d.add("unmatched_result", None, f"tool_result for unknown call {str(call_id)[:60]}")
            return
        call["ended_at"] = ts
        call["is_error"] = is_error
        if call["tool"] in FILE_OPS and not is_error:
            for p in call["paths"]:
                self.events.append(
                    {
                        "session_id": call["session_id"],
                        "call_id": call["call_id"],
                        "ts": ts,
                        "path": p,
                        "op": FILE_OPS[call["tool"]],
                        "how": call["tool"],
                        "tier": "verified",
                        "source_path": self.path,
                    }
                )
