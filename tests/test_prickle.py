"""Prickle adapter: exact frames of the sample task files, snapshots and revisions, bad input,
and which files it claims."""

from __future__ import annotations

import hashlib
import json
import runpy
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from ingest import prickle
from ingest.discover import classify
from ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from ingest.jsonl import text_hash

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "prickle"
SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "prickle-task-states.md"
ARRAY = SAMPLES / "tasks.json"
EVENTS = SAMPLES / "impl-events.jsonl"
REVIEW = SAMPLES / "tasks" / "tsk_review_retry.json"
SHIP = SAMPLES / "tasks" / "tsk_ship_retry.json"


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# The made-up artifact texts of _generate.py, hashed here independently.
PLAN = sha("# Retry plan\n\n1. wrap push() in backoff\n2. three retries\n")
IMPL1 = sha("diff --git a/harbor/sync.py b/harbor/sync.py\n+    for attempt in range(3):\n")
IMPL2 = sha("diff --git a/harbor/sync.py b/harbor/sync.py\n+    return with_backoff(push, retries=3)\n")
REVIEWED = sha("# Review: retries\n\nLooks right; jitter would help.\n")
DOCS = sha("# Retries\n\nharbor retries a push three times with backoff.\n")
NOWHERE = sha("retry policy memory fact, never written by a task in these files\n")


def at(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-01-12T{hms}+00:00").astimezone(UTC)


def _head(path: Path) -> bytes:
    return path.read_bytes()[:65536]


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)
    assert frames.calls.height == frames.usage.height == 0


SESSION_COLS = ("session_id", "attempt", "session_kind", "started_at", "ended_at", "agent_type", "entrypoint",
                "originator", "parent_native_id", "caused_by_id", "depends_on", "n_records")


# -- detection ---------------------------------------------------------------------------------


def test_detect_claims_task_files_only(tmp_path):
    for path in (ARRAY, EVENTS, REVIEW, SHIP):
        assert prickle.detect(str(path), _head(path)), path.name
        assert classify(str(path)).harness == "prickle", path.name
    samples = ROOT / "sample_logs"
    others = [
        *(samples / "opencode/storage").rglob("*.json"), *(samples / "gemini-cli").rglob("*.json*"),
        *(samples / "ocp").glob("*.json"), *(samples / "codex/sessions").rglob("*.jsonl"),
        *(samples / "claude-code/projects").rglob("*.json*"),
    ]
    assert len(others) > 50
    for path in others:
        assert not prickle.detect(str(path), _head(path)), path
    task = json.loads(REVIEW.read_text())
    partial = {k: v for k, v in task.items() if k not in ("packet",)}
    for name, obj in {"partial.json": partial, "settings.json": {"id": "x", "state": "on"},
                      "list.json": [1, 2], "empty-array.json": []}.items():
        (tmp_path / name).write_text(json.dumps(obj))
        assert not prickle.detect(str(tmp_path / name), _head(tmp_path / name)), name
    # A long array cut off by the head is still recognised by its first task's keys.
    big = tmp_path / "big.json"
    big.write_text(json.dumps([task] * 200, indent=2))
    assert prickle.detect(str(big), big.read_bytes()[:65536])
    assert not prickle.detect("x.json", b"\xff\xfe")


# -- the samples -------------------------------------------------------------------------------


def test_array_file_frames_exactly():
    f = prickle.parse(str(ARRAY))
    _schema_ok(f)
    assert f.sessions.select(SESSION_COLS).rows() == [
        ("prickle:tsk_plan_retry", 1, "main", at("09:00:00"), at("09:21:00"), "acme/planner", "handoff", "acme/lead",
         None, None, [], 1),
        ("prickle:tsk_docs_retry", 1, "main", at("11:20:00"), at("12:01:00"), "acme/writer", "handoff", "acme/lead",
         None, "tsk_impl_retry", ["tsk_impl_retry", "tsk_ext_perf_9"], 1),
        ("prickle:tsk_bench_retry", 1, "main", at("11:30:00"), at("11:45:00"), "acme/ops", "handoff", "acme/lead",
         None, None, [], 1),
    ]
    s = f.sessions.row(0, named=True)
    assert (s["harness"], s["native_id"], s["layout"], s["model"], s["cwd"]) == (
        "prickle", "tsk_plan_retry", "task", None, None)
    assert s["first_prompt_hash"] == text_hash("Plan retries for the harbor sync client")
    assert f.file_events.select("session_id", "ts", "path", "op", "how", "tier", "call_id").rows() == [
        ("prickle:tsk_plan_retry", at("09:20:00"), PLAN, "write", "result.artifacts", "verified", None),
        ("prickle:tsk_docs_retry", at("12:00:00"), DOCS, "write", "result.artifacts", "verified", None),
        ("prickle:tsk_docs_retry", at("12:00:00"), NOWHERE, "read", "lineage.context", "verified", None),
    ]
    assert f.diagnostics.select("line", "code", "detail").rows() == [
        (None, "wrong_type", "[2] task tsk_bench_retry: state 'paused' is not one of the 11 task states")]


