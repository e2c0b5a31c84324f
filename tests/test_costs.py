"""Dollars in the store (sessiongraph/costs.py, sql/views/costs.sql): every usage row priced at
ingest, the cost views, re-pricing when the price set changes, and every sink agreeing to the cent."""

from __future__ import annotations

import json
import shutil
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner
from genai_prices import Usage, calc_price

from sessiongraph import costs
from sessiongraph.cli import main
from sessiongraph.dataset.parquet import export_parquet, read_table
from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.store import Store
from sessiongraph.views import report
from tests.conftest import SAMPLES

# A Claude Code run that launched Codex sessions, with 1-hour cache writes (sample_logs).
RUN = "run_1bc098617790fdf8"
PROVIDER = {"claude-code": "anthropic", "codex": "openai"}
HEADER = (
    "pattern,provider,input_usd_per_mtok,output_usd_per_mtok,cache_read_usd_per_mtok,"
    "cache_write_5m_usd_per_mtok,cache_write_1h_usd_per_mtok,as_of,source\n"
)


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("costs") / "s.duckdb"
    res = cli("ingest", SAMPLES, "--db", path, "--json")
    assert res.exit_code == 0, res.output
    return path


def q(db, sql, params=None) -> pl.DataFrame:
    with Store(db, read_only=True) as store:
        return store.query(sql, params)


def test_every_usage_row_is_priced_at_ingest(db):
    rows = q(db, "SELECT * FROM usage")
    assert rows.height > 200
    assert rows["priced_with"].unique().to_list() == [costs.library()]
    priced = rows.filter(pl.col("usd").is_not_null())
    assert priced.height > 0.9 * rows.height
    assert set(priced["price_source"]) <= {costs.library(), "free"}
    # unknown models stay unpriced, never $0: the Codex sample's gpt-5.5-mini and the Qwen Code
    # sample's qwen3-coder-plus (sample_logs/qwen-code, issue 29), which genai-prices does not list,
    # and Kimi CLI's rows, whose logs name no model (null)
    counted = rows.filter(pl.col("input_tokens").is_not_null())
    unpriced = set(counted.filter(pl.col("usd").is_null())["model"].unique())
    assert unpriced == {"gpt-5.5-mini", "qwen3-coder-plus", None}
    assert rows.filter(pl.col("model").is_null())["session_id"].str.starts_with("kimi-cli:").all()
    # a row with no token count (a Crush session: only Crush's own dollars) has no price of ours
    tokenless = rows.filter(pl.col("input_tokens").is_null())
    assert tokenless["session_id"].str.starts_with("crush:").all() and tokenless.height == 2
    assert tokenless.select("usd", "price_source", "priced_as").unique().rows() == [(None, None, None)]
    assert q(db, "SELECT value FROM sessiongraph_meta WHERE key = 'prices'").item() == costs.library()


def test_a_run_costs_what_the_price_library_says(db):
    """run_costs of one run (its root, the Codex sessions it launched) against the genai-prices
    package's own calc_price, one request at a time, summed in Decimal."""
    rows = q(
        db,
        """
        SELECT u.*, s.harness, coalesce(u.ts, s.started_at) AS at
        FROM usage_dedup u JOIN run_sessions m USING (session_id)
        JOIN (SELECT session_id, any_value(harness) AS harness, min(started_at) AS started_at
              FROM sessions GROUP BY 1) s USING (session_id)
        WHERE m.run_id = $1""",
        [RUN],
    )
    assert set(rows["harness"]) == {"claude-code", "codex"}
    assert rows["cache_creation_1h_tokens"].sum() > 0
    want = Decimal(0)
    for r in rows.iter_rows(named=True):
        writes = r["cache_creation_5m_tokens"] + r["cache_creation_1h_tokens"]
        usage = Usage(
            input_tokens=r["input_tokens"] + r["cache_read_tokens"] + writes,  # the package's input: all of it
            cache_read_tokens=r["cache_read_tokens"],
            cache_write_tokens=writes,
            cache_write_5m_tokens=r["cache_creation_5m_tokens"],
            cache_write_1h_tokens=r["cache_creation_1h_tokens"],
            output_tokens=r["output_tokens"],
        )
        price = calc_price(usage, r["model"], provider_id=PROVIDER[r["harness"]], genai_request_timestamp=r["at"])
        want += price.total_price
    got = q(db, "SELECT usd, requests FROM run_costs WHERE run_id = $1", [RUN]).row(0, named=True)
    assert got["requests"] == rows.height
    # each request is stored in whole nanodollars and the sum rounded to the microdollar
    assert got["usd"] == pytest.approx(float(want), abs=1e-6)
    assert round(got["usd"], 2) == float(round(want, 2))
    assert got["usd"] > 0.2


