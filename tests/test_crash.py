"""A killed ingest loses nothing already stored, and the next ingest completes the store."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from sessiongraph.store import Store
from tests.conftest import ROOT, SAMPLES

TABLES = (
    "sessions",
    "calls",
    "file_events",
    "launches",
    "usage",
    "diagnostics",
    "documents",
    "outcomes",
    "runs",
    "run_sessions",
    "edges",
    "lineage",
    "artifacts",
    "inference_diagnostics",
    "ingested_files",
)
# Store columns that say when or by which ingest a row was written: everything else must match.
VOLATILE = {
    "ingested_files": "ingest_id, ingested_at",
    "sessions": "ingest_id",
    "calls": "ingest_id",
    "file_events": "ingest_id",
    "launches": "ingest_id",
    "usage": "ingest_id",
    "diagnostics": "ingest_id",
    "documents": "ingest_id",
    "outcomes": "ingest_id",
}


def _ingest_cmd(logs, db):
    return [sys.executable, "-m", "sessiongraph", "ingest", str(logs), "--db", str(db), "--workers", "1"]


def dump(db) -> dict:
    with Store(db, read_only=True) as s:
        out = {}
        for t in TABLES:
            drop = f" EXCLUDE ({VOLATILE[t]})" if t in VOLATILE else ""
            out[t] = s.query(f"SELECT *{drop} FROM {t} ORDER BY ALL").rows()
        return out


@pytest.fixture(scope="module")
def logs(tmp_path_factory):
    root = tmp_path_factory.mktemp("logs")
    for copy in range(3):  # the same sessions three times over: a longer ingest to kill inside
        shutil.copytree(SAMPLES, root / "s" / str(copy), ignore=shutil.ignore_patterns("*.md", "*.py"))
    return root / "s"


@pytest.fixture(scope="module")
def clean(logs, tmp_path_factory):
    db = tmp_path_factory.mktemp("clean") / "s.duckdb"
    subprocess.run(_ingest_cmd(logs, db), check=True, capture_output=True, cwd=ROOT)
    return dump(db)


# Import takes ~0.4 s and the ingest ~1.5 s more here: these land before, inside and after it.
@pytest.mark.parametrize("kill_after", [0.3, 0.6, 0.9, 1.2, 1.5, 1.8])
def test_sigkill_then_reingest_equals_one_clean_ingest(logs, clean, tmp_path, kill_after):
    db = tmp_path / "s.duckdb"
    env = dict(os.environ, SESSIONGRAPH_BATCH_FILES="3")  # many transactions from few files
    proc = subprocess.Popen(
        _ingest_cmd(logs, db), env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    time.sleep(kill_after)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    if db.exists():  # what a reader sees after the kill is consistent: whole batches only
        with Store(db, read_only=True) as s:
            files = (
                s.query("SELECT count(*) FROM ingested_files").item()
                if s.query("SELECT count(*) FROM information_schema.tables WHERE table_name = 'ingested_files'").item()
                else 0
            )
            orphans = (
                s.query(
                    "SELECT count(*) FROM sessions WHERE source_path NOT IN (SELECT source_path FROM ingested_files)"
                ).item()
                if files
                else 0
            )
            assert orphans == 0
    subprocess.run(_ingest_cmd(logs, db), check=True, capture_output=True, cwd=ROOT, env=env)
    assert dump(db) == clean
