"""Kimi Code adapter: one wire per agent with its session's state.json; exact frames of the
samples (a main agent and the sub-agent its Agent call ran) and of the real captures in
shared/corpus/kimi-code, set out in the sessions tree they came from."""

from __future__ import annotations

import hashlib
import runpy
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessiongraph.ingest import claude_code, kimi_code
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "kimi-code"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "kimi-code" / "agent-sessions-fixtures"
WORKDIR = "/home/dev/projects/ferry"
SESSION = "4d2c8e1a-9b3f-4a7e-8c6d-1f0e2a3b4c5d"
FOLDER = SAMPLES / "sessions" / f"wd_ferry_{hashlib.sha256(WORKDIR.encode()).hexdigest()[:12]}" / f"session_{SESSION}"
MAIN = FOLDER / "agents" / "main" / "wire.jsonl"
CHILD = FOLDER / "agents" / "agent-0" / "wire.jsonl"
BRIEF = "Count the Python files under /home/dev/projects/ferry/src and name the largest."
T0 = 1785612800000


def at(ms: int) -> datetime:
    return datetime.fromtimestamp((T0 + ms) / 1000, tz=UTC)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_detects_wires_only(tmp_path):
    for f in (MAIN, CHILD):
        assert classify(str(f)).harness == "kimi-code"
        assert not claude_code.detect(str(f), f.read_bytes())
    assert classify(str(FOLDER / "state.json")).harness is None
    legacy = tmp_path / "wire.jsonl"  # Kimi CLI's wire: no created_at, records in an envelope
    legacy.write_bytes(
        b'{"type":"metadata","protocol_version":"1.3"}\n{"timestamp":1.5,"message":{"type":"TurnBegin"}}\n'
    )
    assert not kimi_code.detect(str(legacy), legacy.read_bytes())


def test_main_agent_frames_exactly():
    f = kimi_code.parse(str(MAIN))
    _schema_ok(f)
    sid = f"kimi-code:{SESSION}"
    got = {k: v for k, v in f.sessions.to_dicts()[0].items() if v is not None}
    assert got == {
        "session_id": sid,
        "harness": "kimi-code",
        "native_id": SESSION,
        "session_kind": "main",
        "layout": "main",
        "agent_type": "main",
        "source_path": str(MAIN),
        "source_bytes": MAIN.stat().st_size,
        "cwd": WORKDIR,
        "started_at": at(0),
        "ended_at": at(24002),
        "model": "moonshot-ai/kimi-k2.7-code",
        "first_prompt_hash": text_hash("Add a --strict flag to the manifest loader."),
        "n_records": 28,
    }
    calls = f.calls.select("call_id", "tool", "kind", "started_at", "ended_at", "paths", "is_error").rows()
    assert calls == [
        ("Read_0", "Read", "read", at(2200), at(2350), [f"{WORKDIR}/src/ferry/manifest.py"], None),
        ("Agent_1", "Agent", "spawn", at(2400), at(9000), [], None),
        ("Edit_2", "Edit", "edit", at(9100), at(9700), [f"{WORKDIR}/src/ferry/manifest.py"], None),
        ("Bash_3", "Bash", "shell", at(9800), at(14000), [], True),
    ]
    spawn = f.calls.filter(kind="spawn").to_dicts()[0]
    assert (spawn["subagent_type"], spawn["prompt_hash"], spawn["result_agent_id"]) == (
        "explore",
        text_hash(BRIEF),
        "agent-0",
    )
    shell = f.calls.filter(kind="shell").to_dicts()[0]
    assert (shell["command"], shell["cwd"]) == ("pytest -q", WORKDIR)
    assert f.file_events.select("call_id", "ts", "path", "op").rows() == [
        ("Read_0", at(2350), f"{WORKDIR}/src/ferry/manifest.py", "read"),
        ("Edit_2", at(9700), f"{WORKDIR}/src/ferry/manifest.py", "write"),
    ]
    # Six usage.record rows (the compaction's call included); step.end's repeat is not counted.
    cols = ["ts", "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens", "line"]
    assert f.usage.select(cols).rows() == [
        (at(2300), 4200, 60, 0, 1800, 11),
        (at(3000), 600, 90, 6000, 0, 14),
        (at(9600), 700, 140, 6400, 0, 17),
        (at(10200), 500, 40, 7000, 0, 20),
        (at(15000), 300, 30, 7400, 0, 23),
        (at(24000), 900, 400, 5000, 0, 26),
    ]
    assert f.steps.select("seq", "role", "kind", "call_id", "is_error", "input_tokens").rows() == [
        (0, "user", "prompt", None, None, None),
        (1, "assistant", "thinking", None, None, 4200),
        (2, "assistant", "tool_call", "Read_0", None, None),
        (3, "tool", "tool_result", "Read_0", None, None),
        (4, "assistant", "tool_call", "Agent_1", None, 600),
        (5, "tool", "tool_result", "Agent_1", None, None),
        (6, "assistant", "tool_call", "Edit_2", None, 700),
        (7, "tool", "tool_result", "Edit_2", None, None),
        (8, "assistant", "tool_call", "Bash_3", None, 500),
        (9, "tool", "tool_result", "Bash_3", True, None),
        (10, "assistant", "text", None, None, 300),
        (11, "system", "compaction", None, None, None),
    ]
    assert f.diagnostics.height == 0


