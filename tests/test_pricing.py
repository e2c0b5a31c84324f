"""Dollars: genai-prices lookups by label and harness, per-request pricing at the request's date,
free placeholders, unknown models, cache-split repair, and --prices override files.

Expected dollars are worked out here by hand from the numbers genai-prices publishes (read from the
installed package's data, not through sessiongraph's pricing code).
"""

from __future__ import annotations

import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest
from genai_prices import Usage, calc_price
from genai_prices.data import providers
from hypothesis import given, settings
from hypothesis import strategies as st

from sessiongraph.dataset import tables as dataset
from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest.frames import split_cache_writes
from sessiongraph.ocp.files import export_ocp
from sessiongraph.pipeline import ingest
from sessiongraph.pricing import COLUMNS, FREE, Prices, normalise_model
from sessiongraph.store import Store
from sessiongraph.views.report import build as build_report
from tests.conftest import SAMPLES
from tests.test_ocp import _assert_clean, validate

HEADER = ",".join(COLUMNS)


@pytest.fixture(scope="module")
def prices() -> Prices:
    return Prices.load()


def published(provider: str, model: str, day: date | None = None) -> dict[str, Decimal]:
    """USD per million tokens as the package's data lists them, for a request on ``day``."""
    info = next(m for p in providers if p.id == provider for m in p.models if m.id == model)
    price = info.prices
    if isinstance(price, list):  # dated prices: the last one started on or before the day (peak hours aside)
        dated = [c for c in price if c.constraint is None or hasattr(c.constraint, "start_date")]
        price = [c.prices for c in dated if c.constraint is None or c.constraint.start_date <= day][-1]
    out = {}
    for key in ("input_mtok", "output_mtok", "cache_read_mtok", "cache_write_mtok", "cache_write_1h_mtok"):
        value = getattr(price, key, None)
        out[key] = getattr(value, "base", value)  # a long-context tiered price: its base rate
    return out


