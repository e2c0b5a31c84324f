"""Frames build their timestamp and list-of-strings columns by hand (integer microseconds, one
flat Arrow string array): the frames must equal what polars builds from the same Python values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import polars as pl
import pytest

from sessiongraph.ingest.frames import SCHEMAS, Columns, Frames


def _polars(rows: list[dict], schema: pl.Schema) -> pl.DataFrame:
    return pl.DataFrame({col: [row.get(col) for row in rows] for col in schema}, schema=schema)


ROWS = [
    {
        "session_id": "a",
        "started_at": datetime(2026, 1, 1, 12, 0, 0, 123456, tzinfo=UTC),
        "ended_at": datetime(2026, 1, 1, 12, 0, 0, tzinfo=timezone(timedelta(hours=5, minutes=30))),
        "depends_on": ["x", None, "y"],
    },
    {"session_id": "b", "ended_at": datetime(2026, 1, 1, 12, 0, 0, 7), "depends_on": None},  # naive: UTC
    {"session_id": "c", "started_at": datetime(1960, 1, 1, 0, 0, 0, 1, tzinfo=UTC), "depends_on": []},
    {"session_id": "d", "started_at": None, "depends_on": ("t",)},
]


def test_built_columns_equal_polars_own():
    built = Frames.from_rows(sessions=ROWS).sessions
    assert built.schema == SCHEMAS["sessions"]
    assert built.equals(_polars(ROWS, SCHEMAS["sessions"]))
    assert built["started_at"][2] == datetime(1960, 1, 1, 0, 0, 0, 1, tzinfo=UTC)  # before the epoch, exact
    assert built["ended_at"][0] == datetime(2026, 1, 1, 6, 30, tzinfo=UTC)
    assert built["depends_on"].to_list() == [["x", None, "y"], None, [], ["t"]]


def _outcome(build):
    try:
        return build()
    except Exception as exc:  # noqa: BLE001 - the type of the failure is what is compared
        return type(exc)


@pytest.mark.parametrize(
    "bad",
    [
        {"session_id": "x", "started_at": "2026-01-01"},
        {"session_id": "x", "started_at": 5},
        {"session_id": "x", "depends_on": [1, 2]},
        {"session_id": "x", "depends_on": "ab"},
    ],
)
def test_values_of_another_type_give_what_polars_gives(bad):
    ours = _outcome(lambda: Frames.from_rows(sessions=[bad]).sessions)
    theirs = _outcome(lambda: _polars([bad], SCHEMAS["sessions"]))
    if isinstance(theirs, pl.DataFrame):
        assert isinstance(ours, pl.DataFrame) and ours.equals(theirs)
    else:
        assert ours is theirs


def test_a_columns_table_joins_row_tables_in_order():
    """A table handed over as Columns (ingest.steps) builds, joins row-dict parts of the same
    table in order, and reads like a row table before it is built."""
    schema = SCHEMAS["sessions"]
    first = Frames.from_rows(sessions=ROWS[:2])
    cols = Columns.of_rows(ROWS[2:], schema)
    second = Frames.from_rows(sessions=Columns({k: v for k, v in cols.data.items() if k != "ended_at"}, cols.n))
    joined = Frames.concat([first, second, Frames.empty()])
    assert joined.height("sessions") == 4
    assert joined.values("sessions", "session_id") == ["a", "b", "c", "d"]
    assert [r["session_id"] for r in joined.rows("sessions")] == ["a", "b", "c", "d"]
    assert joined.sessions.equals(_polars(ROWS, schema))
    # The Columns are kept as they are where another table is replaced.
    kept = Frames.from_rows(sessions=cols).replace(diagnostics=[])
    assert kept.sessions.equals(_polars(ROWS[2:], schema))


def test_a_columns_table_is_checked_like_rows():
    with pytest.raises(ValueError, match="not in the frames contract"):
        Frames.from_rows(sessions=Columns({"session_id": ["a"], "bogus": [1]}, 1))
    with pytest.raises(ValueError, match="unequal length"):
        Frames.from_rows(sessions=Columns({"session_id": ["a", "b"], "harness": ["x"]}, 2))