def test_sub_agent_and_its_spawn_edge(tmp_path):
    f = kimi_code.parse(str(CHILD))
    _schema_ok(f)
    s = f.sessions.to_dicts()[0]
    assert (s["session_id"], s["agent_id"], s["session_kind"], s["parent_native_id"], s["parent_agent_id"]) == (
        f"kimi-code:{SESSION}/agent-0",
        "agent-0",
        "subagent",
        SESSION,
        "main",
    )
    assert (s["agent_type"], s["cwd"], s["first_prompt_hash"]) == ("sub", WORKDIR, text_hash(BRIEF))
    assert f.usage.select("input_tokens", "output_tokens", "cache_read_tokens").rows() == [
        (2100, 50, 0),
        (200, 40, 2000),
    ]
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, dst, src_call_id, tier FROM edges WHERE kind = 'spawn'").rows()
    assert edges == [(f"kimi-code:{SESSION}", f"kimi-code:{SESSION}/agent-0", "Agent_1", "verified")]


def test_a_wire_outside_the_sessions_tree_is_named_after_its_file(tmp_path):
    path = tmp_path / "wire-copy.jsonl"
    shutil.copy(MAIN, path)
    f = kimi_code.parse(str(path))
    assert f.sessions.select("session_id", "session_kind", "cwd").rows() == [
        ("kimi-code:wire-copy", "main", None)  # no state.json, no config.update cwd on the main wire
    ]
    assert f.diagnostics["code"].to_list() == ["missing_session_id"]


def test_bad_lines_and_a_bad_state_file(tmp_path):
    folder = tmp_path / "session_abc" / "agents" / "main"
    folder.mkdir(parents=True)
    (tmp_path / "session_abc" / "state.json").write_text("[1, 2")
    lines = [
        b'{"type":"metadata","protocol_version":"1.4","created_at":1785612800000}',
        b"not json",
        b'{"type":"mystery.op","time":1785612800001}',
        b'{"type":"usage.record","usage":7,"time":1785612800002}',
        b'{"type":"context.append_loop_event","event":{"type":"tool.result","toolCallId":"X_9"},"time":1785612800003}',
        b'{"type":"turn.ended"}',
    ]
    (folder / "wire.jsonl").write_bytes(b"\n".join(lines) + b"\n")
    f = kimi_code.parse(str(folder / "wire.jsonl"))
    _schema_ok(f)
    assert sorted(f.diagnostics["code"]) == [
        "bad_sidecar",
        "bad_timestamp",
        "invalid_json",
        "unknown_record_type",
        "unmatched_result",
        "wrong_type",
    ]
    assert f.sessions["session_id"].to_list() == ["kimi-code:abc"]


