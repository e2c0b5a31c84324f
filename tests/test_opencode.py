"""opencode adapter: exact frames of the JSON storage tree and of opencode.db, bad input, and
which files it claims."""

from __future__ import annotations

import json
import runpy
import shutil
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sessiongraph.ingest import opencode
from sessiongraph.ingest.discover import classify
from sessiongraph.ingest.frames import DIAGNOSTIC_CODES, SCHEMAS
from sessiongraph.ingest.jsonl import text_hash

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs" / "opencode"
STORAGE = SAMPLES / "storage"
PROJECT = "5e1c9a0b7d3f2e4a6c8b0d1f3e5a7c9b1d3f5e7a"
PARENT = "ses_4a1f0c2e7ffeP7xQ2mNbV9kLd3"
CHILD = "ses_4a1f0c3b1ffeC8yR3nOcW0lMe4"
ORPHAN = "ses_4a1f0e00affeOr9hAnQpX2sTu6"
DB = SAMPLES / "opencode.db"
MAIN, SUB, LATER = "ses_5b20a1c47ffeKp1Xq8RmT3vNw2", "ses_5b20a1d93ffeKp2Yr9SnU4wOx3", "ses_5b20b0f11ffeKp3Zs0ToV5xPy4"
HARBOR, KELP = "/home/dev/projects/harbor", "/home/dev/projects/kelp"


def session_file(sid: str, storage: Path = STORAGE) -> Path:
    return storage / "session" / PROJECT / f"{sid}.json"


def at(day: str, hms: str) -> datetime:
    return datetime.fromisoformat(f"{day}T{hms}+00:00").astimezone(UTC)


def _head(path: Path) -> bytes:
    return path.read_bytes()[:65536]


def _schema_ok(frames) -> None:
    for name, df in frames.tables().items():
        assert df.schema == SCHEMAS[name], name
    assert set(frames.diagnostics["code"]) <= set(DIAGNOSTIC_CODES)


# -- detection ---------------------------------------------------------------------------------


def test_detect_claims_session_files_and_the_database_only(tmp_path):
    for sid in (PARENT, CHILD, ORPHAN):
        path = session_file(sid)
        assert opencode.detect(str(path), _head(path))
        assert classify(str(path)).harness == "opencode"
    assert opencode.detect(str(DB), _head(DB)) and classify(str(DB)).harness == "opencode"
    # The objects a session owns are read with it, never on their own.
    owned = [*STORAGE.glob("message/*/*.json"), *STORAGE.glob("part/*/*.json"), *STORAGE.glob("project/*.json")]
    assert len(owned) == 31
    for path in owned:
        assert not opencode.detect(str(path), _head(path)), path
        assert classify(str(path)).skip_reason == "not_a_log", path
    # A session object outside session/<projectID>/, or under another name, is not claimed.
    moved = tmp_path / "ses_4a1f0c2e7ffeP7xQ2mNbV9kLd3.json"
    shutil.copy(session_file(PARENT), moved)
    assert not opencode.detect(str(moved), _head(moved))
    renamed = tmp_path / "session" / PROJECT / "other.json"
    renamed.parent.mkdir(parents=True)
    shutil.copy(session_file(PARENT), renamed)
    assert not opencode.detect(str(renamed), _head(renamed))
    # Another SQLite database, and other harnesses' files.
    other_db = tmp_path / "state.db"
    con = sqlite3.connect(other_db)
    con.execute("CREATE TABLE session (id TEXT)")
    con.commit()
    con.close()
    assert not opencode.detect(str(other_db), _head(other_db))
    samples = ROOT / "sample_logs"
    for path in (
        samples / "prickle/tasks.json",
        next((samples / "ocp").glob("*.json")),
        next((samples / "codex/sessions").rglob("*.jsonl")),
        next((samples / "gemini-cli/tmp").rglob("*.json")),
    ):
        assert not opencode.detect(str(path), _head(path)), path
    assert not opencode.detect(str(tmp_path / "nothing.db"), b"SQLite format 3\x00")  # cannot be opened


# -- the JSON storage tree ---------------------------------------------------------------------


