"""Log roots as they are found on real machines: symlink loops, dangling links, unreadable
entries, a 100 MB line; and a warm ingest that opens nothing it already holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from sessiongraph.ingest import discover
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import ROOT, SAMPLES
from tests.test_discover import CLAUDE_LINE


def _diag_codes(db) -> dict[str, int]:
    with Store(db, read_only=True) as s:
        return dict(s.query("SELECT code, count(*) FROM diagnostics GROUP BY code").rows())


def test_a_symlink_loop_is_reported_and_walked_once(tmp_path):
    root = tmp_path / "logs"
    (root / "proj").mkdir(parents=True)
    (root / "proj" / "s.jsonl").write_bytes(CLAUDE_LINE)
    os.symlink(root, root / "proj" / "back-to-root")  # a loop
    os.symlink(root / "proj", root / "alias")  # the same folder under a second name
    db = tmp_path / "s.duckdb"
    summary = ingest([str(root)], db=str(db), workers=1)
    assert summary.files_read == 1 and summary.sessions_by_harness == {"claude-code": 1}
    assert summary.skipped_by_reason == {"symlink_loop": 2}
    assert _diag_codes(db) == {"symlink_loop": 2}


def test_a_dangling_link_is_an_unreadable_file_not_a_crash(tmp_path):
    root = tmp_path / "logs"
    root.mkdir()
    (root / "ok.jsonl").write_bytes(CLAUDE_LINE)
    os.symlink(tmp_path / "gone.jsonl", root / "dangling.jsonl")
    db = tmp_path / "s.duckdb"
    summary = ingest([str(root)], db=str(db), workers=1)
    assert summary.files_read == 1 and summary.skipped_by_reason == {"unreadable_file": 1}
    assert _diag_codes(db) == {"unreadable_file": 1}


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any folder")
def test_an_unreadable_folder_is_reported(tmp_path):
    root = tmp_path / "logs"
    (root / "locked").mkdir(parents=True)
    (root / "locked" / "s.jsonl").write_bytes(CLAUDE_LINE)
    (root / "locked").chmod(0)
    try:
        found = list(discover.discover([root]))
    finally:
        (root / "locked").chmod(0o755)
    assert [(f.path, f.skip_reason) for f in found] == [(str(root / "locked"), "unreadable_file")]


def test_a_warm_ingest_opens_no_file(tmp_path, monkeypatch):
    db = tmp_path / "s.duckdb"
    first = ingest([str(SAMPLES)], db=str(db), workers=1)
    assert first.files_read > 50

    def opened(path):
        raise AssertionError(f"warm ingest classified {path}")

    monkeypatch.setattr("sessiongraph.work.classify", opened)
    again = ingest([str(SAMPLES)], db=str(db), workers=1)
    assert again.files_read == 0 and not again.inferred
    # every listed file is known, logs and non-logs alike (history.jsonl is skipped by name)
    assert again.files_unchanged == first.files_found - first.skipped_by_reason.get("not_transcript", 0)


# The peak is this program's own VmHWM: ru_maxrss keeps, across exec, the high-water mark of the
# forked pytest worker (a worker that loaded Phoenix or Ray starts the child near 1 GB).
BIG_LINE_SCRIPT = r"""
import json, sys
from sessiongraph.pipeline import ingest
summary = ingest([sys.argv[1]], db=sys.argv[2], workers=1)
with open("/proc/self/status") as fh:
    hwm_kb = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
print(json.dumps({"rss_mb": hwm_kb // 1024,
                  "read": summary.files_read, "diagnostics": summary.diagnostics_by_code}))
"""


def test_a_100_mb_line_is_read_within_the_memory_bound(tmp_path):
    """One tool result of 100 MB on one line: parsed, its call answered, peak RSS under 1 GB."""
    sid = "22222222-3333-4444-8555-666666666666"
    base = {"sessionId": sid, "cwd": "/w", "version": "2.1.39", "parentUuid": None, "isSidechain": False}
    call = {
        **base,
        "type": "assistant",
        "uuid": "a1",
        "timestamp": "2026-01-02T03:04:05.000Z",
        "message": {
            "id": "m1",
            "role": "assistant",
            "model": "claude-opus-4-5",
            "content": [{"type": "tool_use", "id": "toolu_big", "name": "Read", "input": {"file_path": "/w/big.txt"}}],
            "usage": {"input_tokens": 3, "output_tokens": 5},
        },
    }
    body = "x" * (100 * 1024 * 1024)
    result = {
        **base,
        "type": "user",
        "uuid": "u2",
        "timestamp": "2026-01-02T03:04:09.000Z",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_big", "content": body}]},
    }
    logs = tmp_path / "logs"
    logs.mkdir()
    with open(logs / f"{sid}.jsonl", "w") as fh:
        fh.write(json.dumps(call) + "\n")
        fh.write(json.dumps(result) + "\n")
    del body, result
    db = tmp_path / "s.duckdb"
    out = subprocess.run(
        [sys.executable, "-c", BIG_LINE_SCRIPT, str(logs), str(db)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["read"] == 1 and report["diagnostics"] == {}
    assert report["rss_mb"] < 1000, report
    with Store(db, read_only=True) as s:
        assert s.query("SELECT ended_at IS NOT NULL FROM calls WHERE call_id = 'toolu_big'").item()
