"""Lineage facts that must hold on the real corpus (../shared/corpus)."""

from __future__ import annotations

import pytest

from sessiongraph.pipeline import ingest
from sessiongraph.store import Store


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from tests.conftest import CORPUS

    if not CORPUS.is_dir():
        pytest.skip(f"real-log corpus not found at {CORPUS}")
    db = tmp_path_factory.mktemp("corpus") / "s.duckdb"
    # The facts below are about the Claude Code and Codex logs; other harnesses have their own tests.
    summary = ingest([str(CORPUS / "claude-code"), str(CORPUS / "codex")], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        yield s, summary


def test_2_1_7_spawns_its_child_verified(store):
    s, _ = store
    rows = s.query("SELECT src, dst, tier, src_call_id FROM all_edges WHERE kind = 'spawn'").rows()
    assert rows == [
        (
            "claude-code:e9fb405b-169f-40eb-9396-7e75076f045d",
            "claude-code:e9fb405b-169f-40eb-9396-7e75076f045d/a485154",
            "verified",
            "toolu_bdrk_019PUUtqzQg8U5ogfuyQ7yLV",
        )
    ]


def test_2_0_64_warmups_are_not_spawns_but_count_in_the_run(store):
    s, _ = store
    warm = s.query("SELECT session_id, code FROM inference_diagnostics WHERE code = 'not_a_spawn' ORDER BY 1").rows()
    assert warm == [
        ("claude-code:4c2ddfdc-b619-4525-8d03-1950fb1b0257/36541525", "not_a_spawn"),
        ("claude-code:4c2ddfdc-b619-4525-8d03-1950fb1b0257/50243ee8", "not_a_spawn"),
    ]
    main = s.query(
        "SELECT n_sessions, n_spawns FROM runs WHERE root_session_id = 'claude-code:4c2ddfdc-b619-4525-8d03-1950fb1b0257'"
    ).row(0)
    assert main == (3, 0)
    via = s.query(
        "SELECT via, role, count(*) FROM run_sessions WHERE session_id LIKE 'claude-code:4c2ddfdc%/%' GROUP BY ALL"
    ).rows()
    assert via == [("warmup", "worker", 2)]


def test_2_1_38_has_one_dangling_spawn(store):
    s, summary = store
    rows = s.query("SELECT session_id, call_id, detail FROM inference_diagnostics WHERE code = 'dangling_spawn'").rows()
    assert rows == [
        (
            "claude-code:491e126e-1e71-469c-ade2-fcc8af567c74",
            "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX",
            "names child afb92ff, not on disk",
        )
    ]
    assert summary.inference_counts["spawn.dangling_spawn"] == 1


def test_corpus_edge_counts(store):
    _, summary = store
    assert summary.edges_by_kind["spawn"] == {"verified": 1}
    assert "launch" not in summary.edges_by_kind  # no public log holds a launch pair
    # 10 sessions: one spawn and two warm-ups join other runs.
    assert summary.runs == 7