def test_parent_session_frames_exactly():
    f = opencode.parse(str(session_file(PARENT)))
    _schema_ok(f)
    [s] = f.sessions.rows(named=True)
    assert {
        k: s[k]
        for k in (
            "session_id",
            "native_id",
            "session_kind",
            "layout",
            "harness_version",
            "cwd",
            "started_at",
            "ended_at",
            "model",
            "parent_native_id",
            "agent_type",
            "n_records",
        )
    } == {
        "session_id": f"opencode:{PARENT}",
        "native_id": PARENT,
        "session_kind": "main",
        "layout": "storage",
        "harness_version": "1.0.134",
        "cwd": HARBOR,
        "started_at": at("2025-11-18", "10:00:00"),
        "ended_at": at("2025-11-18", "10:02:30"),
        "model": "claude-sonnet-4-5",
        "parent_native_id": None,
        "agent_type": None,
        "n_records": 5,
    }
    assert s["first_prompt_hash"] == text_hash(
        "Add retries with backoff to harbor/sync.py. Have a subagent survey the existing retry helpers first."
    )
    assert f.calls.select(
        "call_id", "tool", "kind", "paths", "is_error", "exit_code", "result_agent_id", "subagent_type"
    ).rows() == [
        ("toolu_01TaskSurveyHelpers", "task", "spawn", [], False, None, CHILD, "explore"),
        ("toolu_01ReadSurveyNotes", "read", "read", [f"{HARBOR}/docs/retry-survey.md"], False, None, None, None),
        ("toolu_01EditSyncClient", "edit", "edit", [f"{HARBOR}/harbor/sync.py"], False, None, None, None),
        ("toolu_01ReadOldRetry", "read", "read", [f"{HARBOR}/harbor/retry_old.py"], True, None, None, None),
        ("toolu_01BashSyncTests", "bash", "shell", [], False, 0, None, None),
        ("toolu_01TaskBenchBackoff", "task", "spawn", [], False, None, "ses_4a1f0d99dffeNoFile0000000a", "general"),
        (
            "toolu_01PatchConfig",
            "apply_patch",
            "patch",
            [f"{HARBOR}/harbor/config.py", f"{HARBOR}/docs/retry.md"],
            False,
            None,
            None,
            None,
        ),
    ]
    task = f.calls.row(0, named=True)
    assert task["prompt_hash"] == text_hash(
        "List every retry or backoff helper in harbor/ and write what you find to docs/retry-survey.md"
    )
    assert (task["description"], task["started_at"], task["ended_at"]) == (
        "Survey retry helpers",
        at("2025-11-18", "10:00:03.100"),
        at("2025-11-18", "10:00:40.500"),
    )
    assert f.calls.row(4, named=True)["command"] == "pytest -q tests/test_sync.py"
    assert f.file_events.select("call_id", "path", "op", "how", "tier", "ts").rows() == [
        (
            "toolu_01ReadSurveyNotes",
            f"{HARBOR}/docs/retry-survey.md",
            "read",
            "read",
            "verified",
            at("2025-11-18", "10:00:43.050"),
        ),
        (
            "toolu_01EditSyncClient",
            f"{HARBOR}/harbor/sync.py",
            "write",
            "edit",
            "verified",
            at("2025-11-18", "10:00:50.200"),
        ),
        (
            "toolu_01PatchConfig",
            f"{HARBOR}/harbor/config.py",
            "write",
            "apply_patch",
            "verified",
            at("2025-11-18", "10:02:00.300"),
        ),
        (
            "toolu_01PatchConfig",
            f"{HARBOR}/docs/retry.md",
            "write",
            "apply_patch",
            "verified",
            at("2025-11-18", "10:02:00.300"),
        ),
    ]
    assert f.usage.select(
        "input_tokens",
        "output_tokens",
        "cache_read_tokens",
        "cache_creation_tokens",
        "cache_creation_5m_tokens",
        "cache_creation_1h_tokens",
        "reasoning_tokens",
    ).rows() == [
        (14, 296, 0, 18432, 18432, 0, 0),
        (9, 820, 18432, 2210, 2210, 0, 0),
        (6, 544, 20642, 1380, 1380, 0, 0),
        (4, 61, 22022, 0, 0, 0, 0),
    ]
    # Every row belongs to the session file, so re-ingesting it replaces them all.
    for name in ("sessions", "calls", "file_events", "usage"):
        assert set(getattr(f, name)["source_path"]) == {str(session_file(PARENT))}, name
    assert f.diagnostics.height == 0


