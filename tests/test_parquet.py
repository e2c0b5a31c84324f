"""The Parquet dataset: layout, metadata, DATASET.md agreement, incremental rewrite, privacy,
reading back (polars, pyarrow, DuckDB through `query --parquet`) and `load`."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.dataset.parquet import KEY_HASH, export_parquet
from sessiongraph.dataset.tables import FULL_ONLY, MESSAGE, SCHEMA_VERSION, TABLES, arrow_schema, arrow_type
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from tests.conftest import ROOT, SAMPLES

PART = re.compile(
    r"^(?P<table>\w+)/harness=(?P<harness>[\w.-]+)/month=(?P<month>\d{4}-\d{2}|unknown)/part-\d+\.parquet$"
)
# DATASET.md writes Arrow types by these names.
TYPES = {
    "string": pa.string(),
    "int32": pa.int32(),
    "int64": pa.int64(),
    "double": pa.float64(),
    "bool": pa.bool_(),
    "timestamp[us, UTC]": pa.timestamp("us", tz="UTC"),
    "list<string>": pa.list_(pa.field("element", pa.string())),
    "list<message>": arrow_type(pl.List(MESSAGE)),
}


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    db = tmp_path_factory.mktemp("store") / "s.duckdb"
    # full: the store keeps commands and descriptions, so the tests see a metadata_only export drop them.
    ingest([str(SAMPLES)], db=str(db), workers=1, privacy="full")
    return db


@pytest.fixture(scope="module")
def out(store, tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("dataset") / "ds"
    export_parquet(path, db=str(store))
    return path


def files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*.parquet"))}


def fingerprint(root: Path) -> dict[str, tuple[int, bytes]]:
    return {rel: (p.stat().st_mtime_ns, p.read_bytes()) for rel, p in files(root).items()}


def stored_hashes(root: Path) -> dict[str, bytes]:
    return {rel: pq.read_metadata(p).metadata[KEY_HASH] for rel, p in files(root).items()}


def store_rows(db: Path, sql: str) -> pl.DataFrame:
    with Store(db, read_only=True) as s:
        return s.query(sql)


def test_layout_is_table_harness_month(out):
    found = files(out)
    assert found
    tables = set()
    for rel in found:
        m = PART.match(rel)
        assert m, rel
        tables.add(m["table"])
    assert tables == set(TABLES) - FULL_ONLY  # a metadata_only export writes no trajectories
    # an imported run with no root harness lands under harness=unknown
    assert any(rel.startswith("runs/harness=unknown/") for rel in found)
    assert "runs/harness=claude-code/month=2026-01/part-0.parquet" in found
    for p in found.values():  # partition keys are folders, not columns
        names = pq.read_schema(p).names
        assert "harness" not in names and "month" not in names


def test_every_file_carries_the_schema_version_and_its_hash(out):
    for rel, p in files(out).items():
        meta = pq.read_metadata(p).metadata
        assert meta[b"sessiongraph.schema_version"] == SCHEMA_VERSION.encode()
        assert meta[b"sessiongraph.table"] == rel.split("/")[0].encode()
        assert meta[b"sessiongraph.privacy"] == b"metadata_only"
        assert re.fullmatch(rb"[0-9a-f]{64}", meta[KEY_HASH])


def documented() -> dict[str, list[tuple[str, str, bool]]]:
    """DATASET.md's tables: section -> [(column, type, full_only)]."""
    text = (ROOT / "DATASET.md").read_text(encoding="utf-8")
    out: dict[str, list[tuple[str, str, bool]]] = {}
    table = None
    for line in text.splitlines():
        if m := re.match(r"^## `(\w+)`$", line):
            table = m[1]
            out[table] = []
        elif line.startswith("## "):
            table = None
        elif table and line.startswith("| ") and not line.startswith("| column") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            assert len(cells) == 4, line
            name, typ, tier, meaning = cells
            assert tier and meaning, f"{table}.{name} lacks a tier or a meaning"
            out[table].append((name, typ, meaning.startswith("*(full only)*")))
    return out


@pytest.mark.parametrize("privacy", ["metadata_only", "full"])
def test_dataset_md_matches_the_written_schemas(store, tmp_path, privacy):
    docs = documented()
    assert list(docs) == list(TABLES)
    export_parquet(tmp_path, db=str(store), privacy=privacy)
    for table, cols in docs.items():
        written = {pq.read_schema(p).remove_metadata() for p in (tmp_path / table).rglob("*.parquet")}
        if table in FULL_ONLY and privacy != "full":
            assert all(full for _, _, full in cols) and not written, table
            continue
        want = pa.schema([(name, TYPES[typ]) for name, typ, full in cols if privacy == "full" or not full])
        assert want == arrow_schema(table, privacy), table
        assert written == {want}, table


