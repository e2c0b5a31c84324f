"""Prickle adapter: exact frames of the sample task files, snapshots and revisions, outcomes
(node state, attempt status, evidence, verdicts, state history) and the OCP documents made of
them, bad input, and which files it claims."""

from __future__ import annotations

import hashlib
import json
import runpy
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessiongraph.ingest import prickle
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "prickle"
SEED = Path(__file__).resolve().parents[2] / "shared" / "seeds" / "prickle-task-states.md"
ARRAY = SAMPLES / "tasks.json"
EVENTS = SAMPLES / "impl-events.jsonl"
REVIEW = SAMPLES / "tasks" / "tsk_review_retry.json"
SHIP = SAMPLES / "tasks" / "tsk_ship_retry.json"
GATES = SAMPLES / "gate-events.jsonl"
FILES = (ARRAY, EVENTS, REVIEW, SHIP, GATES)


def sha(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# The made-up artifact texts of _generate.py, hashed here independently.
PLAN = sha("# Retry plan\n\n1. wrap push() in backoff\n2. three retries\n")
IMPL1 = sha("diff --git a/harbor/sync.py b/harbor/sync.py\n+    for attempt in range(3):\n")
IMPL2 = sha("diff --git a/harbor/sync.py b/harbor/sync.py\n+    return with_backoff(push, retries=3)\n")
REVIEWED = sha("# Review: retries\n\nLooks right; jitter would help.\n")
DOCS = sha("# Retries\n\nharbor retries a push three times with backoff.\n")
NOWHERE = sha("retry policy memory fact, never written by a task in these files\n")
GIT1, GIT2 = "git:4f2d9c1a7b3e5f6081a2b3c4d5e6f708192a3b4c", "git:9a8b7c6d5e4f30211f2e3d4c5b6a798877665544"


def at(hms: str) -> datetime:
    return datetime.fromisoformat(f"2026-01-12T{hms}+00:00").astimezone(UTC)


def _head(path: Path) -> bytes:
    return path.read_bytes()[:65536]


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)
    assert frames.calls.height == frames.usage.height == 0


SESSION_COLS = (
    "session_id",
    "attempt",
    "session_kind",
    "started_at",
    "ended_at",
    "agent_type",
    "entrypoint",
    "originator",
    "parent_native_id",
    "caused_by_id",
    "depends_on",
    "n_records",
)


# -- detection ---------------------------------------------------------------------------------


def test_detect_claims_task_files_only(tmp_path):
    for path in FILES:
        assert prickle.detect(str(path), _head(path)), path.name
        assert classify(str(path)).harness == "prickle", path.name
    samples = ROOT / "sample_logs"
    others = [
        *(samples / "opencode/storage").rglob("*.json"),
        *(samples / "gemini-cli").rglob("*.json*"),
        *(samples / "ocp").glob("*.json"),
        *(samples / "codex/sessions").rglob("*.jsonl"),
        *(samples / "claude-code/projects").rglob("*.json*"),
    ]
    assert len(others) > 50
    for path in others:
        assert not prickle.detect(str(path), _head(path)), path
    task = json.loads(REVIEW.read_text())
    partial = {k: v for k, v in task.items() if k not in ("packet",)}
    for name, obj in {
        "partial.json": partial,
        "settings.json": {"id": "x", "state": "on"},
        "list.json": [1, 2],
        "empty-array.json": [],
    }.items():
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
        (
            "prickle:tsk_plan_retry",
            1,
            "main",
            at("09:00:00"),
            at("09:21:00"),
            "acme/planner",
            "handoff",
            "acme/lead",
            None,
            None,
            [],
            1,
        ),
        (
            "prickle:tsk_docs_retry",
            1,
            "main",
            at("11:20:00"),
            at("12:01:00"),
            "acme/writer",
            "handoff",
            "acme/lead",
            None,
            "tsk_impl_retry",
            ["tsk_impl_retry", "tsk_ext_perf_9"],
            1,
        ),
        (
            "prickle:tsk_bench_retry",
            1,
            "main",
            at("11:30:00"),
            at("11:45:00"),
            "acme/ops",
            "handoff",
            "acme/lead",
            None,
            None,
            [],
            1,
        ),
    ]
    s = f.sessions.row(0, named=True)
    assert (s["harness"], s["native_id"], s["layout"], s["model"], s["cwd"]) == (
        "prickle",
        "tsk_plan_retry",
        "task",
        None,
        None,
    )
    assert s["first_prompt_hash"] == text_hash("Plan retries for the harbor sync client")
    assert f.file_events.select("session_id", "ts", "path", "op", "how", "tier", "call_id").rows() == [
        ("prickle:tsk_plan_retry", at("09:20:00"), PLAN, "write", "result.artifacts", "verified", None),
        ("prickle:tsk_docs_retry", at("12:00:00"), DOCS, "write", "result.artifacts", "verified", None),
        ("prickle:tsk_docs_retry", at("12:00:00"), NOWHERE, "read", "lineage.context", "verified", None),
    ]
    assert f.diagnostics.select("line", "code", "detail").rows() == [
        (None, "wrong_type", "[2] task tsk_bench_retry: state 'paused' is not one of the 11 task states")
    ]


