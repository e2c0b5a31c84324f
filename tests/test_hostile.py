"""Logs from anyone (issue 28): no file stops a store, hangs an ingest or exhausts memory, and no
credential or escape code gets through. One test per hostile case; each failed before its fix."""

from __future__ import annotations

import json
import shutil

from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES


def _doc(run_id: str, nodes: list[str], edges: list[dict], **extra) -> dict:
    return {
        "ocp": "0.3",
        "producer": {"name": "crafted"},
        "run": {"id": run_id, "started_at": "2025-11-03T09:00:00Z"},
        "nodes": [{"id": n} for n in nodes],
        "edges": edges,
        "attempts": [{"id": f"a-{n}", "node": n, "harness": "claude-code"} for n in nodes],
        **extra,
    }


def test_case1_crafted_documents_never_poison_the_store(tmp_path):
    """A self spawn, a 3-node launch cycle and a document whose rows the store cannot hold (an
    artifact without a path) are diagnostics naming their files; every other run is stored, and a
    later ingest of unrelated logs works."""
    logs = tmp_path / "logs"
    logs.mkdir()
    shutil.copy(SAMPLES / "ocp" / "acme-swarm-v02.ocp.json", logs)
    docs = {
        "self.ocp.json": _doc("evil-self", ["a", "b"], [{"from": "a", "to": "a", "kind": "spawn"}]),
        "cycle.ocp.json": _doc(
            "evil-cycle",
            ["x", "y", "z"],
            [{"from": f, "to": t, "kind": "launch"} for f, t in (("x", "y"), ("y", "z"), ("z", "x"))],
        ),
        "nopath.ocp.json": _doc(
            "evil-nopath", ["p"], [], artifacts=[{"id": "art", "producer": "a-p", "kind": {"value": "file"}}]
        ),
    }
    for name, doc in docs.items():
        (logs / name).write_text(json.dumps(doc))
    db = str(tmp_path / "s.duckdb")
    ingest([str(logs)], db=db, workers=1)
    later = tmp_path / "later"
    shutil.copytree(SAMPLES / "codex", later)
    ingest([str(later)], db=db, workers=1)
    with Store(db, read_only=True) as s:
        runs = dict(s.query("SELECT run_id, root_session_id FROM runs").rows())
        diags = s.query("SELECT pass, code, detail FROM inference_diagnostics WHERE pass != 'artifacts'").rows()
        codex_runs = s.query("SELECT count(*) FROM runs WHERE root_harness = 'codex'").item()
    assert runs["evil-self"] == "ocp:evil-self/a"
    assert runs["evil-cycle"] == "ocp:evil-cycle/x"
    assert "acme-run-0042" in runs
    assert "evil-nopath" not in runs
    assert codex_runs > 0
    cut = [d for p, c, d in diags if (p, c) == ("declared", "cycle_broken")]
    assert any("self.ocp.json" in d and "to itself" in d for d in cut)
    assert any("cycle.ocp.json" in d and "cycle" in d for d in cut)
    failed = [d for _, c, d in diags if c == "pass_failed"]
    assert len(failed) == 1 and "nopath.ocp.json" in failed[0] and "artifacts.path" in failed[0]
