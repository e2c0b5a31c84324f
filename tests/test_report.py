"""sessiongraph report: every number equals SQL over the store computed here, independently."""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import UTC, datetime

import pytest
from click.testing import CliRunner

from sessiongraph.cli import main
from sessiongraph.pricing import Prices, normalise_model
from sessiongraph.store import Store
from sessiongraph.views import report
from tests.conftest import SAMPLES

SINCE = datetime(2026, 1, 8, tzinfo=UTC)


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("report") / "s.duckdb"
    res = cli("ingest", SAMPLES, "--db", path, "--json")
    assert res.exit_code == 0, res.output
    return path


@pytest.fixture(scope="module")
def built(db):
    with Store(db, read_only=True) as store:
        return report.build(store), report.build(store, since=SINCE)


def q(db, sql, params=None):
    with Store(db, read_only=True) as store:
        return store.query(sql, params)


def costs_by_record(db, since=None):
    """Dollars per (day, harness, model) and per run, one usage record at a time."""
    prices = Prices.load()
    rows = q(
        db,
        """
        SELECT u.*, m.run_id, (SELECT any_value(harness) FROM sessions s WHERE s.session_id = u.session_id) AS harness,
               coalesce(u.ts, (SELECT min(started_at) FROM sessions s WHERE s.session_id = u.session_id)) AS req_at,
               strftime(timezone('UTC', coalesce(u.ts, (SELECT min(started_at) FROM sessions s
                        WHERE s.session_id = u.session_id))), '%Y-%m-%d') AS day
        FROM usage_dedup u JOIN run_sessions m USING (session_id) JOIN runs r USING (run_id)
        WHERE $1::TIMESTAMPTZ IS NULL OR r.ended_at IS NULL OR r.ended_at >= $1::TIMESTAMPTZ""",
        [since],
    )
    by_series, by_run, unpriced = defaultdict(float), defaultdict(float), defaultdict(int)
    for r in rows.iter_rows(named=True):
        key = (r["day"], r["harness"], normalise_model(r["model"]) or r["model"] or "(none)")
        if r["input_tokens"] is None:  # a Crush session's row: the harness's dollars, no token to price
            unpriced[key] += 0
            continue
        tokens = r["input_tokens"] + r["output_tokens"] + r["cache_read_tokens"] + r["cache_creation_tokens"]
        usd = prices.usd(
            r["model"],
            harness=r["harness"],
            when=r["req_at"],
            input_tokens=r["input_tokens"],
            output_tokens=r["output_tokens"],
            cache_read_tokens=r["cache_read_tokens"],
            cache_creation_5m_tokens=r["cache_creation_5m_tokens"],
            cache_creation_1h_tokens=r["cache_creation_1h_tokens"],
            summed=r["scope"] == "session",  # a session's totals: the base tier
        )
        if usd is None:
            unpriced[key] += tokens
        else:
            by_series[key] += usd
            by_run[r["run_id"]] += usd
    return by_series, by_run, unpriced


def test_runs_per_day(db, built):
    full, _ = built
    # Each sample run is active on the day it started; its sessions count on the day each started
    # (a session with no time, a workflow journal, is in no day's count).
    want = q(
        db,
        "WITH r AS (SELECT strftime(timezone('UTC', started_at), '%Y-%m-%d') AS d, count(*) AS n FROM runs "
        "           WHERE started_at IS NOT NULL GROUP BY d), "
        "t AS (SELECT session_id, min(started_at) AS started_at FROM sessions GROUP BY 1), "
        "s AS (SELECT strftime(timezone('UTC', t.started_at), '%Y-%m-%d') AS d, count(DISTINCT m.session_id) AS k "
        "      FROM run_sessions m JOIN t USING (session_id) WHERE t.started_at IS NOT NULL GROUP BY d) "
        "SELECT d, n, k FROM r JOIN s USING (d) ORDER BY d",
    )
    got = full.per_day.filter((full.per_day["runs"] > 0) & full.per_day["day"].is_not_null())
    assert [(str(d), n, s) for d, n, s in got.select("day", "runs", "sessions").iter_rows()] == list(want.iter_rows())
    assert full.runs.height == q(db, "SELECT count(*) FROM runs").item() > 20


