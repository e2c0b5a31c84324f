"""Kimi CLI adapter: one session's wire with its subagents' events inside it; exact frames of the
sample (a main agent and the two Task subagents it ran), the join of each subagent to its own
context file, and the line between Kimi CLI and Kimi Code files."""

from __future__ import annotations

import hashlib
import runpy
import shutil
from datetime import UTC, datetime
from pathlib import Path

from sessiongraph.ingest import kimi_cli, kimi_code
from sessiongraph.ingest.discover import classify, discover
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.ingest.registry import log_of
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "kimi-cli"
WORKDIR = "/home/dev/projects/lantern"
SESSION = "7c1e9a52-3b8d-4f60-a2e4-9d5b1c0f8e37"
FOLDER = SAMPLES / "sessions" / hashlib.md5(WORKDIR.encode()).hexdigest() / SESSION
WIRE = FOLDER / "wire.jsonl"
KIMI_CODE_WIRE = next((ROOT / "sample_logs" / "kimi-code").rglob("main/wire.jsonl"))
PROMPT = "Rename the --colour flag to --color and keep the old spelling as an alias."
BRIEF_1 = "List every place under /home/dev/projects/lantern/src that reads the --colour flag."
BRIEF_2 = "Run the CLI test suite in /home/dev/projects/lantern and report failures."
T0 = 1785700000.0
MAIN = f"kimi-cli:{SESSION}"
SUB1, SUB2 = f"{MAIN}/context_sub_1", f"{MAIN}/context_sub_2"


def at(s: float) -> datetime:
    return datetime.fromtimestamp(T0 + s, tz=UTC)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_each_kimi_adapter_refuses_the_others_wire():
    assert classify(str(WIRE)).harness == "kimi-cli"
    assert not kimi_code.detect(str(WIRE), WIRE.read_bytes())
    assert classify(str(KIMI_CODE_WIRE)).harness == "kimi-code"
    assert not kimi_cli.detect(str(KIMI_CODE_WIRE), KIMI_CODE_WIRE.read_bytes())


def test_context_files_are_side_files_not_sessions():
    found = {Path(f.path).name: (f.harness, f.skip_reason) for f in discover([SAMPLES])}
    assert found == {
        "kimi.json": (None, "not_a_log"),
        "wire.jsonl": ("kimi-cli", None),
        "context.jsonl": (None, "no_session"),
        "context_sub_1.jsonl": (None, "no_session"),
        "context_sub_2.jsonl": (None, "no_session"),
    }
    assert log_of(str(FOLDER / "context_sub_2.jsonl")) == str(WIRE)
    assert log_of(str(FOLDER / "context.jsonl")) is None  # the main context holds nothing the wire lacks