def test_snapshots_of_one_task_make_one_node_with_two_attempts():
    f = prickle.parse(str(EVENTS))
    _schema_ok(f)
    # Four snapshots, the completed one on line 3: the latest updated_at wins, not the last line.
    assert f.sessions.select(SESSION_COLS).rows() == [
        (
            "prickle:tsk_impl_retry",
            1,
            "subagent",
            at("09:22:00"),
            at("10:05:00"),
            "acme/coder",
            "handoff",
            "acme/planner",
            "tsk_plan_retry",
            None,
            ["tsk_plan_retry"],
            3,
        ),
        (
            "prickle:tsk_impl_retry",
            2,
            "subagent",
            at("10:05:00"),
            at("11:15:00"),
            "acme/coder",
            "handoff",
            "acme/planner",
            "tsk_plan_retry",
            None,
            ["tsk_plan_retry"],
            1,
        ),
    ]
    git1, git2 = GIT1, GIT2
    assert f.file_events.select("ts", "path", "op", "line").rows() == [
        (at("10:05:00"), IMPL1, "write", 4),
        (at("10:05:00"), git1, "write", 4),
        (at("10:05:00"), PLAN, "read", 4),
        (at("11:10:00"), IMPL2, "write", 3),
        (at("11:10:00"), git2, "write", 3),
        (at("11:10:00"), PLAN, "read", 3),
    ]
    assert f.diagnostics.height == 0


def test_one_object_per_file():
    r, s = prickle.parse(str(REVIEW)), prickle.parse(str(SHIP))
    _schema_ok(r)
    assert r.sessions.select(SESSION_COLS).rows() == [
        (
            "prickle:tsk_review_retry",
            1,
            "subagent",
            at("11:16:00"),
            at("11:41:00"),
            "acme/reviewer",
            "request_capability",
            "acme/planner",
            "tsk_plan_retry",
            None,
            [],
            1,
        )
    ]
    assert r.file_events.select("path", "op").rows() == [(REVIEWED, "write"), (IMPL2, "read")]
    assert s.sessions.select(SESSION_COLS).rows() == [
        (
            "prickle:tsk_ship_retry",
            1,
            "main",
            at("11:42:00"),
            at("11:43:00"),
            "acme/ops",
            "handoff",
            "acme/lead",
            None,
            None,
            ["tsk_review_retry"],
            1,
        )
    ]
    assert s.file_events.height == 0 and r.diagnostics.height == s.diagnostics.height == 0


# Packet text, summaries, evidence summaries, verdict notes, checkpoints and artifact refs of the samples.
TEXTS = [
    "Plan retries",
    "Three retries with backoff",
    "self-checked",
    "hand-rolled loop",
    "docs/plan-retry.md",
    "omsg_retry_77",
    "fake server up",
    "pytest: 9 passed",
    "retry commit",
    "PR reviewed",
    "latency dashboard",
    "p50 41 ms",
    "bumped pyproject",
    "Turn retries on",
    "ruff passes",
    "with_backoff(retries=3)",
]


def test_no_text_reaches_the_frames():
    for path in FILES:
        dump = json.dumps([df.to_dicts() for df in prickle.parse(str(path)).tables().values()], default=str)
        assert not [t for t in TEXTS if t in dump], path.name


def test_samples_follow_the_task_schema():
    jsonschema = pytest.importorskip("jsonschema")
    if not SEED.is_file():
        pytest.skip(f"seed not found at {SEED}")
    text = SEED.read_text()
    schema, _ = json.JSONDecoder().raw_decode(text[text.index('{\n  "$schema"') :])
    validator = jsonschema.Draft202012Validator(schema)
    tasks = json.loads(ARRAY.read_text()) + [json.loads(line) for line in EVENTS.read_text().splitlines()]
    tasks += [json.loads(REVIEW.read_text()), json.loads(SHIP.read_text())]
    tasks += [json.loads(line) for line in GATES.read_text().splitlines()]
    bad = {t["id"]: [e.path[-1] if e.path else "" for e in validator.iter_errors(t)] for t in tasks}
    assert {k: v for k, v in bad.items() if v} == {"tsk_bench_retry": ["state"]}  # the planted distractor
    assert {t["state"] for t in tasks} == prickle.STATES | {"paused"}  # every state, in some history
    assert set(schema["properties"]["state"]["enum"]) == prickle.STATES
    assert tuple(schema["required"]) == prickle.REQUIRED


def test_samples_are_generated(tmp_path):
    copy = tmp_path / "prickle"
    copy.mkdir()
    shutil.copy(SAMPLES / "_generate.py", copy / "_generate.py")
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in FILES:
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name


