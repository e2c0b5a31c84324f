"""GitHub Copilot CLI adapter: the three storage generations (a session folder's events.jsonl with
its workspace.yaml, a flat <uuid>.jsonl, a legacy history-session-state object), runs of one file
(session.resume), shutdown metrics per run (cumulative or reset), and a task subagent."""

from __future__ import annotations

import runpy
import shutil
from datetime import datetime
from pathlib import Path

from sessiongraph.ingest import copilot
from sessiongraph.ingest.discover import classify, discover
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.ingest.registry import log_of
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "copilot-cli"
NEW = "4f8a2c1d-6b3e-4d5a-9c7f-0e1d2b3a4c5e"
FLAT = "9b2e7d4c-1a3f-4e6b-8d5c-2f0a1b9c8d7e"
OLD = "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f"
EVENTS = SAMPLES / "session-state" / NEW / "events.jsonl"
FLAT_LOG = SAMPLES / "session-state" / f"{FLAT}.jsonl"
HISTORY = SAMPLES / "history-session-state" / f"session_{OLD}_1759957816398.json"
CWD = "/home/dev/projects/beacon"
MAIN, CHILD = f"copilot-cli:{NEW}", f"copilot-cli:{NEW}/b7e1c2d3"
BRIEF = "Find where the beacon config is loaded and list its keys."


def ts(text: str) -> datetime:
    return datetime.fromisoformat(text)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_every_generation_is_detected_and_the_side_file_is_not_a_log():
    found = {Path(f.path).name: (f.harness, f.skip_reason) for f in discover([SAMPLES])}
    assert found == {
        "events.jsonl": ("copilot-cli", None),
        "workspace.yaml": (None, "not_a_log"),
        f"{FLAT}.jsonl": ("copilot-cli", None),
        HISTORY.name: ("copilot-cli", None),
    }
    assert log_of(str(EVENTS.parent / "workspace.yaml")) == str(EVENTS)
    assert log_of(str(EVENTS)) is None


def test_session_folder_frames_exactly():
    f = copilot.parse(str(EVENTS))
    _schema_ok(f)
    cols = ["session_id", "attempt", "agent_id", "session_kind", "layout", "parent_native_id", "parent_tool_use_id",
            "agent_type", "started_at", "ended_at", "model", "first_prompt_hash", "n_records"]  # fmt: skip
    assert f.sessions.select(cols).rows() == [
        (MAIN, 1, None, "main", "main", None, None, None, ts("2026-08-05T10:00:00Z"), ts("2026-08-05T10:01:00Z"),
         "claude-sonnet-4.5", text_hash("Add a --dry-run flag to beacon sync."), 13),
        (MAIN, 2, None, "main", "main", None, None, None, ts("2026-08-05T11:00:00Z"), ts("2026-08-05T11:00:30Z"),
         "claude-sonnet-4.5", text_hash("Now run the sync tests."), 7),
        (CHILD, None, "b7e1c2d3", "subagent", "inline", NEW, "toolu_task1", "explore", ts("2026-08-05T10:00:08.2Z"),
         ts("2026-08-05T10:00:12Z"), "claude-haiku-4.5", text_hash(BRIEF), 5),
    ]  # fmt: skip
    s = f.sessions.row(0, named=True)
    assert (s["cwd"], s["git_branch"], s["git_commit"], s["git_repo"], s["harness_version"]) == (
        CWD,
        "main",
        "3e1f2a9",
        "dev/beacon",
        "1.0.18",
    )
    assert f.calls.select("session_id", "call_id", "tool", "kind", "is_error", "result_agent_id").rows() == [
        (MAIN, "toolu_task1", "task", "spawn", False, "b7e1c2d3"),
        (MAIN, "toolu_e1", "edit", "edit", False, None),
        (MAIN, "toolu_b1", "bash", "shell", True, None),
        (CHILD, "toolu_v1", "view", "read", False, None),
    ]
    spawn = f.calls.row(0, named=True)
    assert (spawn["subagent_type"], spawn["prompt_hash"]) == ("explore", text_hash(BRIEF))
    assert f.calls.filter(kind="shell")["command"].to_list() == ["pytest -q tests/test_sync.py"]
    assert f.file_events.select("session_id", "path", "op").rows() == [
        (MAIN, f"{CWD}/src/beacon/sync.py", "write"),
        (CHILD, f"{CWD}/src/beacon/config.py", "read"),  # relative: placed under the session's cwd
    ]
    # Run 2's shutdown repeats run 1's figures: its own use is the difference (haiku: nothing new).
    # A shutdown's figures are the run's totals per model: session-level rows, no request each.
    cols = ["session_id", "attempt", "model", "input_tokens", "output_tokens", "cache_read_tokens",
            "cache_creation_tokens", "line", "scope"]  # fmt: skip
    assert f.usage.select(cols).rows() == [
        (MAIN, 1, "claude-sonnet-4.5", 12000 - 8000 - 1500, 100, 8000, 1500, 18, "session"),
        (MAIN, 1, "claude-haiku-4.5", 3000 - 1000, 45, 1000, 0, 18, "session"),
        (MAIN, 2, "claude-sonnet-4.5", 3500 - 2000, 25, 2000, 0, 25, "session"),
    ]
    assert f.steps.filter(session_id=MAIN).select("attempt", "seq", "role", "kind", "call_id", "is_error").rows() == [
        (1, 0, "user", "prompt", None, None),
        (1, 1, "assistant", "text", None, None),
        (1, 2, "assistant", "tool_call", "toolu_task1", None),
        (1, 3, "tool", "tool_result", "toolu_task1", False),
        (1, 4, "assistant", "thinking", None, None),
        (1, 5, "assistant", "tool_call", "toolu_e1", None),
        (1, 6, "tool", "tool_result", "toolu_e1", False),
        (2, 7, "user", "prompt", None, None),
        (2, 8, "assistant", "tool_call", "toolu_b1", None),
        (2, 9, "tool", "tool_result", "toolu_b1", True),
        (2, 10, "user", "interrupt", None, None),
    ]
    assert f.steps.filter(session_id=CHILD)["kind"].to_list() == ["context", "tool_call", "tool_result", "text"]
    assert f.diagnostics.height == 0


