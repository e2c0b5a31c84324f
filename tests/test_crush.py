"""Crush adapter: a ``crush.db`` read from a temporary copy (WAL applied, the harness's files
untouched), detected by its tables, children tied by ``parent_session_id`` and the
``<message>$$<call>`` id (verified); each session one usage row of scope session holding Crush's
own dollars (a parent's less its children's) and no tokens (Crush keeps the last step's context,
not totals), never split into invented requests."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from sessiongraph.ingest import crush, discover, registry
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS, USAGE_TOKENS
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
    # one row per session, scope session: Crush's own dollars, no tokens (its token columns are
    # the last step's context, 4210/655 and 1200/80 here, not totals); the parent's cost, 0.0237,
    # includes the child's 0.0013, which Crush added to it
    usage = f.usage.select("session_id", "ts", "model", "message_id", "scope", "reported_usd", *USAGE_TOKENS)
    assert usage.rows() == [
        (f"crush:{MAIN}", at(18), "claude-sonnet-4-20250514", f"session:{MAIN}", "session", 0.0224, *[None] * 7),
        (f"crush:{CHILD}", at(9), "claude-3-5-haiku-20241022", f"session:{CHILD}", "session", 0.0013, *[None] * 7),
    ]
    assert f.diagnostics.select("code", "detail").rows() == [
        ("no_token_counts", f"{MAIN}: only the cost is recorded per session, not its tokens"),
        ("no_token_counts", f"{CHILD}: only the cost is recorded per session, not its tokens"),
    ]
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
        sessions = st.query("SELECT session_id, requests, tokens, usd, reported_usd FROM session_costs ORDER BY 1")
        run = st.query("SELECT requests, tokens, usd, usd_priced, reported_usd FROM run_costs").rows()
        priced = st.query("SELECT DISTINCT usd, price_source, priced_as FROM usage").rows()
    assert edges == [(f"crush:{MAIN}", "call-agent", f"crush:{CHILD}", "verified")]
    # no tokens to price: our dollars are unknown (null, never $0); Crush's own sum once per run
    assert sessions.rows() == [(f"crush:{MAIN}", 0, 0, None, 0.0224), (f"crush:{CHILD}", 0, 0, None, 0.0013)]
    assert run == [(0, 0, None, 0.0, 0.0237)]
    assert priced == [(None, None, None)]


def test_a_parent_not_yet_charged_for_its_child_keeps_its_cost(tmp_path):
    """Crush adds a child's cost to its parent's when the child's agent call ends: a parent below
    its children's total has not been charged yet and keeps its own figure."""
    db = tmp_path / "crush.db"
    shutil.copyfile(SAMPLE, db)

    def reported(sql: str, *args) -> tuple[list, list]:
        con = sqlite3.connect(db)
        con.execute(sql, args)
        con.commit()
        con.close()
        f = crush.parse(str(db))
        _schema_ok(f)
        return f.usage.select("session_id", "reported_usd").rows(), f.diagnostics.select("code", "detail").rows()

    rows, _ = reported("UPDATE sessions SET cost = 0.0005 WHERE id = ?", MAIN)
    assert rows == [(f"crush:{MAIN}", 0.0005), (f"crush:{CHILD}", 0.0013)]
    # a cost that is no number is a diagnostic: no figure for it, none taken off its parent's
    rows, diags = reported("UPDATE sessions SET cost = 'n/a' WHERE id = ?", CHILD)
    assert rows == [(f"crush:{MAIN}", 0.0005), (f"crush:{CHILD}", None)]
    assert ("wrong_type", f"{CHILD}: cost is str") in diags


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
