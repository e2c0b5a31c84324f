"""benchmarks/replicate.py: copies of real logs with fresh ids stay whole within a copy and never
link to another copy (K copies give K times the edges of one), and the output is deterministic."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest

from sessiongraph.pipeline import ingest
from tests.conftest import CORPUS

BENCH = Path(__file__).resolve().parents[1] / "benchmarks"
SOURCES = [CORPUS / "claude-code", CORPUS / "codex", CORPUS.parent / "real-families"]
UUID = re.compile(rb"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

pytestmark = pytest.mark.skipif(
    not all(s.is_dir() for s in SOURCES), reason=f"real logs not found under {CORPUS.parent}"
)


@pytest.fixture(scope="module")
def replicate():
    sys.path.insert(0, str(BENCH))
    try:
        import replicate as module
    finally:
        sys.path.remove(str(BENCH))
    return module


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_copies_are_whole_and_apart(replicate, tmp_path):
    done = replicate.replicate(SOURCES, tmp_path / "out", copies=2)
    one = ingest([str(tmp_path / "out" / "copy-0000")], db=str(tmp_path / "one.duckdb"), workers=1)
    both = ingest([str(tmp_path / "out")], db=str(tmp_path / "both.duckdb"), workers=1)
    assert done["files"] == both.files_found == 2 * one.files_found
    assert one.edges_by_kind["spawn"] and one.edges_by_kind["fork"]  # lineage survives the rewrite
    # ... whole: a copy finds the source's edges (a forked Codex child's own turns are told from
    # its replayed history by version 7 UUID times, which fresh ids must keep).
    source = ingest([str(s) for s in SOURCES], db=str(tmp_path / "source.duckdb"), workers=1)
    assert one.edges_by_kind == source.edges_by_kind
    assert both.edges_by_kind == {k: {t: 2 * n for t, n in tiers.items()} for k, tiers in one.edges_by_kind.items()}
    assert both.store_sessions_by_harness == {h: 2 * n for h, n in one.store_sessions_by_harness.items()}
    assert both.runs == 2 * one.runs
    # No session, message or call id, and no working folder, is shared by two copies or kept from the source.
    first, second = _tree(tmp_path / "out" / "copy-0000"), _tree(tmp_path / "out" / "copy-0001")
    ids = [set(UUID.findall(b"".join(t.values()))) for t in (first, second)]
    source = set(UUID.findall(b"".join(b for s in SOURCES for b in _tree(s).values())))
    assert ids[0] and not ids[0] & ids[1] and not ids[1] & source
    assert b"codemie-code-c1" in b"".join(second.values()) and b"codemie-code-c0" not in b"".join(second.values())


def test_same_arguments_same_bytes(replicate, tmp_path):
    replicate.replicate(SOURCES[:2], tmp_path / "a", copies=1)
    replicate.replicate(SOURCES[:2], tmp_path / "b", copies=1)
    assert _tree(tmp_path / "a") == _tree(tmp_path / "b")
