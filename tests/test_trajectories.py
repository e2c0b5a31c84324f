"""Trajectories: steps and texts as conversations, exported as run-level splits that the real
Hugging Face ``datasets`` package loads (offline), deterministic and de-duplicated."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.dataset.trajectories import assign, export_trajectories, parse_split
from sessiongraph.errors import SessiongraphError
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import SAMPLES

SPLIT = "train=0.5,validation=0.25,test=0.25"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("store") / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1, privacy="full")
    return db


@pytest.fixture(scope="module")
def out(store, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("traj") / "out"
    result = run("export", "trajectories", "--db", store, "--out", path, "--split", SPLIT, "--seed", 7)
    assert result.exit_code == 0, result.output
    return path


def _rows(out: Path) -> dict[str, pl.DataFrame]:
    return {p.stem: pl.read_parquet(p) for p in sorted(out.glob("*.parquet"))}


def test_every_split_loads_with_datasets(out, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")  # no hub access: local files only
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    from datasets import Features, List, Value, load_dataset

    files = {name: str(out / f"{name}.parquet") for name in ("train", "validation", "test")}
    ds = load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "cache"))
    assert set(ds) == set(files)
    call = {
        "id": Value("string"),
        "type": Value("string"),
        "function": {"name": Value("string"), "arguments": Value("string")},
    }
    message = {
        "role": Value("string"),
        "content": Value("string"),
        "reasoning_content": Value("string"),
        "tool_calls": List(call),
        "tool_call_id": Value("string"),
        "name": Value("string"),
    }
    for split in ds.values():
        assert split.features["messages"] == Features({"messages": List(message)})["messages"]
        assert split.num_rows > 0
    rows = _rows(out)
    assert {k: v.height for k, v in rows.items()} == {name: ds[name].num_rows for name in files}
    first = ds["train"][0]["messages"]
    assert first[0]["role"] in ("user", "system") and isinstance(first[0]["content"], str)


def test_no_run_in_two_splits(out):
    runs = {name: set(df["run_id"].drop_nulls()) for name, df in _rows(out).items()}
    names = list(runs)
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            assert not runs[a] & runs[b], (a, b)
    # and subagents went with their runs: every spawned session shares its parent's split
    rows = pl.concat([df.with_columns(split=pl.lit(name)) for name, df in _rows(out).items()])
    child = rows.filter(pl.col("parent_session_id").is_not_null()).select("parent_session_id", "split")
    joined = child.join(rows.select(pl.col("session_id").alias("parent_session_id"), "split"), on="parent_session_id")
    assert joined.height > 0 and (joined["split"] == joined["split_right"]).all()


def test_split_is_deterministic_from_run_id_and_seed():
    split = parse_split(SPLIT)
    ids = [f"run-{i}" for i in range(400)]
    a = [assign(r, split, 7) for r in ids]
    assert a == [assign(r, split, 7) for r in ids]
    assert a != [assign(r, split, 8) for r in ids]
    shares = {name: a.count(name) / len(a) for name in split}
    assert abs(shares["train"] - 0.5) < 0.1 and abs(shares["test"] - 0.25) < 0.1


def test_export_again_gives_identical_files(store, out, tmp_path):
    again = tmp_path / "again"
    run("export", "trajectories", "--db", store, "--out", again, "--split", SPLIT, "--seed", 7)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert {p.name: p.read_bytes() for p in again.iterdir()} == before
    # over the same folder too (and nothing else left behind)
    run("export", "trajectories", "--db", store, "--out", out, "--split", SPLIT, "--seed", 7)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_messages_follow_the_steps(store, out):
    rows = pl.concat(_rows(out).values())
    with Store(store, read_only=True) as s:
        n_steps = dict(s.query("SELECT session_id, count(*) AS n FROM steps GROUP BY 1").iter_rows())
        calls = s.query("SELECT session_id, call_id, seq FROM steps WHERE kind = 'tool_call'")
    for row in rows.iter_rows(named=True):
        assert row["n_steps"] == n_steps[row["session_id"]]
        named = set()
        for m in row["messages"]:
            assert m["role"] in ("system", "user", "assistant", "tool")
            for c in m["tool_calls"] or []:
                assert c["type"] == "function" and c["function"]["name"]
                named.add(c["id"])
            if m["role"] == "tool":  # a tool message answers a call an earlier message made
                assert m["tool_call_id"] in named
        assert row["n_tool_calls"] == sum(len(m["tool_calls"] or []) for m in row["messages"])
    # a subagent row names the step of its parent that spawned it
    spawned = rows.filter(pl.col("spawn_seq").is_not_null())
    assert spawned.height > 0
    for row in spawned.iter_rows(named=True):
        hit = calls.filter(
            (pl.col("session_id") == row["parent_session_id"]) & (pl.col("call_id") == row["spawn_call_id"])
        )
        assert hit["seq"].to_list() == [row["spawn_seq"]]


def test_identical_trajectories_are_written_once(tmp_path):
    logs = tmp_path / "logs"
    src = next((SAMPLES / "gemini-cli/tmp").rglob("session-*.jsonl"))
    for n in ("a", "b"):  # the same chat in two projects, under two session ids
        dst = logs / n / "chats" / src.name
        dst.parent.mkdir(parents=True)
        text = src.read_text().replace('"sessionId":"', f'"sessionId":"{n}-', 1)
        dst.write_text(text)
    db = tmp_path / "s.duckdb"
    ingest([str(logs)], db=str(db), workers=1, privacy="full")
    summary = export_trajectories(tmp_path / "out", db=str(db))
    assert summary.duplicates == 1 and sum(summary.rows.values()) == 1


def test_filters(store, tmp_path):
    s = export_trajectories(tmp_path / "codex", db=str(store), harnesses=("codex",), split="all=1")
    rows = pl.read_parquet(tmp_path / "codex" / "all.parquet")
    assert set(rows["harness"]) == {"codex"} and s.filtered > 0
    export_trajectories(tmp_path / "long", db=str(store), min_steps=10, split="all=1")
    assert pl.read_parquet(tmp_path / "long" / "all.parquet")["n_steps"].min() >= 10
    export_trajectories(tmp_path / "late", db=str(store), since=datetime(2026, 1, 1, tzinfo=UTC), split="all=1")
    assert (pl.read_parquet(tmp_path / "late" / "all.parquet")["ended_at"].dt.year() >= 2026).all()


def test_jsonl_format(store, tmp_path):
    export_trajectories(tmp_path / "j", db=str(store), fmt="jsonl", split="train=1")
    lines = (tmp_path / "j" / "train.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert isinstance(first["messages"], list) and {"role", "content", "tool_calls"} <= set(first["messages"][0])
    assert len(lines) == json.loads((tmp_path / "j" / "manifest.json").read_text())["rows"]["train"]


def test_a_metadata_only_store_is_refused(tmp_path):
    db = tmp_path / "m.duckdb"
    ingest([str(SAMPLES / "codex")], db=str(db), workers=1)
    with pytest.raises(SessiongraphError, match="--privacy full"):
        export_trajectories(tmp_path / "out", db=str(db))
    result = CliRunner().invoke(main, ["export", "trajectories", "--db", str(db), "--out", str(tmp_path / "o")])
    assert result.exit_code == 1 and "Error:" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("bad", ["train=0.9", "train=0.5,train=0.5", "train=x", "=1", "a=0.5,b=0.6"])
def test_bad_split_is_a_clear_error(bad):
    with pytest.raises(SessiongraphError, match="bad --split"):
        parse_split(bad)


def test_export_parquet_full_has_the_same_trajectories(store, out, tmp_path):
    from sessiongraph.dataset.parquet import export_parquet

    export_parquet(tmp_path / "ds", db=str(store), privacy="full")
    table = pl.read_parquet(tmp_path / "ds" / "trajectories" / "**" / "*.parquet", hive_partitioning=True)
    exported = pl.concat(_rows(out).values())
    # the split files hold each distinct trajectory once; the dataset holds every session
    assert set(exported["trajectory_sha256"]) == set(table["trajectory_sha256"])
    assert table.height >= exported.height
    shutil.rmtree(tmp_path / "ds")


@pytest.mark.parametrize(
    ("command", "is_test"),
    [
        ("pytest -q", True),
        ("python3 -m pytest tests/test_x.py", True),
        ("cd app && npm test", True),
        ("npx vitest run src/ui", True),
        ("go test ./...", True),
        ("cargo test --all", True),
        ("make test", True),
        ("uv run pytest", True),
        ("cat pytest.ini", False),
        ("ls tests", False),
        ("rg -n test src", False),
        ("git commit -m fix", False),
    ],
)
def test_test_commands_are_recognized_by_their_runner(command, is_test):
    import duckdb

    from sessiongraph.dataset.messages import TEST_COMMAND

    assert duckdb.sql("SELECT regexp_matches(?, ?)", params=[command, TEST_COMMAND]).fetchall() == [(is_test,)]


def test_outcome_labels(out):
    rows = pl.concat(_rows(out).values())
    by_id = {r["session_id"]: r for r in rows.iter_rows(named=True)}
    failing = by_id["codex:019ae37d-847f-7e4a-9b1f-3d5c8a2e7f10"]  # its pytest exits 1 (sample README)
    assert failing["tests_passed"] is False and failing["tests_tier"] == "heuristic" and failing["n_test_runs"] == 1
    assert rows.filter(pl.col("tests_passed")).height > 0
    untested = rows.filter(pl.col("n_test_runs") == 0)
    assert untested.height > 0 and untested["tests_passed"].is_null().all() and untested["tests_tier"].is_null().all()
    assert (
        set(rows["end_state"]) <= {"completed", "error", "interrupted", "unfinished"}
        and rows["end_state"].null_count() == 0
    )
    # a session whose last step is its final answer completed
    assert by_id["codex:019b2631-1f18-7a9e-b6f3-0c7d8e9a1b24"]["end_state"] in ("completed", "unfinished")


ORBIT = SAMPLES / "claude-code/projects/-home-dev-projects-orbit-cli/365efffa-5002-4c2d-80d9-e21c4320b1b7.jsonl"


def _ending_with(tmp_path, record: dict) -> tuple[dict, dict]:
    """The orbit-cli sample with ``record`` (envelope filled from its last line) appended, ingested
    under full: its session row and its run row."""
    lines = ORBIT.read_text().splitlines()
    last = json.loads(lines[-1])
    envelope = {
        k: last[k] for k in ("isSidechain", "userType", "cwd", "sessionId", "version", "gitBranch") if k in last
    }
    record = {**envelope, "parentUuid": last["uuid"], "timestamp": last["timestamp"], **record}
    dst = tmp_path / "logs" / "projects" / "-home-dev-projects-orbit-cli" / ORBIT.name
    dst.parent.mkdir(parents=True)
    dst.write_text("\n".join([*lines, json.dumps(record)]) + "\n")
    db = tmp_path / "s.duckdb"
    ingest([str(tmp_path / "logs")], db=str(db), workers=1, privacy="full")
    export_trajectories(tmp_path / "out", db=str(db), split="train=1")
    export_trajectories(tmp_path / "runs", db=str(db), split="train=1", by="run")
    return (
        pl.read_parquet(tmp_path / "out" / "train.parquet").row(0, named=True),
        pl.read_parquet(tmp_path / "runs" / "train.parquet").row(0, named=True),
    )


def test_an_interrupted_session_says_so(tmp_path):
    row, _ = _ending_with(
        tmp_path,
        {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]},
            "uuid": "00000000-0000-4000-8000-000000000001",
        },
    )
    assert (row["end_state"], row["end_state_tier"]) == ("interrupted", "reported")


def test_a_session_the_harness_says_ended_in_error_says_so(tmp_path):
    """Claude writes an API failure as an assistant record with isApiErrorMessage: the harness's
    own end status (error) is the label, not the step guess (its last step is assistant text)."""
    row, run = _ending_with(
        tmp_path,
        {
            "type": "assistant",
            "isApiErrorMessage": True,
            "message": {
                "id": "msg_err",
                "type": "message",
                "role": "assistant",
                "model": "<synthetic>",
                "content": [{"type": "text", "text": "API Error: 529 overloaded"}],
                "stop_reason": "stop_sequence",
                "usage": {"input_tokens": 0, "output_tokens": 0},
            },
            "uuid": "00000000-0000-4000-8000-000000000002",
        },
    )
    assert (row["end_state"], row["end_state_tier"]) == ("error", "reported")
    assert (run["end_state"], run["end_state_tier"]) == ("error", "reported")


@pytest.mark.parametrize("by", ["session", "run"])
def test_reading_the_store_run_group_by_run_group_gives_the_same_splits(store, tmp_path, monkeypatch, by):
    """A budget of one byte makes every run its own group: the same rows, order and summary as one
    group of everything, and the store's steps are read once per run."""
    from sessiongraph.dataset import messages

    calls: list[int] = []
    real = messages.build

    def counting(*args, **kwargs):
        calls.append(len(kwargs.get("only") or []))
        return real(*args, **kwargs)

    monkeypatch.setattr(messages, "build", counting)
    one = export_trajectories(tmp_path / "one", db=str(store), split=SPLIT, seed=7, by=by, batch_bytes=10**12)
    assert len(calls) == 1
    calls.clear()
    many = export_trajectories(tmp_path / "many", db=str(store), split=SPLIT, seed=7, by=by, batch_bytes=1)
    n_runs = sum(many.runs.values()) if by == "run" else None
    assert len(calls) > 5 and (n_runs is None or len(calls) >= n_runs)
    assert many.to_dict() | {"out": ""} == one.to_dict() | {"out": ""}
    for name in many.split:
        a = pl.read_parquet(tmp_path / "one" / f"{name}.parquet")
        b = pl.read_parquet(tmp_path / "many" / f"{name}.parquet")
        assert a.height and a.equals(b), name


