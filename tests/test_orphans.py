"""One run per missing parent (issue 26 item 6): subagents whose parent transcript is absent, but
whose folder and records name the same parent, form one run headed by a placeholder for it (a
node with no attempts, not on disk), checked against the orphan-subagents scenario."""

from __future__ import annotations

import json
import shutil

import polars as pl

from sessiongraph.inference import infer
from sessiongraph.ingest.frames import Frames
from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES
from tests.test_ocp import _assert_clean, validate
from tests.test_passes import session

SCENARIO = SAMPLES / "scenarios/orphan-subagents"
EXP = json.loads((SCENARIO / "expected.json").read_text())
MEMBERS = "SELECT session_id, parent_session_id, via, depth, role FROM run_sessions ORDER BY depth, session_id"


def _members() -> list[tuple]:
    rows = [(m["session_id"], m["parent"], m["via"], m["depth"], m["role"]) for m in EXP["members"]]
    return sorted(rows, key=lambda r: (r[3], r[0]))


def test_orphans_of_one_missing_parent_are_one_run_with_a_placeholder(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SCENARIO)], db=str(db), workers=1)
    with Store(db, read_only=True) as store:
        runs = store.query("SELECT root_session_id, root_harness, n_sessions, n_spawns FROM runs")
        assert runs.rows() == [(EXP["placeholder"], EXP["run"]["root_harness"], EXP["run"]["n_sessions"], 0)]
        assert store.query(MEMBERS).rows() == _members()
        assert store.query("SELECT count(*) FROM edges").item() == 0  # no call of the parent is known
        assert store.query("SELECT count(*) FROM sessions WHERE session_id = $1", [EXP["placeholder"]]).item() == 0
    files = export_ocp(tmp_path / "ocp", db=str(db)).files
    _assert_clean(validate(files), 1)
    doc = json.loads(open(files[0]).read())
    node = next(n for n in doc["nodes"] if n["ext"]["dev.sessiongraph.session"]["session_id"] == EXP["placeholder"])
    assert node["ext"]["dev.sessiongraph.session"]["on_disk"] is False
    assert not [a for a in doc["attempts"] if a["node"] == node["id"]]
    assert len(doc["nodes"]) == 4 and len(doc["attempts"]) == 3
    spawns = [(e["from"], e["tier"]) for e in doc["edges"] if e["kind"] == "spawn"]
    assert spawns == [(node["id"], EXP["spawn_tier"])] * EXP["run"]["n_spawns"]


def test_the_parent_turning_up_keeps_the_run_id_and_replaces_the_placeholder(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(SCENARIO / "claude-code", logs)
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1)
    with Store(db, read_only=True) as store:
        (before,) = store.query("SELECT run_id FROM runs").rows()
    parent = EXP["placeholder"].split(":", 1)[1]
    rec = {
        "parentUuid": None,
        "isSidechain": False,
        "type": "user",
        "sessionId": parent,
        "cwd": "/home/dev/projects/atlas",
    }
    rec.update(
        message={"role": "user", "content": "map the tile cache"}, uuid="u1", timestamp="2026-01-20T14:00:00.000Z"
    )
    (logs / "projects/-home-dev-projects-atlas" / f"{parent}.jsonl").write_text(json.dumps(rec) + "\n")
    ingest([str(logs)], db=str(db), workers=1)
    with Store(db, read_only=True) as store:
        assert store.query("SELECT run_id, root_session_id, n_sessions FROM runs").rows() == [
            (before[0], EXP["placeholder"], 4)
        ]
        # the parent's own file names no call for them: spawns by folder layout
        assert (
            store.query("SELECT src, tier FROM edges WHERE kind = 'spawn'").rows()
            == [(EXP["placeholder"], "heuristic")] * 2
        )


def test_two_missing_parents_two_runs_and_a_known_parent_none():
    kids = [
        session("claude-code:gone/a", 5, session_kind="subagent", layout="nested", parent_native_id="gone"),
        session("claude-code:gone/b", 6, session_kind="subagent", layout="nested", parent_native_id="gone"),
        session("codex:k1", 7, session_kind="subagent", parent_native_id="lost"),
        session("claude-code:here/c", 8, session_kind="subagent", layout="nested", parent_native_id="here"),
        session("claude-code:here", 0),
    ]
    inferred = infer(Frames.from_rows(sessions=kids))
    roots = dict(
        inferred.run_sessions.join(inferred.runs.select("run_id", "root_session_id"), on="run_id")
        .select("session_id", "root_session_id")
        .iter_rows()
    )
    assert roots["claude-code:gone/a"] == roots["claude-code:gone/b"] == "claude-code:gone"
    assert roots["codex:k1"] == "codex:lost"
    assert roots["claude-code:here/c"] == "claude-code:here"
    assert inferred.runs.height == 3
    assert inferred.runs.filter(pl.col("root_session_id") == "claude-code:gone")["n_sessions"].item() == 2