def _corpus_tree(tmp_path: Path) -> Path:
    if not CORPUS.is_dir():
        pytest.skip("no ../shared/corpus")
    session = tmp_path / "sessions" / "wd_project_ac3bb318f98e" / "session_1bcbe023-4f7e-4971-9dc9-43b8756045b0"
    (session / "agents" / "main").mkdir(parents=True)
    (session / "agents" / "agent-0").mkdir()
    shutil.copy(CORPUS / "assistant_tools.jsonl", session / "agents" / "main" / "wire.jsonl")
    shutil.copy(CORPUS / "subagent_agent-0.jsonl", session / "agents" / "agent-0" / "wire.jsonl")
    shutil.copy(CORPUS / "assistant_tools.state.json", session / "state.json")
    return tmp_path


def test_corpus_family(tmp_path):
    root = _corpus_tree(tmp_path)
    uuid = "1bcbe023-4f7e-4971-9dc9-43b8756045b0"
    main = kimi_code.parse(str(next(root.rglob("main/wire.jsonl"))))
    child = kimi_code.parse(str(next(root.rglob("agent-0/wire.jsonl"))))
    for f in (main, child):
        _schema_ok(f)
        assert f.diagnostics.height == 0
    m = main.sessions.to_dicts()[0]
    assert (m["session_id"], m["cwd"], m["model"], m["n_records"]) == (
        f"kimi-code:{uuid}",
        "/private/tmp/as-agent-lab/kimi/project",
        "moonshot-ai/kimi-k2.7-code",
        200,
    )
    assert main.calls.height == 19
    assert main.calls.filter(kind="spawn").select("call_id", "subagent_type", "result_agent_id").rows() == [
        ("Agent_3", "explore", "agent-0")
    ]
    assert main.calls.filter(is_error=True)["call_id"].to_list() == ["Bash_2"]
    u = main.usage
    assert (u.height, u["input_tokens"].sum(), u["output_tokens"].sum(), u["cache_read_tokens"].sum()) == (
        23,
        30174,
        5515,
        661504,
    )
    assert sorted(main.file_events["path"].to_list()) == [
        "/private/tmp/as-agent-lab/kimi/.kimi-code/sessions/wd_project_ac3bb318f98e/"
        f"session_{uuid}/agents/main/plans/zatanna-moon-knight-groot.md",
        "/private/tmp/as-agent-lab/kimi/project/.gitignore",
        "/private/tmp/as-agent-lab/kimi/project/README.md",
    ]
    c = child.sessions.to_dicts()[0]
    assert (c["session_id"], c["parent_native_id"], c["agent_type"], c["n_records"]) == (
        f"kimi-code:{uuid}/agent-0",
        uuid,
        "sub",
        28,
    )
    assert (child.usage.height, child.usage["output_tokens"].sum()) == (3, 330)
    db = tmp_path / "s.duckdb"
    ingest([str(root)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, dst, src_call_id, tier FROM edges WHERE kind = 'spawn'").rows()
    assert edges == [(f"kimi-code:{uuid}", f"kimi-code:{uuid}/agent-0", "Agent_3", "verified")]


def test_corpus_small_wire_outside_a_tree():
    if not CORPUS.is_dir():
        pytest.skip("no ../shared/corpus")
    f = kimi_code.parse(str(CORPUS / "small.jsonl"))
    _schema_ok(f)
    assert f.sessions.select("session_id", "n_records", "model").rows() == [
        ("kimi-code:small", 36, "moonshot-ai/kimi-k2.7-code")
    ]
    assert f.usage.height == 0  # a turn cancelled before any answer: no usage.record
    assert f.steps["kind"].to_list() == ["prompt", "prompt", "prompt"]


def test_samples_are_generated(tmp_path):
    copy = tmp_path / "gen"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("sessions"))
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".jsonl", ".json")):
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name
