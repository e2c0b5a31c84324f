"""runs, show and the ingest summary's inference counters, through the CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from tests.conftest import SAMPLES

ORBIT = "claude-code:b720e73d-763d-4c3c-8ff8-264d88d63693"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("runs") / "s.duckdb"
    res = CliRunner().invoke(main, ["ingest", str(SAMPLES / "claude-code"), "--db", str(path), "--json"])
    assert res.exit_code == 0, res.output
    return path, json.loads(res.output)


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


def test_summary_counts_edges_and_inference(db):
    _, summary = db
    assert summary["inferred"] is True
    assert summary["edges_by_kind"] == {
        "artifact": {"verified": 5},
        "continue": {"verified": 1},
        "launch": {"verified": 1},
        # 6, the orbit workflow agent (its wf_<runId> folder = the Workflow call's runId), the
        # harbor team's 6 and the quill workflow's run and its 3 agents
        "spawn": {"verified": 6 + 1 + 6 + 4},
    }
    counts = summary["inference_counts"]
    assert counts["spawn.not_a_spawn"] == 4
    # session B runs `codex exec`; its rollout lives in sample_logs/codex, not ingested here
    assert counts["launch.unmatched_launch"] == 1


def test_runs_lists_each_run_once(db):
    path, summary = db
    rows = json.loads(run("runs", "--db", path, "--json").output)
    assert len(rows) == summary["runs"]
    orbit = next(r for r in rows if r["root_session_id"] == ORBIT)
    assert (orbit["n_sessions"], orbit["subagents"], orbit["launched"], orbit["max_depth"]) == (6, 4, 1, 2)


def test_show_prints_the_tree_with_tiers(db):
    path, _ = db
    out = run("show", "b720e73d", "--db", path).output.splitlines()
    assert out[0].startswith("run run_") and "(6 sessions" in out[0]
    assert out[1].startswith(ORBIT + "  claude-code  lead")
    tree = "\n".join(out[2:7])
    assert f"├── spawn [verified] {ORBIT}/aba3165e31922a567" in tree
    assert f"│   └── spawn [verified] {ORBIT}/a19accb617638ba33" in tree
    assert "launch [verified] claude-code:365efffa-5002-4c2d-80d9-e21c4320b1b7" in tree
    assert f"spawn [verified] {ORBIT}/ab91b662353a9c460" in tree


def test_show_dot_has_every_node_and_edge(db, tmp_path):
    path, _ = db
    out = tmp_path / "run.dot"
    assert run("show", ORBIT, "--db", path, "--format", "dot", "--out", out).exit_code == 0
    text = out.read_text()
    assert text.startswith('digraph "run_') and text.rstrip().endswith("}")
    assert text.count(" -> ") == 5 + 2  # 4 spawns + 1 launch, 2 artifact reads into the run
    assert "style=dashed" in text and "style=solid" in text


def test_show_unknown_run_is_an_error(db):
    path, _ = db
    res = run("show", "no-such-run", "--db", path)
    assert res.exit_code == 1
    assert res.output.startswith("Error: no run 'no-such-run'")


def test_tree_header_says_session_once_and_the_end_date_of_a_run_over_days(db):
    from datetime import timedelta

    from sessiongraph.store import Store
    from sessiongraph.views import show

    path, _ = db
    with Store(path, read_only=True) as store:
        g = show.run_graph(store, "b720e73d")
    head = show.tree(g).splitlines()[0]
    assert head.endswith("(6 sessions, 2026-01-20 16:40:00 -> 16:40:48)")
    later = g.run | {"n_sessions": 1, "ended_at": g.run["started_at"] + timedelta(days=5, hours=1)}
    head = show.tree(show.RunGraph(later, g.members, g.edges)).splitlines()[0]
    assert head.endswith("(1 session, 2026-01-20 16:40:00 -> 2026-01-25 17:40:00)")


def test_a_run_id_prefix_with_or_without_run_(db, tmp_path):
    from sessiongraph.store import Store

    path, _ = db
    with Store(path, read_only=True) as store:
        run_id = store.resolve_run(ORBIT)
        ids = store.query("SELECT run_id FROM runs")["run_id"].to_list()
    bare = run_id.removeprefix("run_")
    unique = next(
        bare[:n] for n in range(3, len(bare)) if sum(i.removeprefix("run_").startswith(bare[:n]) for i in ids) == 1
    )
    for ref in (unique, f"run_{unique}", run_id):
        assert run("show", ref, "--db", path).output.startswith(f"run {run_id} ")
    out = tmp_path / "ocp"
    assert run("export", "ocp", "--out", out, "--run", unique, "--db", path, "--json").exit_code == 0
    assert [p.name for p in out.iterdir()] == [f"{run_id}.ocp.json"]


def test_an_ambiguous_prefix_names_the_runs_it_matches(db):
    path, _ = db
    res = CliRunner().invoke(main, ["show", "run_", "--db", str(path)])
    assert res.exit_code == 1 and "matches" in res.output and "give more of the id" in res.output
    assert "run_" in res.output.split("matches", 1)[1] and "claude-code:" in res.output