def test_flat_log_with_a_reset_counter_and_a_run_cut_off():
    f = copilot.parse(str(FLAT_LOG))
    _schema_ok(f)
    sid = f"copilot-cli:{FLAT}"
    assert f.sessions.select("attempt", "layout", "harness_version", "model", "n_records").rows() == [
        (1, "flat", "unknown", "gpt-5", 7),
        (2, "flat", "unknown", "gpt-5", 4),
        (3, "flat", "unknown", "gpt-5", 3),
    ]
    cols = ["session_id", "attempt", "message_id", "input_tokens", "output_tokens", "cache_read_tokens",
            "reasoning_tokens", "scope"]  # fmt: skip
    assert f.usage.select(cols).rows() == [
        (sid, 1, "shutdown:7:gpt-5", 3000, 300, 2000, 120, "session"),
        (sid, 2, "shutdown:11:gpt-5", 900, 12, 900, 0, "session"),  # lower than run 1's: the run's own figure
        (sid, 3, "f-3", 0, 7, 0, 0, None),  # no shutdown: the message's outputTokens, one request
    ]
    assert f.file_events.select("path", "op").rows() == [(f"{CWD}/CHANGELOG.md", "write")]


def test_legacy_history_object():
    f = copilot.parse(str(HISTORY))
    _schema_ok(f)
    assert f.sessions.select("session_id", "layout", "started_at", "ended_at", "n_records").rows() == [
        (f"copilot-cli:{OLD}", "history", ts("2025-10-08T21:10:16.398Z"), ts("2025-10-08T21:10:27.5Z"), 4)
    ]
    assert f.calls.select("call_id", "tool", "kind", "paths").rows() == [
        ("call_h1", "str_replace_editor", "read", [f"{CWD}/README.md"])
    ]
    assert f.steps["kind"].to_list() == ["prompt", "tool_call", "tool_result", "text"]
    assert f.usage.height == 0
    assert f.diagnostics["code"].to_list() == ["no_token_counts"]


