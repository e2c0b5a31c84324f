"""The DuckDB store through the pipeline: incremental ingest, replacement, resumed sessions."""

from __future__ import annotations

import json
import os

import pyarrow as pa
import pytest

from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from sessiongraph.store.connection import registered, transaction
from tests.conftest import SAMPLES

CHILD = SAMPLES / "codex/sessions/2025/12/09/rollout-2025-12-09T14-02-33-019b036b-c520-7c3e-9a41-5be0d7f2c816.jsonl"


def _dump(db) -> dict[str, list]:
    with Store(db, read_only=True) as s:
        return {
            t: s.query(f"SELECT * EXCLUDE (ingest_id) FROM {t} ORDER BY ALL").rows()
            for t in ("sessions", "calls", "file_events", "usage", "diagnostics", "outcomes")
        }


def test_ingesting_twice_equals_once(tmp_path):
    once, twice = tmp_path / "once.duckdb", tmp_path / "twice.duckdb"
    ingest([str(SAMPLES)], db=str(once), workers=1)
    ingest([str(SAMPLES)], db=str(twice), workers=2)
    second = ingest([str(SAMPLES)], db=str(twice), workers=2)
    assert second.files_read == 0 and second.files_unchanged > 0
    assert _dump(once) == _dump(twice)


def test_a_thread_resumed_into_a_second_file_is_one_session(tmp_path):
    """`codex resume` writes a new rollout for the same thread that replays earlier events."""
    lines = CHILD.read_text().splitlines()
    first = tmp_path / "rollout-2025-12-09T14-02-33-a.jsonl"
    first.write_text("\n".join(lines[:12]) + "\n")  # up to the second token_count
    resumed = tmp_path / "rollout-2025-12-10T09-00-00-b.jsonl"
    resumed.write_text("\n".join(lines) + "\n")  # the whole thread again, plus the new turn
    db = tmp_path / "s.duckdb"
    ingest([str(tmp_path)], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        rows = s.query(
            "SELECT session_id, n_files, input_tokens, cache_read_tokens, output_tokens FROM session_overview"
        ).rows()
        per_file = s.query("SELECT count(*) FROM sessions").item()
    assert per_file == 2
    assert rows == [("codex:019b036b-c520-7c3e-9a41-5be0d7f2c816", 2, 10118 - 6528, 6528, 262)]


def test_a_grown_file_is_replaced_not_appended(tmp_path):
    f = tmp_path / "rollout.jsonl"
    lines = CHILD.read_text().splitlines()
    f.write_text("\n".join(lines[:9]) + "\n")
    db = tmp_path / "s.duckdb"
    ingest([str(tmp_path)], db=str(db), workers=1)
    f.write_text("\n".join(lines) + "\n")
    os.utime(f, ns=(1, 1))  # a different mtime even on coarse clocks
    summary = ingest([str(tmp_path)], db=str(db), workers=1)
    assert summary.files_read == 1
    with Store(db, read_only=True) as s:
        assert s.query("SELECT count(*) FROM usage").item() == 3
        assert s.query("SELECT count(*) FROM sessions").item() == 1
        assert s.query("SELECT sum(n_diagnostics) FROM ingested_files").item() == 0


def test_unreadable_file_is_a_diagnostic_row(tmp_path):
    (tmp_path / "gone.jsonl").symlink_to(tmp_path / "missing-target.jsonl")
    db = tmp_path / "s.duckdb"
    summary = ingest([str(tmp_path)], db=str(db), workers=1)
    assert summary.diagnostics_by_code == {"unreadable_file": 1}
    assert summary.skipped_by_reason == {"unreadable_file": 1}
    with Store(db, read_only=True) as s:
        assert s.query("SELECT code FROM diagnostics").rows() == [("unreadable_file",)]


def test_summary_is_json_serialisable(tmp_path):
    summary = ingest([str(SAMPLES)], db=str(tmp_path / "s.duckdb"), workers=1)
    data = json.loads(json.dumps(summary.to_dict()))
    # sample_logs/ocp adds 5 imported sessions (2 claude-code, 1 codex, 2 with no harness named);
    # the Gemini sample launches one more Claude session; scenarios/copied-history adds 3 Claude
    # Code, 7 Codex and 3 Gemini CLI sessions; scenarios/lineage-wild 5 Claude Code (two of them
    # inline subagents) and 13 Codex; scenarios/claude-print-windows 5 Claude Code (a lead, three
    # `claude -p` runs, a look-alike); scenarios/orphan-subagents 3 Claude Code (a missing parent's);
    # scenarios/paths 2 Claude Code and 7 Codex; the agent-team sample 8 Claude Code (lead, Explore,
    # five teammate files, compaction) and the workflow sample 5 (lead, the run's journal, three agents).
    # Issue 29's adapters add sample_logs/cursor 3 (a flat transcript, a nested one and its subagent),
    # sample_logs/kimi-code 2 (the main wire and agent-0's) and sample_logs/qwen-code 2 (two chats);
    # sample_logs/kimi-cli 3 (a wire's main session and its two Task subagents) and
    # sample_logs/copilot-cli 7 (rows, one per run: a session folder's 2 runs and its subagent, a flat
    # log's 3 runs, a history object); sample_logs/crush 2 (a session and the child its agent call ran);
    # sample_logs/oh-my-opencode 3 + 4 (a transcript and the two children its task calls ran; the
    # omo-agents lead and the three children its call_omo_agent and delegate_task calls ran);
    # sample_logs/factory-droid 2 (a session and the child its Task call ran).
    # scenarios/commits adds one Claude Code session and one Codex thread.
    assert data["sessions_by_harness"] == {
        "claude-code": 47 + 8 + 5 + 1,
        "codex": 43 + 1,
        "copilot-cli": 7,
        "crush": 2,
        "cursor": 3,
        "factory-droid": 2,
        "gemini-cli": 5,
        "kimi-cli": 3,
        "kimi-code": 2,
        "ocp": 2,
        "oh-my-opencode": 3 + 4,
        "omp": 9,
        "opencode": 6,
        "pi": 3,
        "prickle": 11,
        "qwen-code": 2,
    }


def test_a_store_of_another_schema_version_is_refused_untouched(tmp_path):
    import duckdb
    import pytest

    from sessiongraph.errors import SessiongraphError

    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE sessiongraph_meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
    con.execute("INSERT INTO sessiongraph_meta VALUES ('schema_version', '1')")
    con.close()
    with pytest.raises(SessiongraphError, match="schema version 1"):
        ingest([str(SAMPLES / "codex")], db=str(db), workers=1)
    con = duckdb.connect(str(db), read_only=True)
    tables = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    con.close()
    assert tables == {"sessiongraph_meta"}  # nothing was created in it


def test_a_failed_write_rolls_back_and_keeps_its_error(tmp_path):
    """The store's transaction and registered-frame helpers: a statement failing inside a
    transaction leaves no row and no registered name behind, and its own error is the one raised
    (DuckDB refuses to unregister inside the aborted transaction; that must not mask it)."""
    duckdb = pytest.importorskip("duckdb")
    con = duckdb.connect(str(tmp_path / "t.duckdb"))
    con.execute("CREATE TABLE t (a INTEGER)")
    rows = pa.table({"a": [1, 2]})
    with pytest.raises(duckdb.CatalogException, match="no_such_table"):
        with transaction(con), registered(con, {"batch_rows": rows}):
            con.execute("INSERT INTO t SELECT a FROM batch_rows")
            con.execute("INSERT INTO no_such_table SELECT a FROM batch_rows")
    assert con.execute("SELECT count(*) FROM t").fetchall() == [(0,)]
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM batch_rows")
    with registered(con, {"batch_rows": rows}), transaction(con):
        con.execute("INSERT INTO t SELECT a FROM batch_rows")
    assert con.execute("SELECT sum(a) FROM t").fetchall() == [(3,)]
    with pytest.raises(duckdb.CatalogException):
        con.execute("SELECT * FROM batch_rows")  # unregistered after a success too


def test_a_writer_appends_row_groups_of_its_own_size(tmp_path, monkeypatch):
    """A writer attaches the store with ``ROW_GROUP_ROWS`` rows per row group (a checkpoint
    rewrites a partly filled row group whole: at DuckDB's 122,880 the texts of a --privacy full
    ingest were rewritten at every one); a reader opens the same store."""
    from sessiongraph.store import database

    monkeypatch.setattr(database, "ROW_GROUP_ROWS", 2048)
    db = tmp_path / "s.duckdb"
    with Store(db) as store:
        store.con.execute("CREATE TABLE numbers AS SELECT range AS n FROM range(10000)")
    with Store(db, read_only=True) as store:
        groups = store.con.execute(
            "SELECT row_group_id, max(count) FROM pragma_storage_info('numbers') GROUP BY ALL ORDER BY ALL"
        ).fetchall()
        assert store.con.execute("SELECT sum(n) FROM numbers").fetchall() == [(sum(range(10000)),)]
    assert len(groups) == 5 and max(n for _, n in groups) == 2048


def test_a_capped_read_raises_its_cap_for_a_query_that_needs_more(tmp_path):
    """Store.capped: DuckDB's memory_limit is the cap inside the block and as before after it; a
    query that needs more than the cap (a read-only store cannot spill) runs again with the cap
    doubled until it fits, with the same rows as uncapped; a wrong query still fails clearly."""
    from sessiongraph.errors import SessiongraphError

    db = tmp_path / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1, privacy="full")
    sql = "SELECT session_id, seq, text FROM texts ORDER BY text DESC, session_id, seq"
    limit = "SELECT current_setting('memory_limit')"
    with Store(db, read_only=True) as s:
        before = s.query(limit).item()
        whole = s.query(sql)
        with s.capped(1):
            assert s.query(limit).item() == "1.0 MiB"
            assert s.query(sql).equals(whole) and whole.height > 100
            assert s.query(limit).item() != "1.0 MiB"  # raised, and kept for the block
            with pytest.raises(SessiongraphError, match="query failed"):
                s.query("SELECT no_such_column FROM texts")
        assert s.query(limit).item()[:2] == before[:2]