def test_snapshots_of_one_task_make_one_node_with_two_attempts():
    f = prickle.parse(str(EVENTS))
    _schema_ok(f)
    # Four snapshots, the completed one on line 3: the latest updated_at wins, not the last line.
    assert f.sessions.select(SESSION_COLS).rows() == [
        ("prickle:tsk_impl_retry", 1, "subagent", at("09:22:00"), at("10:05:00"), "acme/coder", "handoff",
         "acme/planner", "tsk_plan_retry", None, ["tsk_plan_retry"], 3),
        ("prickle:tsk_impl_retry", 2, "subagent", at("10:05:00"), at("11:15:00"), "acme/coder", "handoff",
         "acme/planner", "tsk_plan_retry", None, ["tsk_plan_retry"], 1),
    ]
    git1, git2 = "git:4f2d9c1a7b3e5f6081a2b3c4d5e6f708192a3b4c", "git:9a8b7c6d5e4f30211f2e3d4c5b6a798877665544"
    assert f.file_events.select("ts", "path", "op", "line").rows() == [
        (at("10:05:00"), IMPL1, "write", 4), (at("10:05:00"), git1, "write", 4), (at("10:05:00"), PLAN, "read", 4),
        (at("11:10:00"), IMPL2, "write", 3), (at("11:10:00"), git2, "write", 3), (at("11:10:00"), PLAN, "read", 3),
    ]
    assert f.diagnostics.height == 0


def test_one_object_per_file():
    r, s = prickle.parse(str(REVIEW)), prickle.parse(str(SHIP))
    _schema_ok(r)
    assert r.sessions.select(SESSION_COLS).rows() == [
        ("prickle:tsk_review_retry", 1, "subagent", at("11:16:00"), at("11:41:00"), "acme/reviewer",
         "request_capability", "acme/planner", "tsk_plan_retry", None, [], 1)]
    assert r.file_events.select("path", "op").rows() == [(REVIEWED, "write"), (IMPL2, "read")]
    assert s.sessions.select(SESSION_COLS).rows() == [
        ("prickle:tsk_ship_retry", 1, "main", at("11:42:00"), at("11:43:00"), "acme/ops", "handoff", "acme/lead",
         None, None, ["tsk_review_retry"], 1)]
    assert s.file_events.height == 0 and r.diagnostics.height == s.diagnostics.height == 0


def test_no_text_reaches_the_frames():
    texts = ["Plan retries", "Three retries with backoff", "self-checked", "hand-rolled loop", "docs/plan-retry.md",
             "omsg_retry_77", "fake server up"]
    for path in (ARRAY, EVENTS, REVIEW, SHIP):
        dump = json.dumps([df.to_dicts() for df in prickle.parse(str(path)).tables().values()], default=str)
        assert not [t for t in texts if t in dump], path.name


def test_samples_follow_the_task_schema():
    jsonschema = pytest.importorskip("jsonschema")
    if not SEED.is_file():
        pytest.skip(f"seed not found at {SEED}")
    text = SEED.read_text()
    schema, _ = json.JSONDecoder().raw_decode(text[text.index('{\n  "$schema"'):])
    validator = jsonschema.Draft202012Validator(schema)
    tasks = json.loads(ARRAY.read_text()) + [json.loads(line) for line in EVENTS.read_text().splitlines()]
    tasks += [json.loads(REVIEW.read_text()), json.loads(SHIP.read_text())]
    bad = {t["id"]: [e.path[-1] if e.path else "" for e in validator.iter_errors(t)] for t in tasks}
    assert {k: v for k, v in bad.items() if v} == {"tsk_bench_retry": ["state"]}  # the planted distractor
    assert set(schema["properties"]["state"]["enum"]) == prickle.STATES
    assert tuple(schema["required"]) == prickle.REQUIRED


def test_samples_are_generated(tmp_path):
    copy = tmp_path / "prickle"
    copy.mkdir()
    shutil.copy(SAMPLES / "_generate.py", copy / "_generate.py")
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in (ARRAY, EVENTS, REVIEW, SHIP):
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name