# -- outcomes ----------------------------------------------------------------------------------

OUTCOME_COLS = ("session_id", "attempt", "state", "waiting_on", "status", "outcome_tier")
EVIDENCE_COLS = ("session_id", "attempt", "ts", "evidence_kind", "verifier", "tier", "ref", "line")
VERDICT_COLS = ("session_id", "attempt", "ts", "criterion", "accepted", "tier", "verifier", "ref", "line")


def _kind(frames, kind: str, cols: tuple[str, ...]) -> list[tuple]:
    return frames.outcomes.filter(frames.outcomes["kind"] == kind).select(cols).rows()


def test_outcome_columns_of_the_samples():
    rows = [r for path in FILES for r in prickle.parse(str(path)).sessions.select(OUTCOME_COLS).rows()]
    assert rows == [
        ("prickle:tsk_plan_retry", 1, "done", None, "done", "asserted"),  # accepted on the assignee's note alone
        ("prickle:tsk_docs_retry", 1, "done", None, "done", "asserted"),
        ("prickle:tsk_bench_retry", 1, None, None, None, None),  # `paused` is no state: nothing is claimed
        ("prickle:tsk_impl_retry", 1, "done", None, "rejected", "reported"),  # ci evidence, yet refused
        ("prickle:tsk_impl_retry", 2, "done", None, "done", "verified"),  # ci evidence beats the assignee's commit
        ("prickle:tsk_review_retry", 1, "done", None, "done", "reported"),  # the requester vouched
        ("prickle:tsk_ship_retry", 1, "blocked", "owner_approval", "queued", None),  # held at the gate
        ("prickle:tsk_flag_retry", 1, "rejected", None, "rejected", "reported"),  # denied at the gate, no result
        ("prickle:tsk_bump_retry", 1, "canceled", None, "canceled", "reported"),
        ("prickle:tsk_perf_retry", 1, "review", None, "settled_unverified", "reported"),  # returned, unjudged
        ("prickle:tsk_lint_retry", 1, "working", None, "working", None),  # open: no outcome yet
    ]


def test_evidence_and_verdicts_exactly():
    f = prickle.parse(str(EVENTS))
    impl = "prickle:tsk_impl_retry"
    # Revision 1 from its latest snapshot (line 4, the rework), revision 2 from line 3; no
    # observed_at, so evidence is dated by returned_at. The commit item names artifact 0.
    assert _kind(f, "evidence", EVIDENCE_COLS) == [
        (impl, 1, at("10:05:00"), "test_output", "ci", "verified", None, 4),
        (impl, 2, at("11:10:00"), "test_output", "ci", "verified", None, 3),
        (impl, 2, at("11:10:00"), "commit", "assignee", "asserted", IMPL2, 3),
    ]
    # A verdict is dated by the first snapshot that carried it: the rework at 10:20, completion at 11:15.
    # Its result's decided_by is the signal source: the planner agent judged revision 1, dana revision 2.
    assert _kind(f, "verdict", VERDICT_COLS) == [
        (impl, 1, at("10:20:00"), 0, False, "reported", "judge", "acme/planner", 4),
        (impl, 2, at("11:15:00"), 0, True, "reported", "user", "dana", 3),
        (impl, 2, at("11:15:00"), 1, True, "reported", "user", "dana", 3),
    ]
    review = prickle.parse(str(REVIEW))
    assert _kind(review, "evidence", EVIDENCE_COLS) == [
        (
            "prickle:tsk_review_retry",
            1,
            at("11:40:00"),
            "pull_request",
            "requester",
            "reported",
            "https://git.example/acme/harbor/pull/12",
            None,
        )
    ]
    perf = [r for r in _kind(prickle.parse(str(GATES)), "evidence", EVIDENCE_COLS) if r[0] == "prickle:tsk_perf_retry"]
    assert perf == [
        (
            "prickle:tsk_perf_retry",
            1,
            at("12:55:00"),
            "link",
            "person",
            "reported",
            "https://dash.example/harbor/push-latency",
            17,
        )
    ]
    assert _kind(prickle.parse(str(ARRAY)), "evidence", ("session_id", "verifier", "tier")) == [
        ("prickle:tsk_plan_retry", "assignee", "asserted"),
        ("prickle:tsk_docs_retry", "assignee", "asserted"),
    ]


