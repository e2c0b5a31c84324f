"""Two processes and one store: the second waits for the first, then works or says why it can't."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from sessiongraph.errors import SessiongraphError
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import ROOT, SAMPLES
from tests.test_discover import CLAUDE_LINE

LOGS = SAMPLES / "claude-code"


def _ingest_samples(db) -> int:
    """Ingest LOGS into db; the sessions it holds, which the other process must then see.
    (Derived, not pinned: sample_logs/claude-code grows with the samples, 16 -> 29 sessions when
    the agent-team (8) and workflow (5) samples were merged.)"""
    ingest([str(LOGS)], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        n = s.query("SELECT count(*) FROM sessions").item()
    assert n > 0
    return n


def _cli(*args, timeout_s: str):
    env = dict(os.environ, SESSIONGRAPH_LOCK_TIMEOUT=timeout_s)
    return subprocess.Popen(
        [sys.executable, "-m", "sessiongraph", *map(str, args)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_busy_store_is_a_clear_error_not_corruption(tmp_path):
    db = tmp_path / "s.duckdb"
    n = _ingest_samples(db)
    with Store(db):  # another process is writing
        second = _cli("ingest", LOGS, "--db", db, timeout_s="1")
        reader = _cli("query", "SELECT count(*) FROM sessions", "--db", db, timeout_s="1")
        out_w, err_w = second.communicate(timeout=60)
        out_r, err_r = reader.communicate(timeout=60)
    assert second.returncode == 1 and "Traceback" not in err_w
    assert "another sessiongraph is writing it (waited 1s" in err_w
    assert reader.returncode == 1 and "Traceback" not in err_r
    assert "another process is using it (waited 1s" in err_r
    with Store(db, read_only=True) as s:
        assert s.query("SELECT count(*) FROM sessions").item() == n  # unchanged by the refused ingest


def test_a_reader_waits_for_the_writer_to_finish(tmp_path):
    db = tmp_path / "s.duckdb"
    n = _ingest_samples(db)
    writer = Store(db)
    reader = _cli("query", "SELECT count(*) AS n FROM sessions", "--db", db, "--format", "csv", timeout_s="60")
    time.sleep(1.5)  # the reader is now waiting on the lock
    writer.close()
    out, err = reader.communicate(timeout=60)
    assert reader.returncode == 0, err
    assert out.splitlines() == ["n", str(n)]


def test_readers_get_in_while_a_long_ingest_writes(tmp_path):
    """An ingest closes the store between batches: a reader sees committed batches mid-ingest
    (whole files only) instead of waiting for the whole run."""
    logs = tmp_path / "logs"
    logs.mkdir()
    line = CLAUDE_LINE.decode()
    n_files = 12000
    for i in range(n_files):
        sid = f"11111111-2222-4333-8444-{i:012d}"
        (logs / f"{sid}.jsonl").write_text(line.replace("11111111-2222-4333-8444-555555555555", sid))
    db = tmp_path / "s.duckdb"
    env = dict(os.environ, SESSIONGRAPH_BATCH_FILES="25")
    writer = subprocess.Popen(
        [sys.executable, "-m", "sessiongraph", "ingest", str(logs), "--db", str(db), "--workers", "1", "--json"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    seen_mid_ingest = []
    try:
        while writer.poll() is None:
            if db.exists():
                try:
                    with Store(db, read_only=True) as s:
                        files, sessions = s.query(
                            "SELECT (SELECT count(*) FROM ingested_files), (SELECT count(*) FROM sessions)"
                        ).row(0)
                except SessiongraphError:
                    continue  # store still being created
                if writer.poll() is None:
                    seen_mid_ingest.append((files, sessions))
            time.sleep(0.05)
        out, err = writer.communicate(timeout=120)
    finally:
        writer.kill()
    assert writer.returncode == 0, err
    partial = [(f, n) for f, n in seen_mid_ingest if 0 < f < n_files]
    assert partial, f"no read got in during the ingest: {seen_mid_ingest[:5]}"
    assert all(f == n for f, n in partial)  # one session per file: batches are seen whole


def test_an_ingest_closes_the_store_only_for_a_waiting_reader(tmp_path):
    """Closing checkpoints, so a writer keeps the store open between batches unless a reader
    waits: the waiting reader says so (a shared lock on <store>.readers) and gets in."""
    db = tmp_path / "s.duckdb"
    n = _ingest_samples(db)
    writer = Store(db)
    try:
        writer.con.execute("SELECT 1")
        assert not writer.release(for_readers=True)  # nobody waits: stay open
        reader = _cli("query", "SELECT count(*) AS n FROM sessions", "--db", db, "--format", "csv", timeout_s="60")
        # The reader must first start: with the suite on two workers beside other work, its
        # interpreter took over 30 s to get as far as waiting.
        deadline = time.monotonic() + 120
        while not writer.release(for_readers=True):
            assert time.monotonic() < deadline, "the waiting reader was never seen"
            time.sleep(0.05)
        out, err = reader.communicate(timeout=60)
        assert reader.returncode == 0, err
        assert out.splitlines() == ["n", str(n)]
        writer.con.execute("SELECT 1")  # reopens after the reader is done
        assert not writer.release(for_readers=True)  # the reader's signal went with it
    finally:
        writer.close()


def test_a_reader_waits_out_a_header_cut_short_while_a_writer_holds_the_store(tmp_path):
    """A reader that opens the file while a writer's close rewrites it reads the header short
    (DuckDB's "Could not read enough bytes", seen under `watch`): with a writer holding the store
    that is a wait, as a lock is; with none it is a damaged file, said at once."""
    import fcntl
    import threading

    db = tmp_path / "s.duckdb"
    n = _ingest_samples(db)
    whole = db.read_bytes()
    db.write_bytes(whole[:5000])
    with pytest.raises(SessiongraphError, match="Could not read enough bytes"):
        Store(db, read_only=True)  # no writer: at once, not after the lock timeout

    lock = open(db.with_name(db.name + ".lock"), "a+")
    fcntl.flock(lock.fileno(), fcntl.LOCK_EX)  # a writer at work

    def writer_finishes():
        time.sleep(0.5)
        db.write_bytes(whole)
        lock.close()

    threading.Thread(target=writer_finishes).start()
    with Store(db, read_only=True) as s:
        assert s.query("SELECT count(*) FROM sessions").item() == n