def test_main_session_and_subagents_exactly():
    f = kimi_cli.parse(str(WIRE))
    _schema_ok(f)
    cols = ["session_id", "agent_id", "session_kind", "layout", "parent_native_id", "parent_tool_use_id",
            "agent_type", "cwd", "started_at", "ended_at", "first_prompt_hash", "n_records"]  # fmt: skip
    assert f.sessions.select(cols).rows() == [
        (MAIN, None, "main", "main", None, None, None, WORKDIR, at(0), at(11.2), text_hash(PROMPT), 26),
        (SUB1, "context_sub_1", "subagent", "inline", SESSION, "Task:0", "coder", WORKDIR, at(1.5), at(3.2),
         text_hash(BRIEF_1), 9),
        (SUB2, "context_sub_2", "subagent", "inline", SESSION, "Task:3", "coder", WORKDIR, at(5.8), at(9.7),
         text_hash(BRIEF_2), 9),
    ]  # fmt: skip
    assert f.calls.select("session_id", "call_id", "tool", "kind", "started_at", "ended_at", "is_error",
                          "result_agent_id").rows() == [
        (MAIN, "Task:0", "Task", "spawn", at(1.2), at(3.3), False, "context_sub_1"),
        (MAIN, "StrReplaceFile:1", "StrReplaceFile", "edit", at(3.8), at(4.6), False, None),
        (MAIN, "ReadFile:2", "ReadFile", "read", at(5.0), at(5.2), False, None),
        (MAIN, "Task:3", "Task", "spawn", at(5.6), at(9.8), False, "context_sub_2"),
        (SUB1, "Grep:0", "Grep", "other", at(2.0), at(2.4), False, None),
        (SUB2, "Shell:0", "Shell", "shell", at(6.0), at(9.0), True, None),
    ]  # fmt: skip
    spawn = f.calls.filter(call_id="Task:0").to_dicts()[0]
    assert (spawn["subagent_type"], spawn["prompt_hash"]) == ("coder", text_hash(BRIEF_1))
    assert f.calls.filter(kind="shell")["command"].to_list() == ["pytest -q tests/cli"]
    assert f.file_events.select("call_id", "ts", "path", "op").rows() == [
        ("StrReplaceFile:1", at(4.6), f"{WORKDIR}/src/lantern/cli.py", "write"),
        ("ReadFile:2", at(5.2), f"{WORKDIR}/src/lantern/render.py", "read"),
    ]
    # One row per StatusUpdate with token_usage; a subagent's are its own, not its parent's.
    cols = ["session_id", "message_id", "input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens"]
    assert f.usage.select(cols).rows() == [
        (MAIN, "chatcmpl-a1", 3200, 80, 0, 1500),
        (MAIN, "chatcmpl-a2", 400, 60, 4700, 0),
        (MAIN, "chatcmpl-a3", 300, 40, 5100, 0),
        (MAIN, "chatcmpl-a4", 350, 70, 5400, 0),
        (MAIN, "chatcmpl-a5", 500, 120, 2000, 0),
        (SUB1, "chatcmpl-s1", 1800, 30, 0, 0),
        (SUB1, "chatcmpl-s2", 200, 20, 1800, 0),
        (SUB2, "chatcmpl-t1", 1900, 25, 0, 0),
        (SUB2, "chatcmpl-t2", 150, 15, 1900, 0),
    ]
    assert f.usage["model"].null_count() == f.usage.height  # no session file names the model
    steps = f.steps.filter(session_id=MAIN).select("seq", "role", "kind", "call_id", "is_error", "input_tokens")
    assert steps.rows() == [
        (0, "user", "prompt", None, None, None),
        (1, "assistant", "thinking", None, None, 3200),
        (2, "assistant", "tool_call", "Task:0", None, None),
        (3, "tool", "tool_result", "Task:0", False, None),
        (4, "assistant", "tool_call", "StrReplaceFile:1", None, 400),
        (5, "tool", "tool_result", "StrReplaceFile:1", False, None),
        (6, "assistant", "tool_call", "ReadFile:2", None, 300),
        (7, "tool", "tool_result", "ReadFile:2", False, None),
        (8, "assistant", "tool_call", "Task:3", None, 350),
        (9, "tool", "tool_result", "Task:3", False, None),
        (10, "system", "compaction", None, None, None),
        (11, "assistant", "text", None, None, 500),
    ]
    assert f.steps.filter(session_id=SUB2).select("seq", "role", "kind", "is_error").rows() == [
        (0, "system", "context", None),
        (1, "assistant", "tool_call", None),
        (2, "tool", "tool_result", True),
        (3, "assistant", "text", None),
    ]
    assert f.diagnostics.height == 0


