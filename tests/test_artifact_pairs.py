"""The artifact pass pairs each read with the latest earlier write by another session. It finds
that write with an as-of join (linear in the events of a path, not reads x writes); this checks
it against the rule spelled out in plain Python on random event sets full of ties."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from sessiongraph.inference.artifacts import artifacts
from sessiongraph.inference.edges import Inferred
from sessiongraph.ingest.frames import Frames

T0 = datetime(2026, 1, 1, tzinfo=UTC)
event = st.tuples(st.integers(0, 4), st.integers(0, 12), st.integers(0, 2), st.sampled_from(["read", "write"]))


def _expected(rows: list[dict]) -> set[tuple]:
    """(path, version, reader) of every artifact edge, by the rule: a read takes the latest write
    of its path strictly before it by another session (ties: the later in file order)."""
    order = sorted(rows, key=lambda r: (r["path"], r["ts"], r["session_id"], r["line"]))
    writes: dict[str, list[dict]] = {}
    for r in order:
        if r["op"] == "write":
            writes.setdefault(r["path"], []).append(r)
    out = set()
    for r in order:
        if r["op"] != "read":
            continue
        versions = writes.get(r["path"], [])
        best = None
        for v, w in enumerate(versions, start=1):
            if w["session_id"] != r["session_id"] and w["ts"] < r["ts"]:
                best = v  # versions ascend in time, so the last one that fits is the latest
        if best is not None:
            out.add((r["path"], best, r["session_id"]))
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(event, max_size=40))
def test_each_read_takes_the_latest_earlier_write_of_another_session(events):
    rows = [
        {
            "session_id": f"s{s}",
            "call_id": f"c{i}",
            "ts": T0 + timedelta(seconds=t),
            "path": f"/p{p}",
            "op": op,
            "how": "Read",
            "tier": "verified",
            "source_path": "x",
            "line": i,
        }
        for i, (s, t, p, op) in enumerate(events)
    ]
    edges = artifacts(Frames.from_rows(file_events=rows), Inferred()).edges
    got = set(edges.select("path", "version", "dst").iter_rows())
    assert got == _expected(rows)
