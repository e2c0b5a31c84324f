"""The DuckDB DDL (sql/schema.sql) and the frames contract (ingest/frames.py) must agree."""

from __future__ import annotations

import duckdb
import polars as pl
import pytest

from sessiongraph import costs
from sessiongraph.inference.edges import NOT_NULL
from sessiongraph.ingest.frames import SCHEMAS, Frames
from sessiongraph.store import INFERENCE_TABLES, Store

DUCK_TYPES = {
    pl.String: "VARCHAR",
    pl.Int64: "BIGINT",
    pl.Int32: "INTEGER",
    pl.Boolean: "BOOLEAN",
    pl.Datetime("us", "UTC"): "TIMESTAMP WITH TIME ZONE",
    pl.List(pl.String): "VARCHAR[]",
    pl.Float64: "DOUBLE",
}


def _columns(db, table):
    con = duckdb.connect(str(db), read_only=True)
    try:
        return con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = ?"
            " ORDER BY ordinal_position",
            [table],
        ).fetchall()
    finally:
        con.close()


@pytest.mark.parametrize("table", list(SCHEMAS))
def test_store_table_matches_frame(tmp_path, table):
    Store(tmp_path / "s.duckdb").close()
    cols = _columns(tmp_path / "s.duckdb", table)
    expected = [(name, DUCK_TYPES[dtype]) for name, dtype in SCHEMAS[table].items()]
    expected.append(("ingest_id", "BIGINT"))
    if table == "usage":  # each request's dollars, priced once written (sessiongraph/costs.py)
        expected += list(costs.COLUMNS.items())
    assert cols == expected


def test_every_frame_is_declared_on_frames():
    """frames.<table> is declared in the class body for the type checker, one per table of the contract."""
    assert set(Frames.__annotations__) == set(SCHEMAS)
    assert all(isinstance(getattr(Frames.empty(), name), pl.DataFrame) for name in SCHEMAS)


def test_empty_frames_keep_their_schemas():
    frames = Frames.empty()
    for name, schema in SCHEMAS.items():
        assert getattr(frames, name).schema == schema


def test_unknown_columns_are_refused():
    with pytest.raises(ValueError, match="not in the frames contract"):
        Frames.from_rows(calls=[{"session_id": "x", "surprise": 1}])


@pytest.mark.parametrize("table", list(INFERENCE_TABLES))
def test_inference_table_matches_its_schema(tmp_path, table):
    Store(tmp_path / "s.duckdb").close()
    expected = [(name, DUCK_TYPES[dtype]) for name, dtype in INFERENCE_TABLES[table].items()]
    assert _columns(tmp_path / "s.duckdb", table) == expected


@pytest.mark.parametrize("table", sorted(NOT_NULL))
def test_inference_not_null_columns_match_the_ddl(tmp_path, table):
    """inference/edges.py NOT_NULL is what the store refuses to hold null (edges also hold lineage)."""
    Store(tmp_path / "s.duckdb").close()
    con = duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True)
    try:
        required = {
            name
            for (name,) in con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ? AND is_nullable = 'NO'",
                [table],
            ).fetchall()
        }
    finally:
        con.close()
    if table == "edges":
        required.discard("run_id")  # lineage rows travel with the edges, run_id null
    assert set(NOT_NULL[table]) == required
