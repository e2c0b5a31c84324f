"""Price table: label normalisation, family matching, USD arithmetic, packaged rows, --prices files."""

from __future__ import annotations

import math
from datetime import date
from pathlib import Path

import pytest

from sessiongraph.errors import SessiongraphError
from sessiongraph.pricing import COLUMNS, Price, PriceTable, normalise_model

HEADER = ",".join(COLUMNS)


@pytest.fixture(scope="module")
def table() -> PriceTable:
    return PriceTable.load()


def usd(table: PriceTable, model, inp=0, out=0, cr=0, w5=0, w1=0):
    return table.usd(
        model,
        input_tokens=inp,
        output_tokens=out,
        cache_read_tokens=cr,
        cache_creation_5m_tokens=w5,
        cache_creation_1h_tokens=w1,
    )


# label as logged -> (normalised label, packaged pattern it prices as, or None for unknown)
LABELS = [
    ("claude-opus-4-5-20251101", "claude-opus-4-5", "claude-opus-4-5"),
    ("claude-haiku-4-5-20251001", "claude-haiku-4-5", "claude-haiku-4-5"),
    ("claude-sonnet-4-5-20250929", "claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("claude-sonnet-4-5", "claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("claude-opus-4-6", "claude-opus-4-6", "claude-opus-4-6"),
    ("us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("global.anthropic.claude-opus-4-5-20251101-v1:0", "claude-opus-4-5", "claude-opus-4-5"),
    ("converse/jp.anthropic.claude-haiku-4-5-20251001-v1:0", "claude-haiku-4-5", "claude-haiku-4-5"),
    ("bedrock/eu.anthropic.claude-3-7-sonnet-20250219-v1:0", "claude-3-7-sonnet", "claude-3-7-sonnet"),
    ("anthropic.claude-3-5-sonnet-20241022-v2:0", "claude-3-5-sonnet", "claude-3-5-sonnet"),
    ("claude-opus-4-5@20251101", "claude-opus-4-5", "claude-opus-4-5"),
    ("claude-3-5-sonnet-v2@20241022", "claude-3-5-sonnet", "claude-3-5-sonnet"),
    ("anthropic/claude-sonnet-4.5", "claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("anthropic/claude-3.5-haiku", "claude-3-5-haiku", "claude-3-5-haiku"),
    ("claude-3-7-sonnet-latest", "claude-3-7-sonnet", "claude-3-7-sonnet"),
    ("claude-opus-4-1-20250805", "claude-opus-4-1", "claude-opus-4-1"),
    ("claude-opus-4-20250514", "claude-opus-4", "claude-opus-4"),
    ("claude-sonnet-4-0", "claude-sonnet-4", "claude-sonnet-4"),
    ("claude-sonnet-4-5-20250929[1m]", "claude-sonnet-4-5", "claude-sonnet-4-5"),
    ("Claude-Haiku-4-5", "claude-haiku-4-5", "claude-haiku-4-5"),
    ("gpt-5-2025-08-07", "gpt-5", "gpt-5"),
    ("openai/gpt-5.1-codex", "gpt-5.1-codex", "gpt-5.1-codex"),
    ("gpt-5.1-codex", "gpt-5.1-codex", "gpt-5.1-codex"),
    ("gpt-5.1-codex-max", "gpt-5.1-codex-max", "gpt-5.1-codex-max"),
    ("gpt-5.1-codex-mini", "gpt-5.1-codex-mini", "gpt-5.1-codex-mini"),
    ("gpt-5.1-codex-max-xhigh", "gpt-5.1-codex-max-xhigh", "gpt-5.1-codex-max"),
    ("gpt-5-mini-2025-08-07", "gpt-5-mini", "gpt-5-mini"),
    ("gpt-4o-mini-2024-07-18", "gpt-4o-mini", "gpt-4o-mini"),
    ("gpt-4.1-2025-04-14", "gpt-4.1", "gpt-4.1"),
    ("o3-2025-04-16", "o3", "o3"),
    ("o4-mini-2025-04-16", "o4-mini", "o4-mini"),
    ("codex-mini-latest", "codex-mini", "codex-mini-latest"),
    ("gemini-2.5-pro", "gemini-2.5-pro", "gemini-2.5-pro"),
    ("models/gemini-2.5-flash", "gemini-2.5-flash", "gemini-2.5-flash"),
    ("google/gemini-2.5-flash-lite", "gemini-2.5-flash-lite", "gemini-2.5-flash-lite"),
    ("gemini-2.0-flash-001", "gemini-2.0-flash", "gemini-2.0-flash"),
    ("gemini-3-pro-preview", "gemini-3-pro-preview", "gemini-3-pro-preview"),
    # different models that merely share a prefix stay unknown rather than take a wrong price
    ("gpt-5.5", "gpt-5.5", None),
    ("gpt-5.5-mini", "gpt-5.5-mini", None),
    ("gpt-5-pro", "gpt-5-pro", None),
    ("o3-pro", "o3-pro", None),
    ("o4-mini-deep-research", "o4-mini-deep-research", None),
    ("claude-opus-4-7", "claude-opus-4-7", None),
    ("claude-3-haiku-20240307", "claude-3-haiku", None),
    ("gemini-3-pro-image-preview", "gemini-3-pro-image-preview", None),
    ("gemini-2.5-flash-image", "gemini-2.5-flash-image", None),
    ("gemini-2.5-flash-preview-05-20", "gemini-2.5-flash-preview-05-20", None),
    ("haiku", "haiku", None),
    ("<synthetic>", "", None),
    ("", "", None),
    ("   ", "", None),
]


@pytest.mark.parametrize(("label", "normalised", "pattern"), LABELS)
def test_normalise_and_lookup(table: PriceTable, label: str, normalised: str, pattern: str | None):
    assert normalise_model(label) == normalised
    found = table.lookup(label)
    assert (found.pattern if found else None) == pattern


def test_lookup_none_is_unknown(table: PriceTable):
    assert normalise_model(None) == ""
    assert table.lookup(None) is None


def test_longest_pattern_wins_over_shorter_family(table: PriceTable):
    assert table.lookup("gpt-5.1-codex-max").input == 1.25
    assert table.lookup("gpt-5.1-codex-mini").input == 0.25
    assert table.lookup("gpt-5-nano").input == 0.05
    assert table.lookup("gemini-2.5-flash-lite").input == 0.10
    assert table.lookup("o3-mini").output == 4.4


def test_usd_anthropic_mix(table: PriceTable):
    # Sonnet 4.5: 3 in, 15 out, 0.30 read, 3.75 5m write, 6 1h write
    # 1000*3 + 2000*15 + 10000*0.3 + 4000*3.75 + 3000*6 = 3000+30000+3000+15000+18000 = 69000 / 1e6
    assert usd(table, "claude-sonnet-4-5-20250929", 1000, 2000, 10000, 4000, 3000) == 0.069
    # Haiku 4.5: 123*1 + 456*5 + 7890*0.1 = 123 + 2280 + 789 = 3192 / 1e6
    assert usd(table, "claude-haiku-4-5-20251001", 123, 456, 7890) == 0.003192


def test_usd_anthropic_cache_write_multipliers(table: PriceTable):
    # Opus 4.5 input is $5: a 1h write costs 2x ($10/MTok), a 5m write 1.25x ($6.25), a read 0.1x
    assert usd(table, "claude-opus-4-5", inp=1_000_000) == 5.0
    assert usd(table, "claude-opus-4-5", w1=1_000_000) == 10.0
    assert usd(table, "claude-opus-4-5", w5=1_000_000) == 6.25
    assert usd(table, "claude-opus-4-5", cr=1_000_000) == 0.5
    # Opus 4.1, the old tier: 200k 1h writes = 200000*30/1e6 = 6.0; 200k 5m = 200000*18.75/1e6 = 3.75
    assert usd(table, "claude-opus-4-1-20250805", w1=200_000) == 6.0
    assert usd(table, "claude-opus-4-1-20250805", w5=200_000) == 3.75


def test_usd_openai_and_google(table: PriceTable):
    # gpt-5.1-codex: 50000*1.25 + 200000*0.125 + 8000*10 (output includes reasoning) = 167500 / 1e6
    assert usd(table, "gpt-5.1-codex", 50_000, 8_000, 200_000) == 0.1675
    # OpenAI has no cache-write charge: write buckets add nothing
    assert usd(table, "gpt-5.1-codex", 50_000, 8_000, 200_000, 9_999, 9_999) == 0.1675
    # gemini-2.5-pro base tier: 10000*1.25 + 1000*10 = 22500 / 1e6
    assert usd(table, "models/gemini-2.5-pro", 10_000, 1_000) == 0.0225


def test_usd_rounds_to_six_decimals(table: PriceTable):
    assert usd(table, "o4-mini", inp=1) == 0.000001  # 1.1e-6
    assert usd(table, "gpt-5-nano", inp=1) == 0.0  # 5e-8
    assert usd(table, "claude-sonnet-4-5", inp=7, out=3) == 0.000066  # 21e-6 + 45e-6


def test_unknown_model_costs_none_not_zero(table: PriceTable):
    for model in ("gpt-5.5", "<synthetic>", "", None, "claude-opus-4-7"):
        assert usd(table, model, 1000, 1000, 1000, 1000, 1000) is None
    assert usd(table, "claude-sonnet-4-5") == 0.0  # known model, no tokens: zero, not None


REQUIRED = """claude-opus-4-6 claude-opus-4-5 claude-opus-4-1 claude-opus-4 claude-sonnet-4-5 claude-sonnet-4
claude-3-7-sonnet claude-haiku-4-5 claude-3-5-haiku gpt-5 gpt-5-mini gpt-5-nano gpt-5-codex gpt-5.1
gpt-5.1-codex gpt-5.1-codex-max gpt-5.1-codex-mini gpt-4.1 gpt-4.1-mini gpt-4o gpt-4o-mini o3 o4-mini
codex-mini-latest gemini-2.5-pro gemini-2.5-flash gemini-2.5-flash-lite gemini-2.0-flash gemini-3-pro-preview""".split()


def test_packaged_rows_are_sound(table: PriceTable):
    patterns = [p.pattern for p in table.prices]
    assert len(patterns) == len(set(patterns))
    assert set(REQUIRED) <= set(patterns)
    for p in table.prices:
        assert isinstance(p, Price)
        assert p.provider in {"anthropic", "openai", "google"}, p
        assert date(2024, 1, 1) <= date.fromisoformat(p.as_of) <= date.today(), p
        assert p.source, p
        assert p.input > 0 and p.output > 0 and p.cache_read > 0, p
        assert p.cache_read < p.input, p
        if p.provider == "anthropic":
            assert math.isclose(p.cache_write_5m, 1.25 * p.input), p
            assert math.isclose(p.cache_write_1h, 2 * p.input), p
            assert math.isclose(p.cache_read, 0.1 * p.input), p
        else:
            assert p.cache_write_5m == 0 and p.cache_write_1h == 0, p
        assert table.lookup(p.pattern) is p  # every row is reachable by its own id


def write(tmp_path: Path, body: str, name: str = "prices.csv") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def test_override_file_replaces_packaged_table(tmp_path: Path):
    path = write(
        tmp_path,
        HEADER + "\n"
        "# my negotiated rate\n"
        "gpt-5,openai,1,8,0.1,0,0,2026-01-01,contract\n"
        "\n"
        'my-local-model,local,0.5,0.5,0,0,0,2026-01-01,"self-hosted, amortised"\n',
    )
    for arg in (path, str(path)):
        t = PriceTable.load(arg)
        assert len(t) == 2
        assert t.lookup("claude-sonnet-4-5") is None  # replaced, not merged
        assert usd(t, "gpt-5-2025-08-07", 1_000_000, 1_000_000) == 9.0
        assert t.lookup("my-local-model").source == "self-hosted, amortised"


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
        PriceTable.load(path)
    message = str(err.value)
    assert str(path) in message and f"line {line}" in message and words in message
    if column is not None:
        assert f"column {column} ({COLUMNS[column - 1]})" in message
    assert err.value.path == str(path)


def test_malformed_header_and_empty_files(tmp_path: Path):
    bad_header = write(tmp_path, HEADER.replace("as_of", "date") + "\ngpt-5,openai,1,1,0,0,0,2025-01-01,x\n", "h.csv")
    with pytest.raises(SessiongraphError, match=r"h\.csv, line 1, column 8 \(as_of\): header"):
        PriceTable.load(bad_header)
    with pytest.raises(SessiongraphError, match="no price rows"):
        PriceTable.load(write(tmp_path, HEADER + "\n", "only_header.csv"))
    with pytest.raises(SessiongraphError, match="empty price file"):
        PriceTable.load(write(tmp_path, "", "empty.csv"))
    with pytest.raises(SessiongraphError, match="cannot read price file"):
        PriceTable.load(tmp_path / "missing.csv")