def test_state_history_is_one_row_per_change_in_time_order():
    f = prickle.parse(str(GATES))
    rows = _kind(f, "state", ("session_id", "ts", "native_state", "waiting_on", "attempt", "line"))
    flag, bump, perf, lint = (f"prickle:tsk_{t}_retry" for t in ("flag", "bump", "perf", "lint"))
    # File order is not time order: the cancelled snapshot of the bump is line 2, the rejection line 13.
    assert rows == [
        (flag, at("12:05:00"), "requested", None, 1, 1),
        (flag, at("12:06:00"), "waiting", "owner_approval", 1, 3),
        (flag, at("12:30:00"), "rejected", None, 1, 13),
        (bump, at("12:10:00"), "requested", None, 1, 4),
        (bump, at("12:11:00"), "routed", None, 1, 5),
        (bump, at("12:12:00"), "accepted", None, 1, 7),
        (bump, at("12:20:00"), "working", None, 1, 10),
        (bump, at("12:40:00"), "waiting", "stopped", 1, 11),
        (bump, at("12:50:00"), "working", None, 1, 15),
        (bump, at("13:00:00"), "cancelled", None, 1, 2),
        (perf, at("12:15:00"), "routed", None, 1, 6),
        (perf, at("12:16:00"), "accepted", None, 1, 9),
        (perf, at("12:35:00"), "working", None, 1, 14),
        (perf, at("12:55:00"), "approval", None, 1, 16),
        (perf, at("13:05:00"), "returned", None, 1, 17),
        (lint, at("12:21:00"), "accepted", None, 1, 8),
        (lint, at("12:25:00"), "working", None, 1, 12),
    ]
    # The latest updated_at wins: canceled, though two `working` snapshots come later in the file.
    assert f.sessions.filter(f.sessions["session_id"] == bump).select("state", "status", "n_records").rows() == [
        ("canceled", "canceled", 7)
    ]
    states = _kind(prickle.parse(str(EVENTS)), "state", ("ts", "native_state", "attempt"))
    assert states == [
        (at("09:25:00"), "accepted", 1),
        (at("10:05:00"), "verifying", 1),
        (at("10:20:00"), "working", 1),
        (at("11:15:00"), "completed", 2),
    ]
    # An unknown state is a diagnostic and no step of the history.
    assert _kind(prickle.parse(str(ARRAY)), "state", ("session_id", "native_state")) == [
        ("prickle:tsk_plan_retry", "completed"),
        ("prickle:tsk_docs_retry", "completed"),
    ]


def test_repeated_states_are_one_step(tmp_path):
    """A checkpoint saved while working is a new snapshot but not a new state."""
    base = json.loads(SHIP.read_text())
    snaps = [
        dict(base, state=state, waiting_on=waiting, updated_at=f"2026-01-12T12:0{i}:00Z")
        for i, (state, waiting) in enumerate(
            [("working", None), ("working", None), ("waiting", "human"), ("waiting", "agent"), ("working", None)]
        )
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(s) + "\n" for s in snaps))
    f = prickle.parse(str(path))
    assert _kind(f, "state", ("native_state", "waiting_on", "line")) == [
        ("working", None, 1),
        ("waiting", "human", 3),
        ("waiting", "agent", 4),
        ("working", None, 5),
    ]
    assert f.sessions.select("n_records").item() == 5


# Task state -> (node state, status of the current attempt with no result, its outcome tier).
STATE_MAP = {
    "requested": ("queued", "queued", None),
    "routed": ("queued", "queued", None),
    "accepted": ("queued", "queued", None),
    "working": ("working", "working", None),
    "waiting": ("blocked", "working", None),  # waiting on `stopped`: the run had started
    "verifying": ("review", "working", None),
    "approval": ("review", "working", None),
    "returned": ("review", "working", None),
    "completed": ("done", "done", "asserted"),  # nothing vouches for it
    "rejected": ("rejected", "rejected", "reported"),
    "cancelled": ("canceled", "canceled", "reported"),
}


@pytest.mark.parametrize("state", sorted(STATE_MAP))
def test_every_task_state_maps_onto_the_ocp_vocabulary(tmp_path, state):
    from sessiongraph.ingest.frames import ATTEMPT_STATUSES, NODE_STATES

    waiting = "stopped" if state == "waiting" else None
    path = tmp_path / "t.json"
    path.write_text(json.dumps(dict(json.loads(SHIP.read_text()), state=state, waiting_on=waiting)))
    f = prickle.parse(str(path))
    node, status, tier = STATE_MAP[state]
    assert f.sessions.select("state", "waiting_on", "status", "outcome_tier").rows() == [(node, waiting, status, tier)]
    assert node in NODE_STATES and status in ATTEMPT_STATUSES
    assert f.diagnostics.height == 0


