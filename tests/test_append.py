"""Live and grown transcripts through the whole pipeline: a file caught mid-write is read up to
its last complete line, the next ingest reads only what was appended, and the store then equals
a cold ingest of the final files, table by table."""

from __future__ import annotations

import shutil

import pytest

from sessiongraph.ingest import resume
from sessiongraph.ingest.discover import classify
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES
from tests.test_crash import dump


@pytest.fixture
def checkpoint_everything(monkeypatch):
    monkeypatch.setattr(resume, "MIN_BYTES", 0)


def _cut_transcripts(root, keep: float) -> dict:
    """Cut every resumable transcript under ``root`` at ``keep`` of its bytes (mid-line, as a
    writer caught in the middle of a record leaves it); returns the full contents."""
    full = {}
    for path in sorted(root.rglob("*.jsonl")):
        if classify(str(path)).harness != "claude-code":
            continue
        data = path.read_bytes()
        full[path] = data
        path.write_bytes(data[: max(1, int(len(data) * keep))])
    return full


def _restore(full: dict) -> None:
    for path, data in full.items():
        with open(path, "r+b") as fh:  # append in place, as the harness does
            fh.seek(0, 2)
            fh.write(data[fh.tell() :])


@pytest.mark.usefixtures("checkpoint_everything")
def test_appended_then_reingested_equals_a_cold_ingest(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude-code", logs)
    full = _cut_transcripts(logs, keep=0.6)
    db = tmp_path / "grown.duckdb"
    first = ingest([str(logs)], db=str(db), workers=1)
    assert first.diagnostics_by_code.get("truncated_line", 0) > 0  # lines caught mid-write
    _restore(full)
    again = ingest([str(logs)], db=str(db), workers=1)
    assert again.files_resumed == len(full) and again.bytes_skipped > 0
    assert "truncated_line" not in again.diagnostics_by_code  # the partial lines were read again, whole

    cold = tmp_path / "cold.duckdb"
    ingest([str(logs)], db=str(cold), workers=1)
    assert dump(db) == dump(cold)
    with Store(db, read_only=True) as a, Store(cold, read_only=True) as b:
        sql = "SELECT source_path, byte_offset, line, head_sha, seam_sha FROM checkpoints ORDER BY 1"
        assert a.query(sql).rows() == b.query(sql).rows()


@pytest.mark.usefixtures("checkpoint_everything")
def test_a_rewritten_transcript_is_read_whole(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES / "claude-code", logs)
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1)
    path = max(
        (p for p in logs.rglob("*.jsonl") if classify(str(p)).harness == "claude-code"), key=lambda p: p.stat().st_size
    )
    data = path.read_bytes()
    path.write_bytes(data.replace(b"/home/dev", b"/home/eve", 1) + b"\n")  # same head length, new bytes
    again = ingest([str(logs)], db=str(db), workers=1)
    assert again.files_read == 1 and again.files_resumed == 0
    cold = tmp_path / "cold.duckdb"
    ingest([str(logs)], db=str(cold), workers=1)
    assert dump(db) == dump(cold)


def test_small_files_keep_no_checkpoint(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES / "claude-code")], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        assert s.query("SELECT count(*) FROM checkpoints").item() == 0  # every sample is under 1 MB
