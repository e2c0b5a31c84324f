"""Qwen Code adapter: exact frames of the sample chats (a parent and the child its `task` call
ran), tokens from usageMetadata only, lineage records, and detection: a Qwen chat is never a
Claude transcript, while every Claude file of the samples and corpus still is."""

from __future__ import annotations

import runpy
import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from sessiongraph.ingest import claude_code, qwen
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "qwen-code"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
CWD = "/home/dev/projects/harbor"
CHATS = SAMPLES / "projects" / "-home-dev-projects-harbor" / "chats"
PARENT = "5b0c9f3e-2d41-4c7a-9e15-7a3f60d2b811"
CHILD = "c7e21a94-88f0-4b6d-a3c2-19d5e04f7a60"
TASK_PROMPT = "Find every caller of parse_manifest in src/ and list them with line numbers."


def at(sec: float) -> datetime:
    return datetime(2026, 4, 2, 10, 15, tzinfo=UTC).replace(second=int(sec), microsecond=int(sec % 1 * 1e6))


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


# -- detection ---------------------------------------------------------------------------------


def test_qwen_chats_are_qwen_and_never_claude():
    for name in (PARENT, CHILD):
        path = CHATS / f"{name}.jsonl"
        head = path.read_bytes()[:65536]
        assert qwen.detect(str(path), head)
        assert not claude_code.detect(str(path), head)  # same envelope, Gemini content
        assert classify(str(path)).harness == "qwen-code"


@pytest.mark.parametrize(
    "first",
    [
        {"type": "user", "message": {"role": "user", "parts": [{"text": "hi"}]}},
        {"type": "system", "subtype": "ui_telemetry", "systemPayload": {"uiEvent": {}}},
        {"type": "system", "subtype": "parent_session", "systemPayload": {"parentSessionId": "p"}},
        {"type": "assistant", "message": {"role": "model", "parts": []}, "usageMetadata": {}},
        {"type": "tool_result", "message": {"role": "user", "parts": []}},
    ],
)
def test_any_qwen_first_record_is_refused_by_claude(tmp_path, first):
    rec = {"uuid": "u1", "parentUuid": None, "sessionId": "s1", "timestamp": "2026-04-02T10:15:00Z", **first}
    path = tmp_path / "chats" / "s1.jsonl"
    path.parent.mkdir()
    path.write_bytes(orjson.dumps(rec) + b"\n")
    assert not claude_code.detect(str(path), path.read_bytes())
    assert classify(str(path)).harness == "qwen-code"


def _claude_files(root: Path) -> list[Path]:
    """Every Claude transcript under root: files in a Claude projects tree, less the known
    non-sessions (prompt history, an empty file, a file of snapshots only)."""
    out = []
    for f in sorted(root.rglob("*.jsonl")):
        rel = f.as_posix()
        if not any(k in rel for k in ("/claude-code/", "launched-claude/", "broken/projects/")):
            continue
        if f.name in ("history.jsonl", "empty.jsonl") or f.name.startswith("c4a9e1f7-"):
            continue
        out.append(f)
    return out


def test_claude_detection_still_accepts_every_claude_sample():
    files = _claude_files(ROOT / "sample_logs")
    # Pinned so a selection that silently shrinks fails; 31 when Qwen Code landed, +23 from the
    # branches merged with it: Claude teams (harbor b19c5100 + 7 subagents) and workflow runs
    # (quill d6159ef5 + 4 workflow files), scenarios/claude-print-windows (5),
    # scenarios/orphan-subagents (3) and scenarios/paths (relay 7d3a9c41, C--Users-me-proj b81e4f2a);
    # scenarios/commits (beacon 5e8a1c24).
    assert len(files) == 55
    for f in files:
        head = f.read_bytes()[:65536]
        assert claude_code.detect(str(f), head), f
        assert not qwen.detect(str(f), head), f
        assert classify(str(f)).harness == "claude-code", f


def test_claude_detection_still_accepts_every_claude_corpus_file():
    if not (CORPUS / "claude-code").is_dir():
        pytest.skip("no ../shared/corpus")
    files = sorted((CORPUS / "claude-code").rglob("*.jsonl"))
    assert len(files) == 8
    for f in files:
        assert classify(str(f)).harness == "claude-code", f
        assert not qwen.detect(str(f), f.read_bytes()[:65536]), f