def test_export_parquet_writes_trajectories_slice_by_slice(store, tmp_path, monkeypatch):
    """The dataset's trajectories table read one session per slice: the same files' rows and
    content hashes as one slice per partition, and an export again leaves every file untouched."""
    import pyarrow.parquet as pq

    from sessiongraph.dataset import messages
    from sessiongraph.dataset import tables as dataset
    from sessiongraph.dataset.parquet import KEY_HASH, export_parquet

    calls: list[int] = []
    real = messages.build

    def counting(*args, **kwargs):
        calls.append(len(kwargs.get("only") or []))
        return real(*args, **kwargs)

    monkeypatch.setattr(messages, "build", counting)
    monkeypatch.setattr(dataset.trajectory_partitions, "__defaults__", (10**12,))  # one slice a partition
    one = export_parquet(tmp_path / "one", db=str(store), privacy="full")
    partitions = len(calls)
    monkeypatch.setattr(dataset.trajectory_partitions, "__defaults__", (1,))
    calls.clear()
    many = export_parquet(tmp_path / "many", db=str(store), privacy="full")
    assert len(calls) == many.rows["trajectories"] > partitions  # a read per session
    assert many.rows == one.rows
    for f in sorted((tmp_path / "one" / "trajectories").rglob("*.parquet")):
        g = tmp_path / "many" / f.relative_to(tmp_path / "one")
        assert pl.read_parquet(f).equals(pl.read_parquet(g))
        assert pq.read_metadata(f).metadata[KEY_HASH] == pq.read_metadata(g).metadata[KEY_HASH]
    again = export_parquet(tmp_path / "many", db=str(store), privacy="full")
    assert again.partitions_written == 0