def test_dollars_per_day_by_harness_and_model(db, built):
    full, _ = built
    want, _, unpriced = costs_by_record(db)
    priced = full.cost.filter(full.cost["usd"].is_not_null())
    got = {(str(d), h, m): u for d, h, m, u in priced.select("day", "harness", "model", "usd").iter_rows()}
    assert set(got) == set(want) and len(got) >= 10
    for key, usd in want.items():
        assert got[key] == pytest.approx(usd, abs=1e-5), key
    # unknown models are n/a with their tokens, never $0
    none = full.cost.filter(full.cost["usd"].is_null())
    assert {(str(d), h, m): t for d, h, m, t in none.select("day", "harness", "model", "tokens").iter_rows()} == dict(
        unpriced
    )
    assert ("2025-12-16", "codex", "gpt-5.5-mini") in unpriced


def test_most_expensive_runs(db, built):
    full, _ = built
    _, by_run, _ = costs_by_record(db)
    want = sorted(by_run.items(), key=lambda kv: (-kv[1], kv[0]))[: report.TOP_RUNS]
    got = full.top_runs.select("run_id", "usd").rows()
    assert [r for r, _ in got] == [r for r, _ in want]
    assert [u for _, u in got] == pytest.approx([u for _, u in want], abs=1e-5)
    assert (
        got[0][0]
        == q(db, "SELECT run_id FROM run_sessions WHERE session_id LIKE 'claude-code:b720e73d%' LIMIT 1").item()
    )


def test_subagent_and_launch_counts(db, built):
    full, _ = built
    want = q(
        db,
        """SELECT s.harness, count(*) AS sessions, count(*) FILTER (WHERE m.via = 'spawn') AS subagents,
                           count(*) FILTER (WHERE m.via = 'launch') AS launched
                    FROM run_sessions m JOIN (SELECT DISTINCT session_id, harness FROM sessions) s USING (session_id)
                    GROUP BY 1 ORDER BY 1""",
    )
    assert full.spawned.rows() == want.rows()
    assert int(full.spawned["subagents"].sum()) == q(db, "SELECT count(*) FROM run_sessions WHERE via = 'spawn'").item()
    assert int(full.spawned["launched"].sum()) == q(db, "SELECT count(*) FROM run_sessions WHERE via = 'launch'").item()


def test_tier_mix_of_all_edges(db, built):
    full, _ = built
    want = q(
        db,
        "SELECT kind, tier, count(*) FROM (SELECT kind, tier FROM edges UNION ALL SELECT kind, tier FROM lineage) "
        "GROUP BY ALL ORDER BY ALL",
    )
    assert full.tiers.rows() == want.rows()
    assert {"verified", "heuristic", "reported"} <= set(full.tiers["tier"])


def test_diagnostics_counts(db, built):
    full, _ = built
    ingest = dict(q(db, "SELECT code, count(*) FROM diagnostics GROUP BY 1").rows())
    inference = dict(q(db, "SELECT pass || '.' || code, sum(count) FROM inference_diagnostics GROUP BY 1").rows())
    got = full.diagnostics
    assert dict(got.filter(got["source"] == "ingest").select("code", "count").rows()) == ingest
    assert dict(got.filter(got["source"] == "inference").select("code", "count").rows()) == inference


def test_since_keeps_runs_active_on_or_after_it(db, built):
    _, recent = built
    want = q(db, "SELECT run_id FROM runs WHERE ended_at >= $1 ORDER BY run_id", [SINCE])["run_id"].to_list()
    assert sorted(recent.runs["run_id"]) == want and 0 < len(want) < q(db, "SELECT count(*) FROM runs").item()
    _, by_run, _ = costs_by_record(db, SINCE)
    assert recent.cost["usd"].sum() == pytest.approx(sum(by_run.values()), abs=1e-5)
    members = q(db, "SELECT session_id FROM run_sessions WHERE list_contains($1, run_id)", [want])["session_id"]
    edges = q(
        db,
        "SELECT count(*) FROM all_edges WHERE list_contains($1, run_id) OR list_contains($2, src) "
        "OR list_contains($2, dst)",
        [want, members.to_list()],
    ).item()
    assert int(recent.tiers["edges"].sum()) == edges


