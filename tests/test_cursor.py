"""Cursor adapter: transcripts with role and content only. Identity from the file name, time
from the file's mtime (said in a diagnostic), no tokens invented, the .txt twin never a second
session, children under subagents/ tied by layout; exact facts of the real corpus transcripts."""

from __future__ import annotations

import os
import runpy
import shutil
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from sessiongraph.ingest import claude_code, cursor, discover
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "cursor"
TRANSCRIPTS = SAMPLES / "projects" / "home-dev-projects-kiln" / "agent-transcripts"
CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "cursor"
FLAT = "3f2a9c1e-7b4d-4e8a-9c0f-5d6e7f8a9b01"
NESTED = "8d1c4b7a-2e5f-4a3b-8c9d-0e1f2a3b4c5d"
CHILD = "e6f7a8b9-c0d1-4e2f-a3b4-c5d6e7f8a9b0"
KILN = "/home/dev/projects/kiln"
TASK_PROMPT = "List every TODO under /home/dev/projects/kiln/src and say which module owns each."


def mtime(path: Path) -> datetime:
    return datetime.fromtimestamp(path.stat().st_mtime, tz=UTC)


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


def test_detects_transcripts_and_nothing_else(tmp_path):
    for f in TRANSCRIPTS.rglob("*.jsonl"):
        assert classify(str(f)).harness == "cursor", f
        assert not claude_code.detect(str(f), f.read_bytes())
    claude_like = tmp_path / "c.jsonl"  # a type or sessionId makes it someone else's
    claude_like.write_bytes(b'{"type":"user","role":"user","message":{"content":[]}}\n')
    assert not cursor.detect(str(claude_like), claude_like.read_bytes())
    other = tmp_path / "o.jsonl"
    other.write_bytes(b'{"role":"system","message":{"content":[]}}\n')
    assert not cursor.detect(str(other), other.read_bytes())


def test_the_txt_twin_is_not_a_second_session():
    found = [f for f in discover.discover([SAMPLES]) if f.harness]
    names = sorted(os.path.basename(f.path) for f in found)
    assert names == sorted(f"{x}.jsonl" for x in (FLAT, NESTED, CHILD))
    assert (TRANSCRIPTS / f"{FLAT}.txt").is_file()


def test_flat_transcript_frames_exactly():
    path = TRANSCRIPTS / f"{FLAT}.jsonl"
    f = cursor.parse(str(path))
    _schema_ok(f)
    got = {k: v for k, v in f.sessions.to_dicts()[0].items() if v is not None}
    assert got == {
        "session_id": f"cursor:{FLAT}",
        "harness": "cursor",
        "native_id": FLAT,
        "session_kind": "main",
        "layout": "flat",
        "source_path": str(path),
        "source_bytes": path.stat().st_size,
        "ended_at": mtime(path),
        "first_prompt_hash": text_hash(
            "<user_query>\nWhy does the kiln build fail on a clean checkout?\n</user_query>"
        ),
        "n_records": 4,
    }
    assert f.steps.select("seq", "role", "kind", "ts").rows() == [
        (0, "user", "prompt", None),
        (1, "assistant", "text", None),
        (2, "assistant", "text", None),
        (3, "user", "prompt", None),
        (4, "assistant", "text", None),
    ]
    assert f.usage.height == 0 and f.calls.height == 0
    assert f.diagnostics.select("line", "code").rows() == [(None, "time_from_mtime"), (None, "no_token_counts")]


def test_nested_transcript_calls_and_file_events():
    path = TRANSCRIPTS / NESTED / f"{NESTED}.jsonl"
    f = cursor.parse(str(path))
    _schema_ok(f)
    s = f.sessions.to_dicts()[0]
    assert (s["layout"], s["session_kind"], s["started_at"], s["ended_at"], s["model"], s["cwd"]) == (
        "nested",
        "main",
        None,
        mtime(path),
        None,
        None,
    )
    calls = f.calls.select("call_id", "tool", "kind", "started_at", "ended_at", "paths", "is_error").rows()
    assert calls == [
        ("line2.1", "Read", "read", None, None, [f"{KILN}/src/kiln/cli.py"], None),
        ("line3.0", "Task", "spawn", None, None, [], None),
        ("line4.0", "StrReplace", "edit", None, None, [f"{KILN}/src/kiln/cli.py"], None),
        ("line4.1", "Shell", "shell", None, None, [], None),
        ("line5.0", "Delete", "other", None, None, [f"{KILN}/src/kiln/old_cli.py"], None),
    ]
    shell = f.calls.filter(kind="shell").to_dicts()[0]
    assert (shell["command"], shell["cwd"]) == ("pytest -q tests/test_cli.py", KILN)
    spawn = f.calls.filter(kind="spawn").to_dicts()[0]
    assert (spawn["subagent_type"], spawn["prompt_hash"]) == ("explore", text_hash(TASK_PROMPT))
    assert f.file_events.select("call_id", "ts", "path", "op", "how").rows() == [
        ("line2.1", None, f"{KILN}/src/kiln/cli.py", "read", "Read"),
        ("line4.0", None, f"{KILN}/src/kiln/cli.py", "write", "StrReplace"),
        ("line5.0", None, f"{KILN}/src/kiln/old_cli.py", "delete", "Delete"),
    ]
    kinds = f.steps.select("kind", "tool").rows()
    assert kinds == [
        ("prompt", None),
        ("text", None),
        ("tool_call", "Read"),
        ("tool_call", "Task"),
        ("tool_call", "StrReplace"),
        ("tool_call", "Shell"),
        ("tool_call", "Delete"),
        ("text", None),
    ]
    assert f.usage.height == 0