def test_child_and_orphan_sessions():
    f = opencode.parse(str(session_file(CHILD)))
    [s] = f.sessions.rows(named=True)
    assert (s["session_kind"], s["parent_native_id"], s["agent_type"], s["model"], s["n_records"]) == (
        "subagent",
        PARENT,
        "explore",
        "claude-haiku-4-5",
        3,
    )
    assert s["first_prompt_hash"] == text_hash(
        "List every retry or backoff helper in harbor/ and write what you find to docs/retry-survey.md"
    )
    assert f.calls.select("tool", "kind", "paths").rows() == [
        ("glob", "other", [HARBOR]),
        ("grep", "other", [f"{HARBOR}/harbor"]),
        ("read", "read", [f"{HARBOR}/harbor/util/backoff.py"]),
        ("write", "write", [f"{HARBOR}/docs/retry-survey.md"]),
    ]
    assert f.file_events.select("path", "op").rows() == [
        (f"{HARBOR}/harbor/util/backoff.py", "read"),
        (f"{HARBOR}/docs/retry-survey.md", "write"),
    ]
    assert [
        f.usage[c].sum() for c in ("input_tokens", "output_tokens", "cache_read_tokens", "cache_creation_tokens")
    ] == [28, 484, 9100, 9100]
    o = opencode.parse(str(session_file(ORPHAN)))
    [s] = o.sessions.rows(named=True)
    assert (s["session_kind"], s["parent_native_id"], s["agent_type"], s["n_records"]) == (
        "subagent",
        "ses_49f00000000eGoneParent0001",
        "general",
        2,
    )
    assert o.calls.select("tool", "exit_code", "is_error").rows() == [("bash", 1, True)]
    assert f.diagnostics.height == o.diagnostics.height == 0


# -- opencode.db -------------------------------------------------------------------------------


def test_database_frames_exactly():
    f = opencode.parse(str(DB))
    _schema_ok(f)
    assert f.sessions.select(
        "session_id",
        "session_kind",
        "layout",
        "harness_version",
        "cwd",
        "started_at",
        "ended_at",
        "model",
        "parent_native_id",
        "agent_type",
        "n_records",
    ).rows() == [
        (
            f"opencode:{MAIN}",
            "main",
            "sqlite",
            "1.2.6",
            KELP,
            at("2026-02-12", "15:00:00"),
            at("2026-02-12", "15:04:30"),
            "gpt-5",
            None,
            None,
            4,
        ),
        (
            f"opencode:{SUB}",
            "subagent",
            "sqlite",
            "1.2.6",
            KELP,
            at("2026-02-12", "15:00:10.300"),
            at("2026-02-12", "15:01:34"),
            "gpt-5-mini",
            MAIN,
            "general",
            2,
        ),
        (
            f"opencode:{LATER}",
            "main",
            "sqlite",
            "1.2.6",
            KELP,
            at("2026-02-12", "16:30:00"),
            at("2026-02-12", "16:31:10"),
            "gpt-5",
            None,
            None,
            2,
        ),
    ]
    assert f.sessions["first_prompt_hash"][1] == text_hash(
        "Write docs/MIGRATION.md: what moved where when kelp/parser.py became the kelp/parser package"
    )
    assert f.calls.select(
        "session_id", "call_id", "kind", "paths", "cwd", "is_error", "exit_code", "result_agent_id"
    ).rows() == [
        (f"opencode:{MAIN}", "call_Kp1ReadParser", "read", [f"{KELP}/kelp/parser.py"], KELP, False, None, None),
        (f"opencode:{MAIN}", "call_Kp1TaskNotes", "spawn", [], KELP, False, None, SUB),
        (
            f"opencode:{MAIN}",
            "call_Kp1WriteInit",
            "write",
            [f"{KELP}/kelp/parser/__init__.py"],
            KELP,
            False,
            None,
            None,
        ),
        (f"opencode:{MAIN}", "call_Kp1EditCli", "edit", [f"{KELP}/kelp/cli.py"], KELP, False, None, None),
        (f"opencode:{MAIN}", "call_Kp1BashPytest", "shell", [], KELP, True, 1, None),
        (f"opencode:{MAIN}", "call_Kp1BashStatus", "shell", [], f"{KELP}/kelp", False, 0, None),
        (f"opencode:{MAIN}", "call_Kp1ReadNotes", "read", [f"{KELP}/docs/MIGRATION.md"], KELP, False, None, None),
        (f"opencode:{SUB}", "call_Kp2ReadParser", "read", [f"{KELP}/kelp/parser.py"], KELP, False, None, None),
        (f"opencode:{SUB}", "call_Kp2WriteNotes", "write", [f"{KELP}/docs/MIGRATION.md"], KELP, False, None, None),
        (f"opencode:{LATER}", "call_Kp3ReadInit", "read", [f"{KELP}/kelp/parser/__init__.py"], KELP, False, None, None),
        (f"opencode:{LATER}", "call_Kp3EditReadme", "edit", [f"{KELP}/README.md"], KELP, False, None, None),
    ]
    assert f.file_events.select("call_id", "path", "op").rows() == [
        ("call_Kp1ReadParser", f"{KELP}/kelp/parser.py", "read"),
        ("call_Kp1WriteInit", f"{KELP}/kelp/parser/__init__.py", "write"),
        ("call_Kp1EditCli", f"{KELP}/kelp/cli.py", "write"),
        ("call_Kp1ReadNotes", f"{KELP}/docs/MIGRATION.md", "read"),
        ("call_Kp2ReadParser", f"{KELP}/kelp/parser.py", "read"),
        ("call_Kp2WriteNotes", f"{KELP}/docs/MIGRATION.md", "write"),
        ("call_Kp3ReadInit", f"{KELP}/kelp/parser/__init__.py", "read"),
        ("call_Kp3EditReadme", f"{KELP}/README.md", "write"),
    ]
    # output + reasoning (opencode prices reasoning as its own bucket), reasoning, uncached input
    assert f.usage.select(
        "session_id", "input_tokens", "output_tokens", "reasoning_tokens", "cache_read_tokens", "cache_creation_tokens"
    ).rows() == [
        (f"opencode:{MAIN}", 2100, 640 + 384, 384, 6144, 0),
        (f"opencode:{MAIN}", 1320, 1910 + 512, 512, 8704, 0),
        (f"opencode:{MAIN}", 410, 220, 0, 10752, 0),
        (f"opencode:{SUB}", 3050, 880 + 256, 256, 0, 0),
        (f"opencode:{LATER}", 1800, 420 + 128, 128, 4096, 0),
    ]
    assert set(f.calls["source_path"]) == {str(DB)} and f.diagnostics.height == 0