def test_text_report_through_the_cli(db):
    res = cli("report", "--db", db)
    assert res.exit_code == 0, res.output
    out = res.output
    assert out.startswith("sessiongraph report\n")
    assert re.search(rf"^\s+runs: {q(db, 'SELECT count(*) FROM runs').item()}$", out, re.M)
    assert re.search(r"^2025-12-16\s+codex\s+gpt-5\.5-mini\s+17320\s+n/a$", out, re.M)  # unknown model: n/a
    # which source priced which model; the unknown one is named with its requests
    assert re.search(r"^\(no price\)\s+gpt-5\.5-mini\s+3\s+0\s+30540\s+n/a$", out, re.M)
    # a Crush session: no tokens to price, no request, one session total; its own dollars apart
    assert re.search(r"^\(no tokens\)\s+claude-sonnet-4\s+0\s+1\s+0\s+n/a$", out, re.M)
    assert re.search(r"^2025-08-06\s+crush\s+claude-3-5-haiku\s+0\s+n/a\s+\$0\.0013$", out, re.M)
    assert re.search(r"^\s+reported: \$0\.02 \(the harnesses' own, not in dollars\)$", out, re.M)
    assert re.search(r"^genai-prices \S+\s+gpt-5\.5\s+openai:gpt-5\.5\s+", out, re.M)
    for title in (
        "Runs and dollars per day (UTC)",
        "Dollars per day by harness and model",
        "Most expensive runs",
        "Subagents and launched sessions by harness",
        "Tier mix of all edges",
        "Diagnostics",
    ):
        assert f"\n{title}" in out


def test_html_report_is_self_contained_with_a_chart(db, built, tmp_path):
    full, _ = built
    out = tmp_path / "report.html"
    res = cli("report", "--db", db, "--format", "html", "--out", out)
    assert res.exit_code == 0, res.output
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!doctype html>") and "<script" not in page
    assert "http://" not in page and "https://" not in page and "script-src 'none'" in page.replace("&#x27;", "'")
    charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    assert len(charts) == 2
    priced = full.cost.filter(full.cost["usd"] > 0)
    assert len(re.findall(r'<rect class="m-\d+( hatch| back| dots)?"', charts[1])) == priced.height
    # one bar per day with runs; the no-time row (day null) is in the table, not on the time axis
    days = full.per_day.filter((full.per_day["runs"] > 0) & full.per_day["day"].is_not_null())
    assert len(re.findall(r'<rect class="hc-1"', charts[0])) == days.height
    assert 'id="unpriced"' in page and "gpt-5.5-mini" in page
    assert (
        len(re.findall(r"<tr>", page.split('id="top-runs"')[1].split("<tbody>")[1].split("</tbody>")[0]))
        == report.TOP_RUNS
    )


def test_report_errors(db, tmp_path):
    res = cli("report", "--db", db, "--since", "yesterday")
    assert res.exit_code == 2 and "is not a date" in res.output
    res = cli("report", "--db", db, "--out", tmp_path / "no" / "such" / "dir.txt")
    assert res.exit_code == 1 and res.output.startswith("Error: cannot write")
    res = cli("report", "--db", tmp_path / "missing.duckdb")
    assert res.exit_code == 1 and res.output.startswith("Error: no store")


