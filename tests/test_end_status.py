"""How a session's own log ends (sessions.end_status): completed, error, interrupted or unknown,
with the line of the record that says so; `sessions --status` and SQL find the failed ones."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.ingest import claude_code, codex
from tests.conftest import ROOT

SID = "11111111-2222-4333-8444-555555555555"


def claude(path: Path, *records: dict) -> Path:
    lines = []
    for i, r in enumerate(records):
        base = {
            "sessionId": SID,
            "cwd": "/w",
            "version": "2.1.39",
            "uuid": f"u{i}",
            "timestamp": f"2026-01-02T03:04:{i:02d}Z",
        }
        lines.append(json.dumps(base | r))
    path.write_text("\n".join(lines) + "\n")
    return path


PROMPT = {"type": "user", "message": {"role": "user", "content": "do it"}}
CALL = {
    "type": "assistant",
    "message": {
        "id": "m1",
        "model": "claude-sonnet-4-5",
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}],
    },
}
RESULT = {
    "type": "user",
    "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
}
ANSWER = {
    "type": "assistant",
    "message": {
        "id": "m2",
        "model": "claude-sonnet-4-5",
        "role": "assistant",
        "content": [{"type": "text", "text": "done"}],
        "stop_reason": "end_turn",
    },
}
API_ERROR = {
    "type": "assistant",
    "isApiErrorMessage": True,
    "error": "overloaded",
    "message": {
        "id": "m3",
        "model": "<synthetic>",
        "role": "assistant",
        "content": [{"type": "text", "text": "API Error: 529"}],
    },
}
INTERRUPT = {
    "type": "user",
    "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user for tool use]"}]},
}
HOOK = {"type": "user", "message": {"role": "user", "content": "<local-command-stdout>ok</local-command-stdout>"}}
SYSTEM = {"type": "system", "subtype": "turn_duration", "durationMs": 5}


@pytest.mark.parametrize(
    "records, status, line",
    [
        ((PROMPT, CALL, RESULT, ANSWER), "completed", 4),
        ((PROMPT, CALL, RESULT, ANSWER, SYSTEM), "completed", 4),  # bookkeeping after the answer
        ((PROMPT, CALL, RESULT, API_ERROR), "error", 4),
        ((PROMPT, CALL, INTERRUPT, HOOK, SYSTEM), "interrupted", 3),
        ((PROMPT, CALL), "unknown", None),  # waiting on its tool: running, or cut off
        ((PROMPT, CALL, RESULT, ANSWER, PROMPT), "unknown", None),  # a new turn under way
    ],
)
def test_claude_code(tmp_path, records, status, line):
    frames = claude_code.parse(str(claude(tmp_path / f"{SID}.jsonl", *records)))
    assert frames.sessions.select("end_status", "end_line").row(0) == (status, line)


def rollout(path: Path, *events: dict) -> Path:
    meta = {
        "type": "session_meta",
        "payload": {
            "id": "019b0000-0000-7000-8000-000000000001",
            "cwd": "/w",
            "timestamp": "2026-01-02T03:04:05Z",
            "originator": "codex_exec",
            "cli_version": "0.61.0",
            "source": "exec",
        },
    }
    lines = [meta] + [{"type": "event_msg", "payload": e} for e in events]
    path.write_text("\n".join(json.dumps({"timestamp": "2026-01-02T03:04:05Z"} | r) for r in lines) + "\n")
    return path


@pytest.mark.parametrize(
    "events, status, line",
    [
        (({"type": "task_started"}, {"type": "task_complete"}), "completed", 3),
        (({"type": "task_started"}, {"type": "turn_aborted", "reason": "interrupted"}), "interrupted", 3),
        (({"type": "task_started"}, {"type": "error", "message": "stream disconnected"}), "error", 3),
        (({"type": "task_started"}, {"type": "task_complete"}, {"type": "task_started"}), "unknown", None),
    ],
)
def test_codex(tmp_path, events, status, line):
    frames = codex.parse(
        str(rollout(tmp_path / "rollout-2026-01-02T03-04-05-019b0000-0000-7000-8000-000000000001.jsonl", *events))
    )
    assert frames.sessions.select("end_status", "end_line").row(0) == (status, line)


def test_failed_subagents_are_found(tmp_path):
    logs = tmp_path / "logs" / "proj" / SID / "subagents"
    logs.mkdir(parents=True)
    claude(logs.parents[0].with_suffix(".jsonl"), PROMPT, ANSWER)
    claude(
        logs / "agent-a1.jsonl",
        *({**r, "isSidechain": True, "agentId": "a1"} for r in (PROMPT, CALL, RESULT, API_ERROR)),
    )
    claude(logs / "agent-a2.jsonl", *({**r, "isSidechain": True, "agentId": "a2"} for r in (PROMPT, ANSWER)))
    db = tmp_path / "s.duckdb"
    run = lambda *a: CliRunner().invoke(main, [str(x) for x in a])  # noqa: E731
    assert run("ingest", tmp_path / "logs", "--db", db).exit_code == 0
    failed = json.loads(run("sessions", "--db", db, "--status", "error", "--format", "json").output)
    assert [(r["session_id"], r["kind"], r["status"]) for r in failed] == [
        (f"claude-code:{SID}/a1", "subagent", "error")
    ]
    res = run(
        "query",
        "--db",
        db,
        "--format",
        "json",
        "SELECT session_id, end_status, end_line, end_source FROM session_overview ORDER BY 1",
    )
    rows = {r["session_id"]: r for r in json.loads(res.output)}
    assert rows[f"claude-code:{SID}/a1"]["end_line"] == 4 and rows[f"claude-code:{SID}/a1"]["end_source"].endswith(
        "agent-a1.jsonl"
    )
    assert (
        rows[f"claude-code:{SID}"]["end_status"] == "completed"
        and rows[f"claude-code:{SID}/a2"]["end_status"] == "completed"
    )


def test_real_codex_workers_end_completed():
    family = ROOT.parent / "shared" / "real-families" / "codex-multi-agent-0.114"
    if not family.exists():
        pytest.skip("../shared/real-families not present")
    workers = [codex.parse(str(p)).sessions.row(0, named=True) for p in sorted(family.glob("*.jsonl"))]
    kids = [w for w in workers if w["session_kind"] == "subagent"]
    assert len(kids) == 3 and all(w["end_status"] == "completed" and w["end_line"] for w in kids)
