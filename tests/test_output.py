"""Every --format of `query` writes every DuckDB type the store, its views and a query can hold."""

from __future__ import annotations

import csv
import io
import json

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.store import Store
from sessiongraph.views.output import FORMATS
from tests.conftest import SAMPLES

HUGE = 170141183460469231731687303715884105727  # HUGEINT's largest: 39 digits

# One column of each type (and of those polars cannot hold: INTERVAL, UNION, BIT, TIMETZ).
TYPES_SQL = f"""
SELECT 12345678.123456789::DECIMAL(18,9) AS dec, {HUGE}::HUGEINT AS huge, 7::UHUGEINT AS uhuge,
       TIMESTAMPTZ '2026-01-05 09:58:00+00' AS tstz, TIMESTAMP '2026-01-05 09:58:00' AS ts,
       DATE '2026-01-05' AS d, TIME '09:58:00' AS t, [1, 2, NULL] AS list, [[1.5::DECIMAL(4,2)]] AS nested,
       {{'a': 1, 'b': ['x'], 'c': TIMESTAMPTZ '2026-01-05 09:58:00+00'}} AS struct, MAP {{'k': 1, 'l': 2}} AS map,
       MAP {{1: 'one'}} AS intmap, '\\xAA\\x00'::BLOB AS blob, NULL AS nothing, NULL::DECIMAL(5,2) AS nodec,
       INTERVAL 3 MONTH + INTERVAL 2 HOUR AS span, union_value(k := 1) AS uni, '101'::BIT AS bits,
       '10:00:00+02'::TIMETZ AS ttz, 'a'::ENUM('a', 'b') AS enum, '00000000-0000-0000-0000-000000000001'::UUID AS id,
       'line\nbreak, "quoted"' AS txt, true AS yes, 1.5::DOUBLE AS dbl
"""


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("output") / "s.duckdb"
    res = cli("ingest", SAMPLES, "--db", path, "--privacy", "full", "--json")  # full: texts hold rows too
    assert res.exit_code == 0, res.output
    return path


def relations(db) -> dict[str, int]:
    with Store(db, read_only=True) as store:
        names = store.query(
            "SELECT table_name FROM duckdb_tables() WHERE NOT internal UNION "
            "SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1"
        )["table_name"].to_list()
        return {n: int(store.query(f'SELECT count(*) AS n FROM "{n}"')["n"][0]) for n in names}


def parsed(fmt: str, out: str) -> list:
    if fmt == "json":
        return json.loads(out)
    if fmt == "jsonl":
        return [json.loads(line) for line in out.splitlines() if line]
    if fmt == "csv":
        return list(csv.DictReader(io.StringIO(out)))
    return out.splitlines()[2:-1]


def test_the_store_holds_the_types(db):
    rels = relations(db)
    for name in ("usage", "run_costs", "session_costs", "checkpoints", "texts", "runs", "all_edges", "steps"):
        assert name in rels
    assert rels["texts"] > 0 and rels["usage"] > 0
    with Store(db, read_only=True) as store:
        types = set(store.query("SELECT DISTINCT data_type FROM information_schema.columns")["data_type"])
    assert {"DECIMAL(18,9)", "TIMESTAMP WITH TIME ZONE", "VARCHAR[]", "BLOB", "DOUBLE"} <= types


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_table_and_view_in_every_format(db, fmt):
    for name, n in relations(db).items():
        res = cli("query", "--db", db, "--format", fmt, f'SELECT * FROM "{name}"')
        assert res.exit_code == 0, (name, res.output)
        rows = parsed(fmt, res.output)
        if fmt == "table":
            assert res.output.rstrip().endswith(f"({n} row{'s' if n != 1 else ''})"), name
        elif fmt == "jsonl" and n == 0:
            assert res.output.strip() == "", name
        else:
            assert len(rows) == n, name


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_sum_and_the_bundled_queries(db, fmt):
    for args in (
        ["SELECT sum(input_tokens) AS s, avg(output_tokens) AS a FROM usage"],
        ["--file", "sql/queries/tokens_by_model.sql"],
    ):
        res = cli("query", "--db", db, "--format", fmt, *args)
        assert res.exit_code == 0, res.output
        assert parsed(fmt, res.output)


def test_each_type_in_json_and_jsonl(db):
    for fmt in ("json", "jsonl"):
        res = cli("query", "--db", db, "--format", fmt, TYPES_SQL)
        assert res.exit_code == 0, res.output
        (row,) = parsed(fmt, res.output)
        assert row["huge"] == HUGE and row["uhuge"] == 7  # exact JSON numbers
        assert '"dec": 12345678.123456789' in res.output or '"dec":12345678.123456789' in res.output
        assert row["tstz"] == "2026-01-05T09:58:00+00:00" and row["ts"] == "2026-01-05T09:58:00"
        assert (row["d"], row["t"]) == ("2026-01-05", "09:58:00")
        assert row["list"] == [1, 2, None] and row["nested"] == [[1.5]]
        assert row["struct"] == {"a": 1, "b": ["x"], "c": "2026-01-05T09:58:00+00:00"}
        assert row["map"] == {"k": 1, "l": 2} and row["intmap"] == {"1": "one"}
        assert row["blob"] == "aa00" and row["nothing"] is None and row["nodec"] is None
        assert row["span"] == "3 months 02:00:00" and row["uni"] == "1" and row["bits"] == "101"
        assert row["ttz"] == "10:00:00+02" and row["enum"] == "a" and row["id"].endswith("0001")
        assert row["txt"] == 'line\nbreak, "quoted"' and row["yes"] is True and row["dbl"] == 1.5


def test_each_type_in_csv_and_table(db):
    res = cli("query", "--db", db, "--format", "csv", TYPES_SQL)
    assert res.exit_code == 0, res.output
    (row,) = parsed("csv", res.output)
    assert row["dec"] == "12345678.123456789" and row["huge"] == str(HUGE)
    assert row["tstz"] == "2026-01-05T09:58:00+00:00"
    assert json.loads(row["struct"])["b"] == ["x"] and json.loads(row["map"]) == {"k": 1, "l": 2}
    assert row["blob"] == "aa00" and row["nothing"] == "" and row["span"] == "3 months 02:00:00"
    assert row["txt"] == 'line\nbreak, "quoted"' and row["yes"] == "true"
    res = cli("query", "--db", db, "--format", "table", TYPES_SQL)
    assert res.exit_code == 0, res.output
    assert str(HUGE) in res.output and "aa00" in res.output and res.output.rstrip().endswith("(1 row)")
