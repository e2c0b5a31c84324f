"""Partitions never split a pair (issue 26): the passes over all frames at once and the passes run
once per partition group, as the store plans them (keys from ``partitions.key_sql`` in DuckDB,
connected components, whole partitions packed into groups), give the same edges, runs, artifacts
and counters, on random mixes of the sample scenarios: a launch through a workspace script whose
files share nothing else (paths/relay), the Windows family in several spellings at once,
lineage-wild (scripts, loops, backgrounded launches), launch-lamp, claude-print-windows (launches
tied by output hash), orphan-subagents, the Claude Code, Codex and oh-my-opencode samples.
``SESSIONGRAPH_PARTITION_EXAMPLES`` runs more examples (50 by default)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import duckdb
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessiongraph.inference import infer, partitions, spawn
from sessiongraph.inference.edges import conform
from sessiongraph.ingest.discover import listing
from sessiongraph.ingest.frames import SCHEMAS, Frames
from sessiongraph.work import parse_path
from tests.conftest import SAMPLES
from tests.test_lineage_wild import _copy as copy_wild
from tests.test_paths import copy_relay, write_windows

EXAMPLES = int(os.environ.get("SESSIONGRAPH_PARTITION_EXAMPLES", "50"))
# The Windows family three times, each time every file spelling the workspace its own way.
WINDOWS_SPELLINGS = [
    {"W": "backslash", "W-read": "gitbash", "X1": "trailing", "X2": "lower", "XD": "long"},
    {"W": "wsl", "W-read": "wsl", "W-cd": "wsl", "W-C": "lower-forward", "X1": "dots", "X2": "forward", "XD": "lower"},
    {"W": "lower-forward", "W-cd": "forward", "W-C": "gitbash", "X1": "long", "X2": "wsl", "XD": "backslash"},
]


@pytest.fixture(scope="module")
def parsed(tmp_path_factory) -> list[tuple[str, Frames]]:
    """Every log of the scenarios, parsed once: (scenario/file, its frames)."""
    root = tmp_path_factory.mktemp("parts")
    roots = {
        "relay": copy_relay(root / "relay"),
        "wild": copy_wild(root / "wild") / "logs",
        "lamp": SAMPLES / "scenarios/launch-lamp",
        "print": SAMPLES / "scenarios/claude-print-windows",  # tied by output hash (key o:)
        "orphans": SAMPLES / "scenarios/orphan-subagents",  # a missing parent's placeholder
        "claude": SAMPLES / "claude-code",
        "codex": SAMPLES / "codex",
        "omo": SAMPLES / "oh-my-opencode",  # a task result names the child, which names no parent
    }
    for i, spelled in enumerate(WINDOWS_SPELLINGS):
        roots[f"win{i}"] = write_windows(root / f"win{i}", spelled)
    out = []
    for name, where in roots.items():
        for item, _size, _mtime in listing([where]):
            if isinstance(item, str):
                found, frames = parse_path(item)[:2]
                if found.harness is not None:
                    frames.tables()
                    out.append((f"{name}:{Path(item).relative_to(where.resolve())}", frames))
    yield out
    shutil.rmtree(root, ignore_errors=True)


def keys(frames: Frames) -> pl.DataFrame:
    """The partition keys of these frames, by the store's own SQL."""
    con = duckdb.connect()
    try:
        for name in SCHEMAS:
            con.register(f"k_{name}", frames.table(name).to_arrow())
        rows = pl.from_arrow(con.sql(partitions.key_sql(lambda name: f"k_{name}")).to_arrow_table())
    finally:
        con.close()
    assert isinstance(rows, pl.DataFrame)
    return conform(rows, partitions.KEYS)


def _rows(tables: dict[str, pl.DataFrame]) -> dict[str, list]:
    out = {}
    for name in ("edges", "runs", "run_sessions", "artifacts", "inference_diagnostics"):
        df = tables[name].drop("partition_id", strict=False)
        out[name] = sorted(df.rows(), key=repr)
    return out


def compare(frames: Frames, max_files: int) -> None:
    whole = _rows(infer(frames).tables())
    parts = partitions.components(keys(frames))
    # every file with rows has a key (its sessions' ids), so every row is in some partition
    assert set(frames.sessions["source_path"]) <= set(parts["source_path"])
    results = [partitions.infer_group(partitions._select(frames, g), g) for g in partitions.groups(parts, max_files)]
    grouped = _rows(partitions.concat(results))
    for name, rows in whole.items():
        assert grouped[name] == rows, name


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), max_files=st.integers(1, 6))
def test_passes_per_partition_group_equal_the_passes_over_everything(parsed, data, max_files):
    picked = data.draw(st.lists(st.sampled_from(range(len(parsed))), min_size=1, max_size=40, unique=True))
    compare(Frames.concat([parsed[i][1] for i in sorted(picked)]), max_files)


def test_every_scenario_whole_in_one_mix(parsed):
    """All files at once, each partition its own group: the script-mediated launches and the
    Windows launches are found (not only equal)."""
    frames = Frames.concat([f for _name, f in parsed])
    compare(frames, 1)
    edges = infer(frames).edges
    launchers = edges.filter(pl.col("kind") == "launch")["src_call_id"].to_list()
    assert launchers.count("toolu_01RaBash") == 1 and launchers.count("toolu_01RbBash") == 2  # relay
    assert launchers.count("toolu_01W1Bash") == 1 and launchers.count("toolu_01W3Bash") == 1  # windows, deduplicated
    named = edges.filter(pl.col("evidence").is_in(list(spawn.NAMED_BY_CALL["oh-my-opencode"][1].values())))
    # transcripts/: two children named by task results; omo-agents/: a sync call_omo_agent, a
    # delegate_task and a background launch named by its background_output
    assert named.height == 5