# label as logged, harness -> the package's "provider:model" that prices it (None: unknown)
LABELS = [
    ("claude-opus-4-5-20251101", "claude-code", "anthropic:claude-opus-4-5"),
    ("claude-sonnet-4-5-20250929", "claude-code", "anthropic:claude-sonnet-4-5"),
    ("claude-sonnet-4-5-20250929[1m]", "claude-code", "anthropic:claude-sonnet-4-5"),
    ("claude-haiku-4-5-20251001", "pi", "anthropic:claude-haiku-4-5"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-code", "anthropic:claude-sonnet-4-5"),
    ("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-code", "anthropic:claude-haiku-4-5"),
    ("claude-opus-4-5@20251101", "claude-code", "anthropic:claude-opus-4-5"),
    ("anthropic/claude-sonnet-4.5", "opencode", "anthropic:claude-sonnet-4-5"),  # routed: provider/model
    ("openrouter/anthropic/claude-sonnet-4.5", "opencode", "openrouter:anthropic/claude-sonnet-4.5"),
    ("openrouter/z-ai/glm-5.1", "opencode", "openrouter:z-ai/glm-5.1"),
    ("claude-opus-5", "claude-code", "anthropic:claude-opus-5"),
    ("claude-sonnet-5", "claude-code", "anthropic:claude-sonnet-5"),
    ("claude-opus-4-8", "claude-code", "anthropic:claude-opus-4-8"),
    ("gpt-5.5", "codex", "openai:gpt-5.5"),
    ("gpt-5.6-sol", "codex", "openai:gpt-5.6-sol"),
    ("gpt-5.6-terra", "codex", "openai:gpt-5.6-terra"),
    ("gpt-5.4", "codex", "openai:gpt-5.4"),
    ("gpt-5.3-codex", "codex", "openai:gpt-5.3-codex"),
    ("gpt-5.1-codex-mini", "codex", "openai:gpt-5.1-codex-mini"),
    ("deepseek-v4-pro", "opencode", "deepseek:deepseek-v4-pro"),
    ("deepseek-v4-flash", "pi", "deepseek:deepseek-v4-flash"),
    ("glm-5.1", "opencode", "zhipuai:GLM-5.1"),
    ("gemini-2.5-pro", "gemini-cli", "google:gemini-2.5-pro"),
    ("models/gemini-2.5-flash", "gemini-cli", "google:gemini-2.5-flash"),
    # no provider sells these names: unknown, never someone else's price
    ("gpt-5.5-mini", "codex", None),
    ("gemini-3-pro", "gemini-cli", None),
    ("my-local-model", "pi", None),
    ("", "claude-code", None),
    (None, "codex", None),
]


@pytest.mark.parametrize(("label", "harness", "priced_as"), LABELS)
def test_labels_resolve_to_the_package_model(prices: Prices, label, harness, priced_as):
    r = prices.resolve(label, harness)
    assert r.priced_as == priced_as
    assert r.source == (prices.library if priced_as else None)
    assert prices.library.startswith("genai-prices 0.")


def test_harness_decides_when_the_label_does_not():
    assert normalise_model("claude-sonnet-4-5-20250929") == "claude-sonnet-4-5"
    assert normalise_model("<synthetic>") == ""


def test_one_request_by_hand(prices: Prices):
    # claude-sonnet-4-5 (3 in, 15 out, 0.30 read, 3.75 5m write, 6 1h write, per MTok):
    p = published("anthropic", "claude-sonnet-4-5")
    assert (p["input_mtok"], p["output_mtok"], p["cache_read_mtok"]) == (3, 15, Decimal("0.3"))
    assert (p["cache_write_mtok"], p["cache_write_1h_mtok"]) == (Decimal("3.75"), 6)
    # 1000*3 + 2000*15 + 10000*0.3 + 4000*3.75 + 3000*6 = 3000+30000+3000+15000+18000 = 69000 / 1e6
    got = prices.usd(
        "claude-sonnet-4-5-20250929",
        harness="claude-code",
        input_tokens=1000,
        output_tokens=2000,
        cache_read_tokens=10000,
        cache_creation_5m_tokens=4000,
        cache_creation_1h_tokens=3000,
    )
    assert got == 0.069
    # the same request with 250k more cache reads is in the long-context tier: every token at 2x
    # (6 in, 22.5 out, 0.6 read, 7.5 5m, 12 1h): 6000+45000+(260000*0.6=156000)+30000+36000 = 273000
    big = prices.usd(
        "claude-sonnet-4-5",
        input_tokens=1000,
        output_tokens=2000,
        cache_read_tokens=260_000,
        cache_creation_5m_tokens=4000,
        cache_creation_1h_tokens=3000,
    )
    assert big == 0.273


def test_a_request_before_a_price_change_pays_the_old_price(prices: Prices):
    # deepseek-v4-flash: 0.14 in / 0.28 out until 2026-08-16, 0.22 / 0.66 from 2026-08-17
    assert published("deepseek", "deepseek-v4-flash", date(2026, 8, 1))["input_mtok"] == Decimal("0.14")
    assert published("deepseek", "deepseek-v4-flash", date(2026, 8, 20))["input_mtok"] == Decimal("0.22")
    noon = dict(input_tokens=1_000_000, output_tokens=1_000_000)  # outside its peak hours
    assert prices.usd("deepseek-v4-flash", when=datetime(2026, 8, 1, 12, tzinfo=UTC), **noon) == 0.42
    assert prices.usd("deepseek-v4-flash", when=datetime(2026, 8, 20, 12, tzinfo=UTC), **noon) == 0.88
    # claude-opus-4-6 dropped its long-context surcharge on 2026-03-13: 300k input was 10/MTok, then 5
    assert prices.usd("claude-opus-4-6", when=datetime(2026, 2, 10, tzinfo=UTC), input_tokens=300_000) == 3.0
    assert prices.usd("claude-opus-4-6", when=datetime(2026, 3, 20, tzinfo=UTC), input_tokens=300_000) == 1.5
    # a whole frame of requests at different dates, priced in one go, agrees
    rows = pl.DataFrame(
        {
            "model": ["deepseek-v4-flash"] * 2 + ["claude-opus-4-6"] * 2,
            "harness": ["opencode", "opencode", "claude-code", "claude-code"],
            "ts": [
                datetime(2026, 8, 1, 12, tzinfo=UTC),
                datetime(2026, 8, 20, 12, tzinfo=UTC),
                datetime(2026, 2, 10, tzinfo=UTC),
                datetime(2026, 3, 20, tzinfo=UTC),
            ],
            "input_tokens": [1_000_000, 1_000_000, 300_000, 300_000],
            "output_tokens": [1_000_000, 1_000_000, 0, 0],
        }
    ).with_columns(
        pl.lit(0).alias(c) for c in ("cache_read_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens")
    )
    assert prices.price(rows)["usd"].to_list() == [0.42, 0.88, 3.0, 1.5]


def test_synthetic_and_empty_requests_are_free_not_unpriced(prices: Prices):
    assert prices.usd("<synthetic>", harness="claude-code", input_tokens=10, output_tokens=10) == 0.0
    assert prices.usd("gpt-5.5-mini", harness="codex") == 0.0  # no tokens: nothing spent
    rows = pl.DataFrame(
        {"model": ["<synthetic>", "gpt-5.5-mini", "gpt-5.5-mini"], "harness": ["claude-code", "codex", "codex"]}
    ).with_columns(
        ts=pl.lit(datetime(2026, 5, 1, tzinfo=UTC)),
        input_tokens=pl.Series([0, 0, 500]),
        output_tokens=pl.Series([0, 0, 20]),
        **{c: pl.lit(0) for c in ("cache_read_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens")},
    )
    out = prices.price(rows)
    assert out["price_source"].to_list() == [FREE, FREE, None]
    assert out["usd"].to_list() == [0.0, 0.0, None]  # an unknown model with tokens: null, never 0


MODELS = [
    ("claude-sonnet-4-5", "anthropic"),
    ("claude-opus-4-6", "anthropic"),
    ("claude-haiku-4-5", "anthropic"),
    ("gpt-5.5", "openai"),
    ("gpt-5.6-sol", "openai"),
    ("gemini-2.5-pro", "google"),
    ("deepseek-v4-pro", "deepseek"),
]


@settings(max_examples=150, deadline=None)
@given(
    model=st.sampled_from(MODELS),
    tokens=st.lists(st.integers(0, 400_000), min_size=5, max_size=5),
    day=st.dates(date(2025, 6, 1), date(2026, 11, 30)),
    hour=st.integers(0, 23),
)
def test_agrees_with_the_package_calc_price(model, tokens, day, hour):
    """Pricing many rows at once gives what the package's own calc_price gives for each request."""
    prices = _shared()
    uncached, read, w5, w1, out = tokens
    when = datetime(day.year, day.month, day.day, hour, 30, tzinfo=UTC)
    usage = Usage(
        input_tokens=uncached + read + w5 + w1,  # the package counts all input, then the parts of it
        cache_read_tokens=read,
        cache_write_tokens=w5 + w1,
        cache_write_1h_tokens=w1,
        output_tokens=out,
    )
    want = float(calc_price(usage, model[0], provider_id=model[1], genai_request_timestamp=when).total_price)
    got = prices.usd(
        model[0],
        when=when,
        input_tokens=uncached,
        cache_read_tokens=read,
        cache_creation_5m_tokens=w5,
        cache_creation_1h_tokens=w1,
        output_tokens=out,
    )
    assert got == pytest.approx(want, abs=1e-9)


_PRICES: list[Prices] = []


def _shared() -> Prices:
    if not _PRICES:
        _PRICES.append(Prices.load())
    return _PRICES[0]


# Label -> (provider, model id) as listed by genai-prices, for every model the samples log.
SAMPLE_MODELS = {
    "claude-haiku-4-5": ("anthropic", "claude-haiku-4-5"),
    "claude-haiku-4-5-20251001": ("anthropic", "claude-haiku-4-5"),
    "claude-opus-4-5": ("anthropic", "claude-opus-4-5"),
    "claude-opus-4-5-20251101": ("anthropic", "claude-opus-4-5"),
    "claude-opus-4-6": ("anthropic", "claude-opus-4-6"),
    "claude-sonnet-4-5": ("anthropic", "claude-sonnet-4-5"),
    "claude-sonnet-4-5-20250929": ("anthropic", "claude-sonnet-4-5"),
    "claude-sonnet-4-6": ("anthropic", "claude-sonnet-4-6"),  # the agent-teams workflow's subagents
    "gpt-5": ("openai", "gpt-5"),
    "gpt-5-mini": ("openai", "gpt-5-mini"),
    "gpt-5.1-codex": ("openai", "gpt-5.1"),  # genai-prices lists the codex variant under gpt-5.1
    "gpt-5.1-codex-max": ("openai", "gpt-5.1"),
    "gpt-5.1-codex-mini": ("openai", "gpt-5.1-codex-mini"),
    "gpt-5.2-codex": ("openai", "gpt-5.2"),
    "gpt-5.4": ("openai", "gpt-5.4"),
    "gpt-5.5": ("openai", "gpt-5.5"),
    "gemini-2.5-pro": ("google", "gemini-2.5-pro"),
    "gemini-3-flash-preview": ("google", "gemini-3-flash-preview"),
    "gemini-3-pro-image-preview": ("google", "gemini-3-pro-image-preview"),
}


@pytest.fixture(scope="module")
def sample_usage(tmp_path_factory) -> pl.DataFrame:
    """The dataset's usage rows, with the time each is priced at (the session's start when the
    response has no time of its own)."""
    db = tmp_path_factory.mktemp("samples") / "s.duckdb"
    ingest([str(SAMPLES)], db=str(db), workers=1)
    with Store(db, read_only=True) as store:
        tables = dataset.build(store)
    starts = tables["sessions"].group_by("session_id").agg(pl.col("started_at").min())
    return tables["usage"].join(starts, on="session_id", how="left").with_columns(at=pl.coalesce("ts", "started_at"))


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini-cli", "pi", "omp", "opencode"])
def test_sample_sessions_of_each_harness_by_hand(sample_usage: pl.DataFrame, harness: str):
    rows = sample_usage.filter(pl.col("_harness") == harness)
    assert rows.height > 0
    checked = 0
    for r in rows.iter_rows(named=True):
        if r["model"] not in SAMPLE_MODELS:
            assert r["usd"] is None or r["price_source"] == FREE, r["model"]
            continue
        whole_input = sum(r[t] for t in ("input_tokens", "cache_read_tokens", "cache_creation_tokens"))
        assert whole_input <= 200_000, "a long-context request: this hand sum only knows base rates"
        p = published(*SAMPLE_MODELS[r["model"]], r["at"].date())
        write = p["cache_write_mtok"] or p["input_mtok"]  # no write price: written tokens are input
        want = (
            r["input_tokens"] * p["input_mtok"]
            + r["output_tokens"] * p["output_mtok"]
            + r["cache_read_tokens"] * (p["cache_read_mtok"] or p["input_mtok"])
            + r["cache_creation_5m_tokens"] * write
            + r["cache_creation_1h_tokens"] * (p["cache_write_1h_mtok"] or write)
        ) / 1_000_000
        assert r["usd"] == pytest.approx(float(want), abs=1e-9), r
        checked += 1
    assert checked > 0


def _claude_log(path: Path, cache: dict | None, created: int, model: str = "claude-sonnet-4-5-20250929") -> Path:
    sid = "5b0c9a2e-7d1f-4c3a-9e8b-1a2b3c4d5e6f"
    base = {"sessionId": sid, "cwd": "/w", "version": "2.1.20", "isSidechain": False, "userType": "external"}
    usage = {"input_tokens": 12, "cache_creation_input_tokens": created, "cache_read_input_tokens": 40_000}
    usage |= {"output_tokens": 300} | ({"cache_creation": cache} if cache is not None else {})
    records = [
        base
        | {"type": "user", "uuid": "u1", "parentUuid": None, "timestamp": "2026-04-02T10:00:00.000Z"}
        | {"message": {"role": "user", "content": "hi"}},
        base
        | {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "timestamp": "2026-04-02T10:00:05.000Z"}
        | {"message": {"model": model, "id": "msg_1", "type": "message", "role": "assistant", "usage": usage}}
        | {"requestId": "req_1"},
        base
        | {"type": "assistant", "uuid": "a2", "parentUuid": "a1", "timestamp": "2026-04-02T10:00:06.000Z"}
        | {"message": {"model": "<synthetic>", "id": "msg_2", "role": "assistant", "usage": {"input_tokens": 0}}},
    ]
    path.mkdir(parents=True, exist_ok=True)
    log = path / f"{sid}.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    return log


def test_broken_cache_split_is_repaired_and_counted(tmp_path: Path):
    logs = tmp_path / "logs" / ".claude" / "projects" / "-w"
    _claude_log(logs, {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0}, created=8000)
    db = tmp_path / "s.duckdb"
    summary = ingest([str(tmp_path / "logs")], db=str(db), workers=1)
    assert summary.diagnostics_by_code.get("cache_split_repaired") == 1
    # 12*3 + 300*15 + 40000*0.3 + 8000*3.75 (the whole total as 5-minute writes) = 36+4500+12000+30000
    want = 0.046536
    with Store(db, read_only=True) as store:
        usage = dataset.build(store)["usage"].filter(pl.col("model") != "<synthetic>")
        report = build_report(store)
    assert usage.select("cache_creation_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens").row(0) == (
        8000,
        8000,
        0,
    )
    assert usage["usd"].to_list() == [pytest.approx(want, abs=1e-9)]
    assert report.cost["usd"].sum() == pytest.approx(want, abs=1e-9)
    assert report.diagnostics.filter(pl.col("code") == "cache_split_repaired")["count"].to_list() == [1]
    out = export_ocp(tmp_path / "ocp", db=str(db))
    assert out.unpriced_models == {}  # <synthetic> is free, not unpriced
    _assert_clean(validate(out.files), out.documents)
    (cost,) = [a["cost"] for f in out.files for a in json.loads(Path(f).read_text())["attempts"] if "cost" in a]
    assert (cost["cache_creation_tokens"], cost["cache_creation_5m_tokens"], cost["cache_creation_1h_tokens"]) == (
        8000,
        8000,
        0,
    )
    assert cost["usd"] == pytest.approx(want, abs=1e-6)
    assert cost["tariff"]["id"].startswith("genai-prices ") and cost["tariff"]["date"] == "2026-04-02"


def test_a_split_that_adds_up_is_left_alone(tmp_path: Path):
    logs = tmp_path / "logs" / ".claude" / "projects" / "-w"
    _claude_log(logs, {"ephemeral_5m_input_tokens": 3000, "ephemeral_1h_input_tokens": 5000}, created=8000)
    db = tmp_path / "s.duckdb"
    summary = ingest([str(tmp_path / "logs")], db=str(db), workers=1)
    assert "cache_split_repaired" not in summary.diagnostics_by_code
    with Store(db, read_only=True) as store:
        row = store.query(
            "SELECT cache_creation_5m_tokens, cache_creation_1h_tokens FROM usage WHERE model <> '<synthetic>'"
        )
    assert row.row(0) == (3000, 5000)


def test_override_rows_win_and_the_package_prices_the_rest(tmp_path: Path):
    path = write(
        tmp_path,
        HEADER + "\n"
        "# my negotiated rate\n"
        "gpt-5,openai,1,8,0.1,0,0,2026-01-01,contract\n"
        "\n"
        'my-local-model,local,0.5,0.5,0,0,0,2026-01-01,"self-hosted, amortised"\n',
    )
    for arg in (path, str(path)):
        t = Prices.load(arg)
        assert len(t.rows) == 2 and t.rows[1].source == "self-hosted, amortised"
        assert t.resolve("gpt-5-2025-08-07", "codex").source == "prices.csv"
        assert t.usd("gpt-5-2025-08-07", input_tokens=1_000_000, output_tokens=1_000_000) == 9.0
        assert t.usd("my-local-model", input_tokens=2_000_000) == 1.0
        assert t.resolve("gpt-5-mini", "codex").source == t.library  # not matched: the package's price
        assert t.resolve("claude-sonnet-4-5", "claude-code").source == t.library


def test_the_example_file_loads():
    example = Path(__file__).parent.parent / "prices.example.csv"
    t = Prices.load(example)
    assert {p.pattern for p in t.rows} == {"claude-sonnet-4-5", "qwen3-coder-local"}


def write(tmp_path: Path, body: str, name: str = "prices.csv") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


BAD = [
    ("gpt-5,openai,abc,10,0.125,0,0,2025-12-01,x\n", 2, 3, "not a number"),
    ("gpt-5,openai,1.25,10,0.125,0,0,2025-12-01,x\no3,openai,2,-8,0.5,0,0,2025-12-01,x\n", 3, 4, ">= 0"),
    ("gpt-5,openai,1.25,10,0.125,0,0,2025-13-01,x\n", 2, 8, "YYYY-MM-DD"),
    ("gpt-5,openai,1.25,10,0.125,0,0,Dec 2025,x\n", 2, 8, "YYYY-MM-DD"),
    ("gpt-5,openai,1.25,10,0.125,0,0\n", 2, None, "expected 9 columns"),
    (",openai,1.25,10,0.125,0,0,2025-12-01,x\n", 2, 1, "must not be empty"),
    ("gpt-5,openai,1,10,0.1,0,0,2025-12-01,x\nGPT-5-latest,openai,1,10,0.1,0,0,2025-12-01,x\n", 3, 1, "repeats line 2"),
    ("gpt-5,openai,nan,10,0.1,0,0,2025-12-01,x\n", 2, 3, "finite"),
]


@pytest.mark.parametrize(("rows", "line", "column", "words"), BAD)
def test_malformed_override_names_file_line_column(tmp_path: Path, rows, line, column, words):
    path = write(tmp_path, HEADER + "\n" + rows)
    with pytest.raises(SessiongraphError) as err:
        Prices.load(path)
    message = str(err.value)
    assert str(path) in message and f"line {line}" in message and words in message
    if column is not None:
        assert f"column {column} ({COLUMNS[column - 1]})" in message
    assert err.value.path == str(path)


def test_malformed_header_and_empty_files(tmp_path: Path):
    bad_header = write(tmp_path, HEADER.replace("as_of", "date") + "\ngpt-5,openai,1,1,0,0,0,2025-01-01,x\n", "h.csv")
    with pytest.raises(SessiongraphError, match=r"h\.csv, line 1, column 8 \(as_of\): header"):
        Prices.load(bad_header)
    with pytest.raises(SessiongraphError, match="no price rows"):
        Prices.load(write(tmp_path, HEADER + "\n", "only_header.csv"))
    with pytest.raises(SessiongraphError, match="empty price file"):
        Prices.load(write(tmp_path, "", "empty.csv"))
    with pytest.raises(SessiongraphError, match="cannot read price file"):
        Prices.load(tmp_path / "missing.csv")


BIGINT = st.integers(-(2**63), 2**63 - 1)


@given(total=BIGINT, five_min=BIGINT, one_hour=BIGINT, default=st.sampled_from(["5m", "1h"]))
def test_cache_split_buckets_add_up_within_bigint(total, five_min, one_hour, default):
    """Whatever a log writes (the fuzzing found -2**63 in a bucket), the buckets add up to the
    total, none is negative unless the total is, and both fit the store's BIGINT."""
    five, hour, repaired = split_cache_writes(total, five_min, one_hour, default)
    assert five + hour == total
    assert all(-(2**63) <= b < 2**63 for b in (five, hour))
    if total >= 0:
        assert five >= 0 and hour >= 0
    assert repaired == ((five_min, one_hour) != (five, hour))