def test_an_empty_store_reports_zeros_and_none(tmp_path):
    db = tmp_path / "empty.duckdb"
    Store(db).close()
    res = cli("report", "--db", db, "--since", "2026-01-01")
    assert res.exit_code == 0, res.output
    assert res.output.startswith("sessiongraph report since 2026-01-01 00:00\n")
    # eight sections, then commits and branches
    assert re.search(r"^\s+runs: 0$", res.output, re.M) and res.output.count("(none)") == 10
    res = cli("report", "--db", db, "--format", "html")
    assert res.exit_code == 0 and "No data." in res.output


def test_since_covers_only_the_window(db):
    """A --since inside a run: only its requests from then on, and no day before it."""
    since = datetime(2026, 1, 20, 16, 40, 20, tzinfo=UTC)  # the orbit run: 16:40:00 -> 16:40:48
    with Store(db, read_only=True) as store:
        r = report.build(store, since=since)
    assert r.per_day.height and all(d >= since.date() for d in r.per_day["day"] if d is not None)
    inside = q(db, "SELECT usd_priced(usd) AS usd FROM usage_costs WHERE ts >= $1", [since])["usd"][0]
    whole = q(db, "SELECT usd_priced(usd) AS usd FROM usage_costs WHERE ts >= $1::DATE", [since])["usd"][0]
    assert r.total["usd"] == inside < whole
    assert r.per_day["usd"].sum() == pytest.approx(inside, abs=1e-4)  # each day rounded to the microdollar
    assert r.cost["usd"].drop_nulls().sum() == pytest.approx(inside, abs=1e-4)


def test_every_model_has_a_colour_of_its_own(db, tmp_path):
    out = tmp_path / "report.html"
    assert cli("report", "--db", db, "--format", "html", "--out", out).exit_code == 0
    page = out.read_text(encoding="utf-8")
    legend = re.findall(r'<li data-series="[^"]*"><span class="chip ([^"]+)">', page)
    assert len(legend) > len(report.PALETTE)  # the samples have more models than colours
    assert len(set(legend)) == len(legend)  # no two models look alike
    assert all(re.fullmatch(r"m-\d( hatch| back| dots)?", c) for c in legend)
    assert all(f'id="{s}-{i}"' in page for s in report.STYLES[1:] for i in range(len(report.PALETTE)))


def test_run_ids_link_to_their_pages(db, built, tmp_path):
    full, _ = built
    out = tmp_path / "report.html"
    assert cli("report", "--db", db, "--format", "html", "--out", out).exit_code == 0
    page = out.read_text(encoding="utf-8")
    for rid in full.top_runs["run_id"]:
        href = report.run_page_name(rid)
        assert f'<a href="{href}">{rid}</a>' in page
        assert f"<code>{rid}</code>" in (tmp_path / href).read_text(encoding="utf-8")


def test_commits_and_dollars_per_branch(db, built):
    # sample_logs/scenarios/commits: the only sample sessions that commit or open a PR
    r, windowed = built
    _, by_run, _ = costs_by_record(db)
    cc, cx = "run_05d57459e617bc4a", "run_a693128f71d49205"
    got = r.commits.select("run_id", "kind", "evidence", "branch", "commit_hash", "pr_number").rows()
    assert got == [
        (cx, "commit", "git_commit_output", "main", "9c8b7a6", None),
        (cc, "pr", "pr_link", "feat/x", None, 17),
        (cc, "pr", "gh_pr_create_output", "feat/x", None, 17),
        (cc, "commit", "git_commit_output", "feat/x", "1a2b3c4", None),
    ]
    assert dict(zip(r.commits["run_id"], r.commits["usd"], strict=True)) == pytest.approx(
        {cc: by_run[cc], cx: by_run[cx]}
    )
    assert r.branches.select("branch", "runs", "commits", "prs").rows() == [("feat/x", 1, 1, 1), ("main", 1, 1, 0)]
    assert r.branches["usd"].to_list() == pytest.approx([by_run[cc], by_run[cx]])
    assert windowed.commits.height == 0  # both runs ended before SINCE
    out = report.text(r)
    assert "Commits and PRs made (2 commits, 1 PRs; usd: the run's)" in out and "9c8b7a6" in out
    assert "Dollars per branch" in out and "feat/x" in out
