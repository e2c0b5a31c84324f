"""OCP documents (0.1, 0.2, 0.3) as a source, and the export -> import -> export round trip."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import CORPUS, SAMPLES
from tests.test_ocp import _assert_clean, validate

ACME = SAMPLES / "ocp"


def _dir_texts(folder: Path) -> dict[str, str]:
    return {p.name: p.read_text() for p in sorted(folder.glob("*.ocp.json"))}


@pytest.mark.parametrize("logs", [SAMPLES, CORPUS], ids=["sample_logs", "corpus"])
def test_round_trip_is_canonically_identical(tmp_path, logs):
    if not logs.is_dir():
        pytest.skip(f"{logs} not found")
    ingest([str(logs)], db=str(tmp_path / "a.duckdb"), workers=1)
    first = export_ocp(tmp_path / "one", db=str(tmp_path / "a.duckdb"))
    summary = ingest([str(tmp_path / "one")], db=str(tmp_path / "b.duckdb"), workers=1)
    assert summary.files_read == first.documents
    assert summary.diagnostics_by_code == {}
    second = export_ocp(tmp_path / "two", db=str(tmp_path / "b.duckdb"))
    assert second.documents == first.documents
    assert _dir_texts(tmp_path / "one") == _dir_texts(tmp_path / "two")


def test_older_documents_are_imported_as_stated(tmp_path):
    db = tmp_path / "s.duckdb"
    summary = ingest([str(ACME)], db=str(db), workers=1)
    assert summary.files_read == 2 and summary.diagnostics_by_code == {}
    with Store(db, read_only=True) as s:
        runs = s.query(
            "SELECT run_id, producer, n_sessions, n_spawns, n_launches, n_artifact_edges FROM runs ORDER BY 1"
        ).rows()
        assert runs == [
            ("acme-run-0007", "acme-orchestrator", 2, 0, 0, 0),
            ("acme-run-0042", "acme-orchestrator", 3, 1, 1, 1),
        ]
        edges = s.query("SELECT kind, src, dst, tier, path FROM all_edges ORDER BY kind").rows()
        assert edges == [
            ("artifact", "ocp:acme-run-0042/scout", "ocp:acme-run-0042/lead", "verified", "docs/scout-notes.md"),
            ("dep", "ocp:acme-run-0007/plan", "ocp:acme-run-0007/impl", "reported", None),  # 0.1: no tier
            ("launch", "ocp:acme-run-0042/lead", "ocp:acme-run-0042/review", "heuristic", None),
            ("spawn", "ocp:acme-run-0042/lead", "ocp:acme-run-0042/scout", "verified", None),
        ]
        members = s.query(
            "SELECT session_id, via, depth, role FROM run_sessions WHERE run_id = 'acme-run-0042' ORDER BY 1"
        ).rows()
        assert members == [
            ("ocp:acme-run-0042/lead", None, 0, "lead"),
            ("ocp:acme-run-0042/review", "launch", 1, None),
            ("ocp:acme-run-0042/scout", "spawn", 1, None),
        ]
        tokens = s.query(
            "SELECT session_id, input_tokens, cache_read_tokens, cache_creation_5m_tokens, cache_creation_1h_tokens,"
            " output_tokens FROM session_overview WHERE session_id LIKE 'ocp:acme-run-0042/%' ORDER BY 1"
        ).rows()
        assert tokens == [
            ("ocp:acme-run-0042/lead", 300, 90000, 6000, 2000, 2500),
            ("ocp:acme-run-0042/review", 2200, 4096, 0, 0, 600),
            ("ocp:acme-run-0042/scout", 40, 12000, 0, 0, 800),
        ]
    out = export_ocp(tmp_path / "o", db=str(db))
    _assert_clean(validate(out.files), 2)
    v01 = json.loads((tmp_path / "o" / "acme-run-0007.ocp.json").read_text())
    assert v01["ocp"] == "0.3" and v01["edges"][0]["tier"] == "reported"
    assert v01["run"]["ext"]["dev.sessiongraph.import"] == {"from": "0.1"}


def test_importing_our_own_export_into_the_same_store_changes_nothing(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES / "claude-code")], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        before = s.query("SELECT * FROM runs ORDER BY run_id").rows()
    out = export_ocp(tmp_path / "o", db=str(db))
    summary = ingest([str(tmp_path / "o")], db=str(db), workers=1)
    assert summary.inference_counts["declared.document_skipped"] == out.documents
    with Store(db, read_only=True) as s:
        assert s.query("SELECT * FROM runs ORDER BY run_id").rows() == before


@pytest.mark.parametrize(
    "text, code",
    [
        ('{"ocp": "0.3", "nodes": [], "run": {"id": "x"}}', "bad_document"),  # no producer
        (
            '{"ocp": "0.9", "producer": {"name": "p"}, "privacy": {"profile": "full"}, "run": {"id": "x"}, "nodes": []}',
            "bad_document",
        ),  # a *.ocp.json of a version we don't know
        ('{"ocp": "0.3", "producer": {"name": "p"}, "run": {"id": ""}, "nodes": []}', "bad_document"),
        ('{"ocp": "0.3", "producer": {"name": "p"}, "run": {"id": "x"}, "nodes": [7]}', "bad_document"),
        ('{"ocp": "0.3", "producer": {"name": "p"}, "run": {"id": "x"}, "nodes": [', "invalid_json"),
    ],
)
def test_bad_documents_are_diagnostics(tmp_path, text, code):
    (tmp_path / "d.ocp.json").write_text(text)
    summary = ingest([str(tmp_path)], db=str(tmp_path / "s.duckdb"), workers=1)
    assert summary.diagnostics_by_code == {code: 1}
