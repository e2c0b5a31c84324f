"""Privacy end to end: a marker planted into every text of every adapter's sample logs (prompts,
completions, tool inputs such as shell commands and Task descriptions, tool outputs, file bodies)
comes out of no output path under the default profile: not the store file, no table, no `query`,
no export, no `show`, no report, no listing, no summary. Under ``--privacy full`` the store keeps
commands and descriptions (so these tests can fail), with API keys masked.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import orjson
import polars as pl
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.ingest import registry
from tests.conftest import MARKER, SAMPLES, plant_logs

FAKE_KEY = "sk-proj-" + "Pr1vacyT3stK3yAbCdEf9876"  # assembled: no scanner should take this file for a leak


def cli(*args) -> str:
    res = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def full_document(marker: str) -> dict:
    """A run document written under ``full``: OCP lets its text live in ``ext`` only."""
    doc = json.loads((SAMPLES / "ocp" / "acme-swarm-v02.ocp.json").read_text())
    doc["run"]["id"] = "acme-full-text"
    doc["privacy"] = {"profile": "full"}
    doc["run"]["ext"] = {"com.acme.text": {"prompt": f"plan the release {marker}"}}
    for node in doc["nodes"]:
        node["ext"] = {"com.acme.text": {"transcript": f"node transcript {marker}"}}
    return doc


def planted_logs(root: Path, marker: str) -> Path:
    logs = root / "logs"
    shutil.copytree(SAMPLES, logs, ignore=shutil.ignore_patterns("*.md", "*.py"))
    planted = plant_logs(logs, marker)
    adapters = [n for n in registry.names() if n != "ocp"]
    assert all(planted[name] >= 10 for name in adapters), planted  # every adapter's logs carry it
    (logs / "ocp" / "acme-full-text.ocp.json").write_text(json.dumps(full_document(marker)))
    return logs


@pytest.fixture(scope="module")
def logs(tmp_path_factory) -> Path:
    return planted_logs(tmp_path_factory.mktemp("planted"), MARKER)


@pytest.fixture(scope="module")
def store(logs, tmp_path_factory) -> tuple[Path, str]:
    """The planted logs ingested under the default profile, and the ingest's JSON summary."""
    db = tmp_path_factory.mktemp("store") / "s.duckdb"
    summary = cli("ingest", logs, "--db", db, "--workers", "1", "--json")
    sessions = json.loads(summary)["sessions_by_harness"]
    assert set(registry.names()) <= set(sessions)  # every adapter still read its planted logs
    return db, summary