def test_attempt_status_follows_the_result_first(tmp_path):
    review = json.loads(REVIEW.read_text())

    def parse(state: str, **result) -> list[tuple]:
        path = tmp_path / "t.json"
        path.write_text(json.dumps(dict(review, state=state, result=dict(review["result"], **result))))
        f = prickle.parse(str(path))
        assert f.diagnostics.height == 0
        return f.sessions.select("attempt", "status", "outcome_tier").rows()

    # Only revision 3 was logged: 1 and 2 are inferred from its number, and a later one replaced them.
    assert parse("verifying", revision=3, status="submitted") == [
        (1, "settled_unverified", "heuristic"),
        (2, "settled_unverified", "heuristic"),
        (3, "settled_unverified", "reported"),
    ]
    assert parse("working", status="superseded") == [(1, "settled_unverified", "reported")]
    assert parse("completed", status="submitted") == [(1, "done", "reported")]  # the state settles it
    assert parse("completed", status="rejected") == [(1, "rejected", "reported")]  # the result's own word wins
    verdicts = [{"criterion": 0, "accepted": True}]
    claim = [{"kind": "note", "summary": "done", "verifier": "assignee"}]
    assert parse("completed", evidence=claim) == [(1, "done", "asserted")]
    assert parse("completed", evidence=claim, verdicts=verdicts) == [(1, "done", "reported")]  # the decider's word
    ci = [{"kind": "test_output", "summary": "ok", "verifier": "ci", "observed_at": "2026-01-12T11:39:00Z"}]
    assert parse("completed", evidence=claim + ci) == [(1, "done", "verified")]


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
    assert f.sessions["session_id"].to_list() == [
        "prickle:tsk_plan_retry",
        "prickle:tsk_docs_retry",
        "prickle:tsk_bench_retry",
    ]
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
        (2, "invalid_json"),
        (3, "not_object"),
        (7, "truncated_line"),
        (5, "wrong_type"),
        (5, "wrong_type"),
        (5, "wrong_type"),
    ]
    # Revision 0 counts as 1: one attempt of four snapshots. Its latest snapshot is the broken one,
    # whose artifacts and lineage were ignored; the node, its parent and dependencies remain.
    assert f.sessions.select("attempt", "n_records", "parent_native_id", "depends_on").rows() == [
        (1, 4, "tsk_plan_retry", ["tsk_plan_retry"])
    ]
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


def test_broken_outcome_fields(tmp_path):
    task = json.loads(REVIEW.read_text())
    result = task["result"]
    result["status"] = "approved"
    result["evidence"] = [
        "not an item",
        {"kind": "video", "summary": "x", "verifier": "robot", "artifact": 7, "url": 5},
        {
            "kind": "screenshot",
            "summary": "x",
            "verifier": "ci",
            "url": "data:text/plain,the whole log",
            "observed_at": "yesterday",
        },
        {"kind": "test_output", "summary": "x", "verifier": "ci", "artifact": 0, "observed_at": "2026-01-12T11:39:00Z"},
    ]
    result["verdicts"] = [
        {"criterion": "0", "accepted": True},
        3,
        {"criterion": 0, "accepted": "yes"},
        {"criterion": 0, "accepted": True, "note": "fine"},
    ]
    path = tmp_path / "t.json"
    path.write_text(json.dumps(task))
    f = prickle.parse(str(path))
    where = "task tsk_review_retry: result"
    assert f.diagnostics.select("code", "detail").rows() == [
        ("wrong_type", f"{where}.status 'approved' is not a result status"),
        ("wrong_type", f"{where}.evidence[0]: string"),
        ("wrong_type", f"{where}.evidence[1].kind 'video' is not one of the schema's values"),
        ("wrong_type", f"{where}.evidence[1].verifier 'robot' is not one of the schema's values"),
        ("wrong_type", f"{where}.evidence[1].artifact: int names no artifact of the result"),
        ("wrong_type", f"{where}.evidence[1].url: int"),
        ("bad_timestamp", f"{where}.evidence[2].observed_at unparseable string"),
        ("wrong_type", f"{where}.verdicts[0]: criterion string, accepted bool"),
        ("wrong_type", f"{where}.verdicts[1]: int"),
        ("wrong_type", f"{where}.verdicts[2]: criterion int, accepted string"),
    ]
    # The good parts stay: an unknown verifier vouches for nothing (asserted); a data: url is
    # content, not a locator; a bad time falls back to returned_at.
    assert _kind(f, "evidence", ("ts", "evidence_kind", "verifier", "tier", "ref")) == [
        (at("11:40:00"), None, None, "asserted", None),
        (at("11:40:00"), "screenshot", "ci", "verified", None),
        (at("11:39:00"), "test_output", "ci", "verified", REVIEWED),
    ]
    assert _kind(f, "verdict", ("criterion", "accepted")) == [(0, True)]
    # `approved` decides nothing: the completed state settles the attempt, on ci evidence.
    assert f.sessions.select("status", "outcome_tier").rows() == [("done", "verified")]
    assert "the whole log" not in json.dumps([df.to_dicts() for df in f.tables().values()], default=str)


