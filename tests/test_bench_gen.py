"""benchmarks/gen.py: the same seed gives the same bytes, and an ingest finds what it planted."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

from sessiongraph.pipeline import ingest

GEN = Path(__file__).resolve().parents[1] / "benchmarks" / "gen.py"


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location("bench_gen", GEN)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_same_bytes(gen, tmp_path):
    a = gen.generate(tmp_path / "a", 1, seed=5)
    b = gen.generate(tmp_path / "b", 1, seed=5)
    c = gen.generate(tmp_path / "c", 1, seed=6)
    ta, tb = _tree(tmp_path / "a"), _tree(tmp_path / "b")
    assert ta == tb
    assert ta != _tree(tmp_path / "c")
    assert {k: v for k, v in a.items() if k not in ("seconds", "mb_s")} == {
        k: v for k, v in b.items() if k not in ("seconds", "mb_s")
    }
    assert a["files"] == len(ta) and a["bytes"] == sum(map(len, ta.values()))
    assert c["files"] > 0


def test_ingest_finds_the_planted_edges(gen, tmp_path):
    plan = gen.generate(tmp_path / "corpus", 2, seed=3)
    # the mix this test relies on: every subagent layout, launches of both tiers, shared files
    kinds = plan["session_kinds"]
    assert {"claude subagent inline", "claude subagent flat", "claude subagent nested", "claude subagent meta"} <= set(
        kinds
    )
    assert {"verified", "heuristic"} <= set(plan["edges_by_kind"]["launch"])
    assert sum(plan["edges_by_kind"]["artifact"].values()) > 0

    got = ingest([str(tmp_path / "corpus")], db=str(tmp_path / "store.duckdb"), workers=1)
    assert got.diagnostics_by_code == {}
    assert got.edges_by_kind == plan["edges_by_kind"]
    assert got.store_sessions_by_harness == plan["sessions_by_harness"]
    assert got.runs == plan["runs"]
    assert got.inference_counts == plan["inference_counts"]


def test_append_keeps_the_transcript_valid(gen, tmp_path):
    plan = gen.generate(tmp_path / "corpus", 1, seed=4)
    db = str(tmp_path / "store.duckdb")
    ingest([str(tmp_path / "corpus")], db=db, workers=1)
    target = tmp_path / "corpus" / plan["largest_transcript"]
    size = target.stat().st_size
    assert gen.append_records(target, 50_000) >= 50_000
    assert target.stat().st_size > size + 50_000
    again = ingest([str(tmp_path / "corpus")], db=db, workers=1)
    assert again.files_read == 1
    assert again.diagnostics_by_code == {}
    assert again.edges_by_kind == plan["edges_by_kind"]
