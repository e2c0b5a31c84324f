"""``export trajectories --by run``: one row per run, its sessions' conversations each once, linked
at the calls that started them, with no shared history written twice; loads with ``datasets``."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.dataset.trajectories import export_trajectories
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES

# The copied-history scenario (forked and handed-off sessions that replay their parent's history)
# and the multi-agent samples (Codex spawn_agent, Claude subagents and launches, Gemini).
SOURCES = [SAMPLES / "scenarios" / "copied-history", SAMPLES / "codex", SAMPLES / "claude-code"]
REAL = Path(__file__).resolve().parents[1].parent / "shared" / "real-families" / "codex-multi-agent-0.114"


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("runs") / "s.duckdb"
    ingest([str(s) for s in SOURCES], db=str(db), workers=1, privacy="full")
    return db


@pytest.fixture(scope="module")
def out(store, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("by-run") / "out"
    result = CliRunner().invoke(
        main,
        ["export", "trajectories", "--db", str(store), "--out", str(path), "--by", "run", "--split", "train=1"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return path


def _check_run_rows(rows: list[dict]) -> None:
    """Links resolve, each session once, no history twice."""
    seen: set[str] = set()
    for row in rows:
        convs = row["conversations"]
        ids = [c["session_id"] for c in convs]
        assert not seen & set(ids) and len(set(ids)) == len(ids)  # each session once, in one run
        seen |= set(ids)
        assert convs[0]["session_id"] == row["root_session_id"] and convs[0]["parent_session_id"] is None
        for link in row["links"]:
            parent, child = convs[link["parent"]], convs[link["child"]]
            assert child["session_id"] == link["child_session_id"]
            # the parent, or (a workflow journal, a placeholder: no conversation) bridged to the
            # nearest ancestor that has one
            assert child["parent_session_id"] == parent["session_id"] or child["parent_session_id"] not in ids
            assert child["via"] == link["via"]
            if link["call_id"] is not None:  # the call is in the parent's message the link names
                msg = parent["messages"][link["message"]]
                assert msg["role"] == "assistant" and link["call_id"] in [c["id"] for c in msg["tool_calls"]]
        # every session but the root is the child of one link
        assert sorted(link["child"] for link in row["links"]) == list(range(1, len(convs)))
        # no shared prefix repeated: a replayed history would repeat its calls and messages
        call_ids = [c["id"] for conv in convs for m in conv["messages"] for c in m["tool_calls"] or []]
        assert len(call_ids) == len(set(call_ids)), row["run_id"]
        for link in row["links"]:
            said = lambda conv: {  # noqa: E731
                m["content"]
                for m in conv["messages"]
                if m["role"] in ("user", "assistant") and m["content"] and len(m["content"]) > 30
            }
            assert not said(convs[link["parent"]]) & said(convs[link["child"]]), (row["run_id"], link)


def test_one_row_per_run_with_links_that_resolve(store, out):
    rows = pl.read_parquet(out / "train.parquet")
    with Store(store, read_only=True) as s:
        runs = s.query("SELECT DISTINCT run_id FROM run_sessions")["run_id"].to_list()
        texts = s.query("SELECT DISTINCT session_id FROM texts")["session_id"].to_list()
    assert sorted(rows["run_id"]) == sorted(set(runs))  # every session has text here
    assert sum(len(c) for c in rows["conversations"]) == len(texts)
    assert rows["run_id"].n_unique() == rows.height
    _check_run_rows(rows.to_dicts())
    linked = [link for links in rows["links"] for link in links if link["call_id"]]
    assert {link["via"] for link in linked} >= {"spawn", "launch"}
    multi = rows.filter(pl.col("root_session_id") == "codex:019b2631-1f18-7a9e-b6f3-0c7d8e9a1b24").row(0, named=True)
    assert [c["via"] for c in multi["conversations"]] == [None, "spawn"] and multi["links"][0]["call_id"]
    task = rows["task"][0]
    assert task["type"] and task["labeled_by"]["tier"] == "heuristic" and task["id"].startswith("task_")


def test_loads_with_datasets_offline(out, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    from datasets import load_dataset

    ds = load_dataset("parquet", data_files={"train": str(out / "train.parquet")}, cache_dir=str(tmp_path / "c"))
    rows = list(ds["train"])
    assert len(rows) == pl.read_parquet(out / "train.parquet").height
    _check_run_rows(rows)
    conv = rows[0]["conversations"][0]
    assert conv["messages"][0]["role"] in ("system", "user") and isinstance(conv["messages"][0]["content"], str)


def test_filters_keep_runs_whole_and_jsonl(store, tmp_path):
    s = export_trajectories(tmp_path / "c", db=str(store), by="run", harnesses=("codex",), split="all=1", fmt="jsonl")
    rows = pl.read_ndjson(tmp_path / "c" / "all.jsonl")
    assert set(rows["harness"]) == {"codex"} and s.filtered > 0 and s.by == "run"
    # a Claude run that launched a Codex session keeps it
    whole = export_trajectories(tmp_path / "w", db=str(store), by="run", harnesses=("claude-code",), split="all=1")
    claude = pl.read_parquet(tmp_path / "w" / "all.parquet")
    assert whole.rows["all"] == claude.height
    assert "codex" in {c["harness"] for convs in claude["conversations"] for c in convs}


def test_bad_by_is_a_clear_error(store, tmp_path):
    result = CliRunner().invoke(
        main, ["export", "trajectories", "--db", str(store), "--out", str(tmp_path), "--by", "x"]
    )
    assert result.exit_code == 2 and "Traceback" not in result.output


@pytest.mark.skipif(not REAL.is_dir(), reason=f"no {REAL}")
def test_forked_codex_children_do_not_repeat_the_parent(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest([str(REAL)], db=str(db), workers=1, privacy="full")
    export_trajectories(tmp_path / "o", db=str(db), by="run", split="train=1")
    rows = pl.read_parquet(tmp_path / "o" / "train.parquet").to_dicts()
    assert any(len(r["conversations"]) > 1 for r in rows)
    _check_run_rows(rows)


def test_commit_labels_per_run(tmp_path):
    db, path = tmp_path / "s.duckdb", tmp_path / "out"
    ingest([str(SAMPLES / "scenarios" / "commits")], db=str(db), workers=1, privacy="full")
    export_trajectories(path, db=str(db), split="train=1", by="run")
    rows = pl.read_parquet(path / "train.parquet").sort("run_id")
    assert rows.select("run_id", "n_commits", "commits_tier", "commits_in_branch").rows() == [
        ("run_05d57459e617bc4a", 2, "verified", None),  # commit 1a2b3c4 and PR 17 (gh pr create and pr-link)
        ("run_a693128f71d49205", 1, "verified", None),  # commits_in_branch: only `ingest --git` could tell
    ]


def test_runs_without_commits(out):
    rows = pl.read_parquet(out / "train.parquet")  # none of these samples commits
    assert set(rows["n_commits"]) == {0} and rows["commits_tier"].null_count() == rows.height