def test_spawn_edge_by_the_task_call(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, dst, src_call_id, tier FROM edges WHERE kind = 'spawn'").rows()
    assert edges == [(MAIN, CHILD, "toolu_task1", "verified")]


def test_the_workspace_file_fills_what_the_events_lack_and_a_broken_one_is_a_diagnostic(tmp_path):
    folder = tmp_path / "session-state" / "s-1"
    folder.mkdir(parents=True)
    (folder / "events.jsonl").write_bytes(
        b'{"type":"user.message","data":{"content":"hi"},"id":"1","timestamp":"2026-01-01T00:00:00Z","parentId":null}\n'
    )
    (folder / "workspace.yaml").write_text("id: s-9\ncwd: /w/app\nbranch: dev\nrepository: me/app\n")
    f = copilot.parse(str(folder / "events.jsonl"))
    assert f.sessions.select("session_id", "cwd", "git_branch", "git_repo").rows() == [
        ("copilot-cli:s-9", "/w/app", "dev", "me/app")
    ]
    for broken in ("cwd: [unclosed\n", "- a list\n- not a map\n"):
        (folder / "workspace.yaml").write_text(broken)
        f = copilot.parse(str(folder / "events.jsonl"))
        assert f.diagnostics["code"].to_list() == ["bad_sidecar"]
        assert f.sessions.select("session_id", "cwd").rows() == [("copilot-cli:s-1", None)]


def test_bad_lines(tmp_path):
    lines = [
        b'{"type":"session.start","data":{"sessionId":"s-2"},"id":"1","timestamp":"2026-01-01T00:00:00Z"}',
        b"not json",
        b'{"type":"user.message","data":[1],"id":"2","timestamp":"later"}',
        b'{"type":"mystery.event","data":{},"id":"3","timestamp":"2026-01-01T00:00:01Z"}',
        b'{"type":"tool.execution_complete","data":{"toolCallId":"nope"},"id":"4","timestamp":"2026-01-01T00:00:02Z"}',
        b'{"type":"session.shutdown","data":{"modelMetrics":[1]},"id":"5","timestamp":"2026-01-01T00:00:03Z"}',
        b'{"type":"assistant.message","data":{"toolRequests":[{"toolCallId":"t","name":"bash","arguments":"{x"}]},'
        b'"id":"6","timestamp":"2026-01-01T00:00:04Z"}',
        b'{"type":"abort","data":{},"id":"7","timest',
    ]
    path = tmp_path / "s-2.jsonl"
    path.write_bytes(b"\n".join(lines))
    f = copilot.parse(str(path))
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
    ]
    assert f.sessions["session_id"].to_list() == ["copilot-cli:s-2"]
    broken = tmp_path / "history-session-state" / "session_x_1.json"
    broken.parent.mkdir()
    broken.write_bytes(b'{"sessionId": "x", "chatMessages": [1, {"role": 5}], "timeline": "no"}')
    assert classify(str(broken)).harness == "copilot-cli"
    f = copilot.parse(str(broken))
    _schema_ok(f)
    assert sorted(f.diagnostics["code"]) == ["no_token_counts", "unknown_record_type", "wrong_type"]


def test_no_other_harness_log_is_taken_for_copilots(samples):
    others = [p for p in samples.rglob("*.json*") if "copilot-cli" not in p.parts]
    assert len(others) > 100
    for path in others:
        assert not copilot.detect(str(path), path.read_bytes()[:65536]), path


def test_samples_are_generated(tmp_path):
    copy = tmp_path / "gen"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("session-state", "history-session-state"))
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in sorted(p for p in SAMPLES.rglob("*") if p.is_file() and p.suffix != ".py"):
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name


def test_a_changed_workspace_file_reads_its_log_again(tmp_path):
    """Only workspace.yaml changes: its events.jsonl (``log_of``) is read again."""
    folder = tmp_path / "session-state" / "s-3"
    folder.mkdir(parents=True)
    events = folder / "events.jsonl"
    events.write_bytes(
        b'{"type":"user.message","data":{"content":"hi"},"id":"1","timestamp":"2026-01-01T00:00:00Z","parentId":null}\n'
    )
    (folder / "workspace.yaml").write_text("cwd: /w/one\n")
    db = tmp_path / "s.duckdb"
    ingest([str(tmp_path)], db=str(db), workers=1)
    (folder / "workspace.yaml").write_text("cwd: /w/two\nbranch: next\n")
    summary = ingest([str(tmp_path)], db=str(db), workers=1)
    assert summary.files_read == 1  # the log (the side file itself is no log)
    with Store(db, read_only=True) as st:
        assert st.query("SELECT cwd, git_branch FROM sessions").rows() == [("/w/two", "next")]
