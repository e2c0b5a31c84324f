"""Factory Droid adapter: session files with their .settings.json side file (model, and its
session-level tokenUsage as one usage row of scope session, priced once), a child tied by
callingSessionId + callingToolUseId."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson

from sessiongraph.ingest import claude_code, droid, registry
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
FOLDER = ROOT / "sample_logs" / "factory-droid" / "sessions" / "-home-dev-projects-ledger"
PARENT = "5b2e8c14-7a3f-4d69-b1e0-2c8f9a6d3e71"
CHILD = "9d4a1f7e-3c2b-4e85-a6d0-7b1e5f9c2a48"
CWD = "/home/dev/projects/ledger"


def at(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-03-02T{hms}+00:00").astimezone(UTC)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_detected_and_the_settings_file_is_a_side_file():
    for uuid in (PARENT, CHILD):
        log = FOLDER / f"{uuid}.jsonl"
        assert classify(str(log)).harness == "factory-droid"
        assert not claude_code.detect(str(log), log.read_bytes())
        side = FOLDER / f"{uuid}.settings.json"
        assert classify(str(side)).harness is None
        assert registry.log_of(str(side)) == str(log)


def test_parent_frames_exactly():
    path = FOLDER / f"{PARENT}.jsonl"
    f = droid.parse(str(path))
    _schema_ok(f)
    got = {k: v for k, v in f.sessions.to_dicts()[0].items() if v is not None}
    assert got == {
        "session_id": f"factory-droid:{PARENT}",
        "harness": "factory-droid",
        "native_id": PARENT,
        "session_kind": "main",
        "harness_version": "2",
        "source_path": str(path),
        "source_bytes": path.stat().st_size,
        "cwd": CWD,
        "started_at": at("09:00:00"),
        "ended_at": at("09:00:40"),
        "model": "claude-sonnet-4-5-20250929",
        "first_prompt_hash": text_hash("Why are totals off by a cent?"),
        "n_records": 8,
    }
    assert f.calls.select("call_id", "tool", "kind", "paths", "command", "is_error", "ended_at").rows() == [
        ("toolu_read1", "Read", "read", [f"{CWD}/src/total.py"], None, None, at("09:00:04.500")),
        ("toolu_task1", "Task", "spawn", [], None, None, at("09:00:30")),
        ("toolu_exec1", "Execute", "shell", [], "pytest -q tests/test_total.py", True, at("09:00:40")),
    ]
    assert f.file_events.select("call_id", "path", "op").rows() == [("toolu_read1", f"{CWD}/src/total.py", "read")]
    # tokenUsage is the session's total: one row of scope session, never split into invented requests
    assert f.usage.drop("source_path").to_dicts() == [
        {
            "session_id": f"factory-droid:{PARENT}",
            "attempt": None,
            "ts": at("09:00:40"),
            "model": "claude-sonnet-4-5-20250929",
            "message_id": f"session:{PARENT}",
            "request_id": None,
            "input_tokens": 5120,
            "output_tokens": 812,
            "cache_read_tokens": 2048,
            "cache_creation_tokens": 0,
            "cache_creation_5m_tokens": 0,
            "cache_creation_1h_tokens": 0,
            "reasoning_tokens": 0,
            "scope": "session",
            "reported_usd": None,
            "line": None,
        }
    ]
    assert f.diagnostics.height == 0
    assert f.steps.height == 8
    assert f.steps["input_tokens"].is_null().all()  # a session's totals go on no step


def test_child_records_its_parent_and_call():
    f = droid.parse(str(FOLDER / f"{CHILD}.jsonl"))
    _schema_ok(f)
    s = f.sessions.to_dicts()[0]
    assert (s["session_kind"], s["parent_native_id"], s["parent_tool_use_id"]) == ("subagent", PARENT, "toolu_task1")
    assert s["first_prompt_hash"] == text_hash("Find where ledger rounds currency amounts.")


def test_child_is_a_verified_spawn_of_the_task_call(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(FOLDER)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, src_call_id, dst, tier FROM edges WHERE kind = 'spawn'").rows()
        # each session's tokenUsage priced once at Claude Sonnet 4.5's list prices ($3 in, $15 out,
        # $0.30 cache read per million): 5120, 812 and 2048 tokens; 2300 and 140; no request counted
        sessions = st.query("SELECT session_id, requests, tokens, usd FROM session_costs ORDER BY 1").rows()
        run = st.query("SELECT requests, tokens, usd, reported_usd FROM run_costs").rows()
    assert edges == [(f"factory-droid:{PARENT}", "toolu_task1", f"factory-droid:{CHILD}", "verified")]
    assert sessions == [
        (f"factory-droid:{PARENT}", 0, 7980, 0.028154),  # $0.0281544 to the microdollar
        (f"factory-droid:{CHILD}", 0, 2440, 0.009),
    ]
    assert run == [(0, 10420, 0.037154, None)]  # $0.0371544


def test_bad_settings_and_records_are_diagnostics(tmp_path):
    log = tmp_path / f"{PARENT}.jsonl"
    shutil.copy(FOLDER / f"{PARENT}.jsonl", log)
    with log.open("ab") as fh:
        fh.write(orjson.dumps({"type": "compaction"}) + b"\n")
        fh.write(
            b'{"type":"message","timestamp":"x","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"nope"}]}}\n'
        )
    (tmp_path / f"{PARENT}.settings.json").write_bytes(b"[1, 2]")
    f = droid.parse(str(log))
    _schema_ok(f)
    assert f.usage.height == 0  # no settings: no tokens
    assert sorted(f.diagnostics["code"].to_list()) == [
        "bad_sidecar",
        "bad_timestamp",
        "no_token_counts",
        "unknown_record_type",
        "unmatched_result",
    ]
    assert f.sessions["model"].to_list() == [None]


def test_token_usage_that_is_not_an_object_is_a_diagnostic(tmp_path):
    log = tmp_path / f"{PARENT}.jsonl"
    shutil.copy(FOLDER / f"{PARENT}.jsonl", log)
    settings = orjson.loads((FOLDER / f"{PARENT}.settings.json").read_bytes())
    (tmp_path / f"{PARENT}.settings.json").write_bytes(orjson.dumps({**settings, "tokenUsage": [5120, 812]}))
    f = droid.parse(str(log))
    _schema_ok(f)
    assert f.usage.height == 0
    assert f.diagnostics.select("code", "detail").rows() == [("bad_sidecar", "settings.json tokenUsage: a JSON array")]
    assert f.sessions["model"].to_list() == ["claude-sonnet-4-5-20250929"]
