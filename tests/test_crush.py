"""Crush adapter: a ``crush.db`` read from a temporary copy (WAL applied, the harness's files
untouched), detected by its tables, children tied by ``parent_session_id`` and the
``<message>$$<call>`` id (verified), session-level tokens never split into invented rows."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from sessiongraph.ingest import crush, discover, registry
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_logs" / "crush" / "webapp" / ".crush" / "crush.db"
MAIN = "3f0c6a2e-1b7d-4e58-9a41-0c2d5e8f7a10"
CHILD = "msg-a2$$call-agent"
T0 = 1754457380


def at(dt: int) -> datetime:
    return datetime.fromtimestamp(T0 + dt, tz=UTC)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_sample_frames_exactly():
    f = crush.parse(str(SAMPLE))
    _schema_ok(f)
    cwd = str(SAMPLE.parent.parent)
    s = f.sessions.select(
        "session_id", "session_kind", "parent_native_id", "cwd", "model", "started_at", "ended_at",
        "first_prompt_hash", "n_records", "layout",
    ).rows()  # fmt: skip
    assert s == [
        (f"crush:{MAIN}", "main", None, cwd, "claude-sonnet-4-20250514", at(0), at(18),
         text_hash("Add a health check endpoint to the server"), 8, "sqlite"),
        (f"crush:{CHILD}", "subagent", MAIN, cwd, "claude-3-5-haiku-20241022", at(6), at(9),
         text_hash("Find where routes are registered"), 4, "sqlite"),
    ]  # fmt: skip
    calls = f.calls.select("session_id", "call_id", "tool", "kind", "paths", "started_at", "ended_at",
                           "is_error", "command", "result_agent_id").rows()  # fmt: skip
    assert calls == [
        (f"crush:{MAIN}", "call-view", "view", "read", [f"{cwd}/server/main.go"], at(2), at(3), False, None, None),
        (f"crush:{MAIN}", "call-agent", "agent", "spawn", [], at(5), at(10), False, None, CHILD),
        (f"crush:{MAIN}", "call-edit", "edit", "edit", [f"{cwd}/server/routes.go"], at(12), at(15), False, None, None),
        (f"crush:{MAIN}", "call-bash", "bash", "shell", [], at(12), at(15), True, "go test ./...", None),
        (f"crush:{CHILD}", "call-grep", "grep", "other", [f"{cwd}/server"], at(7), at(8), False, None, None),
    ]
    assert f.file_events.select("call_id", "path", "op", "tier").rows() == [
        ("call-view", f"{cwd}/server/main.go", "read", "verified"),
        ("call-edit", f"{cwd}/server/routes.go", "write", "verified"),
    ]
    assert f.usage.height == 0  # tokens are per session: never split into invented request rows
    assert f.diagnostics["code"].to_list() == ["no_token_counts", "no_token_counts"]
    steps = f.steps.filter(f.steps["session_id"] == f"crush:{MAIN}")
    assert steps.select("seq", "role", "kind", "call_id").rows()[:4] == [
        (0, "user", "prompt", None),
        (1, "assistant", "thinking", None),
        (2, "assistant", "tool_call", "call-view"),
        (3, "tool", "tool_result", "call-view"),
    ]
    assert f.steps.height == 15


def test_child_is_a_verified_spawn(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLE.parent.parent.parent)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, src_call_id, dst, tier FROM edges WHERE kind = 'spawn'").rows()
    assert edges == [(f"crush:{MAIN}", "call-agent", f"crush:{CHILD}", "verified")]


def test_detection_by_content(tmp_path):
    assert classify(str(SAMPLE)).harness == "crush"
    other = tmp_path / "crush.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE sessions (id TEXT)")
    con.close()
    assert classify(str(other)).harness != "crush"
    assert not crush.detect(str(SAMPLE), b"not sqlite")


def test_wal_is_applied_and_left_alone(tmp_path):
    store = tmp_path / ".crush"
    shutil.copytree(SAMPLE.parent, store)
    db = store / "crush.db"
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.execute("UPDATE sessions SET title = 'x' WHERE id = ?", [MAIN])
    con.execute("INSERT INTO sessions VALUES ('late', NULL, 'late', 0, 0, 0, 0, ?, ?, NULL, NULL)", [T0 + 30, T0 + 30])
    con.commit()
    wal = Path(str(db) + "-wal")
    assert wal.stat().st_size > 0
    before = (db.read_bytes(), wal.read_bytes())
    ids = crush.parse(str(db)).sessions["native_id"].to_list()
    after = (db.read_bytes(), wal.read_bytes())
    con.close()
    assert "late" in ids  # the row lives only in the WAL
    assert after == before
    assert registry.log_of(str(wal)) == str(db)


def test_real_store_schema_only(corpus):
    db = corpus / "crush" / "go-filewatcher" / ".crush" / "crush.db"
    assert [f.harness for f in discover.discover([str(db.parent.parent)])] == ["crush"]
    f = crush.parse(str(db))
    _schema_ok(f)
    assert (f.sessions.height, f.diagnostics.height) == (0, 0)


def test_bad_parts(tmp_path):
    db = tmp_path / "crush.db"
    shutil.copyfile(SAMPLE, db)
    con = sqlite3.connect(db)
    con.execute("UPDATE messages SET parts = 'not json' WHERE id = 'msg-u1'")
    con.execute("UPDATE messages SET parts = '{}' WHERE id = 'msg-c1'")
    con.commit()
    con.close()
    f = crush.parse(str(db))
    _schema_ok(f)
    assert sorted(set(f.diagnostics["code"])) == ["invalid_json", "no_token_counts", "wrong_type"]
