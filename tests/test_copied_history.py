"""Copied history and multi-agent logs (issue 13): a forked Codex child's replay of its parent, a
Claude plan hand-off's copy of the old transcript, Codex 0.144 sub-agents, guardian and review
helpers. Checked against sample_logs/scenarios/copied-history/expected.json (the generator's own
bookkeeping of what it wrote) and against the real Codex 0.114 family in ../shared/real-families
(expectations computed here from the raw files, not from the adapter)."""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest

from sessiongraph.dataset.parquet import export_parquet
from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.pricing import Prices
from sessiongraph.store import Store
from sessiongraph.views import report
from tests.conftest import ROOT, SAMPLES

SCENARIO = SAMPLES / "scenarios/copied-history"
EXPECTED = json.loads((SCENARIO / "expected.json").read_text())
FAMILY = ROOT.parent / "shared" / "real-families" / "codex-multi-agent-0.114"
TOKENS = ["input_tokens", "cache_read_tokens", "output_tokens"]


@pytest.fixture(scope="module")
def db(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("copied") / "s.duckdb"
    ingest([str(SCENARIO)], db=str(path), workers=1)
    return path


@pytest.fixture(scope="module")
def store(db):
    with Store(db, read_only=True) as s:
        yield s


def sid(name: str) -> str:
    return EXPECTED["sessions"][name]


@pytest.mark.parametrize("name", sorted(EXPECTED["per_session"]))
def test_each_session_counts_only_what_it_did(store, name):
    exp = EXPECTED["per_session"][name]
    usage = store.query("SELECT * FROM usage WHERE session_id = $1", [sid(name)])
    assert usage.height == exp["usage"]["rows"]
    for col in TOKENS:
        assert usage[col].sum() == exp["usage"][col], col
    if "reasoning_tokens" in exp["usage"]:
        assert usage["reasoning_tokens"].sum() == exp["usage"]["reasoning_tokens"]
    if "cache_creation_tokens" in exp["usage"]:
        assert usage["cache_creation_tokens"].sum() == exp["usage"]["cache_creation_tokens"]
    calls = store.query("SELECT call_id, kind FROM calls WHERE session_id = $1", [sid(name)])
    assert sorted(calls["call_id"]) == exp["calls"]
    assert sorted(calls.filter(pl.col("kind") == "spawn")["call_id"]) == exp["spawn_calls"]
    if "writes" in exp:
        writes = store.query(
            "SELECT DISTINCT path FROM file_events WHERE session_id = $1 AND op = 'write'", [sid(name)]
        )
        assert sorted(writes["path"]) == exp["writes"]
    if "n_copied" in exp:
        assert store.query("SELECT n_copied FROM sessions WHERE session_id = $1", [sid(name)]).item() == exp["n_copied"]


def test_copies_are_counted_once_per_file(store):
    copied = {n: e["n_copied"] for n, e in EXPECTED["per_session"].items() if e.get("n_copied")}
    rows = store.query(
        "SELECT s.session_id, d.detail FROM diagnostics d JOIN sessions s USING (source_path)"
        " WHERE d.code = 'foreign_record'"
    ).rows()
    assert sorted(r[0] for r in rows) == sorted(sid(n) for n in copied)
    for session_id, detail in rows:
        name = next(n for n in copied if sid(n) == session_id)
        assert detail.startswith(f"{copied[name]} records")
    assert store.query("SELECT count(*) FROM diagnostics WHERE code = 'unknown_record_type'").item() == 0


def test_edges_carry_their_calls_and_point_forward(store):
    edges = store.query("SELECT kind, src, dst, tier, src_call_id FROM all_edges")
    got = {(r["kind"], r["src"], r["dst"], r["tier"]) for r in edges.iter_rows(named=True)}
    want = {(e["kind"], e["src"], e["dst"], e["tier"]) for e in EXPECTED["edges"]}
    assert got == want
    for e in EXPECTED["edges"]:
        if "src_call_id" in e:
            row = edges.filter((pl.col("kind") == e["kind"]) & (pl.col("dst") == e["dst"]))
            assert row["src_call_id"].to_list() == [e["src_call_id"]]


def test_no_dangling_spawn_or_orphan(store):
    diags = store.query("SELECT code, session_id FROM inference_diagnostics").rows()
    assert [d for d in diags if d[0] in ("dangling_spawn", "orphan_child")] == []


def test_helpers_join_the_run_they_served(store):
    members = store.query(
        "SELECT r.root_session_id, m.session_id, m.via, m.role, m.role_tier"
        " FROM run_sessions m JOIN runs r USING (run_id)"
    )
    for root, exp in EXPECTED["runs"].items():
        run = members.filter(pl.col("root_session_id") == root)
        assert sorted(run["session_id"]) == exp["members"]
        for helper, h in exp["helpers"].items():
            row = run.filter(pl.col("session_id") == helper).row(0, named=True)
            assert (row["via"], row["role"], row["role_tier"]) == (h["via"], h["role"], h["tie"])


def test_agent_path_names_the_child(store):
    for session_id, agent_type in EXPECTED["agent_types"].items():
        assert store.query("SELECT agent_type FROM sessions WHERE session_id = $1", [session_id]).item() == agent_type


MODELS = {n: "claude-opus-4-5-20251101" for n in ("O", "O_sub", "N")} | {n: "gemini-2.5-pro" for n in "SMX"}


def _expected_usd(names: list[str], prices: Prices) -> float:
    """Each session's own tokens (expected.json, copies excluded) at the scenario day's list prices."""
    day = datetime(2026, 2, 3, 12, tzinfo=UTC)  # every record of the scenario is on this day
    total = 0.0
    for name in names:
        u = EXPECTED["per_session"][name]["usage"]
        harness = EXPECTED["sessions"][name].split(":")[0]
        total += prices.usd(
            MODELS.get(name, "gpt-5.2-codex"),
            harness=harness,
            when=day,
            input_tokens=u["input_tokens"],
            output_tokens=u["output_tokens"],
            cache_read_tokens=u["cache_read_tokens"],
            cache_creation_5m_tokens=u.get("cache_creation_tokens", 0),
        )
    return total


def test_run_dollars_agree_everywhere(db, store, tmp_path):
    """A run's dollars are the sum of what each of its sessions spent, in the report, the OCP
    documents and the dataset alike (nothing copied is counted twice)."""
    prices = Prices.load()
    by_root = {sid(n): n for n in EXPECTED["sessions"]}
    runs = store.query(
        "SELECT r.run_id, r.root_session_id, m.session_id FROM runs r JOIN run_sessions m USING (run_id)"
    )
    want: dict[str, float] = {}
    for run_id, group in runs.group_by("run_id"):
        want[run_id[0]] = _expected_usd([by_root[s] for s in group["session_id"]], prices)
    assert len(want) == 5
    rep = dict(report.build(store).runs.select("run_id", "usd").iter_rows())
    summary = export_ocp(tmp_path / "ocp", db=str(db))
    ocp = {}
    for f in summary.files:
        doc = json.loads(Path(f).read_text())
        ocp[doc["run"]["id"]] = sum(a["cost"]["usd"] for a in doc["attempts"] if "cost" in a)
    export_parquet(tmp_path / "ds", db=str(db))
    features = pl.read_parquet(tmp_path / "ds" / "run_features" / "**" / "*.parquet", hive_partitioning=False)
    ds = dict(features.select("run_id", "usd").iter_rows())
    for run_id, usd in want.items():
        assert rep[run_id] == pytest.approx(usd, abs=1e-5), run_id
        assert ocp[run_id] == pytest.approx(usd, abs=1e-5), run_id
        assert ds[run_id] == pytest.approx(usd, abs=1e-5), run_id


# ---- the real Codex 0.114 family ----------------------------------------------------------------

MARKER = "You are the newly spawned agent"


def _records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _own_spend(recs: list[dict]) -> tuple[int, int, int, int]:
    """What a child spent itself: its last cumulative count minus the last one replayed before
    the synthetic spawn output that closes the replay (text the adapter never reads)."""
    end = next(i for i, r in enumerate(recs) if MARKER in str(r["payload"].get("output", "")))
    counts = [
        (i, r["payload"]["info"]["total_token_usage"])
        for i, r in enumerate(recs)
        if r["payload"].get("type") == "token_count" and r["payload"].get("info")
    ]
    base = [t for i, t in counts if i < end][-1]
    last = counts[-1][1]

    def parts(t):
        return (t["input_tokens"] - t["cached_input_tokens"], t["cached_input_tokens"], t["output_tokens"])

    return tuple(a - b for a, b in zip(parts(last), parts(base), strict=True))


@pytest.fixture(scope="module")
def family(tmp_path_factory):
    if not FAMILY.is_dir():
        pytest.skip("../shared/real-families is absent")
    root = tmp_path_factory.mktemp("family")
    shutil.copytree(FAMILY, root / "f")
    db = root / "s.duckdb"
    ingest([str(root / "f")], db=str(db), workers=1)
    with Store(db, read_only=True) as s:
        yield root / "f", s


def test_real_forked_children_count_only_their_own_spend(family):
    folder, store = family
    children = [p for p in sorted(folder.glob("rollout-*.jsonl")) if '"forked_from_id"' in p.read_text()[:4000]]
    assert len(children) == 3
    for path in children:
        recs = _records(path)
        session_id = "codex:" + recs[0]["payload"]["id"]
        got = store.query(
            f"SELECT {', '.join(f'sum({c})' for c in TOKENS)} FROM usage WHERE session_id = $1", [session_id]
        ).row(0)
        assert got == _own_spend(recs), path.name
        # The replayed spawn_agent calls are the parent's: none is the child's.
        spawns = store.query("SELECT count(*) FROM calls WHERE session_id = $1 AND kind = 'spawn'", [session_id])
        assert spawns.item() == 0


def test_real_family_spawn_edges_carry_their_calls(family):
    folder, store = family
    parent_path = next(p for p in folder.glob("rollout-*.jsonl") if '"forked_from_id"' not in p.read_text()[:4000])
    named = {}  # child id -> the spawn call whose output names it, read from the parent's file
    for r in _records(parent_path):
        p = r["payload"]
        if p.get("type") == "function_call_output" and str(p.get("output", "")).startswith('{"agent_id"'):
            named[json.loads(p["output"])["agent_id"]] = p["call_id"]
    edges = store.query("SELECT dst, src_call_id, tier FROM all_edges WHERE kind = 'spawn'").rows()
    assert sorted(edges) == sorted((f"codex:{c}", call, "verified") for c, call in named.items())
    dangling = store.query("SELECT count(*) FROM inference_diagnostics WHERE code = 'dangling_spawn'").item()
    assert dangling == 0


def test_pi_fork_copies_are_counted_on_the_session():
    """sample_logs/pi/README.md: fork B starts with 8 copies of A's entries, C with 3."""
    from sessiongraph.ingest import pi

    sessions = SAMPLES / "pi" / "agent" / "sessions"
    b = next(sessions.glob("--srv-app--/2025-12-10T08-30-00-000Z_*.jsonl"))
    c = next(sessions.glob("--Users-mara-code-atlas-web--/*.jsonl"))
    assert pi.parse(str(b)).sessions["n_copied"].to_list() == [8]
    assert pi.parse(str(c)).sessions["n_copied"].to_list() == [3]


def test_gemini_rewind_keeps_spent_messages(tmp_path):
    from sessiongraph.ingest import gemini

    chat = next(SCENARIO.glob("gemini-cli/tmp/*/chats/session-*12-00*.jsonl"))
    lines = chat.read_text().splitlines()
    first = json.loads(lines[1])["id"]
    copy = tmp_path / chat.name
    copy.write_text("\n".join([*lines, json.dumps({"$rewindTo": first})]) + "\n")
    frames = gemini.parse(str(copy))
    assert frames.diagnostics.height == 0
    assert frames.usage.height == EXPECTED["per_session"]["S"]["usage"]["rows"]