def dump(db: Path) -> str:
    """Every table and view of the store as text, and the file's own bytes (read as latin-1)."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        names = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()]
        text = "\n".join(f"{n}: {con.execute(f'SELECT * FROM {n}').fetchall()!r}" for n in names)
    finally:
        con.close()
    assert "calls" in names and "launches" in names and "documents" in names
    files = [db, *db.parent.glob(db.name + ".wal")]
    return text + "".join(f.read_bytes().decode("latin-1") for f in files)


def parquet_text(root: Path) -> str:
    """Every Parquet file of a dataset decoded to rows (its bytes are compressed), plus its metadata."""
    out = []
    for f in sorted(root.rglob("*.parquet")):
        out.append(repr(pl.read_parquet(f).rows()))
        out.append(f.read_bytes().decode("latin-1"))
    assert len(out) > 10
    return "\n".join(out)


def run_ids(db: Path) -> list[str]:
    return [r["run_id"] for r in json.loads(cli("runs", "--db", db, "--json"))]


def test_the_store_holds_no_log_text(store):
    db, _ = store
    assert MARKER not in dump(db)


def test_query_outputs_hold_no_log_text(store):
    db, _ = store
    tables = [
        "sessions",
        "calls",
        "file_events",
        "launches",
        "usage",
        "diagnostics",
        "documents",
        "ingested_files",
        "ingests",
        "edges",
        "lineage",
        "runs",
        "run_sessions",
        "artifacts",
        "inference_diagnostics",
        "steps",
        "texts",
        "session_overview",
        "usage_dedup",
        "all_edges",
    ]
    for table in tables:
        for fmt in ("csv", "json", "table"):
            assert MARKER not in cli("query", f"SELECT * FROM {table}", "--db", db, "--format", fmt), (table, fmt)


def test_listings_summaries_and_reports_hold_no_log_text(store, logs):
    db, summary = store
    outputs = [
        summary,
        cli("ingest", logs, "--db", db, "--workers", "1"),  # the text summary (every file unchanged now)
        cli("runs", "--db", db),
        cli("runs", "--db", db, "--json"),
        cli("sessions", "--db", db),
        cli("sessions", "--db", db, "--json"),
        cli("report", "--db", db),
        cli("report", "--db", db, "--format", "html"),
    ]
    for out in outputs:
        assert MARKER not in out


def test_show_holds_no_log_text_for_any_run(store):
    db, _ = store
    ids = run_ids(db)
    assert len(ids) > 30
    for run in ids:
        for fmt in ("tree", "dot", "html"):
            assert MARKER not in cli("show", run, "--db", db, "--format", fmt), (run, fmt)


@pytest.mark.parametrize("profile", ["metadata_only", "full"])
def test_exports_hold_no_log_text(store, tmp_path, profile):
    """An export under either profile has nothing to add: the store kept no text."""
    db, _ = store
    summary = cli("export", "ocp", "--out", tmp_path / "ocp", "--db", db, "--privacy", profile, "--json")
    files = json.loads(summary)["files"]
    assert len(files) > 30
    assert MARKER not in summary and all(MARKER not in Path(f).read_text() for f in files)
    summary = cli("export", "parquet", "--out", tmp_path / "ds", "--db", db, "--privacy", profile, "--json")
    assert MARKER not in summary and MARKER not in parquet_text(tmp_path / "ds")
    assert list((tmp_path / "ds" / "steps").rglob("*.parquet"))  # the steps are there, without text
    summary = cli("export", "otlp", "--out", tmp_path / "otlp", "--db", db, "--privacy", profile, "--json")
    files = json.loads(summary)["files"]
    assert len(files) > 30
    assert MARKER not in summary and all(MARKER not in Path(f).read_text() for f in files)


def test_steps_hold_no_log_text_and_trajectories_need_full(store, tmp_path):
    db, _ = store
    steps = cli("query", "SELECT * FROM steps", "--db", db, "--format", "csv")
    assert steps.count("\n") > 200 and MARKER not in steps
    assert cli("query", "SELECT count(*) AS n FROM texts", "--db", db, "--format", "csv").split() == ["n", "0"]
    for by in ("session", "run"):
        res = CliRunner().invoke(
            main, ["export", "trajectories", "--db", str(db), "--out", str(tmp_path / "t"), "--by", by]
        )
        assert res.exit_code == 1 and MARKER not in res.output and not list((tmp_path / "t").glob("*.parquet"))


def test_a_full_document_loses_its_ext_text_in_a_metadata_only_store(store):
    db, _ = store
    doc = json.loads(
        cli("query", "SELECT document FROM documents WHERE run_id = 'acme-full-text'", "--db", db, "--format", "json")
    )[0]["document"]
    doc = json.loads(doc)
    assert doc["privacy"]["profile"] == "metadata_only" and "ext" not in doc["nodes"][0]
    assert len(doc["nodes"]) == 3  # the run itself is kept


@pytest.fixture(scope="module")
def full_store(tmp_path_factory) -> Path:
    """Logs planted with the marker and a fake API key, ingested under ``full``."""
    root = tmp_path_factory.mktemp("full")
    logs = planted_logs(root, f"{MARKER} {FAKE_KEY}")
    db = root / "s.duckdb"
    cli("ingest", logs, "--db", db, "--workers", "1", "--privacy", "full")
    return db


def test_full_keeps_commands_and_descriptions_with_keys_masked(full_store):
    text = dump(full_store)
    assert MARKER in text and FAKE_KEY not in text and "[REDACTED:openai]" in text
    con = duckdb.connect(str(full_store), read_only=True)
    try:
        kept = dict(
            con.execute(
                "SELECT s.harness, count(*) FROM calls c JOIN (SELECT DISTINCT session_id, harness FROM sessions) s"
                " USING (session_id) WHERE contains(c.command, $m) OR contains(c.description, $m) GROUP BY ALL",
                {"m": MARKER},
            ).fetchall()
        )
        doc = con.execute("SELECT document FROM documents WHERE run_id = 'acme-full-text'").fetchall()[0][0]
    finally:
        con.close()
    assert {"claude-code", "codex", "gemini-cli", "omp", "opencode", "pi"} <= set(kept)
    assert f"plan the release {MARKER} [REDACTED:openai]" in doc  # a full document keeps its ext text, masked


def test_full_keeps_step_text_only_in_texts_with_keys_masked(full_store, tmp_path):
    con = duckdb.connect(str(full_store), read_only=True)
    try:
        steps = repr(con.execute("SELECT * FROM steps").fetchall())
        per_harness = dict(
            con.execute(
                "SELECT s.harness, count(*) FROM texts t JOIN (SELECT DISTINCT session_id, harness FROM sessions) s"
                " USING (session_id) WHERE contains(t.text, $m) GROUP BY ALL",
                {"m": MARKER},
            ).fetchall()
        )
        texts = repr(con.execute("SELECT text FROM texts").fetchall())
    finally:
        con.close()
    assert MARKER not in steps  # steps never hold text, whatever the profile
    assert {"claude-code", "codex", "gemini-cli", "omp", "opencode", "pi"} <= set(per_harness), per_harness
    assert FAKE_KEY not in texts and "[REDACTED:openai]" in texts
    out = tmp_path / "traj"
    summary = cli("export", "trajectories", "--db", full_store, "--out", out, "--split", "train=1", "--json")
    data = repr(pl.read_parquet(out / "train.parquet").rows())
    assert MARKER in data and FAKE_KEY not in data and MARKER not in summary
    by_run = cli("export", "trajectories", "--db", full_store, "--out", out, "--by", "run", "--split", "train=1")
    data = repr(pl.read_parquet(out / "train.parquet").rows())
    assert MARKER in data and FAKE_KEY not in data and MARKER not in by_run
    cli("export", "parquet", "--out", tmp_path / "ds", "--db", full_store, "--privacy", "full")
    assert MARKER not in parquet_text(tmp_path / "ds" / "steps")
    assert MARKER in parquet_text(tmp_path / "ds" / "trajectories")
    cli("export", "parquet", "--out", tmp_path / "ds", "--db", full_store)  # metadata_only over it
    assert not list((tmp_path / "ds" / "trajectories").rglob("*.parquet")) and MARKER not in parquet_text(
        tmp_path / "ds"
    )


def test_full_exports_carry_masked_text(full_store, tmp_path):
    files = json.loads(
        cli("export", "ocp", "--out", tmp_path / "ocp", "--db", full_store, "--privacy", "full", "--json")
    )["files"]
    docs = "".join(Path(f).read_text() for f in files)
    assert MARKER in docs and FAKE_KEY not in docs
    cli("export", "parquet", "--out", tmp_path / "ds", "--db", full_store, "--privacy", "full")
    data = parquet_text(tmp_path / "ds")
    assert MARKER in data and FAKE_KEY not in data
    files = json.loads(
        cli("export", "otlp", "--out", tmp_path / "otlp", "--db", full_store, "--privacy", "full", "--json")
    )["files"]
    traces = "".join(Path(f).read_text() for f in files)
    assert MARKER in traces and FAKE_KEY not in traces and "[REDACTED:openai]" in traces
    # the same store exported as metadata_only: no command or description in any attribute
    files = json.loads(cli("export", "otlp", "--out", tmp_path / "otlp-meta", "--db", full_store, "--json"))["files"]
    assert all(MARKER not in Path(f).read_text() for f in files)


def test_full_exports_mask_keys_a_store_kept_unmasked(full_store, tmp_path):
    """A store written before masking existed: the export masks what it finds."""
    db = tmp_path / "old.duckdb"
    shutil.copy(full_store, db)
    con = duckdb.connect(str(db))
    con.execute(
        "UPDATE calls SET command = command || ' ' || $k, description = description || ' ' || $k", {"k": FAKE_KEY}
    )
    con.close()
    files = json.loads(cli("export", "ocp", "--out", tmp_path / "ocp", "--db", db, "--privacy", "full", "--json"))[
        "files"
    ]
    assert all(FAKE_KEY not in Path(f).read_text() for f in files)
    files = json.loads(cli("export", "otlp", "--out", tmp_path / "otlp", "--db", db, "--privacy", "full", "--json"))[
        "files"
    ]
    traces = "".join(Path(f).read_text() for f in files)
    assert "[REDACTED:openai]" in traces and FAKE_KEY not in traces
    cli("export", "parquet", "--out", tmp_path / "ds", "--db", db, "--privacy", "full")
    edges = pl.read_parquet(tmp_path / "ds" / "edges" / "**" / "*.parquet", hive_partitioning=True)
    assert edges["command"].str.contains("[REDACTED:openai]", literal=True).any()
    assert not edges["command"].str.contains(FAKE_KEY, literal=True).any()


def test_a_new_profile_rereads_every_file_and_scrubs_the_file(full_store, tmp_path):
    db = tmp_path / "s.duckdb"
    shutil.copy(full_store, db)
    logs = full_store.parent / "logs"
    again = json.loads(cli("ingest", logs, "--db", db, "--workers", "1", "--json", "--privacy", "full"))
    assert again["files_read"] == 0 and again["files_unchanged"] > 50
    down = json.loads(cli("ingest", logs, "--db", db, "--workers", "1", "--json"))
    assert down["files_unchanged"] == 0 and down["files_read"] > 50
    assert down["privacy"] == "metadata_only"
    # The replaced rows' bytes are gone from the file too, not only from the tables.
    assert MARKER not in dump(db) and not list(tmp_path.glob("*.compact"))
    profiles = cli("query", "SELECT DISTINCT privacy FROM ingested_files", "--db", db, "--format", "csv")
    assert profiles.split() == ["privacy", "metadata_only"]


def test_an_unknown_profile_is_refused(tmp_path):
    res = CliRunner().invoke(
        main, ["ingest", str(SAMPLES / "codex"), "--db", str(tmp_path / "s.duckdb"), "--privacy", "everything"]
    )
    assert res.exit_code == 2 and "everything" in res.output
    from sessiongraph.errors import SessiongraphError
    from sessiongraph.pipeline import ingest

    with pytest.raises(SessiongraphError, match="unknown privacy profile 'everything'"):
        ingest([str(SAMPLES / "codex")], db=str(tmp_path / "s.duckdb"), privacy="everything")


def test_the_marker_is_planted_as_a_comment_in_commands():
    """Sanity of the planting itself: a shell command keeps its meaning (launches, file ops)."""
    from tests.conftest import plant

    rec = plant({"command": ["/bin/bash", "-lc", "codex exec x"], "arguments": orjson.dumps({"cmd": "ls"}).decode()})
    assert rec["command"] == ["/bin/bash", "-lc", f"codex exec x # {MARKER}"]
    assert json.loads(rec["arguments"]) == {"cmd": f"ls # {MARKER}"}


@pytest.mark.parametrize("profile", ["metadata_only", "full"])
def test_checkpoints_hold_no_log_text(logs, tmp_path, monkeypatch, profile):
    """A checkpoint's parser state and carried shell rows are compressed in the store, so the
    byte scan above cannot see into them: read them back and look."""
    from sessiongraph.ingest import resume
    from sessiongraph.pipeline import ingest

    monkeypatch.setattr(resume, "MIN_BYTES", 0)  # every Claude and Codex file keeps a checkpoint
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1, privacy=profile)
    con = duckdb.connect(str(db), read_only=True)
    rows = con.execute("SELECT state, carry FROM checkpoints").fetchall()
    con.close()
    assert len(rows) > 10
    text = " ".join(repr(resume.loads(bytes(b))) for row in rows for b in row if b)
    if profile == "metadata_only":
        assert MARKER not in text
        assert any("launches" in resume.loads(bytes(c)) for _, c in rows if c)  # carried facts
    else:
        assert MARKER in text  # commands and descriptions, masked like the store's


def test_a_followed_workspace_script_leaves_nothing_of_itself(tmp_path):
    """A script a shell call ran is read at ingest for the agent CLIs it runs; none of its text is
    kept, under either profile (the launches it yields name only its path)."""
    from tests.test_lineage_wild import _copy

    root = _copy(tmp_path)
    agent = root / "projects/wild/tools/agent.sh"
    agent.write_text(agent.read_text() + f"# {MARKER} {FAKE_KEY}\n")
    for privacy in ("metadata_only", "full"):
        db = tmp_path / f"{privacy}.duckdb"
        cli("ingest", root / "logs", "--db", db, "--workers", "1", "--privacy", privacy)
        text = dump(db)
        assert MARKER not in text and FAKE_KEY not in text
        con = duckdb.connect(str(db), read_only=True)
        try:
            assert con.execute("SELECT count(*) FROM launches WHERE script LIKE '%/tools/review.sh'").fetchone() == (3,)
        finally:
            con.close()


def test_full_in_many_store_batches_masks_a_repeated_key_every_time(full_store, tmp_path, monkeypatch):
    """Under ``full`` a store batch ends once it holds ``pipeline.BATCH_TEXT_BYTES`` of text. With
    a budget of one byte every engine task is a batch of its own; the key planted in every text (so
    in many rows and files, the same text again and again) is masked wherever it appears, and the
    store holds exactly the texts of the one-batch ingest (``full_store``)."""
    from sessiongraph import pipeline
    from sessiongraph.store import Store

    writes: list[int] = []
    write = Store.write

    def counted(self, results, frames, ingest_id):  # the real write, counted
        writes.append(frames.height("texts"))
        return write(self, results, frames, ingest_id)

    monkeypatch.setattr(Store, "write", counted)
    monkeypatch.setattr(pipeline, "BATCH_TEXT_BYTES", 1)
    db = tmp_path / "s.duckdb"
    pipeline.ingest([str(full_store.parent / "logs")], db=str(db), workers=1, privacy="full")
    assert sum(1 for n in writes if n) >= 3, writes
    query = "SELECT * EXCLUDE (ingest_id) FROM texts ORDER BY ALL"
    con = duckdb.connect(str(db), read_only=True)
    try:
        texts = con.execute(query).fetchall()
        planted, masked = con.execute(
            "SELECT count(*) FILTER (contains(text, $m)), count(*) FILTER (contains(text, $m || ' [REDACTED:openai]'))"
            " FROM texts",
            {"m": MARKER},
        ).fetchall()[0]
    finally:
        con.close()
    assert planted > 50 and masked == planted  # every planted text, the key masked in each
    assert FAKE_KEY not in dump(db)
    con = duckdb.connect(str(full_store), read_only=True)
    try:
        assert texts == con.execute(query).fetchall()
    finally:
        con.close()
