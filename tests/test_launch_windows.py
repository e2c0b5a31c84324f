"""The launch pass pairs same-cwd sessions through time buckets: whatever buckets a call's window
spans, a child inside the window is found and one outside it is not; and a repository launched
from thousands of times pairs each launch with its own child only."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from sessiongraph.inference.edges import Inferred
from sessiongraph.inference.launch import BUCKET, SLACK, launch
from sessiongraph.ingest.frames import Frames

T0 = datetime(2026, 3, 1, 9, 0, 7, tzinfo=UTC)


def _frames(calls: list[tuple[timedelta, timedelta | None]], child_starts: list[timedelta]) -> Frames:
    sessions = [
        {
            "session_id": "claude-code:p",
            "harness": "claude-code",
            "native_id": "p",
            "session_kind": "main",
            "cwd": "/repo",
            "started_at": T0,
            "source_path": "p",
            "entrypoint": "cli",
        }
    ]
    launches, rows = [], []
    for k, (start, length) in enumerate(calls):
        rows.append(
            {
                "session_id": "claude-code:p",
                "call_id": f"k{k}",
                "tool": "Bash",
                "kind": "shell",
                "started_at": T0 + start,
                "ended_at": None if length is None else T0 + start + length,
                "cwd": "/repo",
                "source_path": "p",
                "line": k,
                "output_ids": [],
            }
        )
        launches.append(
            {
                "session_id": "claude-code:p",
                "call_id": f"k{k}",
                "segment": 0,
                "ts": T0 + start,
                "harness": "codex",
                "print_mode": True,
                "resume": False,
                "background": False,
                "looped": False,
                "cwd": "/repo",
                "source_path": "p",
                "line": k,
                "review": False,
            }
        )
    for i, start in enumerate(child_starts):
        sessions.append(
            {
                "session_id": f"codex:x{i}",
                "harness": "codex",
                "native_id": f"x{i}",
                "session_kind": "main",
                "cwd": "/repo",
                "started_at": T0 + start,
                "source_path": f"x{i}",
                "entrypoint": "exec",
            }
        )
    return Frames.from_rows(sessions=sessions, calls=rows, launches=launches)


@pytest.mark.parametrize("length_buckets", [0.01, 1, 3.5, 12])
def test_a_child_anywhere_in_a_long_window_is_found(length_buckets):
    length = BUCKET * length_buckets
    inside = _frames([(timedelta(0), length)], [length + SLACK - timedelta(seconds=1)])
    outside = _frames([(timedelta(0), length)], [length + SLACK + timedelta(seconds=1)])
    assert launch(inside, Inferred()).edges["dst"].to_list() == ["codex:x0"]
    assert launch(outside, Inferred()).edges.height == 0


def test_an_unanswered_call_waits_the_background_window():
    frames = _frames([(timedelta(0), None)], [timedelta(minutes=29)])
    assert launch(frames, Inferred()).edges["dst"].to_list() == ["codex:x0"]


def test_thousands_of_launches_in_one_repository_pair_one_to_one():
    n = 3000
    calls = [(timedelta(minutes=7 * k), timedelta(minutes=1)) for k in range(n)]
    children = [timedelta(minutes=7 * k, seconds=3) for k in range(n)]
    edges = launch(_frames(calls, children), Inferred()).edges
    assert edges.height == n
    assert sorted(zip(edges["src_call_id"], edges["dst"], strict=True)) == sorted(
        (f"k{k}", f"codex:x{k}") for k in range(n)
    )


def _background(frames: Frames, *calls: str) -> Frames:
    rows = [{**r, "background": True} if r["call_id"] in calls else r for r in frames.rows("launches")]
    return frames.replace(launches=rows)


def test_a_session_claimed_by_a_closer_launch_sends_the_other_to_its_next():
    # k0 is backgrounded at 0 s; k1 runs 60-120 s. x0 starts 61 s (k1's, 1 s lag; k0's at 61 s),
    # x1 at 300 s (only k0's window). Claims go closest first: k1 takes x0, so k0 takes x1.
    frames = _background(
        _frames(
            [(timedelta(0), timedelta(seconds=1)), (timedelta(seconds=60), timedelta(seconds=60))],
            [timedelta(seconds=61), timedelta(seconds=300)],
        ),
        "k0",
    )
    edges = launch(frames, Inferred()).edges
    assert sorted(zip(edges["src_call_id"], edges["dst"], strict=True)) == [("k0", "codex:x1"), ("k1", "codex:x0")]


def test_a_backgrounded_launch_claims_one_session_a_looped_one_each_in_its_window():
    starts = [timedelta(minutes=m) for m in (1, 2, 3)]
    one = launch(_background(_frames([(timedelta(0), timedelta(seconds=1))], starts), "k0"), Inferred())
    assert one.edges["dst"].to_list() == ["codex:x0"]
    looped = _frames([(timedelta(0), timedelta(minutes=4))], starts)
    looped = looped.replace(launches=[{**r, "looped": True} for r in looped.rows("launches")])
    assert sorted(launch(looped, Inferred()).edges["dst"]) == ["codex:x0", "codex:x1", "codex:x2"]


def test_another_workspace_is_never_joined_and_an_untimed_launch_joins_nothing():
    frames = _frames([(timedelta(0), timedelta(minutes=1))], [timedelta(seconds=2), timedelta(seconds=30)])
    sessions = [{**s, "cwd": "/elsewhere"} if s["session_id"] == "codex:x0" else s for s in frames.rows("sessions")]
    assert launch(frames.replace(sessions=sessions), Inferred()).edges["dst"].to_list() == ["codex:x1"]
    untimed = frames.replace(launches=[{**r, "ts": None} for r in frames.rows("launches")])
    result = launch(untimed, Inferred())
    assert result.edges.height == 0
    codes = dict(zip(result.diagnostics["code"], result.diagnostics["count"], strict=True))
    assert codes == {"unmatched_launch": 1, "invalid_time": 1}


def test_thousands_of_backgrounded_launches_with_overlapping_windows():
    n = 3000  # every window (30 min) holds five calls' children: each still gets its own
    calls = [(timedelta(minutes=7 * k), timedelta(seconds=1)) for k in range(n)]
    children = [timedelta(minutes=7 * k, seconds=3) for k in range(n)]
    frames = _background(_frames(calls, children), *[f"k{k}" for k in range(n)])
    edges = launch(frames, Inferred()).edges
    assert sorted(zip(edges["src_call_id"], edges["dst"], strict=True)) == sorted(
        (f"k{k}", f"codex:x{k}") for k in range(n)
    )