def test_a_verdict_names_who_decided_it(tmp_path):
    """``decided_by`` is the signal source of the result's verdicts: an OCP source kind and, for a
    person or agent not erased, their id. Anything else is a diagnostic and names nobody."""
    task = json.loads(REVIEW.read_text())

    def sources(decided_by: object) -> tuple[list[tuple], list[str]]:
        result = dict(task["result"], verdicts=[{"criterion": 0, "accepted": True}], decided_by=decided_by)
        path = tmp_path / "t.json"
        path.write_text(json.dumps(dict(task, result=result)))
        f = prickle.parse(str(path))
        return _kind(f, "verdict", ("verifier", "ref")), f.diagnostics["detail"].to_list()

    where = "task tsk_review_retry: result.decided_by"
    assert sources(None) == ([(None, None)], [])
    assert sources({"kind": "person", "handle": "dana"}) == ([("user", "dana")], [])
    assert sources({"kind": "person", "handle": "dana", "erased": True}) == ([("user", None)], [])
    assert sources({"kind": "agent", "agent_id": "acme/referee"}) == ([("judge", "acme/referee")], [])
    assert sources({"kind": "system"}) == ([("orchestrator", None)], [])
    # An id that is not one (free text) is never kept.
    assert sources({"kind": "agent", "agent_id": "the referee, who said no"}) == (
        [("judge", None)],
        [f"{where}.agent_id: string"],
    )
    assert sources({"kind": "robot"}) == ([(None, None)], [f"{where}: kind string"])
    assert sources("dana") == ([(None, None)], [f"{where}: string"])


def test_a_revision_without_returned_at_still_ends_where_its_writes_are(tmp_path):
    """Revision 1 has no readable returned_at: its return is the first snapshot that shows it,
    which both ends attempt 1 and dates revision 1's writes."""
    lines = [json.loads(x) for x in EVENTS.read_text().splitlines()]
    for snap in lines:
        if (snap.get("result") or {}).get("revision") == 1:
            snap["result"] = dict(
                snap["result"], returned_at=None, lineage=dict(snap["result"]["lineage"], recorded_at=None)
            )
    path = tmp_path / "impl.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    f = prickle.parse(str(path))
    assert f.sessions.select("attempt", "started_at", "ended_at").rows() == [
        (1, at("09:22:00"), at("10:05:00")),
        (2, at("10:05:00"), at("11:15:00")),
    ]
    writes = f.file_events.filter(f.file_events["op"] == "write").select("path", "ts").rows()
    assert sorted(writes) == sorted(
        [(IMPL1, at("10:05:00")), (GIT1, at("10:05:00")), (IMPL2, at("11:10:00")), (GIT2, at("11:10:00"))]
    )


# -- through the store into OCP ----------------------------------------------------------------


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    from sessiongraph.ocp.files import export_ocp
    from sessiongraph.pipeline import ingest

    tmp = tmp_path_factory.mktemp("prickle-ocp")
    db = tmp / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    summary = export_ocp(tmp / "ocp", db=str(db))
    docs = [json.loads(Path(p).read_text()) for p in summary.files]
    return db, summary.files, {n["id"]: d for d in docs for n in d["nodes"]}


def _attempt(doc: dict, aid: str) -> dict:
    return next(a for a in doc["attempts"] if a["id"] == aid)


def test_ocp_documents_validate_with_the_reference_checker(exported):
    from tests.test_ocp import _assert_clean, validate

    _db, files, _docs = exported
    assert len(files) == 8
    _assert_clean(validate(files), len(files))


def test_ocp_node_states(exported):
    _db, _files, docs = exported
    nodes = {n["id"]: n for d in docs.values() for n in d["nodes"]}
    assert {
        k: (n["state"], n.get("labels"), n["ext"]["dev.sessiongraph.session"].get("native_state"))
        for k, n in sorted(nodes.items())
    } == {
        "prickle:tsk_bench_retry": ("settled_unverified", None, None),  # unknown state: what a bare log says
        "prickle:tsk_bump_retry": ("canceled", None, "cancelled"),
        "prickle:tsk_docs_retry": ("done", None, "completed"),
        "prickle:tsk_flag_retry": ("rejected", None, "rejected"),
        "prickle:tsk_impl_retry": ("done", None, "completed"),
        "prickle:tsk_lint_retry": ("working", None, "working"),
        "prickle:tsk_perf_retry": ("review", None, "returned"),
        "prickle:tsk_plan_retry": ("done", None, "completed"),
        "prickle:tsk_review_retry": ("done", None, "completed"),
        "prickle:tsk_ship_retry": ("blocked", {"waiting_on": "owner_approval"}, "waiting"),
    }


