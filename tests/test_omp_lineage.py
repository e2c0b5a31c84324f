"""oh-my-pi and pi lineage through the real pipeline (discover -> parse -> store -> passes -> OCP).

Expected edges come from the sample READMEs (sample_logs/omp/README.md, sample_logs/pi/README.md),
written with the samples from the formats, not from this code's output.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES
from tests.test_ocp import _assert_clean, validate

R, L, GONE = "7a3f9c2e51d04b68", "3e8b1f60c2a94d17", "9d0c5b7e3a1f4c28"
ROOT, LEGACY = f"omp:{R}", f"omp:{L}"
SCOUT, SCOUT2, DEEP, PATCHER = f"{ROOT}/Scout", f"{ROOT}/Scout-2", f"{ROOT}/Scout.Deep", f"{ROOT}/Patcher"
CHECKER, DRIFTER = f"{LEGACY}/Checker", f"omp:{GONE}/Drifter"
PI_A = "pi:4b1e9d2c-7f3a-4c8e-9a06-5d2b8e1f7c34"
PI_B = "pi:8c5f2a71-0d4e-4b9f-8e13-a6c7d9e2f051"
PI_C = "pi:e2a7c4f9-3b18-4d6e-b5a0-9f1c8d3e7a26"
CODEX_CHILD = "codex:019b047e-7e64-7d61-b3c2-6f0e1d2a8b57"
CODEX_FILE = (
    SAMPLES / "codex/sessions/2025/12/09" / "rollout-2025-12-09T14-02-37-019b047e-7e64-7d61-b3c2-6f0e1d2a8b57.jsonl"
)


def _store(tmp_path_factory, *paths: Path) -> Path:
    db = tmp_path_factory.mktemp("lineage") / "s.duckdb"
    ingest([str(p) for p in paths], db=str(db), workers=1)
    return db


@pytest.fixture(scope="module")
def omp_db(tmp_path_factory) -> Path:
    return _store(tmp_path_factory, SAMPLES / "omp")


@pytest.fixture(scope="module")
def pi_db(tmp_path_factory) -> Path:
    return _store(tmp_path_factory, SAMPLES / "pi", CODEX_FILE)


def _rows(db: Path, sql: str) -> list[tuple]:
    with Store(db, read_only=True) as s:
        return s.query(sql).rows()


# ---- oh-my-pi -----------------------------------------------------------------------------


def test_omp_edges_exactly(omp_db):
    assert _rows(omp_db, "SELECT kind, src, dst, tier, path FROM all_edges ORDER BY ALL") == [
        ("artifact", CHECKER, LEGACY, "verified", f"agent://{L}/Checker"),  # output read by its parent
        ("artifact", ROOT, SCOUT2, "verified", f"local://{R}/ctx.md"),  # shared local:// root
        ("artifact", PATCHER, ROOT, "verified", f"agent://{R}/Patcher.patch"),  # isolated patch merged
        ("artifact", SCOUT, ROOT, "verified", f"agent://{R}/Scout"),  # attempt 1's output
        ("artifact", SCOUT, ROOT, "verified", f"agent://{R}/Scout"),  # attempt 2's output
        ("artifact", SCOUT2, ROOT, "verified", f"agent://{R}/Scout-2"),  # agent://Scout-2/findings
        ("artifact", DEEP, ROOT, "verified", f"agent://{R}/Scout.Deep"),  # agent://Scout/Deep:raw
        ("artifact", DEEP, SCOUT, "verified", f"agent://{R}/Scout.Deep"),
        ("spawn", LEGACY, CHECKER, "verified", None),
        ("spawn", ROOT, PATCHER, "verified", None),
        ("spawn", ROOT, SCOUT, "verified", None),
        ("spawn", ROOT, SCOUT2, "verified", None),
        ("spawn", SCOUT, DEEP, "verified", None),  # nested: hangs from its parent agent
    ]


def test_omp_edges_name_their_calls_and_versions(omp_db):
    spawns = _rows(
        omp_db, "SELECT dst, src_call_id, ts, lag_s, evidence FROM all_edges WHERE kind = 'spawn' ORDER BY dst"
    )
    assert [(d, c, lag) for d, c, _, lag, _ in spawns] == [
        (CHECKER, "call_L1_batch#1", 0.0),
        (PATCHER, "call_R9_patch", 1.0),
        (SCOUT, "call_R2_scout", 0.4),
        (SCOUT2, "call_R3_scout", 0.45),
        (DEEP, "call_S3_deep", 0.3),
    ]
    assert {e for *_, e in spawns} == {"task folder <root stem>/<id>.jsonl + task result names the agent id"}
    scout = _rows(
        omp_db,
        f"SELECT version, src_call_id, dst_call_id FROM all_edges WHERE kind = 'artifact'"
        f" AND src = '{SCOUT}' ORDER BY version",
    )
    assert scout == [(1, "call_S5_yield", "call_R4_read"), (2, "call_S7_yield", "call_R7_read")]
    # every edge stays inside its run: the main session's tree is one run, the legacy one another
    assert _rows(omp_db, "SELECT count(*) FROM all_edges WHERE run_id IS NULL") == [(0,)]
    assert _rows(
        omp_db,
        "SELECT root_session_id, n_sessions, n_spawns, n_artifact_edges, max_depth FROM runs ORDER BY root_session_id",
    ) == [(LEGACY, 2, 1, 1, 1), (ROOT, 5, 4, 7, 2), (DRIFTER, 1, 0, 0, 0)]


def test_omp_dangling_and_orphan_counters(omp_db):
    assert _rows(omp_db, "SELECT pass, code, count FROM inference_diagnostics WHERE pass = 'spawn' ORDER BY ALL") == [
        ("spawn", "dangling_spawn", 1),
        ("spawn", "orphan_child", 1),
    ]
    assert _rows(
        omp_db, "SELECT code, session_id, call_id, detail FROM inference_diagnostics WHERE pass = 'spawn' ORDER BY code"
    ) == [
        ("dangling_spawn", LEGACY, "call_L1_batch#2", "names child Linter, not on disk"),
        ("orphan_child", DRIFTER, None, "no parent session or call found"),
    ]
    # Reads of repository files nobody in the samples wrote (and the patcher's own read-then-edit).
    assert _rows(
        omp_db, "SELECT code, session_id, count FROM inference_diagnostics WHERE pass = 'artifacts' ORDER BY ALL"
    ) == [
        ("read_before_write", PATCHER, 1),
        ("read_unwritten", CHECKER, 1),
        ("read_unwritten", SCOUT, 3),  # session.ts twice, src/auth (grep)
        ("read_unwritten", SCOUT2, 1),  # test/ (find)
        ("read_unwritten", DEEP, 1),  # `rg -n refresh_token src`, parsed from the shell command
        ("read_unwritten", DRIFTER, 1),
    ]
    others = "SELECT count(*) FROM inference_diagnostics WHERE pass NOT IN ('spawn', 'artifacts')"
    assert _rows(omp_db, others) == [(0,)]
    assert _rows(omp_db, "SELECT count(*) FROM diagnostics") == [(0,)]


def test_omp_resumed_agent_has_two_attempts(omp_db):
    assert _rows(omp_db, "SELECT session_id, attempt FROM sessions ORDER BY ALL") == [
        (LEGACY, None),
        (CHECKER, 1),
        (ROOT, None),
        (PATCHER, 1),
        (SCOUT, 1),
        (SCOUT, 2),
        (SCOUT2, 1),
        (DEEP, 1),
        (DRIFTER, 1),
    ]
    assert _rows(
        omp_db,
        f"SELECT attempt, count(*), sum(input_tokens) FROM usage WHERE session_id = '{SCOUT}'"
        " GROUP BY ALL ORDER BY ALL",
    ) == [(1, 4, 4720), (2, 2, 1500)]
    assert _rows(omp_db, f"SELECT n_files, input_tokens FROM session_overview WHERE session_id = '{SCOUT}'") == [
        (2, 6220)
    ]  # one node, both attempts' tokens


def test_omp_ocp_documents(omp_db, tmp_path):
    summary = export_ocp(tmp_path / "ocp", db=str(omp_db))
    assert summary.documents == 3
    _assert_clean(validate(summary.files), 3)
    docs = {
        d["run"]["ext"]["dev.sessiongraph.run"]["root_session_id"]: d
        for d in (json.loads(Path(f).read_text()) for f in summary.files)
    }
    doc = docs[ROOT]
    assert len(doc["nodes"]) == 5 and len(doc["attempts"]) == 6
    scout = [a for a in doc["attempts"] if a["node"] == SCOUT]
    assert [(a["id"], a["n"], a["cause"]) for a in scout] == [
        (f"{SCOUT}#1", 1, {"type": "initial"}),
        (f"{SCOUT}#2", 2, {"type": "followup", "ref": f"{SCOUT}#1"}),
    ]
    assert [(a["started_at"], a["ended_at"], a["cost"]["input_tokens"]) for a in scout] == [
        ("2026-03-02T09:15:08.400000Z", "2026-03-02T09:23:20Z", 4720),
        ("2026-03-02T09:31:01Z", "2026-03-02T09:32:10Z", 1500),
    ]
    # each version of Scout's output is produced by the attempt that wrote it
    outputs = sorted(
        (a["version"], a["producer"], a["consumers"]) for a in doc["artifacts"] if a["path"] == f"agent://{R}/Scout"
    )
    assert outputs == [(1, f"{SCOUT}#1", [f"{ROOT}#1"]), (2, f"{SCOUT}#2", [f"{ROOT}#1"])]
    spawn_edges = sorted((e["from_attempt"], e["to_attempt"]) for e in doc["edges"] if e["kind"] == "spawn")
    assert spawn_edges == [
        (f"{ROOT}#1", f"{PATCHER}#1"),
        (f"{ROOT}#1", f"{SCOUT}#1"),
        (f"{ROOT}#1", f"{SCOUT2}#1"),
        (f"{SCOUT}#1", f"{DEEP}#1"),
    ]


# ---- pi -----------------------------------------------------------------------------------


def test_pi_edges_exactly(pi_db):
    assert _rows(pi_db, "SELECT kind, src, dst, tier, path FROM all_edges ORDER BY ALL") == [
        # codex read the docs/index.md pi wrote (`cat index.md`, parsed from its shell: heuristic)
        ("artifact", PI_A, CODEX_CHILD, "heuristic", "/srv/app/docs/index.md"),
        ("artifact", PI_A, PI_B, "verified", "/srv/app/docs/index.md"),  # the fork reads its parent's file
        ("fork", PI_A, PI_B, "reported", None),  # header parentSession
        ("launch", PI_A, CODEX_CHILD, "verified", None),  # `codex exec` printed its session id
    ]
    assert _rows(pi_db, "SELECT src_call_id, lag_s FROM all_edges WHERE kind = 'launch'") == [
        ("toolu_01PiA5codexExec00000005", 0.512)
    ]
    assert _rows(pi_db, "SELECT kind, run_id IS NULL FROM all_edges ORDER BY ALL") == [
        ("artifact", False),
        ("artifact", True),
        ("fork", True),
        ("launch", False),
    ]  # a fork starts its own run


def test_pi_diagnostics(pi_db):
    assert _rows(pi_db, "SELECT pass, code, session_id, count FROM inference_diagnostics ORDER BY ALL") == [
        ("artifacts", "read_before_write", PI_A, 1),  # it read src/server.ts, then edited it
        ("artifacts", "read_unwritten", CODEX_CHILD, 1),
        ("artifacts", "read_unwritten", PI_A, 1),  # grep of src/
        ("artifacts", "read_unwritten", PI_C, 1),
        ("continuation", "continuation_source_missing", PI_C, 1),  # branchedFrom a file not in the samples
    ]
    assert _rows(
        pi_db,
        "SELECT source_path LIKE '%' || split_part(session_id, ':', 2) || '%', code FROM diagnostics"
        " JOIN sessions USING (source_path) ORDER BY ALL",
    ) == [(True, "foreign_record"), (True, "foreign_record")]  # the copied entries of B and C


def test_pi_without_its_codex_child(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES / "pi")], db=str(db), workers=1)
    assert _rows(db, "SELECT kind, src, dst, tier FROM all_edges ORDER BY ALL") == [
        ("artifact", PI_A, PI_B, "verified"),
        ("fork", PI_A, PI_B, "reported"),
    ]
    assert _rows(db, "SELECT code, session_id, call_id FROM inference_diagnostics WHERE pass = 'launch'") == [
        ("unmatched_launch", PI_A, "toolu_01PiA5codexExec00000005")
    ]


def test_pi_ocp_documents(pi_db, tmp_path):
    summary = export_ocp(tmp_path / "ocp", db=str(pi_db))
    assert summary.documents == 3  # A with its launched codex run, B, C
    _assert_clean(validate(summary.files), 3)
    docs = [json.loads(Path(f).read_text()) for f in summary.files]
    launched = [a for d in docs for a in d["attempts"] if "origin" in a]
    assert [(a["node"], a["origin"]["launched_by"], a["origin"]["tier"]) for a in launched] == [
        (CODEX_CHILD, f"{PI_A}#1", "verified")
    ]