def test_export_again_touches_nothing(store, out):
    before = fingerprint(out)
    summary = export_parquet(out, db=str(store))
    assert summary.partitions_written == 0 and summary.files_removed == 0
    assert summary.partitions_unchanged == len(before)
    assert fingerprint(out) == before


def test_more_ingest_rewrites_only_changed_partitions(tmp_path):
    db, ds, fresh = tmp_path / "s.duckdb", tmp_path / "ds", tmp_path / "fresh"
    ingest([str(SAMPLES / "claude-code")], db=str(db), workers=1)
    export_parquet(ds, db=str(db))
    first_hashes, before = stored_hashes(ds), fingerprint(ds)
    stale = ds / "runs" / "harness=zzz" / "month=2020-01" / "part-0.parquet"
    stale.parent.mkdir(parents=True)
    shutil.copy(next(iter(files(ds).values())), stale)

    ingest([str(SAMPLES / "codex")], db=str(db), workers=1)
    summary = export_parquet(ds, db=str(db))
    assert summary.partitions_written > 0 and summary.partitions_unchanged > 0
    assert summary.files_removed == 1 and not stale.parent.exists()

    after = fingerprint(ds)
    hashes = stored_hashes(ds)
    kept = [rel for rel in before if rel in hashes and hashes[rel] == first_hashes[rel]]
    changed = [rel for rel in hashes if rel not in first_hashes or hashes[rel] != first_hashes[rel]]
    assert kept and changed
    for rel in kept:  # same rows: the file was not touched at all
        assert after[rel] == before[rel], rel
    for rel in changed:
        assert rel not in before or after[rel][0] != before[rel][0], rel
    # and the result is exactly what a fresh export of the same store writes
    export_parquet(fresh, db=str(db))
    assert stored_hashes(fresh) == hashes


def test_no_log_text_unless_full(store, out, tmp_path):
    commands = store_rows(store, "SELECT DISTINCT command FROM calls WHERE length(command) > 12")["command"].to_list()
    assert commands
    assert not (out / "trajectories").exists()
    for table in set(TABLES) - FULL_ONLY:
        data = pl.from_arrow(pads.dataset(out / table, partitioning="hive").to_table())
        assert not {"command", "description", "prompt", "text"} & set(data.columns)
        for col in data.select(pl.col(pl.String)).columns:
            values = set(data[col].drop_nulls())
            assert not values & set(commands), f"{table}.{col} holds a shell command"
    export_parquet(tmp_path, db=str(store), privacy="full")
    edges = pl.from_arrow(pads.dataset(tmp_path / "edges", partitioning="hive").to_table())
    assert set(edges["command"].drop_nulls()) & set(commands)


def test_read_back_with_polars_and_pyarrow(store, out):
    runs = pl.scan_parquet(out / "runs" / "**" / "*.parquet", hive_partitioning=True).collect()
    stored = store_rows(store, "SELECT run_id, root_harness FROM runs")
    assert sorted(runs["run_id"]) == sorted(stored["run_id"])
    assert {"harness", "month"} <= set(runs.columns)
    mismatched = runs.filter(pl.col("harness") != pl.col("root_harness").fill_null("unknown"))
    assert mismatched.height == 0

    edges = pads.dataset(out / "edges", format="parquet", partitioning="hive").to_table()
    assert edges.num_rows == store_rows(store, "SELECT count(*) AS n FROM all_edges")["n"].item()
    assert sorted(edges.column("edge_id").to_pylist()) == sorted(
        store_rows(store, "SELECT edge_id FROM all_edges")["edge_id"]
    )

    # the ids join: every session's run is a run, every usage row's session is a session
    sessions = pl.scan_parquet(out / "sessions" / "**" / "*.parquet", hive_partitioning=True).collect()
    usage = pl.scan_parquet(out / "usage" / "**" / "*.parquet", hive_partitioning=True).collect()
    assert set(sessions["run_id"]) <= set(runs["run_id"])
    assert set(usage["session_id"]) <= set(sessions["session_id"])


