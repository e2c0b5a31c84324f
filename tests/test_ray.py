"""The Ray engine against a real local Ray cluster: the same dataset as the local engine, row
for row and id for id, on sample_logs/ and on the shared corpus. Plus: the local engine never
needs Ray, and a missing Ray is a clear error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.dataset as pads
import pyarrow.parquet as pq
import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.dataset.parquet import KEY_HASH, export_parquet
from sessiongraph.dataset.tables import TABLES
from sessiongraph.pipeline import ingest
from tests.conftest import ROOT, SAMPLES

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
# Ray Data reads deprecated settings of its own context when it copies it.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    # address="local": a fresh cluster of our own, even if `ray start` left one on this machine
    ray.init(address="local", num_cpus=2, include_dashboard=False, logging_level="WARNING")
    yield ray
    ray.shutdown()


def table(root: Path, name: str) -> pa.Table | None:
    """One dataset table, partition columns included, rows sorted by every sortable column; None
    when it has no rows (a table without rows gets no folder: the corpus has no Prickle outcomes)."""
    if not (root / name).is_dir():
        return None
    t = pads.dataset(root / name, format="parquet", partitioning="hive").to_table()
    keys = [(f.name, "ascending") for f in t.schema if not pa.types.is_list(f.type)]
    return t.sort_by(keys)


def hashes(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): pq.read_metadata(p).metadata[KEY_HASH] for p in sorted(root.rglob("*.parquet"))
    }


def assert_same_dataset(logs: Path, tmp_path: Path) -> None:
    local_db, ray_db = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    local_out, ray_out = tmp_path / "local", tmp_path / "ray"
    ingest([str(logs)], db=str(local_db), workers=1)
    export_parquet(local_out, db=str(local_db))
    res = CliRunner().invoke(
        main,
        ["ingest", str(logs), "--engine", "ray", "--db", str(ray_db), "--out-parquet", str(ray_out), "--json"],
        catch_exceptions=False,
    )
    assert res.exit_code == 0, res.output
    assert '"dataset"' in res.output
    assert hashes(local_out) and any((local_out / "edges").rglob("*.parquet"))
    assert hashes(ray_out) == hashes(local_out)  # same partitions, same files, same row hashes
    for name in TABLES:
        a, b = table(local_out, name), table(ray_out, name)
        if a is None or b is None:
            assert a is b, name
            continue
        assert a.schema == b.schema, name
        assert a.num_rows == b.num_rows, name
        assert a.equals(b), name


def test_ray_engine_equals_local_on_sample_logs(ray_cluster, tmp_path):
    assert_same_dataset(SAMPLES, tmp_path)


def test_ray_engine_equals_local_on_the_corpus(ray_cluster, tmp_path):
    if not CORPUS.is_dir():
        pytest.skip(f"real-log corpus not found at {CORPUS}")
    assert_same_dataset(CORPUS, tmp_path)


def test_local_engine_never_imports_ray(tmp_path):
    code = (
        "import sys; from sessiongraph.pipeline import ingest; from sessiongraph.dataset.parquet import export_parquet\n"
        f"ingest([{str(SAMPLES / 'codex')!r}], db={str(tmp_path / 's.duckdb')!r}, workers=1)\n"
        f"export_parquet({str(tmp_path / 'ds')!r}, db={str(tmp_path / 's.duckdb')!r})\n"
        "assert 'ray' not in sys.modules, 'the local engine imported ray'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_ray_missing_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    res = CliRunner().invoke(
        main, ["ingest", str(SAMPLES / "codex"), "--engine", "ray", "--db", str(tmp_path / "s.duckdb")]
    )
    assert res.exit_code == 1
    assert res.output.startswith("Error: the ray engine needs Ray: pip install 'sessiongraph[ray]'")
    assert not (tmp_path / "s.duckdb").exists()  # refused before the store was touched


def test_ray_engine_infers_on_workers_and_incrementally_like_local(ray_cluster, tmp_path):
    """The passes run in Ray worker processes, not the driver; after an append the Ray store
    equals the local one, table by table."""
    import os
    import shutil

    from sessiongraph.engines import ray as ray_engine
    from tests.test_incremental import TABLES as ALL_TABLES
    from tests.test_incremental import dump

    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES, logs)
    local_db, ray_db = tmp_path / "local.duckdb", tmp_path / "ray.duckdb"
    ingest([str(logs)], db=str(local_db), workers=1)
    ingest([str(logs)], db=str(ray_db), engine="ray")
    workers = set(ray_engine.LAST_INFER_WORKERS)
    assert workers and all(pid != os.getpid() for _node, pid in workers)
    path = sorted((logs / "claude-code" / "projects").rglob("*.jsonl"))[0]
    path.write_bytes(path.read_bytes() + path.read_bytes().splitlines(keepends=True)[-1])
    ingest([str(logs)], db=str(local_db), workers=1)
    again = ingest([str(logs)], db=str(ray_db), engine="ray")
    assert again.inferred and 0 < again.partitions_inferred
    a, b = dump(local_db), dump(ray_db)
    for t in ALL_TABLES:
        assert a[t] == b[t], t