def test_ocp_attempt_outcomes_and_evidence(exported):
    _db, _files, docs = exported
    plan_run = docs["prickle:tsk_plan_retry"]
    impl1, impl2 = (_attempt(plan_run, f"prickle:tsk_impl_retry#{n}") for n in (1, 2))
    assert (impl1["status"], impl1["cause"]) == ("rejected", {"type": "initial"})
    assert impl1["outcome"] == {
        "result": "rejected",
        "evidence": "reported",
        "ext": {
            "dev.sessiongraph.evidence": [
                {"kind": "test_output", "verifier": "ci", "tier": "verified", "observed_at": "2026-01-12T10:05:00Z"}
            ]
        },
    }
    assert (impl2["status"], impl2["cause"]) == ("done", {"type": "sent_back", "ref": "prickle:tsk_impl_retry#1"})
    assert impl2["outcome"] == {
        "result": "done",
        "evidence": "verified",
        "ext": {
            "dev.sessiongraph.evidence": [
                {
                    "kind": "commit",
                    "verifier": "assignee",
                    "tier": "asserted",
                    "observed_at": "2026-01-12T11:10:00Z",
                    "ref": IMPL2,
                },
                {"kind": "test_output", "verifier": "ci", "tier": "verified", "observed_at": "2026-01-12T11:10:00Z"},
            ]
        },
    }
    assert _attempt(plan_run, "prickle:tsk_plan_retry#1")["outcome"]["evidence"] == "asserted"
    assert _attempt(plan_run, "prickle:tsk_review_retry#1")["outcome"]["evidence"] == "reported"
    outcomes = {
        aid: (a["status"], (a.get("outcome") or {}).get("evidence"))
        for d in docs.values()
        for a in d["attempts"]
        for aid in [a["id"]]
        if not aid.startswith(("prickle:tsk_impl", "prickle:tsk_plan", "prickle:tsk_rev"))
    }
    assert outcomes == {
        "prickle:tsk_bench_retry#1": ("settled_unverified", "heuristic"),
        "prickle:tsk_bump_retry#1": ("canceled", "reported"),
        "prickle:tsk_docs_retry#1": ("done", "asserted"),
        "prickle:tsk_flag_retry#1": ("rejected", "reported"),
        "prickle:tsk_lint_retry#1": ("working", None),  # open attempts carry no outcome (W132)
        "prickle:tsk_perf_retry#1": ("settled_unverified", "reported"),
        "prickle:tsk_ship_retry#1": ("queued", None),
    }


def test_ocp_each_artifact_belongs_to_the_attempt_that_returned_it(exported):
    """Attempt 2 of the impl task starts the instant revision 1 is returned: revision 1's writes
    (and its read of the plan) are still attempt 1's work."""
    _db, _files, docs = exported
    plan_run = docs["prickle:tsk_plan_retry"]
    impl1, impl2 = (_attempt(plan_run, f"prickle:tsk_impl_retry#{n}") for n in (1, 2))
    assert impl1["ended_at"] == impl2["started_at"] == "2026-01-12T10:05:00Z"
    made = {
        a["path"]: (a["first_write_at"][11:16], a["producer"], a["writers"], a["consumers"])
        for a in plan_run["artifacts"]
    }
    assert made == {
        PLAN: ("09:20", "prickle:tsk_plan_retry#1", ["prickle:tsk_plan_retry#1"], ["prickle:tsk_impl_retry#1"]),
        IMPL1: ("10:05", impl1["id"], [impl1["id"]], []),
        GIT1: ("10:05", impl1["id"], [impl1["id"]], []),
        IMPL2: ("11:10", impl2["id"], [impl2["id"]], ["prickle:tsk_review_retry#1"]),
        GIT2: ("11:10", impl2["id"], [impl2["id"]], []),
        REVIEWED: ("11:40", "prickle:tsk_review_retry#1", ["prickle:tsk_review_retry#1"], []),
    }
    flows = sorted((e["from_attempt"], e["to_attempt"]) for e in plan_run["edges"] if e["kind"] == "artifact")
    assert flows == [
        ("prickle:tsk_impl_retry#2", "prickle:tsk_review_retry#1"),
        ("prickle:tsk_plan_retry#1", "prickle:tsk_impl_retry#1"),
    ]
    written = {e["detail"]: e["attempt"] for e in plan_run["events"] if e["type"] == "artifact_written"}
    assert written == {a["id"]: a["producer"] for a in plan_run["artifacts"]}


def test_ocp_a_spawn_at_the_instant_a_revision_returns(tmp_path):
    """A task created the instant its parent's revision 1 came back was made by attempt 1 (the
    one that ran up to then); the spawn starts the child's first attempt."""
    from sessiongraph.ocp.files import export_ocp
    from sessiongraph.pipeline import ingest

    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(EVENTS, logs / "impl-events.jsonl")
    child = dict(
        json.loads(SHIP.read_text()),
        id="tsk_followup",
        parent_task_id="tsk_impl_retry",
        created_at="2026-01-12T10:05:00Z",
        updated_at="2026-01-12T10:30:00Z",
        state="working",
        waiting_on=None,
    )
    child["packet"] = dict(child["packet"], depends_on=[])
    (logs / "followup.json").write_text(json.dumps(child))
    ingest([str(logs)], db=str(tmp_path / "s.duckdb"), workers=1)
    [path] = export_ocp(tmp_path / "ocp", db=str(tmp_path / "s.duckdb")).files
    doc = json.loads(Path(path).read_text())
    # The plan task is not on disk here: its placeholder node has no attempts, so its reported
    # spawn edge to the impl task has no from_attempt (OCP 0.3 requires one only on artifact edges).
    assert [(e["kind"], e["tier"], e.get("from_attempt"), e["to_attempt"]) for e in doc["edges"]] == [
        ("spawn", "verified", "prickle:tsk_impl_retry#1", "prickle:tsk_followup#1"),
        ("spawn", "reported", None, "prickle:tsk_impl_retry#1"),
    ]


