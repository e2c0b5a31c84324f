"""USD list prices per model family, and the cost of a run's tokens; unknown models cost None, never 0.

The packaged ``prices.csv`` holds first-party list prices (base context tier, no batch/priority
discounts, no cache-storage fees); ``--prices FILE`` replaces it wholesale. Token semantics are the
store's: ``input_tokens`` uncached input, ``cache_read_tokens`` cached input, cache writes in a 5m and
a 1h bucket, ``output_tokens`` already including reasoning.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date
from importlib import resources

from sessiongraph.errors import SessiongraphError

COLUMNS = (
    "pattern",
    "provider",
    "input_usd_per_mtok",
    "output_usd_per_mtok",
    "cache_read_usd_per_mtok",
    "cache_write_5m_usd_per_mtok",
    "cache_write_1h_usd_per_mtok",
    "as_of",
    "source",
)

# Suffix words that leave the price unchanged: reasoning-effort and "thinking" labels routers add.
# Anything else after a pattern ("-mini", "-pro", "-nano", "-image", "-preview", a further version
# number like "-7" or ".5") names a different model, which stays unknown rather than mispriced.
_NEUTRAL = frozenset({"thinking", "minimal", "low", "medium", "high", "xhigh"})
_VENDOR_DOT = re.compile(r"^(?:[a-z]{2,6}(?:-[a-z]+)?\.)?(?:anthropic|openai|google)\.")  # Bedrock ids
_TRAILERS = re.compile(r"-(?:latest|v\d+|\d{8}|\d{4}-\d{2}-\d{2}|\d{3})$")  # -latest -v1 dates -001
_CLAUDE_DOT = re.compile(r"(?<=\d)\.(?=\d)")
_CLAUDE_X0 = re.compile(r"^(claude-(?:opus|sonnet|haiku)-\d+)-0$")  # alias claude-sonnet-4-0
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens for one model family."""

    pattern: str
    provider: str
    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    as_of: str
    source: str


def normalise_model(label: str | None) -> str:
    """Canonical model id for a logged label; ``""`` when there is none (empty, ``<synthetic>``).

    ``us.anthropic.claude-sonnet-4-5-20250929-v1:0`` -> ``claude-sonnet-4-5``,
    ``claude-opus-4-5@20251101`` -> ``claude-opus-4-5``, ``models/gemini-2.5-pro`` -> ``gemini-2.5-pro``,
    ``anthropic/claude-3.5-sonnet`` -> ``claude-3-5-sonnet``, ``gpt-5-2025-08-07`` -> ``gpt-5``.
    """
    s = (label or "").strip().lower()
    if not s or s.startswith("<"):
        return ""
    s = s.rsplit("/", 1)[-1]  # anthropic/ openai/ google/ models/ converse/ openrouter/.../ ARNs
    s = s.split("@", 1)[0]  # Vertex: claude-opus-4-5@20251101
    s = s.split("[", 1)[0]  # claude-sonnet-4-5[1m]
    s = s.split(":", 1)[0]  # Bedrock -v1:0, tags like :latest
    s = _VENDOR_DOT.sub("", s)
    while True:
        stripped = _TRAILERS.sub("", s)
        if stripped == s:
            break
        s = stripped
    if s.startswith("claude-"):
        s = _CLAUDE_DOT.sub("-", s)  # OpenRouter style claude-sonnet-4.5
        s = _CLAUDE_X0.sub(r"\1", s)
    return s


def _matches(key: str, label: str) -> bool:
    if label == key:
        return True
    if not label.startswith(key + "-"):
        return False
    return all(word in _NEUTRAL for word in label[len(key) + 1 :].split("-"))