def test_database_is_what_the_generator_builds(tmp_path):
    fresh = tmp_path / "opencode.db"
    runpy.run_path(str(SAMPLES / "_make_db.py"), run_name="not_main")["build"](fresh)
    a, b = opencode.parse(str(DB)), opencode.parse(str(fresh))
    for name in ("sessions", "calls", "file_events", "usage", "diagnostics"):
        drop = [c for c in ("source_path", "source_bytes") if c in getattr(a, name).columns]
        assert getattr(a, name).drop(drop).equals(getattr(b, name).drop(drop)), name


def test_tree_is_what_the_generator_writes(tmp_path):
    copy = tmp_path / "opencode"
    copy.mkdir()
    shutil.copy(SAMPLES / "_generate.py", copy / "_generate.py")
    runpy.run_path(str(copy / "_generate.py"), run_name="__main__")
    written = sorted(p.relative_to(copy) for p in (copy / "storage").rglob("*.json"))
    assert written == sorted(p.relative_to(SAMPLES) for p in STORAGE.rglob("*.json"))
    for rel in written:
        assert (copy / rel).read_bytes() == (SAMPLES / rel).read_bytes(), rel


def test_a_migrated_session_is_read_from_the_database_only(tmp_path):
    """opencode keeps storage/ after migrating it into opencode.db: read each session once."""
    shutil.copytree(STORAGE, tmp_path / "storage")
    db = tmp_path / "opencode.db"
    runpy.run_path(str(SAMPLES / "_make_db.py"), run_name="not_main")["build"](db)
    con = sqlite3.connect(db)
    con.execute(
        "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)"
        " VALUES (?, 'p', 's', ?, 't', '1.2.6', 0, 0)",
        (PARENT, HARBOR),
    )
    con.commit()
    con.close()
    parent = opencode.parse(str(session_file(PARENT, tmp_path / "storage")))
    assert all(df.height == 0 for df in parent.tables().values())
    child = opencode.parse(str(session_file(CHILD, tmp_path / "storage")))  # not migrated: read from the tree
    assert child.sessions["session_id"].to_list() == [f"opencode:{CHILD}"]


# -- bad input ---------------------------------------------------------------------------------


@pytest.fixture
def tree(tmp_path) -> Path:
    dst = tmp_path / "storage"
    shutil.copytree(STORAGE, dst)
    return dst