def test_views_add_up(db):
    totals = q(
        db,
        """SELECT (SELECT usd_priced(usd) FROM usage_costs) AS requests,
                  (SELECT sum(usd_priced) FROM session_costs) AS sessions,
                  (SELECT sum(usd_priced) FROM run_costs) AS runs,
                  (SELECT sum(usd_priced) FROM model_costs) AS models,
                  (SELECT sum(usd_priced) FROM daily_costs) AS days""",
    ).row(0, named=True)
    assert totals["requests"] > 4
    for name, value in totals.items():
        assert value == pytest.approx(totals["requests"], abs=5e-5), name
    # one unpriced request makes the whole sum unknown, never a partial figure: the partly priced
    # runs (the Codex gpt-5.5 + gpt-5.5-mini ones) have usd null but a usd_priced part ...
    unpriced = q(db, "SELECT * FROM run_costs WHERE unpriced_requests > 0 AND unpriced_requests < requests")
    assert unpriced.height and unpriced["usd"].is_null().all() and (unpriced["usd_priced"] > 0).all()
    # ... and a run with nothing priced (the Qwen Code sample's qwen3-coder-plus run, the Kimi CLI
    # run with no model named) is null, priced part 0
    none = q(db, "SELECT * FROM run_costs WHERE requests > 0 AND unpriced_requests = requests")
    assert sorted(none["root_harness"]) == ["kimi-cli", "qwen-code"]
    assert none["usd"].is_null().all() and (none["usd_priced"] == 0).all()
    assert q(db, "SELECT count(*) FROM run_costs").item() == q(db, "SELECT count(*) FROM runs").item()
    assert q(db, "SELECT usd FROM model_costs WHERE model = 'gpt-5.5-mini'")["usd"].is_null().all()


def test_the_done_when_query(db):
    res = cli("query", "--db", db, "select run_id, usd from run_costs order by usd desc nulls last limit 5")
    assert res.exit_code == 0, res.output
    assert "run_d0b6b48bf1149ae1  0.542388" in res.output


def test_report_and_exports_agree_with_the_views_to_the_cent(db, tmp_path):
    runs = q(db, "SELECT run_id, usd, usd_priced FROM run_costs")
    want = {r: u for r, u in runs.select("run_id", "usd").iter_rows()}
    with Store(db, read_only=True) as store:
        r = report.build(store)
    top = r.top_runs
    assert top.height == report.TOP_RUNS
    for rid, usd, priced in top.select("run_id", "usd", "usd_priced").iter_rows():
        assert usd == want[rid] and priced == runs.filter(pl.col("run_id") == rid)["usd_priced"].item()
    assert r.total["usd"] == q(db, "SELECT usd_priced(usd) FROM usage_costs").item()

    export_parquet(tmp_path / "ds", db=str(db))
    features = pl.from_arrow(read_table(tmp_path / "ds", "run_features"))
    assert dict(features.select("run_id", "usd").iter_rows()) == want
    # A missing parent's placeholder (no attempts, nothing spent) is a dataset row but no session.
    sessions = pl.from_arrow(read_table(tmp_path / "ds", "sessions")).filter(pl.col("n_attempts") > 0)
    by_session = dict(q(db, "SELECT session_id, usd FROM session_overview").iter_rows())
    assert dict(sessions.select("session_id", "usd").iter_rows()) == by_session

    summary = export_ocp(tmp_path / "ocp", db=str(db))
    imported = set(q(db, "SELECT run_id FROM runs WHERE producer IS NOT NULL")["run_id"])  # exported as stated
    checked = 0
    for path in summary.files:
        doc = json.loads(Path(path).read_text())
        rid = doc["run"]["id"]
        if rid in imported:
            continue
        checked += 1
        attempt_costs = [a["cost"] for a in doc["attempts"] if a.get("cost")]
        if want[rid] is None:  # an attempt without usd: unpriced, or no tokens to price (Crush)
            assert any("usd" not in (a.get("cost") or {}) for a in doc["attempts"])
        else:
            assert round(sum(c.get("usd", 0) for c in attempt_costs), 2) == round(want[rid], 2), rid
    assert checked > 50