class PriceTable:
    """Prices keyed by normalised pattern; the longest matching pattern wins."""

    def __init__(self, prices: Iterable[Price]):
        self._prices = tuple(prices)
        keyed = [(normalise_model(p.pattern), p) for p in self._prices]
        self._keyed = sorted(keyed, key=lambda kp: len(kp[0]), reverse=True)
        self._cache: dict[str, Price | None] = {}

    @property
    def prices(self) -> tuple[Price, ...]:
        return self._prices

    def __len__(self) -> int:
        return len(self._prices)

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> PriceTable:
        """The packaged table when ``path`` is None, else the user's file, which replaces it."""
        if path is None:
            text = resources.files("sessiongraph").joinpath("prices.csv").read_text(encoding="utf-8")
            return cls(_parse(text, "sessiongraph/prices.csv"))
        name = os.fspath(path)
        try:
            with open(name, encoding="utf-8-sig", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise SessiongraphError(f"cannot read price file {name}: {exc}", path=name) from exc
        return cls(_parse(text, name))

    def lookup(self, model: str | None) -> Price | None:
        label = normalise_model(model)
        if not label:
            return None
        if label not in self._cache:
            self._cache[label] = next((p for key, p in self._keyed if _matches(key, label)), None)
        return self._cache[label]

    def usd(
        self,
        model: str | None,
        *,
        input_tokens: int,
        output_tokens: int,
        cache_read_tokens: int,
        cache_creation_5m_tokens: int,
        cache_creation_1h_tokens: int,
    ) -> float | None:
        """Cost in USD rounded to 6 decimals; None when the model is unknown."""
        price = self.lookup(model)
        if price is None:
            return None
        parts = (
            (input_tokens, price.input),
            (output_tokens, price.output),
            (cache_read_tokens, price.cache_read),
            (cache_creation_5m_tokens, price.cache_write_5m),
            (cache_creation_1h_tokens, price.cache_write_1h),
        )
        return round(math.fsum((tokens or 0) * rate for tokens, rate in parts) / 1_000_000, 6)


def _valid_date(text: str) -> bool:
    try:
        return bool(_DATE.match(text)) and bool(date.fromisoformat(text))
    except ValueError:
        return False


def _parse(text: str, name: str) -> list[Price]:
    def fail(line: int, message: str, column: int | None = None) -> SessiongraphError:
        where = f"{name}, line {line}" + (f", column {column} ({COLUMNS[column - 1]})" if column else "")
        return SessiongraphError(f"{where}: {message}", path=name)

    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    header: list[str] | None = None
    prices: list[Price] = []
    seen: dict[str, int] = {}
    try:
        for row in reader:
            line = reader.line_num
            if not any(cell.strip() for cell in row) or row[0].lstrip().startswith("#"):
                continue
            cells = [cell.strip() for cell in row]
            if header is None:
                header = cells
                got = cells + ["(missing)"] * (len(COLUMNS) - len(cells))
                if bad := next((i for i, want in enumerate(COLUMNS, 1) if got[i - 1] != want), None):
                    raise fail(line, f"header must be {','.join(COLUMNS)}; found {got[bad - 1]!r}", bad)
                if len(cells) > len(COLUMNS):
                    raise fail(line, f"unexpected extra header column {cells[len(COLUMNS)]!r}")
                continue
            if len(cells) != len(COLUMNS):
                raise fail(line, f"expected {len(COLUMNS)} columns, found {len(cells)}")
            if empty := next((i for i in (1, 2, 8) if not cells[i - 1]), None):
                raise fail(line, "must not be empty", empty)
            rates = []
            for i, value in enumerate(cells[2:7], 3):
                try:
                    rate = float(value)
                except ValueError:
                    raise fail(line, f"{value!r} is not a number", i) from None
                if not math.isfinite(rate) or rate < 0:
                    raise fail(line, f"{value!r} must be a finite price >= 0", i)
                rates.append(rate)
            as_of = cells[7]
            if not _valid_date(as_of):
                raise fail(line, f"{as_of!r} is not a YYYY-MM-DD date", 8)
            key = normalise_model(cells[0])
            if not key:
                raise fail(line, f"{cells[0]!r} is not a model id", 1)
            if key in seen:
                raise fail(line, f"pattern {cells[0]!r} repeats line {seen[key]}", 1)
            seen[key] = line
            # rates: the five rate columns in Price's order (mypy cannot know a list's length)
            prices.append(Price(cells[0], cells[1], *rates, as_of, cells[8]))  # type: ignore[call-arg, arg-type]
    except csv.Error as exc:
        raise fail(reader.line_num, f"not valid CSV: {exc}") from exc
    if header is None:
        raise SessiongraphError(f"{name}: empty price file (no header)", path=name)
    if not prices:
        raise SessiongraphError(f"{name}: no price rows after the header", path=name)
    return prices