def test_query_parquet(store, out):
    res = run(
        "query",
        "--parquet",
        out,
        "--format",
        "csv",
        "SELECT count(*) AS n, count(DISTINCT f.run_id) AS joined FROM runs r JOIN run_features f USING (run_id)",
    )
    assert res.exit_code == 0, res.output
    n = store_rows(store, "SELECT count(*) AS n FROM runs")["n"].item()
    assert res.output == f"n,joined\n{n},{n}\n"
    res = run(
        "query",
        "--parquet",
        out,
        "--format",
        "csv",
        "SELECT harness, count(*) AS n FROM sessions GROUP BY harness ORDER BY harness",
    )
    # every session, and the placeholder of each missing parent (a run member with no session)
    want = store_rows(
        store,
        "SELECT harness, count(*) AS n FROM (SELECT harness FROM session_overview UNION ALL"
        " SELECT split_part(session_id, ':', 1) FROM run_sessions WHERE session_id NOT IN (SELECT session_id FROM sessions))"
        " GROUP BY harness ORDER BY harness",
    )
    assert res.output == "harness,n\n" + "".join(f"{h},{k}\n" for h, k in want.iter_rows())


def test_query_parquet_errors(out, tmp_path):
    res = CliRunner().invoke(main, ["query", "--parquet", str(out), "--db", str(tmp_path / "x.duckdb"), "SELECT 1"])
    assert res.exit_code == 2 and "not both" in res.output
    res = CliRunner().invoke(main, ["query", "--parquet", str(tmp_path / "nothing"), "SELECT 1"])
    assert res.exit_code == 1 and res.output.startswith("Error: no dataset at")
    res = CliRunner().invoke(main, ["query", "--parquet", str(out), "SELECT * FROM calls"])
    assert res.exit_code == 1 and res.output.startswith("Error: query failed")


def test_an_empty_table_is_still_a_view(tmp_path):
    db = tmp_path / "s.duckdb"
    ingest(
        [
            str(
                SAMPLES
                / "claude-code"
                / "projects"
                / "-home-dev-projects-tidepool"
                / "45e626f5-ff95-4312-8d3e-f9f04e2bb73a.jsonl"
            )
        ],
        db=str(db),
        workers=1,
    )
    export_parquet(tmp_path / "ds", db=str(db))
    res = run("query", "--parquet", tmp_path / "ds", "--format", "csv", "SELECT count(*) AS n FROM edges")
    assert res.output == "n\n0\n"


def test_export_parquet_cli_and_file_uri(store, tmp_path):
    res = run("export", "parquet", "--out", f"file://{tmp_path}/ds", "--db", store, "--json")
    assert res.exit_code == 0, res.output
    assert '"partitions_written"' in res.output and files(tmp_path / "ds")
    res = run("query", "--parquet", f"file://{tmp_path}/ds", "--format", "csv", "SELECT count(*) AS n FROM runs")
    assert res.output.startswith("n\n")
    res = CliRunner().invoke(main, ["export", "parquet", "--out", "nosuchfs://x/y", "--db", str(store)])
    assert res.exit_code == 1 and res.output.startswith("Error: cannot open nosuchfs://x/y")


def test_load_round_trip(store, out, tmp_path):
    db = tmp_path / "loaded.duckdb"
    res = run("load", out, "--db", db)
    assert res.exit_code == 0, res.output
    for sql in (
        "SELECT * FROM runs",
        "SELECT * FROM run_sessions",
        "SELECT * FROM edges",
        "SELECT * FROM lineage",
        "SELECT * FROM artifacts",
        "SELECT * EXCLUDE (ingest_id) FROM sessions",
        "SELECT * EXCLUDE (ingest_id) FROM usage_dedup",
        "SELECT * FROM session_overview",
        "SELECT * EXCLUDE (ingest_id) FROM outcomes",
        "SELECT * EXCLUDE (ingest_id) FROM commits",
        "SELECT * FROM commit_costs",
    ):
        a, b = store_rows(store, sql + " ORDER BY ALL"), store_rows(db, sql + " ORDER BY ALL")
        assert a.equals(b), sql
    run_id = store_rows(store, "SELECT run_id FROM runs ORDER BY n_sessions DESC, run_id LIMIT 1").item()
    assert run("show", run_id, "--db", db).output == run("show", run_id, "--db", store).output
    again = CliRunner().invoke(main, ["load", str(out), "--db", str(db)])
    assert again.exit_code == 1 and "already holds" in again.output