def test_broken_objects_in_the_tree(tree):
    msgs = sorted((tree / "message" / PARENT).glob("*.json"))
    msgs[1].write_text('{"id": "broken", ')  # the first assistant message: its parts go too
    tokens = json.loads(msgs[2].read_text())
    tokens["tokens"] = "many"
    msgs[2].write_text(json.dumps(tokens))
    odd = json.loads(msgs[4].read_text())
    odd["role"] = "system"
    msgs[4].write_text(json.dumps(odd))
    parts = sorted((tree / "part" / tokens["id"]).glob("*.json"))
    parts[0].write_text("[1, 2]")  # the read of the survey notes
    edit = json.loads(parts[1].read_text())
    edit["state"]["input"] = ["harbor/sync.py"]
    parts[1].write_text(json.dumps(edit))
    f = opencode.parse(str(session_file(PARENT, tree)))
    got = f.diagnostics.select("line", "code", "detail").rows()
    assert [(line, code) for line, code, _ in got] == [
        (None, "invalid_json"),
        (None, "not_object"),
        (None, "wrong_type"),
        (None, "bad_arguments"),
        (None, "unknown_record_type"),
    ]
    assert got[0][2].startswith(f"message/{PARENT}/") and got[1][2].startswith("part/")
    assert set(f.diagnostics["source_path"]) == {str(session_file(PARENT, tree))}
    # The rest is still read.
    [s] = f.sessions.rows(named=True)
    assert s["n_records"] == 4
    assert f.calls["call_id"].to_list() == [
        "toolu_01EditSyncClient",
        "toolu_01ReadOldRetry",
        "toolu_01BashSyncTests",
        "toolu_01TaskBenchBackoff",
        "toolu_01PatchConfig",
    ]
    assert f.calls.row(0, named=True)["paths"] == []
    assert f.usage.height == 1  # message 3; 1 broke, 2 has bad tokens, 4 is not an assistant message


def test_broken_session_file(tree):
    path = session_file(CHILD, tree)
    path.write_text('{"id": 42, "projectID": "x", "time": {}}')
    assert opencode.parse(str(path)).diagnostics["code"].to_list() == ["no_session"]
    path.write_text("{")
    assert opencode.parse(str(path)).diagnostics["code"].to_list() == ["invalid_json"]
    assert opencode.parse(str(tree / "gone.json")).diagnostics["code"].to_list() == ["unreadable_file"]


def test_session_without_messages(tree):
    shutil.rmtree(tree / "message" / ORPHAN)
    f = opencode.parse(str(session_file(ORPHAN, tree)))
    assert f.sessions["n_records"].to_list() == [0] and f.calls.height == 0 and f.diagnostics.height == 0


def _db_copy(tmp_path: Path) -> Path:
    path = tmp_path / "opencode.db"
    shutil.copy(DB, path)
    return path


def test_database_with_missing_columns_and_bad_rows(tmp_path):
    path = _db_copy(tmp_path)
    con = sqlite3.connect(path)
    con.execute("ALTER TABLE session DROP COLUMN version")
    con.execute("ALTER TABLE message DROP COLUMN time_created")
    con.execute(
        "UPDATE message SET data = '{not json' WHERE id = (SELECT min(id) FROM message WHERE session_id = ?)", (LATER,)
    )
    con.execute("UPDATE part SET data = '\"text\"' WHERE data LIKE '%call_Kp1EditCli%'")
    con.execute("INSERT INTO message (id, session_id, time_updated, data) VALUES ('msg_stray', 'ses_nowhere', 0, '{}')")
    con.commit()
    con.close()
    f = opencode.parse(str(path))
    assert f.diagnostics.select("code", "detail").rows() == [
        ("bad_document", "opencode.db: column session.version missing"),
        ("bad_document", "opencode.db: column message.time_created missing"),
        ("invalid_json", "message msg_19c52b0206c5LUser010000000: data does not parse"),
        ("not_object", "part prt_19c525fb550aMEdit010000000: data is a JSON string"),
        ("no_session", "messages of 1 session id(s) with no session row"),
    ]
    assert f.sessions["harness_version"].to_list() == [None, None, None]
    assert f.sessions["n_records"].to_list() == [4, 2, 1]
    assert "call_Kp1EditCli" not in f.calls["call_id"].to_list() and f.calls.height == 10
    assert f.sessions["first_prompt_hash"][2] is None  # its user message was the broken row


def test_database_without_a_table(tmp_path):
    path = _db_copy(tmp_path)
    con = sqlite3.connect(path)
    con.execute("DROP TABLE part")
    con.commit()
    con.close()
    f = opencode.parse(str(path))
    assert f.diagnostics.select("code", "detail").rows() == [("bad_document", "opencode.db: table part missing")]
    assert f.sessions.height == 0


def test_unreadable_database(tmp_path):
    path = tmp_path / "opencode.db"
    path.write_bytes(b"SQLite format 3\x00" + b"\x07" * 200)
    f = opencode.parse(str(path))
    assert f.diagnostics["code"].to_list() == ["unreadable_file"] and f.sessions.height == 0