# -- exact frames --------------------------------------------------------------------------------


def test_parent_chat_frames_exactly():
    path = CHATS / f"{PARENT}.jsonl"
    f = qwen.parse(str(path))
    _schema_ok(f)
    sid = f"qwen-code:{PARENT}"
    s = f.sessions.to_dicts()
    assert len(s) == 1
    got = {k: v for k, v in s[0].items() if v is not None}
    assert got == {
        "session_id": sid,
        "harness": "qwen-code",
        "native_id": PARENT,
        "session_kind": "main",
        "layout": "chat",
        "harness_version": "0.14.1",
        "source_path": str(path),
        "source_bytes": path.stat().st_size,
        "cwd": CWD,
        "git_branch": "main",
        "started_at": at(0),
        "ended_at": at(52),
        "model": "qwen3-coder-plus",
        "first_prompt_hash": text_hash("Add a --strict flag to the manifest loader and run the tests."),
        "n_records": 16,
    }
    calls = f.calls.select("call_id", "tool", "kind", "started_at", "ended_at", "paths", "is_error").rows()
    assert calls == [
        ("call_read_1", "read_file", "read", at(3), at(4), [f"{CWD}/src/harbor/manifest.py"], False),
        ("call_task_1", "task", "spawn", at(9), at(31), [], False),
        ("call_edit_1", "edit", "edit", at(35), at(36), [f"{CWD}/src/harbor/manifest.py"], False),
        ("call_write_1", "write_file", "write", at(40), at(41), [f"{CWD}/docs/STRICT.md"], True),
        ("call_shell_1", "run_shell_command", "shell", at(40), at(48), [], False),
    ]
    spawn = f.calls.filter(kind="spawn").to_dicts()[0]
    assert (spawn["subagent_type"], spawn["description"], spawn["prompt_hash"]) == (
        "general-purpose",
        "find callers",
        text_hash(TASK_PROMPT),
    )
    assert f.calls.filter(kind="shell")["command"].to_list() == ["pytest -q tests/test_manifest.py"]
    # The failed write touches no file.
    assert f.file_events.select("call_id", "ts", "path", "op", "how", "tier").rows() == [
        ("call_read_1", at(4), f"{CWD}/src/harbor/manifest.py", "read", "read_file", "verified"),
        ("call_edit_1", at(36), f"{CWD}/src/harbor/manifest.py", "write", "edit", "verified"),
    ]
    assert f.diagnostics.height == 0


def test_tokens_come_from_usage_metadata_once():
    """Five API calls, five usage rows: the five ui_telemetry records repeating them add none."""
    f = qwen.parse(str(CHATS / f"{PARENT}.jsonl"))
    cols = ["message_id", "input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens", "line"]
    assert f.usage.select(cols).rows() == [
        ("q-p02", 5200, 240, 0, 60, 2),
        ("q-p05", 800, 90, 4800, 0, 5),
        ("q-p08", 900, 140, 5200, 0, 8),
        ("q-p11", 1000, 210, 5900, 0, 11),
        ("q-p15", 700, 120, 6600, 0, 15),
    ]
    assert set(f.usage["cache_creation_tokens"]) == {0}
    assert set(f.usage["model"]) == {"qwen3-coder-plus"}


def test_parent_steps_follow_the_uuid_tree():
    f = qwen.parse(str(CHATS / f"{PARENT}.jsonl"))
    rows = f.steps.select("seq", "role", "kind", "call_id", "tool", "is_error", "parent_seq", "input_tokens").rows()
    assert rows == [
        (0, "user", "prompt", None, None, None, None, None),
        (1, "assistant", "thinking", None, None, None, 0, 5200),
        (2, "assistant", "text", None, None, None, 1, None),
        (3, "assistant", "tool_call", "call_read_1", "read_file", None, 2, None),
        (4, "tool", "tool_result", "call_read_1", "read_file", False, 3, None),  # telemetry made no step
        (5, "assistant", "tool_call", "call_task_1", "task", None, 4, 800),
        (6, "tool", "tool_result", "call_task_1", "task", False, 5, None),
        (7, "assistant", "tool_call", "call_edit_1", "edit", None, 6, 900),
        (8, "tool", "tool_result", "call_edit_1", "edit", False, 7, None),
        (9, "assistant", "tool_call", "call_write_1", "write_file", None, 8, 1000),
        (10, "assistant", "tool_call", "call_shell_1", "run_shell_command", None, 9, None),
        (11, "tool", "tool_result", "call_write_1", "write_file", True, 10, None),
        (12, "tool", "tool_result", "call_shell_1", "run_shell_command", False, 11, None),
        (13, "assistant", "text", None, None, None, 12, 700),
    ]
    assert f.texts.height == 0  # metadata_only: no text kept


