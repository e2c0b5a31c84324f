"""Every bad input gets its diagnostics code and the good lines of the same file are still stored.

Runs the whole pipeline (discover -> parse -> DuckDB) over sample_logs/broken; expected values
come from sample_logs/broken/expected.json, computed from the raw bytes independently.
"""

from __future__ import annotations

import json

import pytest

from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES

BROKEN = SAMPLES / "broken"
EXPECTED = json.loads((BROKEN / "expected.json").read_text())["files"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    db = tmp_path_factory.mktemp("broken") / "s.duckdb"
    summary = ingest([str(BROKEN)], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        yield s, summary


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_diagnostic_code_and_line(store, rel):
    s, _ = store
    path = str(BROKEN / rel)
    got = sorted(s.query(f"SELECT line, code FROM diagnostics WHERE source_path = '{path}'").rows(), key=str)
    want = sorted(((p["line"], p["code"]) for p in EXPECTED[rel]["problems"]), key=str)
    assert got == want


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_good_lines_are_stored(store, rel):
    s, _ = store
    exp = EXPECTED[rel]
    path = str(BROKEN / rel)
    sessions = s.query(f"SELECT native_id, n_records FROM sessions WHERE source_path = '{path}'").rows()
    assert [native for native, _ in sessions] == exp["sessionIds"]
    if sessions:
        # Every good line that is a threaded record is counted in the session.
        assert sessions[0][1] >= exp["good_lines"] - 1  # the snapshot line is flat
    # A record whose only fault is its timestamp or one wrong-typed field is still used, so every
    # parseable record's tokens count; lines that cannot be read count nothing.
    tokens = exp["tokens_all_parseable_records"]
    row = s.query(
        "SELECT coalesce(sum(input_tokens),0), coalesce(sum(output_tokens),0), coalesce(sum(cache_read_tokens),0),"
        f" coalesce(sum(cache_creation_tokens),0), coalesce(sum(cache_creation_1h_tokens),0) FROM usage WHERE source_path = '{path}'"
    ).row(0)
    assert row == (
        tokens["input_tokens"],
        tokens["output_tokens"],
        tokens["cache_read_input_tokens"],
        tokens["cache_creation_input_tokens"],
        tokens["ephemeral_1h"],
    )


def test_summary_counts_every_diagnostic(store):
    _, summary = store
    want: dict[str, int] = {}
    for exp in EXPECTED.values():
        for p in exp["problems"]:
            want[p["code"]] = want.get(p["code"], 0) + 1
    assert summary.diagnostics_by_code == dict(sorted(want.items()))
    # expected.json sits beside the logs: a .json nobody claims is not a log (no diagnostic)
    assert summary.skipped_by_reason == {"empty_file": 1, "not_a_log": 1, "unknown_format": 1}
    assert summary.files_read == len(EXPECTED) - 2


def test_a_crashing_adapter_is_a_diagnostic_not_a_traceback(tmp_path, monkeypatch):
    from sessiongraph.ingest import claude_code

    def boom(path, *args):
        raise RuntimeError("adapter bug")

    monkeypatch.setattr(claude_code, "parse_from", boom)
    f = tmp_path / "x.jsonl"
    f.write_bytes((SAMPLES / "broken/projects/-home-dev-projects-broken/not-json.jsonl").read_bytes())
    summary = ingest([str(f)], db=str(tmp_path / "s.duckdb"), workers=1)
    assert summary.diagnostics_by_code == {"internal_error": 1}