def test_spawn_edges_by_call_id(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, dst, src_call_id, tier FROM edges WHERE kind = 'spawn' ORDER BY dst").rows()
    assert edges == [(MAIN, SUB1, "Task:0", "verified"), (MAIN, SUB2, "Task:3", "verified")]


def test_without_context_files_a_subagent_is_named_by_its_call(tmp_path):
    session = tmp_path / "sessions" / "bucket" / SESSION
    session.mkdir(parents=True)
    shutil.copy(WIRE, session / "wire.jsonl")
    shutil.copy(FOLDER / "context_sub_2.jsonl", session / "context_sub_1.jsonl")  # numbers need not match
    f = kimi_cli.parse(str(session / "wire.jsonl"))
    assert f.sessions.select("agent_id", "parent_tool_use_id", "cwd").rows() == [
        (None, None, None),  # no kimi.json above it: no cwd
        ("Task:0", "Task:0", None),
        ("context_sub_1", "Task:3", None),  # joined by its first prompt
    ]
    assert f.calls.filter(kind="spawn")["result_agent_id"].to_list() == ["Task:0", "context_sub_1"]


def test_a_logged_agent_id_names_the_subagent(tmp_path):
    """The later SubagentEvent (parent_tool_call_id, agent_id, subagent_type), nested one deeper."""
    lines = [
        b'{"type":"metadata","protocol_version":"1.9"}',
        b'{"timestamp":1.0,"message":{"type":"ToolCall","payload":{"type":"function","id":"Agent:0",'
        b'"function":{"name":"Agent","arguments":"{\\"subagent_type\\":\\"explore\\",\\"prompt\\":\\"look\\"}"}}}}',
        b'{"timestamp":2.0,"message":{"type":"SubagentEvent","payload":{"parent_tool_call_id":"Agent:0",'
        b'"agent_id":"a1b2","subagent_type":"explore","event":{"type":"SubagentEvent","payload":'
        b'{"parent_tool_call_id":"Agent:9","agent_id":"c3d4","event":{"type":"TurnBegin","payload":{"user_input":"deeper"}}}}}}}',
        b'{"timestamp":3.0,"message":{"type":"SubagentEvent","payload":{"parent_tool_call_id":"Agent:0",'
        b'"agent_id":"a1b2","event":{"type":"ToolCall","payload":{"type":"function","id":"Agent:9",'
        b'"function":{"name":"Agent","arguments":"{}"}}}}}}',
    ]
    wire = tmp_path / "s1" / "wire.jsonl"
    wire.parent.mkdir()
    wire.write_bytes(b"\n".join(lines) + b"\n")
    f = kimi_cli.parse(str(wire))
    _schema_ok(f)
    assert f.sessions.select("session_id", "parent_native_id", "parent_tool_use_id", "agent_type").rows() == [
        ("kimi-cli:s1", None, None, None),
        ("kimi-cli:s1/a1b2", "s1", "Agent:0", "explore"),
        ("kimi-cli:s1/a1b2/c3d4", "s1/a1b2", "Agent:9", None),
    ]
    assert f.calls.select("session_id", "result_agent_id").rows() == [
        ("kimi-cli:s1", "a1b2"),
        ("kimi-cli:s1/a1b2", "c3d4"),
    ]


def test_bad_lines(tmp_path):
    lines = [
        b'{"type":"metadata","protocol_version":"1.3"}',
        b"not json",
        b'{"timestamp":"soon","message":{"type":"TurnBegin","payload":{"user_input":"hi"}}}',
        b'{"timestamp":1.0,"message":7}',
        b'{"timestamp":1.0,"message":{"type":"Mystery","payload":{}}}',
        b'{"timestamp":1.0,"message":{"type":"StatusUpdate","payload":{"token_usage":[1]}}}',
        b'{"timestamp":1.0,"message":{"type":"ToolCall","payload":{"id":"X","function":{"name":"Shell","arguments":"{oops"}}}}',
        b'{"timestamp":1.0,"message":{"type":"ToolResult","payload":{"tool_call_id":"Y","return_value":{}}}}',
        b'{"timestamp":1.0,"message":{"type":"SubagentEvent","payload":{"event":{}}}}',
        b'{"timestamp":1.0,"message":{"type":"TurnEnd","payl',
    ]
    wire = tmp_path / "abc" / "wire.jsonl"
    wire.parent.mkdir()
    wire.write_bytes(b"\n".join(lines))
    f = kimi_cli.parse(str(wire))
    _schema_ok(f)
    assert sorted(f.diagnostics["code"]) == [
        "bad_arguments",
        "bad_timestamp",
        "invalid_json",
        "truncated_line",
        "unknown_record_type",
        "unmatched_result",
        "wrong_type",
        "wrong_type",
        "wrong_type",
    ]
    assert f.sessions["session_id"].to_list() == ["kimi-cli:abc"]


def test_samples_are_generated(tmp_path):
    copy = tmp_path / "gen"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("sessions", "kimi.json"))
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".jsonl", ".json")):
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name