def test_child_chat_names_its_parent():
    path = CHATS / f"{CHILD}.jsonl"
    f = qwen.parse(str(path))
    _schema_ok(f)
    s = f.sessions.to_dicts()[0]
    assert (s["session_kind"], s["parent_native_id"], s["forked_from_id"]) == ("subagent", PARENT, None)
    assert (s["started_at"], s["ended_at"], s["n_records"]) == (at(10.5), at(29.5), 7)
    assert s["first_prompt_hash"] == text_hash(TASK_PROMPT)
    assert f.calls.select("call_id", "tool", "kind").rows() == [("call_grep_1", "grep_search", "other")]
    assert f.usage.select("input_tokens", "output_tokens", "cache_read_tokens", "reasoning_tokens").rows() == [
        (3100, 70, 0, 0),
        (400, 80, 3000, 20),
    ]


def test_a_fork_records_its_source(tmp_path):
    rec = {"uuid": "u1", "parentUuid": None, "sessionId": "s2", "timestamp": "2026-04-02T10:15:00Z"}
    lines = [
        {
            **rec,
            "type": "system",
            "subtype": "session_source",
            "systemPayload": {"sourceType": "fork", "sourceId": "s1"},
        },
        {
            **rec,
            "uuid": "u2",
            "parentUuid": "u1",
            "type": "user",
            "message": {"role": "user", "parts": [{"text": "go"}]},
        },
    ]
    path = tmp_path / "s2.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    s = qwen.parse(str(path)).sessions.to_dicts()[0]
    assert (s["session_kind"], s["forked_from_id"], s["parent_native_id"]) == ("main", "s1", None)


def test_spawn_edge_from_the_parent_session_record(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, dst, kind, tier FROM edges WHERE kind = 'spawn'").rows()
        usage = st.query("SELECT sum(input_tokens + cache_read_tokens), count(*) FROM usage").rows()
    assert edges == [(f"qwen-code:{PARENT}", f"qwen-code:{CHILD}", "spawn", "verified")]
    assert usage == [(5200 + 5600 + 6100 + 6900 + 7300 + 3100 + 3400, 7)]


# -- bad input -------------------------------------------------------------------------------------


def test_broken_lines_become_diagnostics(tmp_path):
    good = (CHATS / f"{CHILD}.jsonl").read_bytes().splitlines()
    bad = [
        good[0],
        b"not json",
        b'{"uuid":"x","sessionId":"' + CHILD.encode() + b'","type":"weird","timestamp":"2026-04-02T10:15:00Z"}',
        b'{"uuid":"y","sessionId":"' + CHILD.encode() + b'","type":"assistant","usageMetadata":[1]}',
        *good[1:],
    ]
    path = tmp_path / "c.jsonl"
    path.write_bytes(b"\n".join(bad) + b"\n")
    f = qwen.parse(str(path))
    _schema_ok(f)
    assert sorted(f.diagnostics["code"].to_list()) == [
        "bad_timestamp",
        "invalid_json",
        "unknown_record_type",
        "wrong_type",
    ]
    assert f.usage.height == 2


def test_records_without_a_session_id(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_bytes(b'{"uuid":"a","type":"user","message":{"parts":[]}}\n')
    f = qwen.parse(str(path))
    assert f.sessions.height == 0
    assert f.diagnostics["code"].to_list() == ["no_session"]


def test_samples_are_generated(tmp_path):
    """The committed samples are what _generate.py writes (nothing hand-edited since)."""
    copy = tmp_path / "gen"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("projects"))
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in sorted(SAMPLES.rglob("*.jsonl")):
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name
