"""`sessions` and `runs`: filters, sorts, limits, costs, and ids that are never cut."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.store import Store
from tests.conftest import SAMPLES

ORBIT = "claude-code:b720e73d-763d-4c3c-8ff8-264d88d63693"
LONG = f"{ORBIT}/aba3165e31922a567"  # 66 characters: a table used to cut it at 60


def cli(*args):
    res = CliRunner().invoke(main, [str(a) for a in args])
    assert res.exit_code == 0, res.output
    return res.output


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("listing") / "s.duckdb"
    cli("ingest", SAMPLES, "--db", path, "--json")
    return path


def rows(db, kind, *args):
    return json.loads(cli(kind, "--db", db, "--format", "json", *args))


def q(db, sql):
    with Store(db, read_only=True) as store:
        return store.query(sql)


def test_sessions_show_cost_cwd_and_subagents(db):
    got = {r["session_id"]: r for r in rows(db, "sessions")}
    assert len(got) == q(db, "SELECT count(*) AS n FROM session_overview")["n"][0]
    orbit = got[ORBIT]
    assert orbit["cwd"] == "/home/dev/projects/orbit-cli" and orbit["subagents"] == 3
    assert orbit["usd"] == q(db, f"SELECT usd FROM session_costs WHERE session_id = '{ORBIT}'")["usd"][0]
    assert orbit["run_id"] == "run_d0b6b48bf1149ae1"


def test_runs_show_cost_cwd_and_subagents(db):
    got = {r["run_id"]: r for r in rows(db, "runs")}
    want = dict(q(db, "SELECT run_id, usd FROM run_costs").iter_rows())
    assert {k: r["usd"] for k, r in got.items()} == want
    orbit = got["run_d0b6b48bf1149ae1"]
    assert (orbit["subagents"], orbit["launched"], orbit["cwd"]) == (4, 1, "/home/dev/projects/orbit-cli")


@pytest.mark.parametrize("kind", ["sessions", "runs"])
def test_filters(db, kind):
    everything = rows(db, kind)
    harness = "harness" if kind == "sessions" else "root_harness"
    codex = rows(db, kind, "--harness", "codex")
    assert codex and all(r[harness] == "codex" for r in codex)
    assert len(codex) == sum(r[harness] == "codex" for r in everything)
    both = rows(db, kind, "--harness", "codex", "--harness", "pi")
    assert {r[harness] for r in both} == {"codex", "pi"}

    since, until = datetime(2026, 1, 5, tzinfo=UTC), datetime(2026, 1, 21, tzinfo=UTC)
    window = rows(db, kind, "--since", "2026-01-05", "--until", "2026-01-21")

    def t(v):
        return datetime.fromisoformat(v) if v else None

    # A session with no time at all (a workflow journal records none) is in no window.
    timed = [r for r in everything if r["started_at"]]
    want = [r for r in timed if (t(r["ended_at"]) or t(r["started_at"])) >= since and t(r["started_at"]) <= until]
    assert 0 < len(window) == len(want) < len(everything)

    under = rows(db, kind, "--cwd", "/home/dev/projects/orbit-cli")
    assert under and all(r["cwd"] == "/home/dev/projects/orbit-cli" for r in under)
    assert rows(db, kind, "--cwd", "/home/dev/projects/orbit") == []  # a path, not a prefix of a name
    named = rows(db, kind, "--cwd", "orbit")
    assert len(named) == len(under)


@pytest.mark.parametrize("kind", ["sessions", "runs"])
def test_sorts_and_limit(db, kind):
    by_cost = rows(db, kind, "--sort", "cost")
    usd = [r["usd"] for r in by_cost if r["usd"] is not None]
    assert usd == sorted(usd, reverse=True) and by_cost[-1]["usd"] is None  # unpriced last
    by_tokens = [r["tokens"] for r in rows(db, kind, "--sort", "tokens")]
    assert by_tokens == sorted(by_tokens, key=lambda v: -(v or 0))
    size = "subagents" if kind == "sessions" else "n_sessions"
    by_size = [r[size] for r in rows(db, kind, "--sort", "sessions")]
    assert by_size == sorted(by_size, reverse=True) and by_size[0] > 1
    starts = [r["started_at"] for r in rows(db, kind) if r["started_at"]]
    assert starts == sorted(starts)
    top = rows(db, kind, "--sort", "cost", "--limit", "3")
    assert top == by_cost[:3]


def test_ids_are_never_cut(db):
    table = cli("sessions", "--db", db, "--cwd", "orbit")
    assert LONG in table and "…" not in table.split("\n", 2)[2].split("  ")[0]
    for line in table.splitlines()[2:-1]:
        assert line.split()[0].startswith("claude-code:") and not line.split()[0].endswith("…")
    text = cli("sessions", "--db", db, "--format", "csv", "--cwd", "orbit")
    assert LONG in [r["session_id"] for r in csv.DictReader(io.StringIO(text))]
    lines = cli("sessions", "--db", db, "--format", "jsonl", "--cwd", "orbit").splitlines()
    assert LONG in [json.loads(x)["session_id"] for x in lines]
    wide = cli("runs", "--db", db, "--wide")
    assert "…" not in wide
