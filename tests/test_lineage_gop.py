"""Gemini CLI, opencode and Prickle samples through the whole pipeline: the exact edges with
their tiers, the inference counters, Prickle attempts, and OCP documents the reference checker
passes with no finding."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.test_ocp import _assert_clean, validate

SAMPLES = Path(__file__).resolve().parents[1] / "sample_logs"

GEM_A = "gemini-cli:7c1e4b2a-5d3f-4e8a-9b61-2f0c8d4e7a19"
GEM_B = "gemini-cli:3f9a0c11-8b2e-4c7d-a5f0-91d6e2b7c4a8"
CLAUDE = "claude-code:e3b4c2d1-7a6f-4c58-9d2e-0f1a2b3c4d5e"
OC_PARENT, OC_CHILD, OC_ORPHAN = (
    f"opencode:{s}"
    for s in ("ses_4a1f0c2e7ffeP7xQ2mNbV9kLd3", "ses_4a1f0c3b1ffeC8yR3nOcW0lMe4", "ses_4a1f0e00affeOr9hAnQpX2sTu6")
)
OC_MAIN, OC_SUB, OC_LATER = (
    f"opencode:{s}"
    for s in ("ses_5b20a1c47ffeKp1Xq8RmT3vNw2", "ses_5b20a1d93ffeKp2Yr9SnU4wOx3", "ses_5b20b0f11ffeKp3Zs0ToV5xPy4")
)
PLAN, IMPL, REVIEW, DOCS, BENCH, SHIP = (
    f"prickle:tsk_{t}_retry" for t in ("plan", "impl", "review", "docs", "bench", "ship")
)
# gate-events.jsonl: four more root tasks (their own runs) that only walk the task states
FLAG, BUMP, PERF, LINT = (f"prickle:tsk_{t}_retry" for t in ("flag", "bump", "perf", "lint"))
H_PLAN = "sha256:2f650cb9506bec68ba2bd1faf01614e1f5831f7e057ca5c3aabf8f8c2259d1d9"
H_IMPL2 = "sha256:5256548ca15202f7305708595efa4e8d941c6ce2ef2872c8e54cb5ea99b7d6c8"
RATE = "/home/dev/projects/lumen-api/docs/RATE_LIMITS.md"

EXPECTED = {
    "gemini-cli": {
        "edges": [
            ("artifact", CLAUDE, GEM_A, "verified", RATE),  # Claude's edit, read back by the chat (v2)
            ("artifact", GEM_A, CLAUDE, "verified", RATE),  # the chat's write_file, read by Claude (v1)
            ("launch", GEM_A, CLAUDE, "verified", None),  # `claude -p` printed its session id
        ],
        "counters": [
            ("artifacts", "read_before_write", GEM_B, 1),  # the JSONL chat reads core.py, then edits it
            ("artifacts", "read_unwritten", GEM_A, 1),  # docs/API.md
            ("spawn", "dangling_spawn", GEM_A, 1),  # delegate_to_agent: no child transcript
        ],
        "sessions": {"claude-code": 1, "gemini-cli": 2},
        "attempts": [(CLAUDE, None), (GEM_B, None), (GEM_A, None)],
        "documents": 2,
    },
    "opencode": {
        "edges": [
            ("artifact", OC_CHILD, OC_PARENT, "verified", "/home/dev/projects/harbor/docs/retry-survey.md"),
            ("artifact", OC_MAIN, OC_LATER, "verified", "/home/dev/projects/kelp/kelp/parser/__init__.py"),
            ("artifact", OC_SUB, OC_MAIN, "verified", "/home/dev/projects/kelp/docs/MIGRATION.md"),
            ("spawn", OC_PARENT, OC_CHILD, "verified", None),
            ("spawn", OC_MAIN, OC_SUB, "verified", None),
        ],
        "counters": [
            ("artifacts", "read_unwritten", OC_CHILD, 1),
            ("artifacts", "read_unwritten", OC_MAIN, 1),
            ("artifacts", "read_unwritten", OC_SUB, 1),
            ("spawn", "dangling_spawn", OC_PARENT, 1),  # the task whose child was never written
            ("spawn", "orphan_child", OC_ORPHAN, 1),  # parentID names a session not in the store
        ],
        "sessions": {"opencode": 6},
        "attempts": [(s, None) for s in sorted((OC_PARENT, OC_CHILD, OC_ORPHAN, OC_MAIN, OC_SUB, OC_LATER))],
        "documents": 4,
    },
    "prickle": {
        "edges": [
            ("artifact", IMPL, REVIEW, "verified", H_IMPL2),  # revision 2's hash in the review's context
            ("artifact", PLAN, IMPL, "verified", H_PLAN),  # the plan checkpoint hash in both revisions
            ("continue", IMPL, DOCS, "verified", None),  # lineage.cause kind task
            ("dep", IMPL, DOCS, "reported", None),
            ("dep", PLAN, IMPL, "reported", None),
            ("dep", REVIEW, SHIP, "reported", None),
            ("spawn", PLAN, IMPL, "verified", None),  # parent_task_id
            ("spawn", PLAN, REVIEW, "verified", None),
        ],
        "counters": [
            ("artifacts", "read_unwritten", DOCS, 1),  # a context hash no task wrote
            ("continuation", "continuation_source_missing", DOCS, 1),  # depends on tsk_ext_perf_9
        ],
        "sessions": {"prickle": 10},
        # one attempt per result.revision: the implementation was resubmitted once
        "attempts": [
            (BENCH, 1),
            (BUMP, 1),
            (DOCS, 1),
            (FLAG, 1),
            (IMPL, 1),
            (IMPL, 2),
            (LINT, 1),
            (PERF, 1),
            (PLAN, 1),
            (REVIEW, 1),
            (SHIP, 1),
        ],
        "documents": 8,
    },
}


@pytest.fixture(scope="module", params=sorted(EXPECTED))
def run(request, tmp_path_factory):
    folder = request.param
    tmp = tmp_path_factory.mktemp(folder)
    db = tmp / "s.duckdb"
    summary = ingest([str(SAMPLES / folder)], db=str(db), workers=1)
    with Store(db, read_only=True) as store:
        yield folder, summary, store, db, tmp


def test_exact_edges_with_tiers(run):
    folder, _summary, store, _db, _tmp = run
    rows = store.query("SELECT kind, src, dst, tier, path FROM all_edges ORDER BY ALL").rows()
    assert rows == EXPECTED[folder]["edges"]


def test_exact_counters(run):
    folder, summary, store, _db, _tmp = run
    rows = store.query("SELECT pass, code, session_id, count FROM inference_diagnostics ORDER BY ALL").rows()
    assert rows == EXPECTED[folder]["counters"]
    assert summary.store_sessions_by_harness == EXPECTED[folder]["sessions"]


def test_edge_details(run):
    folder, _summary, store, _db, _tmp = run
    edges = store.query("SELECT * FROM all_edges").to_dicts()
    by_kind = {(e["kind"], e["src"], e["dst"]): e for e in edges}
    if folder == "gemini-cli":
        launch = by_kind[("launch", GEM_A, CLAUDE)]
        assert launch["src_call_id"] == "run_shell_command-1770110110000-b8c9d0e1f2a3"
        assert "session id in the call's output" in launch["evidence"]
        assert launch["run_id"] is not None  # the launched run joins the chat's run
        assert (by_kind[("artifact", GEM_A, CLAUDE)]["version"], by_kind[("artifact", CLAUDE, GEM_A)]["version"]) == (
            1,
            2,
        )
    elif folder == "opencode":
        spawn = by_kind[("spawn", OC_PARENT, OC_CHILD)]
        assert spawn["src_call_id"] == "toolu_01TaskSurveyHelpers"
        assert spawn["evidence"] == "parent id recorded by the child + spawn call names the child"
        assert by_kind[("spawn", OC_MAIN, OC_SUB)]["src_call_id"] == "call_Kp1TaskNotes"
        assert by_kind[("artifact", OC_MAIN, OC_LATER)]["run_id"] is None  # across runs: lineage
    else:
        for key in (("spawn", PLAN, IMPL), ("spawn", PLAN, REVIEW)):
            assert by_kind[key]["evidence"] == "parent id recorded by the child" and by_kind[key]["src_call_id"] is None
        art = by_kind[("artifact", PLAN, IMPL)]
        assert (art["version"], art["src_tier"], art["dst_tier"], art["lag_s"]) == (1, "verified", "verified", 2700.0)
        assert by_kind[("continue", IMPL, DOCS)]["evidence"] == "cause recorded by the task"


def test_attempts_and_adapter_diagnostics(run):
    folder, _summary, store, _db, _tmp = run
    assert store.query("SELECT session_id, attempt FROM sessions ORDER BY ALL").rows() == EXPECTED[folder]["attempts"]
    diagnostics = store.query("SELECT code, count(*) FROM diagnostics GROUP BY ALL ORDER BY ALL").rows()
    assert diagnostics == ([("wrong_type", 1)] if folder == "prickle" else [])  # the `paused` state


def test_ocp_documents_pass_the_reference_checker(run):
    folder, _summary, _store, db, tmp = run
    summary = export_ocp(tmp / "ocp", db=str(db))
    assert summary.documents == EXPECTED[folder]["documents"]
    _assert_clean(validate(summary.files), summary.documents)
    docs = [json.loads(Path(p).read_text()) for p in summary.files]
    nodes = {n["id"]: d for d in docs for n in d["nodes"]}
    if folder == "prickle":
        impl = nodes[IMPL]
        attempts = [a for a in impl["attempts"] if a["node"] == IMPL]
        # revision 1 was rejected, so revision 2 was sent back
        assert [(a["n"], a["cause"]["type"]) for a in attempts] == [(1, "initial"), (2, "sent_back")]
        assert sorted((e["kind"], e["tier"]) for e in impl["edges"]) == [
            ("artifact", "verified"),
            ("artifact", "verified"),
            ("spawn", "verified"),
            ("spawn", "verified"),
        ]
        assert sorted(e["kind"] for e in impl["ext"]["dev.sessiongraph.edges"]) == ["dep"]
    elif folder == "gemini-cli":
        doc = nodes[GEM_A]
        launched = next(a for a in doc["attempts"] if "origin" in a)
        assert (launched["node"], launched["origin"]["how"], launched["origin"]["tier"]) == (
            CLAUDE,
            "claude -p",
            "verified",
        )
        cost = next(a["cost"] for a in doc["attempts"] if a["node"] == GEM_A)
        assert (cost["input_tokens"], cost["cached_input_tokens"], cost["output_tokens"], cost["reasoning_tokens"]) == (
            17340,
            44032,
            1604,
            783,
        )
    else:
        doc = nodes[OC_MAIN]
        cost = next(a["cost"] for a in doc["attempts"] if a["node"] == OC_MAIN)
        assert (cost["input_tokens"], cost["output_tokens"], cost["reasoning_tokens"], cost["requests"]) == (
            3830,
            3666,
            896,
            3,
        )
