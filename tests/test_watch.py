"""``sessiongraph watch``: a watched store equals a cold ingest of the same files, after copies,
appends, a rotation, deletions and a root that appears late; readers and other ingests get in
while it waits; Ctrl-C stops it with exit 0. Every wait polls with a generous timeout (the
machine may be loaded), nothing asserts on a fixed sleep."""

from __future__ import annotations

import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from sessiongraph.ingest.discover import listing, not_transcript
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from sessiongraph.watcher import _relevant
from tests.conftest import ROOT, SAMPLES
from tests.test_incremental import TABLES, dump

TIMEOUT_S = 180.0


class Watch:
    """``sessiongraph watch`` in a subprocess, its --json events read on a thread."""

    def __init__(self, *args: object):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sessiongraph", "watch", *map(str, args), "--json", "--workers", "1"],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.events: queue.Queue = queue.Queue()
        self.seen: list[dict] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.events.put(json.loads(line))

    def until(self, event: str) -> dict:
        deadline = time.monotonic() + TIMEOUT_S
        while time.monotonic() < deadline:
            try:
                got = self.events.get(timeout=0.5)
            except queue.Empty:
                assert self.proc.poll() is None, self.proc.stderr.read() if self.proc.stderr else ""
                continue
            self.seen.append(got)
            if got["event"] == event:
                return got
        raise AssertionError(f"no {event!r} event in {TIMEOUT_S:g}s; saw {self.seen}")

    def interrupt(self) -> tuple[int, str]:
        """SIGINT (Ctrl-C); the exit code and stderr, every event read into ``seen``."""
        self.proc.send_signal(signal.SIGINT)
        code = self.proc.wait(timeout=TIMEOUT_S)
        self.reader.join(timeout=TIMEOUT_S)
        while not self.events.empty():
            self.seen.append(self.events.get())
        assert self.proc.stderr is not None
        return code, self.proc.stderr.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()


def on_disk(roots: list[Path]) -> dict[str, tuple[int, int]]:
    """What an ingest would fingerprint under ``roots`` (those that exist)."""
    present = [r for r in roots if r.exists()]
    return {p: (s, m) for p, s, m in listing(present) if isinstance(p, str) and not not_transcript(p)}


def stored(db: Path) -> dict[str, tuple[int, int]] | None:
    """The store's fingerprints, once nothing waits for inference; None while it is busy."""
    with Store(db, read_only=True) as s:  # waits for the watcher's batch, as any reader does
        if s.query("SELECT count(*) FROM dirty_files").item():
            return None
        rows = s.query("SELECT source_path, size_bytes, mtime_ns FROM ingested_files").rows()
    return {p: (size, mtime) for p, size, mtime in rows}


def caught_up(db: Path, roots: list[Path]) -> None:
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        want = on_disk(roots)
        if db.exists() and stored(db) == want:
            return
        time.sleep(0.1)
    raise AssertionError(f"the store did not catch up with the files in {TIMEOUT_S:g}s")


def test_a_watched_store_equals_a_cold_ingest(tmp_path):
    logs, later, db, cold = tmp_path / "logs", tmp_path / "later" / "root", tmp_path / "s.duckdb", tmp_path / "c.duckdb"
    shutil.copytree(SAMPLES / "codex", logs / "codex")
    roots = [logs, later]
    watch = Watch(logs, later, "--db", db)
    try:
        ready = watch.until("watching")
        assert ready["waiting_for"] == [str(later)]
        caught_up(db, roots)
        # new files, appended lines, a rotation, a deletion, and the late root
        shutil.copytree(SAMPLES / "claude-code", logs / "claude-code")
        rollouts = sorted((logs / "codex").rglob("rollout-*.jsonl"))
        grown = rollouts[0]
        grown.write_bytes(grown.read_bytes() + grown.read_bytes().splitlines(keepends=True)[-1])
        rotated = rollouts[1]
        rotated.rename(rotated.with_name(rotated.stem + ".1.jsonl"))
        shutil.copy(rollouts[2], rotated)  # a new file under the rotated name
        rollouts[3].unlink()
        caught_up(db, roots)
        shutil.copytree(SAMPLES / "pi", later)
        caught_up(db, roots)
        shutil.rmtree(logs / "claude-code" / "projects")  # a whole folder of logs
        grown.write_bytes(grown.read_bytes() + b'{"cut mid-li')  # a line still being written
        caught_up(db, roots)
        with Store(db, read_only=True) as s:  # readable while it watches
            assert s.query("SELECT count(*) FROM sessions WHERE harness = 'pi'").item() > 0
        # another writer gets the store between the watcher's ingests: it holds no lock idle
        other = subprocess.run(
            [sys.executable, "-m", "sessiongraph", "ingest", str(logs), str(later), "--db", str(db)],
            cwd=ROOT,
            env=dict(os.environ, SESSIONGRAPH_LOCK_TIMEOUT="60"),
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        assert other.returncode == 0, other.stderr
        code, err = watch.interrupt()
    finally:
        watch.kill()
    assert code == 0 and "Traceback" not in err, err
    stopped = watch.seen[-1]
    assert stopped["event"] == "stopped" and stopped["ingests"] >= 4 and stopped["files_removed"] > 0
    ingested = [e for e in watch.seen if e["event"] == "ingest" and e["changed"] is not None]
    assert ingested and all(e["files_unchanged"] == 0 for e in ingested)  # only the changed paths listed
    ingest([str(logs), str(later)], db=str(cold), workers=1)
    got, want = dump(db), dump(cold)
    for t in TABLES:
        assert got[t] == want[t], t


def test_ctrl_c_while_waiting_for_every_root_exits_cleanly(tmp_path):
    db = tmp_path / "s.duckdb"
    watch = Watch(tmp_path / "nothing" / "here", "--db", db)
    try:
        assert watch.until("watching")["roots"] == []
        code, err = watch.interrupt()
    finally:
        watch.kill()
    assert code == 0 and "Traceback" not in err, err
    with Store(db):  # the lock is free
        pass


def test_only_logs_folders_and_gone_paths_are_ingested(tmp_path):
    root = tmp_path / "r"
    (root / "node_modules").mkdir(parents=True)
    (root / "a").mkdir()
    for name in ("a/x.jsonl", "a/notes.txt", "node_modules/y.jsonl"):
        (root / name).write_text("{}\n")
    store = tmp_path / "s.duckdb"
    paths = ["a/x.jsonl", "a/notes.txt", "node_modules/y.jsonl", "a", "gone.jsonl", "gone-folder"]
    changes = {(None, str(root / p)) for p in paths} | {(None, str(store) + ".wal")}
    got = _relevant(changes, [str(root)], str(store))
    assert got == {str(root / p) for p in ("a/x.jsonl", "a", "gone.jsonl", "gone-folder")}


@pytest.mark.parametrize("busy", [False, True])
def test_an_idle_store_holds_no_lock(tmp_path, busy):
    db = tmp_path / "s.duckdb"
    with Store(db) as writer:
        writer.idle()
        with Store(db, read_only=True) as reader:  # readers get in
            assert reader.query("SELECT count(*) FROM sessions").item() == 0
        if busy:
            with Store(db) as other:  # so does another writer
                other.con.execute("SELECT 1")
        assert writer.con.execute("SELECT count(*) FROM ingested_files").fetchall() == [(0,)]  # back
