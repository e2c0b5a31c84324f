"""Two processes and one store: the second waits for the first, then works or says why it can't."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import ROOT, SAMPLES

LOGS = SAMPLES / "claude-code"


def _cli(*args, timeout_s: str):
    env = dict(os.environ, SESSIONGRAPH_LOCK_TIMEOUT=timeout_s)
    return subprocess.Popen([sys.executable, "-m", "sessiongraph", *map(str, args)], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_a_busy_store_is_a_clear_error_not_corruption(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(LOGS)], db=str(db), workers=1)
    with Store(db):  # another process is writing
        second = _cli("ingest", LOGS, "--db", db, timeout_s="1")
        reader = _cli("query", "SELECT count(*) FROM sessions", "--db", db, timeout_s="1")
        out_w, err_w = second.communicate(timeout=60)
        out_r, err_r = reader.communicate(timeout=60)
    for proc, err in ((second, err_w), (reader, err_r)):
        assert proc.returncode == 1
        assert "another process is using it (waited 1s" in err and "Traceback" not in err
    with Store(db, read_only=True) as s:
        assert s.query("SELECT count(*) FROM sessions").item() == 16


def test_a_reader_waits_for_the_writer_to_finish(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(LOGS)], db=str(db), workers=1)
    writer = Store(db)
    reader = _cli("query", "SELECT count(*) AS n FROM sessions", "--db", db, "--format", "csv", timeout_s="60")
    time.sleep(1.5)  # the reader is now waiting on the lock
    writer.close()
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    assert out.splitlines() == ["n", "16"]