def test_sessions_carry_the_node_state(store, out):
    """One row per node, with the state OCP documents give the node (its latest-ending row's)."""
    sessions = pl.from_arrow(pads.dataset(out / "sessions", partitioning="hive").to_table())
    prickle = sessions.filter(pl.col("harness") == "prickle").select("session_id", "state", "waiting_on")
    assert dict(zip(prickle["session_id"], zip(prickle["state"], prickle["waiting_on"], strict=True), strict=True)) == {
        "prickle:tsk_bench_retry": (None, None),
        "prickle:tsk_bump_retry": ("canceled", None),
        "prickle:tsk_docs_retry": ("done", None),
        "prickle:tsk_flag_retry": ("rejected", None),
        "prickle:tsk_impl_retry": ("done", None),
        "prickle:tsk_lint_retry": ("working", None),
        "prickle:tsk_perf_retry": ("review", None),
        "prickle:tsk_plan_retry": ("done", None),
        "prickle:tsk_review_retry": ("done", None),
        "prickle:tsk_ship_retry": ("blocked", "owner_approval"),
    }
    assert sessions.filter(pl.col("harness") != "prickle")["state"].null_count() == sessions.height - prickle.height


def test_ocp_from_a_loaded_store_keeps_outcomes(store, out, tmp_path):
    """A loaded store exports the documents its dataset came from: node states, outcomes with their
    evidence, verdict signals and state notes. Not ``run.task`` (the files a run wrote are file
    events, not in the dataset) nor imported documents (DATASET.md, "Loading it back")."""
    from sessiongraph.ocp.files import export_ocp

    db = tmp_path / "loaded.duckdb"
    assert run("load", out, "--db", db).exit_code == 0
    original, loaded = (
        {Path(f).name: json.loads(Path(f).read_text()) for f in export_ocp(tmp_path / name, db=str(d)).files}
        for name, d in (("a", store), ("b", db))
    )
    imported = {n for n, d in original.items() if d["producer"]["name"] != "sessiongraph"}
    assert imported and set(original) - set(loaded) == imported and set(loaded) <= set(original)
    prickle = [n for n, d in loaded.items() if any(x["id"].startswith("prickle:") for x in d["nodes"])]
    assert any(d["run"].get("signals") for n, d in loaded.items() if n in prickle)
    for name, doc in loaded.items():
        assert {**doc["run"], "task": None} == {**original[name]["run"], "task": None}, name
        assert {k: v for k, v in doc.items() if k != "run"} == {k: v for k, v in original[name].items() if k != "run"}
        assert doc["run"]["task"]["type"] == "research"


def test_an_object_store_without_folders(store, tmp_path, monkeypatch):
    """Through a pyarrow file system that is not the local one (fsspec's in-memory store, which
    like S3 has no real folders): write, rewrite nothing, query and load."""
    fsspec = pytest.importorskip("fsspec")
    import pyarrow.fs as pafs

    from sessiongraph.dataset import parquet

    mem = pafs.PyFileSystem(pafs.FSSpecHandler(fsspec.filesystem("memory")))
    local = parquet.filesystem
    monkeypatch.setattr(
        parquet,
        "filesystem",
        lambda uri: (mem, str(uri)[len("mem://") :]) if str(uri).startswith("mem://") else local(uri),
    )
    first = export_parquet("mem://bucket/ds", db=str(store))
    again = export_parquet("mem://bucket/ds", db=str(store))
    assert first.partitions_written > 0 and again.partitions_written == 0
    assert again.partitions_unchanged == first.partitions_written
    res = run("query", "--parquet", "mem://bucket/ds", "--format", "csv", "SELECT count(*) AS n FROM runs")
    n = store_rows(store, "SELECT count(*) AS n FROM runs")["n"].item()
    assert res.output == f"n\n{n}\n"
    assert run("load", "mem://bucket/ds", "--db", tmp_path / "l.duckdb").exit_code == 0
    assert store_rows(tmp_path / "l.duckdb", "SELECT count(*) AS n FROM runs")["n"].item() == n


def test_commits_table(out):
    # sample_logs/scenarios/commits: the only samples that commit or open a PR
    got = pl.from_arrow(pads.dataset(out / "commits", partitioning="hive").to_table())
    rows = got.sort("harness", "line").select(
        "harness", "month", "run_id", "kind", "evidence", "commit_hash", "pr_number"
    )
    assert rows.rows() == [
        ("claude-code", "2026-01", "run_05d57459e617bc4a", "commit", "git_commit_output", "1a2b3c4", None),
        ("claude-code", "2026-01", "run_05d57459e617bc4a", "pr", "gh_pr_create_output", None, 17),
        ("claude-code", "2026-01", "run_05d57459e617bc4a", "pr", "pr_link", None, 17),
        ("codex", "2026-01", "run_a693128f71d49205", "commit", "git_commit_output", "9c8b7a6", None),
    ]
    assert set(got["tier"]) == {"verified"} and got["in_branch"].null_count() == got.height


