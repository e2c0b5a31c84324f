"""The Claude Code adapter on sample_logs/claude-code, checked against expected.json.

expected.json was computed by sample_logs/claude-code/_scripts/compute_expected.py straight from
the raw JSON (not through this adapter), so each field here is an independent check.
"""

from __future__ import annotations

import json
from datetime import datetime

import polars as pl
import pytest

from sessiongraph.ingest import claude_code
from tests.conftest import SAMPLES

FOLDER = SAMPLES / "claude-code"
EXPECTED = json.loads((FOLDER / "expected.json").read_text())
FILES = sorted(EXPECTED["files"])


def _ts(value: str | None):
    return datetime.fromisoformat(value) if value else None


def _streams(rel: str):
    """(session_id, expected stream) for the file's own session and its inline sidechains."""
    exp = EXPECTED["files"][rel]
    base = f"claude-code:{exp['sessionId']}"
    own = f"{base}/{exp['agentId']}" if exp["agentId"] else base
    yield own, exp
    for side in exp["inline_sidechains"]:
        yield f"{base}/{side['stream'].split(':', 1)[1]}", side


@pytest.fixture(scope="module")
def parsed():
    return {rel: claude_code.parse(str(FOLDER / rel)) for rel in FILES}


@pytest.mark.parametrize("rel", FILES)
def test_sessions(parsed, rel):
    frames = parsed[rel]
    got = {r["session_id"]: r for r in frames.sessions.iter_rows(named=True)}
    streams = dict(_streams(rel))
    assert set(got) == set(streams)
    for sid, exp in streams.items():
        s = got[sid]
        assert s["session_kind"] == exp["kind"], sid
        assert s["layout"] == exp["layout"], sid
        assert s["harness_version"] == exp["version"]
        assert s["cwd"] == exp["cwd"]
        assert s["git_branch"] == exp["gitBranch"]
        assert s["entrypoint"] == exp["entrypoint"]
        assert s["slug"] == exp["slug"]
        assert s["started_at"] == _ts(exp["first_timestamp"])
        assert s["ended_at"] == _ts(exp["last_timestamp"])
        assert s["first_prompt_hash"] == exp["first_prompt_sha256"]
        assert (s["model"] in exp["models"]) if exp["models"] else s["model"] is None
        meta = exp["meta_json"] or {}
        assert s["parent_tool_use_id"] == meta.get("toolUseId") or exp["layout"] == "inline"
        # a workflow agent's parent is the wf_<runId> folder it lies in (its run's journal session)
        assert s["parent_agent_id"] == (meta.get("parentAgentId") or exp.get("run_folder"))
        assert s["spawn_depth"] == meta.get("spawnDepth")
        assert s["agent_type"] == meta.get("agentType")
        assert s["agent_name"] == exp.get("agent_name")
        assert s["team_name"] == exp["team_name"]


@pytest.mark.parametrize("rel", FILES)
def test_calls_and_spawn_evidence(parsed, rel):
    calls = parsed[rel].calls
    for sid, exp in _streams(rel):
        mine = calls.filter(pl.col("session_id") == sid)
        assert dict(mine.group_by("tool").len().iter_rows()) == exp["tool_use_counts"], sid
        spawns = {r["call_id"]: r for r in mine.filter(pl.col("kind") == "spawn").iter_rows(named=True)}
        assert set(spawns) == {c["tool_use_id"] for c in exp["spawn_calls"]}
        for c in exp["spawn_calls"]:
            got = spawns[c["tool_use_id"]]
            assert got["result_agent_id"] == c["result_agentId"]
            assert got["subagent_type"] == c["subagent_type"]
            assert got["run_in_background"] == c["run_in_background"]
            assert got["prompt_hash"] == c["prompt_sha256"]
            assert got["ended_at"] == _ts(c["ended_at"])
            assert (got["agent_name"], got["team_name"]) == (c["name"], c["team_name"])
        shells = {r["call_id"]: r for r in mine.filter(pl.col("kind") == "shell").iter_rows(named=True)}
        assert set(shells) == {c["tool_use_id"] for c in exp["shell_calls"]}
        for c in exp["shell_calls"]:
            assert shells[c["tool_use_id"]]["command"] == c["command"]
            assert shells[c["tool_use_id"]]["output_ids"] == c["output_session_ids"]
        errors = set(mine.filter(pl.col("is_error"))["call_id"])
        assert errors == {e["tool_use_id"] for e in exp["tool_errors"]}


@pytest.mark.parametrize("rel", FILES)
def test_file_events(parsed, rel):
    events = parsed[rel].file_events
    for sid, exp in _streams(rel):
        got = sorted(events.filter(pl.col("session_id") == sid).select("call_id", "path", "op", "how").rows())
        want = sorted(
            (f["tool_use_id"], f["path"], "read" if f["op"] == "search" else f["op"], f["tool"])
            for f in exp["file_paths"]
            if not f["is_error"]
        )
        assert got == want, sid
    assert set(events["tier"]) <= {"verified"}


@pytest.mark.parametrize("rel", FILES)
def test_tokens(parsed, rel):
    usage = parsed[rel].usage
    for sid, exp in _streams(rel):
        t = exp["tokens"]
        mine = usage.filter(pl.col("session_id") == sid)
        assert mine.height == t["unique_messages"], sid
        sums = (
            mine.select(
                pl.all().exclude("session_id", "ts", "model", "message_id", "request_id", "source_path", "line")
            )
            .sum()
            .row(0, named=True)
        )
        assert sums["input_tokens"] == t["input_tokens"]
        assert sums["output_tokens"] == t["output_tokens"]
        assert sums["cache_read_tokens"] == t["cache_read_input_tokens"]
        assert sums["cache_creation_tokens"] == t["cache_creation_input_tokens"]
        assert sums["cache_creation_1h_tokens"] == t["ephemeral_1h"]
        # Builds that log no 5m/1h split wrote 5-minute cache only.
        split = t["ephemeral_5m"] + t["ephemeral_1h"]
        expected_5m = t["ephemeral_5m"] if split else t["cache_creation_input_tokens"]
        assert sums["cache_creation_5m_tokens"] == expected_5m


def test_inline_sidechain_points_at_its_task_call(parsed):
    rel = "projects/-home-dev-projects-ink-well-v2/8d01e46b-93c8-4893-98fb-341408c64324.jsonl"
    sessions = parsed[rel].sessions.filter(pl.col("layout") == "inline")
    by_kind = dict(sessions.select("session_kind", "parent_tool_use_id").iter_rows())
    assert by_kind == {"subagent": "toolu_019BKi0cdlgmMcWUfx4GbXdr", "warmup": None}


def test_hand_off_copy_is_not_counted_twice(parsed):
    rel = "projects/-home-dev-projects-tidepool/45e626f5-ff95-4312-8d3e-f9f04e2bb73a.jsonl"
    diags = parsed[rel].diagnostics.select("line", "code").rows()
    assert diags == [(1, "foreign_record")]


def test_no_diagnostics_on_good_samples(parsed):
    for rel, frames in parsed.items():
        if not EXPECTED["files"][rel]["foreign_records"]:
            assert frames.diagnostics.height == 0, (rel, frames.diagnostics.to_dicts())