def test_an_edited_price_file_reprices_at_the_next_ingest(tmp_path):
    logs = tmp_path / "logs"
    shutil.copytree(SAMPLES / "codex", logs)
    table = tmp_path / "prices.csv"
    table.write_text(HEADER + "gpt-5.5-mini,openai,1000000,0,0,0,0,2026-01-01,test\n")
    db = str(tmp_path / "s.duckdb")
    first = ingest([str(logs)], db=db, workers=1, prices=str(table))
    assert first.prices["rows_priced"] > 0 and "prices.csv sha256:" in first.prices["priced_with"]
    mini = "SELECT usd, price_source FROM usage WHERE model = 'gpt-5.5-mini'"
    rows = q(db, mini)
    assert rows.height and set(rows["price_source"]) == {"prices.csv"} and rows["usd"].is_not_null().all()
    before = q(db, "SELECT sum(usd) FROM usage").item()

    # nothing changed: nothing re-priced
    again = ingest([str(logs)], db=db, workers=1)
    assert again.prices["rows_priced"] == 0
    # the remembered file edited: its models re-priced at the next ingest, without --prices
    table.write_text(HEADER + "gpt-5.5-mini,openai,2000000,0,0,0,0,2026-01-01,test\n")
    edited = ingest([str(logs)], db=db, workers=1)
    n_mini = rows.height
    assert edited.prices["rows_priced"] > n_mini and edited.prices["rows_changed"] == n_mini
    assert q(db, mini)["usd"].to_list() == [2 * u for u in rows["usd"].to_list()]
    assert q(db, "SELECT sum(usd) FROM usage").item() == before + rows["usd"].sum()

    # the file dropped: genai-prices alone, which has no price for gpt-5.5-mini
    res = cli("reprice", "--db", db, "--no-prices", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["priced_with"] == costs.library()
    assert q(db, mini)["usd"].is_null().all()


def test_another_library_version_reprices_and_is_never_silent(tmp_path):
    db = str(tmp_path / "s.duckdb")
    ingest([str(SAMPLES / "claude-code")], db=db, workers=1)
    right = q(db, "SELECT sum(usd) FROM usage").item()
    with Store(db) as store:  # as if priced by an older genai-prices, at other prices
        store.con.execute("UPDATE usage SET usd = usd * 2, priced_with = 'genai-prices 0.0.1'")
        store.con.execute("UPDATE sessiongraph_meta SET value = 'genai-prices 0.0.1' WHERE key = 'prices'")
    with Store(db, read_only=True) as store:
        assert "genai-prices 0.0.1" in (costs.stale(store) or "")
    res = cli("report", "--db", db)
    assert res.exit_code == 0 and "sessiongraph reprice" in res.stderr
    done = ingest([str(SAMPLES / "claude-code")], db=db, workers=1)  # no file changed
    assert done.prices["rows_changed"] == q(db, "SELECT count(*) FROM usage WHERE usd > 0").item()
    assert q(db, "SELECT sum(usd) FROM usage").item() == right
    with Store(db, read_only=True) as store:
        assert costs.stale(store) is None


# Runs of the samples whose harnesses keep only session totals (sample_logs: crush, factory-droid,
# copilot-cli), by their root sessions.
CRUSH_ROOT = "crush:3f0c6a2e-1b7d-4e58-9a41-0c2d5e8f7a10"
CRUSH_CHILD = "crush:msg-a2$$call-agent"
DROID_ROOT = "factory-droid:5b2e8c14-7a3f-4d69-b1e0-2c8f9a6d3e71"
COPILOT_ROOT = "copilot-cli:4f8a2c1d-6b3e-4d5a-9c7f-0e1d2b3a4c5e"  # two runs, each with its shutdown totals
COPILOT_FLAT = "copilot-cli:9b2e7d4c-1a3f-4e6b-8d5c-2f0a1b9c8d7e"  # two shutdowns and one run cut off


def test_session_totals_count_once_and_never_as_requests(db, tmp_path):
    """A harness's session totals are tokens and dollars once, no request, in every sink: views,
    report, OCP, Parquet. Figures by hand at the list prices (per million tokens): Claude Sonnet
    4.5 $3 in, $15 out, $0.30 cache read; the Droid parent 5120/812/2048 = $0.0281544, its child
    2300/140 = $0.009. Crush's cost is its own figure (no tokens of ours to price)."""
    runs = q(
        db,
        "SELECT root_session_id, requests, tokens, usd, usd_priced, unpriced_requests, reported_usd FROM run_costs"
        " WHERE list_contains($1, root_session_id) ORDER BY 1",
        [[CRUSH_ROOT, DROID_ROOT, COPILOT_ROOT, COPILOT_FLAT]],
    ).rows()
    assert runs == [
        (COPILOT_ROOT, 0, 18670, 0.024825, 0.024825, 0, None),
        (COPILOT_FLAT, 1, 7119, 0.008428, 0.008428, 0, None),  # the cut-off run's message: one request
        (CRUSH_ROOT, 0, 0, None, 0.0, 0, 0.0237),  # our dollars unknown, never $0; Crush's: 0.0224 + 0.0013
        (DROID_ROOT, 0, 10420, 0.037154, 0.037154, 0, None),  # $0.0371544
    ]
    # the one rule: session rows are in the dollars and tokens, not in the requests
    rule = q(
        db,
        "SELECT count(*) FILTER (WHERE scope = 'session') AS rows, n_requests(scope) AS requests FROM usage_costs"
        " WHERE harness IN ('crush', 'factory-droid')",
    ).row(0)
    assert rule == (4, 0)

    with Store(db, read_only=True) as store:
        r = report.build(store)
    sources = r.sources.filter(pl.col("model").is_in(["claude-sonnet-4", "claude-3-5-haiku"]))
    assert sources.select("source", "requests", "session_totals", "tokens", "usd").rows() == [
        ("(no tokens)", 0, 1, 0, None),
        ("(no tokens)", 0, 1, 0, None),
    ]
    assert r.total["reported"] == 0.0237
    crush_run = r.runs.filter(pl.col("root_session_id") == CRUSH_ROOT).select("usd", "reported_usd").rows()
    assert crush_run == [(None, 0.0237)]

    export_parquet(tmp_path / "ds", db=str(db))
    usage = pl.from_arrow(read_table(tmp_path / "ds", "usage"))
    assert set(usage["scope"]) == {"request", "session"}  # never null in the dataset
    crush = usage.filter(pl.col("session_id").str.starts_with("crush:")).sort("session_id")
    assert crush.select("session_id", "scope", "input_tokens", "usd", "reported_usd").rows() == [
        (CRUSH_ROOT, "session", None, None, 0.0224),
        (CRUSH_CHILD, "session", None, None, 0.0013),
    ]
    attempts = pl.from_arrow(read_table(tmp_path / "ds", "attempts"))
    droid = attempts.filter(pl.col("session_id").str.starts_with("factory-droid:")).sort("session_id")
    assert droid.select("session_id", "requests", "input_tokens", "usd").rows() == [
        (DROID_ROOT, 0, 5120, 0.028154),
        ("factory-droid:9d4a1f7e-3c2b-4e85-a6d0-7b1e5f9c2a48", 0, 2300, 0.009),
    ]

    summary = export_ocp(tmp_path / "ocp", db=str(db))
    docs = [json.loads(Path(p).read_text()) for p in summary.files]
    attempts_of: dict[str, list[dict]] = {}
    for d in docs:
        for a in d["attempts"]:
            attempts_of.setdefault(a.get("session"), []).append(a)
    [parent] = attempts_of[DROID_ROOT.split(":", 1)[1]]
    assert parent["cost"] == {
        "input_tokens": 5120,
        "cached_input_tokens": 2048,
        "cache_creation_tokens": 0,
        "cache_creation_5m_tokens": 0,
        "cache_creation_1h_tokens": 0,
        "output_tokens": 812,
        "reasoning_tokens": 0,
        "usd": 0.028154,
        "tariff": parent["cost"]["tariff"],
        "basis": "measured",
    }  # no "requests": a session's totals say how much, not in how many requests
    [crush_main] = attempts_of[CRUSH_ROOT.split(":", 1)[1]]
    assert "cost" not in crush_main  # no token counted, no dollar of ours
    assert crush_main["ext"]["dev.sessiongraph.cost"] == {"reported_usd": 0.0224, "source": "the harness's own figure"}
    # the flat Copilot CLI log: two runs with shutdown totals (no count), one cut off (its message)
    flat = attempts_of[COPILOT_FLAT.split(":", 1)[1]]
    assert [a["cost"].get("requests") for a in flat] == [None, None, 1]
