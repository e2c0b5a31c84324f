"""oh-my-opencode adapter: ~/.claude/transcripts/ses_<id>.jsonl read as opencode sessions' transcripts
(user / tool_use / tool_result records, no call ids, no tokens), refused by the Claude detector; a
task result's child session id is a verified spawn edge, to the child's transcript or to its
opencode session."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson

from sessiongraph.ingest import claude_code, oh_my_opencode
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "oh-my-opencode" / "transcripts"
PARENT = "ses_3a7f19c2e0ffeQm4Rk8TzY2bLw"
CHILD_A = "ses_3a7f18d4a1ffeN9sVx2CqH5jPe"  # named by tool_output.sessionId
CHILD_B = "ses_3a7f17b8c3ffeK2dWm6FuJ8rTa"  # named only in the <task_metadata> text


def at(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-01-05T{hms}+00:00").astimezone(UTC)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_detected_as_oh_my_opencode_and_refused_by_claude(tmp_path):
    for f in SAMPLES.glob("*.jsonl"):
        assert classify(str(f)).harness == "oh-my-opencode", f
        assert not claude_code.detect(str(f), f.read_bytes())
    line = (SAMPLES / f"{PARENT}.jsonl").read_bytes()
    other = tmp_path / "notes.jsonl"  # the records, but not a ses_ file name
    other.write_bytes(line)
    assert not oh_my_opencode.detect(str(other), line)
    claude = tmp_path / "ses_abc.jsonl"  # a Claude envelope under a ses_ name is not ours
    claude.write_bytes(b'{"type":"user","sessionId":"s1","message":{"role":"user","content":"hi"}}\n')
    assert not oh_my_opencode.detect(str(claude), claude.read_bytes())


def test_parent_frames_exactly():
    path = SAMPLES / f"{PARENT}.jsonl"
    f = oh_my_opencode.parse(str(path))
    _schema_ok(f)
    got = {k: v for k, v in f.sessions.to_dicts()[0].items() if v is not None}
    assert got == {
        "session_id": f"oh-my-opencode:{PARENT}",
        "harness": "oh-my-opencode",
        "native_id": PARENT,
        "session_kind": "main",
        "source_path": str(path),
        "source_bytes": path.stat().st_size,
        "started_at": at("17:41:01.935"),
        "ended_at": at("17:42:03.190"),
        "first_prompt_hash": text_hash("Why does the app ignore APP_PORT?"),
        "n_records": 9,
    }
    calls = f.calls.select("call_id", "tool", "kind", "started_at", "ended_at", "paths", "result_agent_id").rows()
    assert calls == [
        ("line2", "read", "read", at("17:41:05.160"), at("17:41:05.162"), ["/srv/app/README.md"], None),
        # results come back out of order; each is paired with the use of the same input
        ("line4", "task", "spawn", at("17:41:09.004"), at("17:41:52.301"), [], CHILD_A),
        ("line5", "task", "spawn", at("17:41:09.010"), at("17:41:40.517"), [], CHILD_B),
        ("line8", "edit", "edit", at("17:42:03.118"), at("17:42:03.190"), ["/srv/app/src/config.ts"], None),
    ]
    task = f.calls.filter(f.calls["call_id"] == "line4").to_dicts()[0]
    assert task["subagent_type"] == "explore" and task["description"] == "Map the config loader"
    assert task["prompt_hash"] == text_hash("Read /srv/app/src/config.ts and list every environment variable it reads.")
    assert f.file_events.select("call_id", "path", "op", "ts").rows() == [
        ("line2", "/srv/app/README.md", "read", at("17:41:05.162")),
        ("line8", "/srv/app/src/config.ts", "write", at("17:42:03.190")),
    ]
    assert f.usage.height == 0
    assert f.diagnostics.select("code", "line").rows() == [("no_token_counts", None)]
    assert f.steps.select("line", "role", "kind", "call_id").rows() == [
        (1, "user", "prompt", None),
        (2, "assistant", "tool_call", "line2"),
        (3, "tool", "tool_result", "line2"),
        (4, "assistant", "tool_call", "line4"),
        (5, "assistant", "tool_call", "line5"),
        (6, "tool", "tool_result", "line5"),
        (7, "tool", "tool_result", "line4"),
        (8, "assistant", "tool_call", "line8"),
        (9, "tool", "tool_result", "line8"),
    ]


def test_child_frames_exactly():
    f = oh_my_opencode.parse(str(SAMPLES / f"{CHILD_B}.jsonl"))
    _schema_ok(f)
    assert f.calls.select("call_id", "tool", "kind", "command", "cwd", "description").rows() == [
        ("line2", "bash", "shell", "npm test -- config", "/srv/app", "Run config tests")
    ]
    assert f.sessions["first_prompt_hash"].to_list() == [
        text_hash("Run the config tests in /srv/app and report failures.")
    ]


def test_task_results_are_verified_spawns(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, src_call_id, dst, tier FROM edges WHERE kind = 'spawn' ORDER BY dst").rows()
    src = f"oh-my-opencode:{PARENT}"
    assert edges == [
        (src, "line5", f"oh-my-opencode:{CHILD_B}", "verified"),
        (src, "line4", f"oh-my-opencode:{CHILD_A}", "verified"),
    ]


def test_a_child_read_from_opencode_storage_joins_across_harnesses(tmp_path):
    """The child's transcript is gone but opencode's own storage holds the session (same ses_ id)."""
    logs = tmp_path / "logs"
    (logs / "transcripts").mkdir(parents=True)
    shutil.copy(SAMPLES / f"{PARENT}.jsonl", logs / "transcripts")
    session = logs / "opencode" / "storage" / "session" / "proj1" / f"{CHILD_A}.json"
    session.parent.mkdir(parents=True)
    session.write_bytes(
        orjson.dumps(
            {
                "id": CHILD_A,
                "projectID": "proj1",
                "directory": "/srv/app",
                "parentID": PARENT,
                "title": "explore",
                "version": "1.0.191",
                "time": {"created": 1767634869420, "updated": 1767634872009},
            }
        )
    )
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, src_call_id, dst, tier FROM edges WHERE kind = 'spawn'").rows()
        dangling = st.query("SELECT call_id FROM inference_diagnostics WHERE code = 'dangling_spawn'").rows()
    assert edges == [(f"oh-my-opencode:{PARENT}", "line4", f"opencode:{CHILD_A}", "verified")]
    assert dangling == [("line5",)]  # CHILD_B is on disk nowhere


def test_bad_records_are_diagnostics(tmp_path):
    path = tmp_path / "ses_bad1.jsonl"
    lines = [
        {"type": "user", "timestamp": "2026-01-05T10:00:00Z", "content": "go"},
        {
            "type": "tool_result",
            "timestamp": "2026-01-05T10:00:01Z",
            "tool_name": "read",
            "tool_input": {},
            "tool_output": {"output": "x"},
        },
        {"type": "tool_use", "timestamp": "nope", "tool_name": "bash", "tool_input": ["ls"]},
        {"type": "assistant", "timestamp": "2026-01-05T10:00:02Z"},
        {"type": "tool_use", "timestamp": "2026-01-05T10:00:03Z", "tool_name": 7, "tool_input": {}},
    ]
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines) + b"{not json\n")
    f = oh_my_opencode.parse(str(path))
    _schema_ok(f)
    codes = sorted(f.diagnostics["code"].to_list())
    assert codes == sorted(
        [
            "no_token_counts",
            "unmatched_result",
            "bad_timestamp",
            "bad_arguments",
            "unknown_record_type",
            "wrong_type",
            "invalid_json",
        ]
    )
    assert f.calls.select("call_id", "tool", "ended_at").rows() == [
        ("line2", "read", datetime(2026, 1, 5, 10, 0, 1, tzinfo=UTC)),
        ("line3", "bash", None),
    ]