def test_commit_labels(out):
    # sample_logs/scenarios/commits: the Claude session made commit 1a2b3c4 and PR 17 (named by
    # gh pr create and a pr-link: one PR), the Codex thread one commit; no other sample commits
    rows = pl.concat(_rows(out).values())
    made = rows.filter(pl.col("n_commits") > 0).sort("session_id")
    assert made.select("session_id", "n_commits", "commits_tier").rows() == [
        ("claude-code:5e8a1c24-7b39-4d0f-a6e2-91c3d7f40b85", 2, "verified"),
        ("codex:019b9820-3c40-7a11-8d5e-2f6b9a0c4e71", 1, "verified"),
    ]
    assert rows["commits_in_branch"].null_count() == rows.height  # only `ingest --git` could tell
    assert rows.filter(pl.col("n_commits") == 0)["commits_tier"].null_count() == rows.height - 2


def test_a_groups_rowid_condition_holds_all_its_rows(store):
    """batches.RowIndex: for any set of sessions, the rowid condition keeps every one of their
    steps and texts (it only spares DuckDB the other blocks), also when the ranges of many
    sessions are joined to at most MAX_RANGES terms."""
    from sessiongraph.dataset import messages
    from sessiongraph.store import batches

    with Store(store, read_only=True) as s:
        index = messages.row_index(s)
        ids = s.query("SELECT DISTINCT session_id FROM texts ORDER BY 1")["session_id"].to_list()
        assert len(ids) > 10
        for group in (ids[:1], ids[::3], ids):
            for table in messages.STEP_TABLES:
                cond = index.where(table, group)
                assert cond.count("BETWEEN") <= batches.MAX_RANGES
                with batches.restricted(s, "_g", "session_id", group):
                    mine = f"SELECT count(*) FROM {table} WHERE session_id IN (SELECT session_id FROM _g)"
                    assert s.query(f"{mine} AND {cond}").item() == s.query(mine).item() > 0
        assert batches.rowid_condition([]) == "FALSE"
        assert batches.rowid_condition([(0, 5), (6, 9), (10_000, 10_001)]) == (
            "(rowid BETWEEN 0 AND 9 OR rowid BETWEEN 10000 AND 10001)"
        )