# -- bad input ---------------------------------------------------------------------------------


def test_broken_tasks_in_an_array(tmp_path):
    tasks = json.loads(ARRAY.read_text())
    plan, docs, bench = tasks
    docs = json.loads(json.dumps(docs))
    del docs["latest_checkpoint"], docs["waiting_on"]
    docs["result"]["lineage"]["context"].append("not an item")
    docs["result"]["artifacts"].append({"ref": "x", "sha256": "ABC", "commit_sha": None})
    bench["waiting_on"] = "lunch"
    bench["parent_task_id"] = 12
    bench["updated_at"] = "soon"
    nameless = dict(plan, id="has spaces")
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([plan, "a string", docs, bench, nameless, None], indent=2))
    f = prickle.parse(str(path))
    assert f.diagnostics.select("line", "code", "detail").rows() == [
        (None, "not_object", "[1]: a JSON string"),
        (None, "bad_document", "[2] task tsk_docs_retry: missing required keys waiting_on, latest_checkpoint"),
        (None, "wrong_type", "[3] task tsk_bench_retry: state 'paused' is not one of the 11 task states"),
        (None, "wrong_type", "[3] task tsk_bench_retry: waiting_on 'lunch' is not a waiting reason"),
        (None, "bad_timestamp", "[3] task tsk_bench_retry: updated_at unparseable string"),
        (None, "bad_document", "[4]: task id string missing or not a task id; left out"),
        (None, "not_object", "[5]: a JSON null"),
        (None, "wrong_type", "task tsk_docs_retry: result.artifacts[1].sha256: string"),
        (None, "wrong_type", "task tsk_docs_retry: result.lineage.context[1].sha256: null"),
        (None, "wrong_type", "task tsk_bench_retry: parent_task_id: int"),
    ]
    # The good parts are all still there.
    assert f.sessions["session_id"].to_list() == ["prickle:tsk_plan_retry", "prickle:tsk_docs_retry",
                                                  "prickle:tsk_bench_retry"]
    assert f.sessions["parent_native_id"].to_list() == [None, None, None]
    assert f.file_events.select("path", "op").rows() == [(PLAN, "write"), (DOCS, "write"), (NOWHERE, "read")]
    assert f.sessions.row(2, named=True)["ended_at"] is None


def test_broken_lines_and_revisions_in_a_stream(tmp_path):
    lines = EVENTS.read_text().splitlines()
    done = json.loads(lines[2])
    done["result"]["revision"] = 0
    done["result"]["lineage"] = "see above"
    done["result"]["artifacts"] = {"ref": "x"}
    lines[2] = json.dumps(done)
    lines.insert(1, "{not json")
    lines.insert(2, "[]")
    path = tmp_path / "impl-events.jsonl"
    path.write_text("\n".join(lines) + "\n" + '{"id": "tsk_cut", "state"')
    f = prickle.parse(str(path))
    assert f.diagnostics.select("line", "code").rows() == [
        (2, "invalid_json"), (3, "not_object"), (7, "truncated_line"), (5, "wrong_type"), (5, "wrong_type"),
        (5, "wrong_type"),
    ]
    # Revision 0 counts as 1: one attempt of four snapshots. Its latest snapshot is the broken one,
    # whose artifacts and lineage were ignored; the node, its parent and dependencies remain.
    assert f.sessions.select("attempt", "n_records", "parent_native_id", "depends_on").rows() == [
        (1, 4, "tsk_plan_retry", ["tsk_plan_retry"])]
    assert f.file_events.height == 0


def test_whole_file_problems(tmp_path):
    cases = {"cut.json": ARRAY.read_text()[:400], "empty.json": "\n", "scalar.json": "7"}
    want = {"cut.json": ["invalid_json"], "empty.json": ["empty_file"], "scalar.json": ["not_object"]}
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        f = prickle.parse(str(tmp_path / name))
        assert f.diagnostics["code"].to_list() == want[name], name
        assert f.sessions.height == 0
    assert prickle.parse(str(tmp_path / "gone.json")).diagnostics["code"].to_list() == ["unreadable_file"]


def test_a_huge_revision_is_not_a_thousand_attempts(tmp_path):
    task = json.loads(REVIEW.read_text())
    task["result"]["revision"] = 2**53
    path = tmp_path / "t.json"
    path.write_text(json.dumps(task))
    f = prickle.parse(str(path))
    assert f.sessions["attempt"].to_list() == [1]
    assert f.diagnostics["code"].to_list() == ["wrong_type"]