def test_a_subagent_is_a_spawn_by_layout(tmp_path):
    child = TRANSCRIPTS / NESTED / "subagents" / f"{CHILD}.jsonl"
    s = cursor.parse(str(child)).sessions.to_dicts()[0]
    assert (s["session_kind"], s["parent_native_id"], s["first_prompt_hash"]) == (
        "subagent",
        NESTED,
        text_hash(TASK_PROMPT),
    )
    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as st:
        edges = st.query("SELECT src, dst, tier, evidence FROM edges WHERE kind = 'spawn'").rows()
        n_usage = st.query("SELECT count(*) FROM usage").rows()
        n_sessions = st.query("SELECT count(*) FROM sessions").rows()
    assert edges == [(f"cursor:{NESTED}", f"cursor:{CHILD}", "heuristic", "folder <parent uuid>/subagents/")]
    assert n_usage == [(0,)]  # no tokens in the files: none invented
    assert n_sessions == [(3,)]


def test_bad_lines(tmp_path):
    path = tmp_path / "agent-transcripts" / "abc.jsonl"
    path.parent.mkdir()
    lines = [
        b'{"role":"user","message":{"content":[{"type":"text","text":"hi"}]}}',
        b"not json",
        b'{"role":"assistant","message":{"content":"flat"}}',
        b'{"role":"assistant","message":{"content":[{"type":"image"},{"type":"tool_use","name":"Read","input":[1]}]}}',
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    f = cursor.parse(str(path))
    _schema_ok(f)
    assert sorted(f.diagnostics["code"]) == [
        "bad_arguments",
        "invalid_json",
        "no_token_counts",
        "time_from_mtime",
        "unknown_record_type",
        "wrong_type",
    ]
    assert f.sessions["native_id"].to_list() == ["abc"]
    assert f.calls.select("call_id", "paths").rows() == [("line4.1", [])]


# -- the real corpus ------------------------------------------------------------------------------

CORPUS_FACTS = {  # uuid -> (records, user records, first prompt starts with)
    "10ce04b3-ba6a-44fd-b074-b6ef12daade4": (13, 4, "<attached_files>"),
    "5b215917-3363-4870-b82b-7d04804a2c98": (17, 5, "<manually_attached_skills>"),
    "bcb7e972-17e7-4407-97d8-23bf12387606": (2, 1, "<manually_attached_skills>"),
    "de3b3e03-4d92-4717-8f0d-f641d26db4c4": (5, 2, "<manually_attached_skills>"),
}


def test_corpus_transcripts():
    if not CORPUS.is_dir():
        pytest.skip("no ../shared/corpus")
    found = [f for f in discover.discover([CORPUS]) if f.harness or f.skip_reason != "not_a_log"]
    assert sorted(os.path.basename(f.path) for f in found) == sorted(f"{u}.jsonl" for u in CORPUS_FACTS)
    assert {f.harness for f in found} == {"cursor"}
    for f in found:
        frames = cursor.parse(f.path)
        _schema_ok(frames)
        uuid = os.path.basename(f.path)[:-6]
        n, users, opening = CORPUS_FACTS[uuid]
        s = frames.sessions.to_dicts()[0]
        assert (s["native_id"], s["layout"], s["session_kind"], s["n_records"]) == (uuid, "flat", "main", n)
        assert s["ended_at"] == mtime(Path(f.path))
        steps = frames.steps
        assert steps.height == n  # one text block per record in these files
        assert steps.filter(kind="prompt").height == users
        assert frames.usage.height == 0 and frames.calls.height == 0
        first = orjson.loads(Path(f.path).read_bytes().split(b"\n", 1)[0])["message"]["content"][0]["text"]
        assert first.startswith(opening)
        assert s["first_prompt_hash"] == text_hash(first)


def test_samples_are_generated(tmp_path):
    copy = tmp_path / "gen"
    shutil.copytree(SAMPLES, copy, ignore=shutil.ignore_patterns("projects"))
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    for path in sorted(p for p in SAMPLES.rglob("*") if p.suffix in (".jsonl", ".txt")):
        assert (copy / path.relative_to(SAMPLES)).read_bytes() == path.read_bytes(), path.name
