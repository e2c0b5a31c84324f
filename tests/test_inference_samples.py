"""Inference over sample_logs/ through the whole pipeline.

- The launch-lamp scenario is checked against its own expected.json (written with the scenario,
  from the formats, not from this code's output), distractors included.
- What each pass of ``inference._passes()`` gives over all of sample_logs/ is compared with
  tests/golden/<pass>.json: a reviewed list; a change to the passes that moves any edge (or, for
  ``runs``, any session's place in its run) shows up here as a diff. SESSIONGRAPH_UPDATE_GOLDEN=1
  rewrites the files from the current output.
"""

from __future__ import annotations

import json
import os

import polars as pl
import pytest

from sessiongraph.inference import _passes
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import ROOT, SAMPLES

SCENARIO = SAMPLES / "scenarios/launch-lamp"
GOLDEN = ROOT / "tests/golden"
EDGE_KEY = ["kind", "src", "dst", "tier", "src_call_id", "dst_call_id", "path", "version", "src_tier", "dst_tier"]
# The runs pass makes no edges: its golden rows are the run tree (run_sessions) and each run's counts.
RUN_KEY = ["run_id", "session_id", "parent_session_id", "via", "depth", "role", "role_tier", "phase"]
RUN_COUNTS = ["root_session_id", "n_sessions", "n_spawns", "n_launches", "n_artifact_edges", "max_depth"]
PASSES = [p.__name__ for p in _passes()]


def _ingest(tmp_path_factory, path):
    db = tmp_path_factory.mktemp("inf") / "s.duckdb"
    ingest([str(path)], db=str(db), workers=1)
    return Store(db, read_only=True)


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    with _ingest(tmp_path_factory, SCENARIO) as s:
        yield s, json.loads((SCENARIO / "expected.json").read_text())


@pytest.fixture(scope="module")
def everything(tmp_path_factory):
    with _ingest(tmp_path_factory, SAMPLES) as s:
        yield s


def test_scenario_edges_exactly(scenario):
    s, exp = scenario
    edges = s.query("SELECT * FROM all_edges WHERE kind IN ('launch', 'artifact', 'spawn')")
    got = {tuple(r[k] for k in ("kind", "src", "dst", "tier")) for r in edges.iter_rows(named=True)}
    want = {(e["kind"], e["src"], e["dst"], e["tier"]) for e in exp["edges"]}
    assert got == want
    for e in exp["edges"]:
        row = edges.filter((pl.col("kind") == e["kind"]) & (pl.col("dst") == e["dst"]) & (pl.col("src") == e["src"]))
        row = row.row(0, named=True)
        for key in ("src_call_id", "dst_call_id", "path", "version", "src_tier", "dst_tier"):
            if key in e:
                assert row[key] == e[key], (e["dst"], key)


def test_scenario_distractors_do_not_match(scenario):
    s, exp = scenario
    edges = s.query("SELECT kind, src, dst FROM all_edges").rows()
    for bad in exp["not_edges"]:
        hits = [e for e in edges if e[0] == bad["kind"] and e[1] == bad["src"] and bad["dst"] in ("*", e[2])]
        assert hits == [], bad["why"]


def test_scenario_counts_dangling_spawns_and_unwritten_reads(scenario):
    s, exp = scenario
    dangling = s.query("SELECT session_id, call_id FROM inference_diagnostics WHERE code = 'dangling_spawn'").rows()
    assert dangling == [(d["session"], d["call_id"]) for d in exp["dangling_spawns"]]
    unwritten = s.query("SELECT session_id, count FROM inference_diagnostics WHERE code = 'read_unwritten'").rows()
    per_session: dict[str, int] = {}
    for r in exp["unwritten_reads"]:
        per_session[r["session"]] = per_session.get(r["session"], 0) + 1
    assert sorted(unwritten) == sorted(per_session.items())


def test_scenario_unread_writes_belong_to_their_writer(scenario):
    s, exp = scenario
    for w in exp["unread_writes"]:
        row = s.query("SELECT producer, how, tier, n_reads FROM artifacts WHERE path = $1", [w["path"]]).rows()
        assert row == [(w["writer"], w["how"], w["tier"], 0)]


def _golden_rows(store: Store, pass_name: str) -> tuple[list[str], list[list]]:
    """The columns and sorted rows a pass's golden file holds."""
    if pass_name == "runs":
        columns = RUN_KEY + RUN_COUNTS
        df = store.query(
            f"SELECT {', '.join('s.' + c for c in RUN_KEY)}, {', '.join('r.' + c for c in RUN_COUNTS)}"
            " FROM run_sessions s JOIN runs r USING (run_id)"
        )
    else:
        columns = EDGE_KEY
        df = store.query("SELECT * FROM all_edges WHERE pass = $1", [pass_name])
    rows = df.select(columns).sort(columns, nulls_last=True).rows()
    return columns, [list(r) for r in rows]


@pytest.mark.parametrize("pass_name", PASSES)
def test_every_sample_edge_matches_the_golden_file(everything, pass_name):
    columns, rows = _golden_rows(everything, pass_name)
    golden = GOLDEN / f"{pass_name}.json"
    if os.environ.get("SESSIONGRAPH_UPDATE_GOLDEN"):
        golden.write_text(json.dumps({"columns": columns, "rows": rows}, indent=1) + "\n")
    assert rows == json.loads(golden.read_text())["rows"]


def test_every_edge_has_a_run_or_is_lineage(everything):
    inside = everything.query("SELECT count(*) FROM edges WHERE run_id IS NULL").item()
    across = everything.query(
        "SELECT count(*) FROM lineage l JOIN run_sessions a ON a.session_id = l.src"
        " JOIN run_sessions b ON b.session_id = l.dst WHERE a.run_id = b.run_id"
    ).item()
    assert (inside, across) == (0, 0)
    ids = everything.query("SELECT edge_id FROM all_edges")["edge_id"]
    assert ids.n_unique() == ids.len()
