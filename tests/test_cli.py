"""The CLI through click's CliRunner: exit codes, messages, --json, read-only queries."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import duckdb
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from tests.test_discover import CLAUDE_LINE, CODEX_LINE


@pytest.fixture
def logs(tmp_path):
    root = tmp_path / "logs"
    (root / "claude").mkdir(parents=True)
    (root / "claude" / "11111111-2222-4333-8444-555555555555.jsonl").write_bytes(CLAUDE_LINE)
    (root / "codex").mkdir()
    (root / "codex" / "rollout-2026-01-02T05-04-05-019b0000-0000-7000-8000-000000000001.jsonl").write_bytes(CODEX_LINE)
    return root


def run(*args, input=None):
    return CliRunner().invoke(main, [str(a) for a in args], input=input, catch_exceptions=False)


def test_every_command_has_help():
    for name, cmd in main.commands.items():
        res = run(name, "--help")
        assert res.exit_code == 0, name
        assert cmd.help and len(cmd.help.strip()) > 20, f"{name} has no help text"


def test_ingest_json_is_one_object_with_the_counts(logs, tmp_path):
    db = tmp_path / "s.duckdb"
    res = run("ingest", logs, "--db", db, "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["files_found"] == 2
    assert out["files_read"] == 2
    assert out["sessions_by_harness"] == {"claude-code": 1, "codex": 1}
    assert out["store_sessions_by_harness"] == {"claude-code": 1, "codex": 1}
    again = json.loads(run("ingest", logs, "--db", db, "--json").output)
    assert (again["files_read"], again["files_unchanged"]) == (0, 2)


def test_ingest_text_summary(logs, tmp_path):
    res = run("ingest", logs, "--db", tmp_path / "s.duckdb")
    assert res.exit_code == 0
    assert "Files: 2 found, 2 read, 0 unchanged, 0 skipped" in res.output
    assert "Sessions read: claude-code 1, codex 1" in res.output


def test_missing_path_is_exit_1_with_a_message(tmp_path):
    res = run("ingest", tmp_path / "nope", "--db", tmp_path / "s.duckdb")
    assert res.exit_code == 1
    assert res.output.startswith("Error: no such file or folder:")
    assert "Traceback" not in res.output


def test_no_logs_found_says_where_it_looked(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    res = run("ingest", "--db", tmp_path / "s.duckdb")
    assert res.exit_code == 0
    assert f"No logs found. Looked in: {tmp_path}/.claude, {tmp_path}/.codex, {tmp_path}/.pi" in res.output


def test_db_from_environment(logs, tmp_path, monkeypatch):
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("SESSIONGRAPH_DB", str(db))
    assert run("ingest", logs).exit_code == 0
    assert db.exists()
    res = run("query", "SELECT count(*) AS n FROM sessions", "--format", "json")
    assert json.loads(res.output) == [{"n": 2}]


@pytest.mark.parametrize(
    "sql",
    [
        "DROP TABLE sessions",
        "INSERT INTO sessions (session_id, harness, source_path, ingest_id) VALUES ('x','y','z',1)",
        "DELETE FROM calls",
        "UPDATE sessions SET model = 'x'",
        "CREATE TABLE t (a INT)",
        "COPY (SELECT * FROM sessions) TO '{tmp}/leak.csv'",
        "COPY sessions TO '{tmp}/leak.parquet' (FORMAT parquet)",
        "ATTACH '{tmp}/leak.duckdb' AS other",
        "SELECT * FROM read_csv('{tmp}/../../etc/passwd')",
        "INSTALL httpfs",
    ],
)
def test_query_cannot_change_the_store(logs, tmp_path, sql):
    db = tmp_path / "s.duckdb"
    run("ingest", logs, "--db", db)
    before = os.path.getsize(db), run("query", "SELECT * FROM sessions ORDER BY session_id", "--db", db).output
    res = run("query", sql.format(tmp=tmp_path), "--db", db)
    assert res.exit_code == 1
    assert "read-only" in res.output or "Permission Error" in res.output
    assert not list(tmp_path.glob("leak*"))
    after = os.path.getsize(db), run("query", "SELECT * FROM sessions ORDER BY session_id", "--db", db).output
    assert before == after


def test_query_formats(logs, tmp_path):
    db = tmp_path / "s.duckdb"
    run("ingest", logs, "--db", db)
    sql = "SELECT harness, count(*) AS n FROM sessions GROUP BY harness ORDER BY harness"
    assert run("query", sql, "--db", db, "--format", "csv").output == "harness,n\nclaude-code,1\ncodex,1\n"
    assert json.loads(run("query", sql, "--db", db, "--format", "json").output) == [
        {"harness": "claude-code", "n": 1},
        {"harness": "codex", "n": 1},
    ]
    table = run("query", sql, "--db", db).output.splitlines()
    assert table[0].split() == ["harness", "n"]
    assert table[-1] == "(2 rows)"
    assert run("query", "--file", "-", "--db", db, input=sql).output == run("query", sql, "--db", db).output


def test_query_columns_that_share_a_name_are_numbered(logs, tmp_path):
    db = tmp_path / "s.duckdb"
    run("ingest", logs, "--db", db)
    sql = (
        "SELECT s.harness, r.harness, 'x' AS harness_1, s.cwd FROM sessions s "
        "JOIN sessions r USING (session_id) ORDER BY 1"
    )
    res = run("query", sql, "--db", db, "--format", "json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)[0].keys() == {"harness", "harness_2", "harness_1", "cwd"}


def test_query_errors_are_messages(logs, tmp_path):
    db = tmp_path / "s.duckdb"
    res = run("query", "SELECT 1", "--db", db)
    assert res.exit_code == 1 and "no store at" in res.output
    run("ingest", logs, "--db", db)
    res = run("query", "SELECT * FROM no_such_table", "--db", db)
    assert res.exit_code == 1 and res.output.startswith("Error: query failed:")
    assert run("query", "--db", db).exit_code == 2  # no SQL given


def test_sessions_lists_every_session(logs, tmp_path):
    db = tmp_path / "s.duckdb"
    run("ingest", logs, "--db", db)
    rows = json.loads(run("sessions", "--db", db, "--json").output)
    assert [(r["session_id"], r["harness"]) for r in rows] == [
        ("claude-code:11111111-2222-4333-8444-555555555555", "claude-code"),
        ("codex:019b0000-0000-7000-8000-000000000001", "codex"),
    ]


def test_changed_file_replaces_its_rows(logs, tmp_path):
    db = tmp_path / "s.duckdb"
    run("ingest", logs, "--db", db)
    f = logs / "claude" / "11111111-2222-4333-8444-555555555555.jsonl"
    f.write_bytes(CLAUDE_LINE + CLAUDE_LINE.replace(b'"uuid":"u1"', b'"uuid":"u2"'))
    out = json.loads(run("ingest", logs, "--db", db, "--json").output)
    assert (out["files_read"], out["files_unchanged"]) == (1, 1)
    res = run("query", "SELECT session_id, n_records FROM sessions ORDER BY 1", "--db", db, "--format", "csv")
    assert res.output.splitlines()[1:] == [
        "claude-code:11111111-2222-4333-8444-555555555555,2",
        "codex:019b0000-0000-7000-8000-000000000001,1",
    ]


def test_since_and_until_filter_by_session_time(logs, tmp_path):
    db = tmp_path / "s.duckdb"
    out = json.loads(run("ingest", logs, "--db", db, "--json", "--until", "2025-12-31").output)
    assert out["files_read"] == 0
    assert out["skipped_by_reason"] == {"outside_window": 2}
    out = json.loads(run("ingest", logs, "--db", db, "--json", "--since", "2026-01-01").output)
    assert out["files_read"] == 2
    assert run("ingest", logs, "--db", db, "--since", "last tuesday").exit_code == 2


def test_workers_give_the_same_store(logs, tmp_path):
    for i in range(6):
        sid = f"11111111-2222-4333-8444-00000000000{i}"
        (logs / "claude" / f"{sid}.jsonl").write_bytes(CLAUDE_LINE.replace(b"555555555555", sid[-12:].encode()))
    dumps = []
    for workers in (1, 2):
        db = tmp_path / f"w{workers}.duckdb"
        assert run("ingest", logs, "--db", db, "--workers", workers).exit_code == 0
        dumps.append(
            run("query", "SELECT * EXCLUDE (ingest_id) FROM sessions ORDER BY 1", "--db", db, "--format", "csv").output
        )
    assert dumps[0] == dumps[1]
    assert len(dumps[0].splitlines()) == 1 + 8  # header, 7 Claude sessions, 1 Codex


def test_a_tuning_knob_that_is_no_number_is_said_and_the_default_used(tmp_path):
    """Every SESSIONGRAPH_* knob is read at import: a value that is no number is one line on stderr
    and the default, not a traceback before the command starts."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(CLAUDE_LINE + b"\n")
    knobs = ("BATCH_FILES", "LOCK_TIMEOUT", "ROW_GROUP_ROWS", "BATCH_BYTES", "BATCH_TEXT_BYTES", "GROUP_FILES")
    env = {**os.environ, **{f"SESSIONGRAPH_{k}": "lots" for k in (*knobs, "CHECKPOINT_MIN_BYTES")}}
    cmd = [sys.executable, "-m", "sessiongraph", "ingest", str(logs), "--db", str(tmp_path / "s.duckdb")]
    got = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    assert "Traceback" not in got.stderr
    for k in (*knobs, "CHECKPOINT_MIN_BYTES"):
        assert f"ignoring SESSIONGRAPH_{k}='lots' (not a number)" in got.stderr


def test_a_tuning_knob_out_of_its_range_is_said_and_the_default_used(tmp_path):
    """A number a knob cannot take (no rows a batch, a row group DuckDB refuses, a timeout that is
    no time) is said and the default used, not an error that blames the store."""
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(CLAUDE_LINE + b"\n")
    bad = {
        "BATCH_FILES": ("0", "less than 1"),
        "BATCH_BYTES": ("-5", "less than 1"),
        "ROW_GROUP_ROWS": ("3000", "not a multiple of 2048"),
        "LOCK_TIMEOUT": ("nan", "not a finite number"),
        "CHECKPOINT_MIN_BYTES": ("-1", "less than 0"),
    }
    env = {**os.environ, **{f"SESSIONGRAPH_{k}": v for k, (v, _) in bad.items()}}
    cmd = [sys.executable, "-m", "sessiongraph", "ingest", str(logs), "--db", str(tmp_path / "s.duckdb")]
    got = subprocess.run(cmd, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert got.returncode == 0, got.stderr
    for k, (v, why) in bad.items():
        assert f"ignoring SESSIONGRAPH_{k}={v!r} ({why})" in got.stderr
    with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM sessions").fetchone()[0] == 1