def test_tables_are_read_in_chunks_with_the_same_files(store, out, tmp_path, monkeypatch):
    """Every table without text read a chunk at a time (tiny chunks, a few partitions per read,
    files of a few rows): the same files, rows and content hashes as the export of whole tables,
    and no read of the store returns a whole table: at most a chunk, one session's steps or a
    table of a row per file, session or run."""
    from sessiongraph.dataset import parquet
    from sessiongraph.dataset import tables as dataset

    heights: list[int] = []
    real = Store.query

    def counting(self, sql, params=None):
        df = real(self, sql, params)
        heights.append(df.height)
        return df

    monkeypatch.setattr(dataset, "CHUNK_ROWS", 40)
    monkeypatch.setattr(dataset, "MAX_PIECES", 3)
    monkeypatch.setattr(Store, "query", counting)
    chunked = export_parquet(tmp_path / "chunked", db=str(store))
    monkeypatch.setattr(Store, "query", real)
    steps, per_session, per_file = store_rows(
        store,
        "SELECT (SELECT count(*) FROM steps), (SELECT max(n) FROM (SELECT count(*) AS n FROM steps GROUP BY session_id)),"
        " (SELECT count(*) FROM sessions)",
    ).row(0)
    bound = max(40, per_session, per_file)
    assert bound < steps / 2 and max(heights) <= bound
    assert stored_hashes(tmp_path / "chunked") == stored_hashes(out)
    for rel, p in files(out).items():
        assert pl.read_parquet(p).equals(pl.read_parquet(tmp_path / "chunked" / rel)), rel
    # a partition over ROWS_PER_FILE rows spans part-0, part-1 ...: the same rows, in order
    monkeypatch.setattr(parquet, "ROWS_PER_FILE", 25)
    split = export_parquet(tmp_path / "split", db=str(store))
    assert split.rows == chunked.rows
    parts = files(tmp_path / "split")
    assert any(rel.endswith("part-1.parquet") for rel in parts)
    for rel, p in files(out).items():
        folder = (tmp_path / "split" / rel).parent
        pieces = [pl.read_parquet(folder / f"part-{i}.parquet") for i in range(len(list(folder.glob("*.parquet"))))]
        assert all(x.height <= 25 for x in pieces)
        assert pl.read_parquet(p).equals(pl.concat(pieces)), rel


def test_chunked_tables_equal_each_table_read_whole(store, tmp_path, monkeypatch):
    """The reference is what `export parquet` did before it read in chunks: each table's query
    whole, its rows sorted once, then cut by partition. Under tiny chunks (many pieces of one
    partition, several partitions per read) every partition's files hold those rows in that order."""
    from sessiongraph.dataset import tables as dataset

    chunk = 4
    monkeypatch.setattr(dataset, "CHUNK_ROWS", chunk)
    monkeypatch.setattr(dataset, "MAX_PIECES", 2)
    cut: set[str] = set()  # tables with a partition read in three pieces or more
    for privacy in ("metadata_only", "full"):
        got = tmp_path / privacy
        export_parquet(got, db=str(store), privacy=privacy)
        with Store(store, read_only=True) as s:
            for name, read in dataset._reads(privacy).items():
                df = s.query(read.sql)
                df = read.finish(df) if read.finish is not None else df
                df = dataset._conform(dataset._part(df, read.ts, *read.order), dataset.schema(name, privacy))
                want = df.partition_by("_harness", "_month", as_dict=True, maintain_order=True)
                assert want, name
                if max(p.height for p in want.values()) > 2 * chunk:
                    cut.add(name)
                folders = sorted(p for p in (got / name).glob("harness=*/month=*") if p.is_dir())
                assert [(f.parent.name[8:], f.name[6:]) for f in folders] == sorted(want), name
                for (harness, month), rows in want.items():
                    folder = got / name / f"harness={harness}" / f"month={month}"
                    written = pl.read_parquet(sorted(folder.glob("*.parquet")))
                    assert written.equals(rows.drop("_harness", "_month")), (name, harness, month)
    assert {"edges", "usage", "steps", "outcomes"} <= cut