def test_ocp_verdicts_are_run_signals(exported):
    _db, _files, docs = exported
    plan_run = docs["prickle:tsk_plan_retry"]
    assert plan_run["run"]["signals"] == [
        {
            "id": "sig:prickle:tsk_impl_retry#1:criterion_0",
            "kind": "verdict",
            "name": "criterion_0",
            "value": "reject",
            "observed_at": "2026-01-12T10:20:00Z",
            "tier": "reported",
            "at_attempt": "prickle:tsk_impl_retry#1",
            "source": {"kind": "judge", "ref": "acme/planner"},
        },
        {
            "id": "sig:prickle:tsk_impl_retry#2:criterion_0",
            "kind": "verdict",
            "name": "criterion_0",
            "value": "accept",
            "observed_at": "2026-01-12T11:15:00Z",
            "tier": "reported",
            "at_attempt": "prickle:tsk_impl_retry#2",
            "source": {"kind": "user", "ref": "dana"},
        },
        {
            "id": "sig:prickle:tsk_impl_retry#2:criterion_1",
            "kind": "verdict",
            "name": "criterion_1",
            "value": "accept",
            "observed_at": "2026-01-12T11:15:00Z",
            "tier": "reported",
            "at_attempt": "prickle:tsk_impl_retry#2",
            "source": {"kind": "user", "ref": "dana"},
        },
    ]
    assert plan_run["producer"]["capabilities"]["signals"] is True
    others = [d for d in docs.values() if d is not plan_run]
    assert others and all("signals" not in d["run"] and not d["producer"]["capabilities"]["signals"] for d in others)


def test_ocp_state_history_is_note_events(exported):
    _db, _files, docs = exported

    def notes(node: str) -> list[tuple]:
        return [
            (e["at"][11:16], e["detail"]) for e in docs[node]["events"] if e["type"] == "note" and e["node"] == node
        ]

    assert notes("prickle:tsk_impl_retry") == [
        ("09:25", "state accepted"),
        ("10:05", "state verifying"),
        ("10:20", "state working"),
        ("11:15", "state completed"),
    ]
    assert notes("prickle:tsk_bump_retry") == [
        ("12:10", "state requested"),
        ("12:11", "state routed"),
        ("12:12", "state accepted"),
        ("12:20", "state working"),
        ("12:40", "state waiting, waiting on stopped"),
        ("12:50", "state working"),
        ("13:00", "state cancelled"),
    ]
    note = next(e for e in docs["prickle:tsk_ship_retry"]["events"] if e["type"] == "note")
    assert note == {
        "at": "2026-01-12T11:43:00Z",
        "type": "note",
        "node": "prickle:tsk_ship_retry",
        "detail": "state waiting, waiting on owner_approval",
        "ext": {"dev.sessiongraph.state": {"native_state": "waiting", "waiting_on": "owner_approval"}},
    }
    seen = [
        (e["at"][11:16], e["attempt"], e["detail"])
        for e in docs["prickle:tsk_plan_retry"]["events"]
        if e["type"] == "signal_observed"
    ]
    assert seen == [
        ("10:20", "prickle:tsk_impl_retry#1", "verdict criterion_0: reject"),
        ("11:15", "prickle:tsk_impl_retry#2", "verdict criterion_0: accept"),
        ("11:15", "prickle:tsk_impl_retry#2", "verdict criterion_1: accept"),
    ]
    # An open attempt has started but not settled.
    for node in ("prickle:tsk_lint_retry", "prickle:tsk_ship_retry"):
        assert [e["type"] for e in docs[node]["events"] if e.get("attempt")] == ["attempt_started"]
    assert [e["type"] for e in docs["prickle:tsk_bump_retry"]["events"] if e.get("attempt")] == [
        "attempt_started",
        "attempt_settled",
    ]


def test_no_text_reaches_the_store_or_the_documents(exported):
    from sessiongraph.store import Store

    db, files, _docs = exported
    with Store(db, read_only=True) as s:
        tables = {t: s.query(f"SELECT * FROM {t}").to_dicts() for t in (*SCHEMAS, "runs", "edges", "lineage")}
    dump = json.dumps(tables, default=str) + "".join(Path(p).read_text() for p in files)
    assert [t for t in TEXTS if t in dump] == []