def test_a_changed_context_file_reads_its_wire_again(tmp_path):
    """Only a subagent's context file changes (here: appears): the wire (``log_of``) is read
    again, and the subagent is named after its file."""
    session = tmp_path / "sessions" / "bucket" / SESSION
    session.mkdir(parents=True)
    shutil.copy(WIRE, session / "wire.jsonl")
    db = tmp_path / "s.duckdb"
    ingest([str(tmp_path)], db=str(db), workers=1)
    shutil.copy(FOLDER / "context_sub_1.jsonl", session / "context_sub_1.jsonl")
    summary = ingest([str(tmp_path)], db=str(db), workers=1)
    assert summary.files_read == 1
    with Store(db, read_only=True) as st:
        ids = st.query("SELECT agent_id FROM sessions WHERE agent_id IS NOT NULL ORDER BY 1").rows()
    assert ids == [("Task:3",), ("context_sub_1",)]


def test_a_subagent_with_a_wire_of_its_own_is_read_once(tmp_path):
    """The later layout: <session>/subagents/<agent id>/wire.jsonl is the subagent's session; the
    parent's SubagentEvents for that agent are not a second copy of it."""
    session = tmp_path / "sessions" / "bucket" / "s9"
    (session / "subagents" / "a1").mkdir(parents=True)
    call = (
        b'{"timestamp":1.0,"message":{"type":"ToolCall","payload":{"type":"function","id":"Agent:0",'
        b'"function":{"name":"Agent","arguments":"{\\"prompt\\":\\"look\\"}"}}}}'
    )
    usage = b'{"type":"StatusUpdate","payload":{"token_usage":{"input_other":10,"output":5}}}'
    mirrored = (
        b'{"timestamp":2.0,"message":{"type":"SubagentEvent","payload":{"parent_tool_call_id":"Agent:0",'
        b'"agent_id":"a1","event":' + usage + b"}}}"
    )
    meta = b'{"type":"metadata","protocol_version":"1.9"}'
    (session / "wire.jsonl").write_bytes(b"\n".join([meta, call, mirrored]) + b"\n")
    own = b'{"timestamp":2.0,"message":' + usage + b"}"
    (session / "subagents" / "a1" / "wire.jsonl").write_bytes(b"\n".join([meta, own]) + b"\n")
    parent = kimi_cli.parse(str(session / "wire.jsonl"))
    child = kimi_cli.parse(str(session / "subagents" / "a1" / "wire.jsonl"))
    assert parent.sessions["session_id"].to_list() == ["kimi-cli:s9"]
    assert parent.calls["result_agent_id"].to_list() == ["a1"]
    assert parent.usage.height == 0
    assert child.sessions.select("session_id", "agent_id", "session_kind", "layout", "parent_native_id").rows() == [
        ("kimi-cli:s9/a1", "a1", "subagent", "nested", "s9")
    ]
    assert child.usage.select("input_tokens", "output_tokens").rows() == [(10, 5)]
    db = tmp_path / "s.duckdb"
    ingest([str(tmp_path)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, dst, src_call_id, tier FROM edges WHERE kind = 'spawn'").rows()
    assert edges == [("kimi-cli:s9", "kimi-cli:s9/a1", "Agent:0", "verified")]


def test_a_wire_from_before_the_metadata_header(tmp_path):
    wire = tmp_path / "s0" / "wire.jsonl"
    wire.parent.mkdir()
    wire.write_bytes(
        b'{"timestamp":1785700000.5,"message":{"type":"TurnBegin","payload":{"user_input":"hello"}}}\n'
        b'{"timestamp":1785700001,"message":{"type":"TurnEnd","payload":{}}}\n'
    )
    assert classify(str(wire)).harness == "kimi-cli"
    f = kimi_cli.parse(str(wire))
    assert f.sessions.select("session_id", "n_records", "first_prompt_hash").rows() == [
        ("kimi-cli:s0", 2, text_hash("hello"))
    ]
    assert f.diagnostics.height == 0


def test_a_broken_share_index_is_a_diagnostic(tmp_path):
    share = tmp_path / "share"
    session = share / "sessions" / hashlib.md5(WORKDIR.encode()).hexdigest() / SESSION
    session.mkdir(parents=True)
    shutil.copy(WIRE, session / "wire.jsonl")
    for broken in (b'{"work_dirs": 7}', b"[1, 2", b'{"work_dirs": [{"path": 5}, "x"]}'):
        (share / "kimi.json").write_bytes(broken)
        f = kimi_cli.parse(str(session / "wire.jsonl"))
        _schema_ok(f)
        assert f.sessions["cwd"].null_count() == 3
        assert f.diagnostics["code"].to_list() == ([] if b"path" in broken else ["bad_sidecar"])
