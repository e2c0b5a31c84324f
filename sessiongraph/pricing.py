"""Dollars for tokens: list prices from the ``genai-prices`` package, at the date of each request.

Prices come from the data bundled in the installed ``genai-prices`` package (its price history
included); nothing is fetched at run time, so upgrading the package is how prices are updated.
The provider comes from the model label (``claude-*`` is Anthropic's, ``gpt-*`` OpenAI's ...),
from a routing prefix (``anthropic/claude-sonnet-4.5``, ``openrouter/...``) or, failing those,
from the harness (Claude Code -> Anthropic, Codex -> OpenAI, Gemini CLI -> Google).

``--prices FILE`` is a CSV of :data:`COLUMNS` (``prices.example.csv``); its rows win for the models
they match, everything else keeps the package's prices. Token semantics are the store's:
``input_tokens`` uncached input, ``cache_read_tokens`` cached input, cache writes in a 5m and a 1h
bucket, ``output_tokens`` already including reasoning. A request is priced as one request, so a
long-context tier (e.g. above 200k input tokens) applies to that request alone.

Harness-made messages that no model produced (``<synthetic>``) and requests with no tokens cost 0
(source ``free``). A model neither source knows has ``usd`` null, never 0; so has a row that
records no token count at all (every token column null: a harness that keeps only its own dollar
figure, ``reported_usd``). A session-level row (``scope`` ``session``: a sum over many requests)
is priced at the base tier: no long-context tier can be told from a sum.
"""

from __future__ import annotations

import csv
import io
import math
import os
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import polars as pl

from sessiongraph.errors import SessiongraphError
from sessiongraph.ingest.frames import SESSION_SCOPE

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
FREE = "free"
# The provider a harness talks to when the label alone does not say (multi-provider harnesses
# such as pi, oh-my-pi and opencode name their models well enough for the label to decide).
HARNESS_PROVIDER = {"claude-code": "anthropic", "codex": "openai", "gemini-cli": "google"}
# Token columns of a usage row, in the order of a rate vector.
TOKENS = ("input_tokens", "cache_read_tokens", "cache_creation_5m_tokens", "cache_creation_1h_tokens", "output_tokens")

# Suffix words that leave the price unchanged: reasoning-effort and "thinking" labels routers add.
# Anything else after a pattern ("-mini", "-pro", "-nano", a further version number) names a
# different model, which stays unknown rather than mispriced.
_NEUTRAL = frozenset({"thinking", "minimal", "low", "medium", "high", "xhigh"})
_VENDOR_DOT = re.compile(r"^(?:[a-z]{2,6}(?:-[a-z]+)?\.)?(?:anthropic|openai|google)\.")  # Bedrock ids
_TRAILERS = re.compile(r"-(?:latest|v\d+|\d{8}|\d{4}-\d{2}-\d{2}|\d{3})$")  # -latest -v1 dates -001
_CLAUDE_DOT = re.compile(r"(?<=\d)\.(?=\d)")
_CLAUDE_X0 = re.compile(r"^(claude-(?:opus|sonnet|haiku)-\d+)-0$")  # alias claude-sonnet-4-0
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


@dataclass(frozen=True, slots=True)
class Price:
    """One row of a ``--prices`` file: USD per million tokens for one model family."""

    pattern: str
    provider: str
    input: float
    output: float
    cache_read: float
    cache_write_5m: float
    cache_write_1h: float
    as_of: str
    source: str


@dataclass(frozen=True, slots=True)
class Rates:
    """USD per token of each of :data:`TOKENS`, plus a fee per request, for requests whose whole
    input (cached and written included) exceeds ``above`` tokens (-1: every request)."""

    above: int
    per_token: tuple[float, ...]  # one per TOKENS
    per_request: float = 0.0


@dataclass(frozen=True, slots=True)
class Resolved:
    """What prices a (model label, harness): the package's model, a file's row, free, or nothing."""

    source: str | None  # "genai-prices X.Y.Z", the --prices file's name, "free", or None (unknown)
    priced_as: str | None  # "anthropic:claude-sonnet-4-5", the file's pattern, ...
    model: Any = None  # genai_prices ModelInfo
    provider: Any = None  # genai_prices Provider
    row: Price | None = None


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


def is_placeholder(label: str | None) -> bool:
    """A harness-made message no model produced (Claude Code's ``<synthetic>``)."""
    return (label or "").strip().startswith("<")


def _matches(key: str, label: str) -> bool:
    if label == key:
        return True
    if not label.startswith(key + "-"):
        return False
    return all(word in _NEUTRAL for word in label[len(key) + 1 :].split("-"))


def _library():
    # Imported on first use: the bundled data takes a few hundred ms to load, and ingest never needs it.
    from genai_prices import __version__, data_snapshot
    from genai_prices.data_snapshot import find_provider_by_id

    return data_snapshot.get_snapshot(), find_provider_by_id, f"genai-prices {__version__}"


class Prices:
    """Looks prices up and prices usage rows; lookups are cached per (model, harness) and per
    (model, price period, long-context tier), so pricing a million rows asks the package a few
    hundred times at most."""

    def __init__(self, rows: tuple[Price, ...] = (), file: str | None = None):
        self.rows = rows
        self.file = file
        keyed = [(normalise_model(p.pattern), p) for p in rows]
        self._keyed = sorted(keyed, key=lambda kp: len(kp[0]), reverse=True)
        self._snapshot, self._provider_by_id, self.library = _library()
        self._resolved: dict[tuple[str | None, str | None], Resolved] = {}
        self._periods: dict[tuple[int, datetime], int] = {}  # (id(model), bucket) -> price id
        self._price_ids: dict[int, int] = {}  # id(ModelPrice) -> price id
        self._rates: list[tuple[Rates, ...]] = []  # by price id
        self._keep: list[object] = []  # holds the ModelPrices whose id() keys the caches

    @classmethod
    def load(cls, path: str | os.PathLike | None = None) -> Prices:
        """The package's prices, with the rows of the user's ``--prices`` file winning when given."""
        if path is None:
            return cls()
        name = os.fspath(path)
        try:
            with open(name, encoding="utf-8-sig", newline="") as fh:
                text = fh.read()
        except (OSError, UnicodeDecodeError) as exc:
            raise SessiongraphError(f"cannot read price file {name}: {exc}", path=name) from exc
        return cls(tuple(_parse(text, name)), os.path.basename(name))

    # -- which price --------------------------------------------------------------------------

    def resolve(self, model: str | None, harness: str | None = None) -> Resolved:
        key = (model, harness)
        if key not in self._resolved:
            self._resolved[key] = self._resolve(model, harness)
        return self._resolved[key]

    def _resolve(self, model: str | None, harness: str | None) -> Resolved:
        if is_placeholder(model):
            return Resolved(FREE, None)
        label = (model or "").strip().lower()
        if not label:
            return Resolved(None, None)
        norm = normalise_model(label)
        if row := next((p for key, p in self._keyed if _matches(key, norm)), None):
            return Resolved(self.file, row.pattern, row=row)
        for provider_id, ref in self._candidates(label, norm, harness):
            try:
                provider, info = self._snapshot.find_provider_model(ref, None, provider_id, None)
            except LookupError:
                continue
            return Resolved(self.library, f"{provider.id}:{info.id}", model=info, provider=provider)
        return Resolved(None, None)

    def _candidates(self, label: str, norm: str, harness: str | None):
        """(provider id, model ref) pairs to try, most specific first."""
        head, _, rest = label.partition("/")
        if rest and self._provider_by_id(self._snapshot.providers, head):
            yield head, rest  # a routed name: anthropic/claude-sonnet-4.5, openrouter/z-ai/glm-5.1
        yield None, label  # the package recognises the provider from the model name
        if fallback := HARNESS_PROVIDER.get(harness or ""):
            yield fallback, label
        if norm and norm != label:  # Bedrock/Vertex ids and dated or suffixed labels
            yield None, norm
            if fallback:
                yield fallback, norm

    # -- rates --------------------------------------------------------------------------------

    def price_id(self, resolved: Resolved, when: datetime | None) -> int | None:
        """The id of the rates that price a request of ``resolved`` made at ``when`` (None: unknown)."""
        if resolved.row is not None:
            return self._row_id(resolved.row)
        if resolved.model is None:
            return None
        if when is None:  # no time logged: today's price (the day, so that the cache stays small)
            when = datetime.now(tz=UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        key = (id(resolved.model), when)
        if key not in self._periods:
            self._keep.append(resolved.model)
            price = resolved.model.get_prices(when)
            if id(price) not in self._price_ids:
                self._keep.append(price)
                self._price_ids[id(price)] = len(self._rates)
                self._rates.append(_rates(price))
            self._periods[key] = self._price_ids[id(price)]
        return self._periods[key]

    def _row_id(self, row: Price) -> int:
        if id(row) not in self._price_ids:
            self._price_ids[id(row)] = len(self._rates)
            per_token = (row.input, row.cache_read, row.cache_write_5m, row.cache_write_1h, row.output)
            self._rates.append((Rates(-1, tuple(r / 1_000_000 for r in per_token)),))
        return self._price_ids[id(row)]

    def rates(self, price_id: int) -> tuple[Rates, ...]:
        return self._rates[price_id]

    # -- pricing ------------------------------------------------------------------------------

    def usd(
        self,
        model: str | None,
        *,
        harness: str | None = None,
        when: datetime | None = None,
        input_tokens: int = 0,
        output_tokens: int = 0,
        cache_read_tokens: int = 0,
        cache_creation_5m_tokens: int = 0,
        cache_creation_1h_tokens: int = 0,
        summed: bool = False,
    ) -> float | None:
        """The dollars of one request made at ``when`` (None: today), or of a sum of requests
        (``summed``: priced at the base tier); None when the model has no price."""
        tokens = (input_tokens, cache_read_tokens, cache_creation_5m_tokens, cache_creation_1h_tokens, output_tokens)
        resolved = self.resolve(model, harness)
        if resolved.source == FREE or not any(tokens):
            return 0.0
        kind = _bucket_kind(resolved)
        if when is not None and kind is not None:
            when = when.astimezone(UTC) if when.tzinfo else when.replace(tzinfo=UTC)
            when = when.replace(second=0, microsecond=0)
            when = (
                when.replace(hour=0, minute=0) if kind == "day" else when.replace(minute=0) if kind == "hour" else when
            )
        pid = self.price_id(resolved, when if kind else None)
        if pid is None:
            return None
        whole_input = 0 if summed else sum(tokens[:4])
        band = [r for r in self._rates[pid] if whole_input > r.above][-1]
        return round(math.fsum(n * r for n, r in zip(tokens, band.per_token, strict=True)) + band.per_request, 9)

    def price(self, rows: pl.DataFrame, *, ts: str = "ts", harness: str = "harness") -> pl.DataFrame:
        """``rows`` (``model``, a harness and a time column, :data:`TOKENS`, and optionally the usage
        ``scope``: a session row is a sum, priced at the base tier) with ``usd`` (null: no price),
        ``price_source`` and ``priced_as`` added; rows keep their order.

        The price is the one in force on the request's UTC date (to the minute for time-of-day
        prices); a request without a time is priced at today's prices.
        """
        tokens = [pl.col(t).fill_null(0).cast(pl.Float64) for t in TOKENS]
        summed = (pl.col("scope") == SESSION_SCOPE).fill_null(False) if "scope" in rows.columns else pl.lit(False)
        df = rows.with_columns(
            _h=pl.col(harness),
            _ts=pl.col(ts),
            _i=pl.int_range(pl.len(), dtype=pl.UInt32),
            _in=pl.when(summed).then(0.0).otherwise(pl.sum_horizontal(tokens[:4])),
            _any=pl.sum_horizontal(tokens) > 0,
            _none=pl.all_horizontal(pl.col(t).is_null() for t in TOKENS),
        )
        pairs = df.select("model", "_h").unique()
        resolved = {(m, h): self.resolve(m, h) for m, h in pairs.iter_rows()}
        keys = pl.DataFrame(
            [
                {
                    "model": m,
                    "_h": h,
                    "price_source": r.source,
                    "priced_as": r.priced_as,
                    "_bucket": _bucket_kind(r),
                }
                for (m, h), r in resolved.items()
            ],
            schema={
                "model": pl.String,
                "_h": pl.String,
                "price_source": pl.String,
                "priced_as": pl.String,
                "_bucket": pl.String,
            },
        )
        zone = getattr(rows.schema[ts], "time_zone", None)
        when = pl.col("_ts").dt.convert_time_zone("UTC") if zone else pl.col("_ts").dt.replace_time_zone("UTC")
        df = df.join(keys, on=["model", "_h"], how="left", nulls_equal=True).with_columns(
            _when=pl.when(pl.col("_bucket") == "day")
            .then(when.dt.truncate("1d"))
            .when(pl.col("_bucket") == "hour")
            .then(when.dt.truncate("1h"))
            .when(pl.col("_bucket") == "minute")
            .then(when.dt.truncate("1m"))
            .cast(pl.Datetime("us", "UTC"))
        )
        periods = df.filter(pl.col("price_source").is_not_null()).select("model", "_h", "_when").unique()
        ids = pl.DataFrame(
            [
                {"model": m, "_h": h, "_when": w, "_pid": self.price_id(resolved[(m, h)], w)}
                for m, h, w in periods.iter_rows()
            ],
            schema={"model": pl.String, "_h": pl.String, "_when": pl.Datetime("us", "UTC"), "_pid": pl.Int64},
        )
        df = df.join(ids, on=["model", "_h", "_when"], how="left", nulls_equal=True)
        df = self._apply_rates(df)
        free = ((pl.col("price_source") == FREE) | ~pl.col("_any")) & ~pl.col("_none")
        none = pl.col("_none")  # no token recorded: nothing of ours to price
        return (
            df.with_columns(
                usd=pl.when(none).then(None).when(free).then(0.0).otherwise(pl.col("usd")),
                price_source=pl.when(none).then(None).when(free).then(pl.lit(FREE)).otherwise(pl.col("price_source")),
                priced_as=pl.when(none).then(None).otherwise(pl.col("priced_as")),
            )
            .sort("_i")
            .drop("_h", "_ts", "_i", "_in", "_any", "_none", "_bucket", "_when", "_pid")
        )

    def _apply_rates(self, df: pl.DataFrame) -> pl.DataFrame:
        used = sorted({int(p) for p in df["_pid"].drop_nulls().unique()})
        width = max((len(self._rates[pid]) for pid in used), default=1)
        cols: dict[str, list] = {"_pid": used}
        for b in range(width):  # one set of columns per long-context tier; null where a price has fewer
            bands = [self._rates[pid][b] if b < len(self._rates[pid]) else None for pid in used]
            cols[f"_above{b}"] = [r.above if r else None for r in bands]
            cols[f"_fee{b}"] = [r.per_request if r else None for r in bands]
            for k in range(len(TOKENS)):
                cols[f"_r{k}_{b}"] = [r.per_token[k] if r else None for r in bands]
        table = pl.DataFrame(
            cols, schema={c: pl.Int64 if c == "_pid" or c.startswith("_above") else pl.Float64 for c in cols}
        )

        def pick(name: str) -> pl.Expr:
            # The last tier whose threshold the request's whole input exceeds (a cliff, as the package does).
            expr = pl.col(f"{name}_0" if name.startswith("_r") else f"{name}0")
            for b in range(1, width):
                col = f"{name}_{b}" if name.startswith("_r") else f"{name}{b}"
                expr = pl.when(pl.col("_in") > pl.col(f"_above{b}")).then(pl.col(col)).otherwise(expr)
            return expr

        cost = pl.sum_horizontal(pl.col(t).fill_null(0) * pick(f"_r{k}") for k, t in enumerate(TOKENS))
        return (
            df.join(table, on="_pid", how="left")
            .with_columns(usd=pl.when(pl.col("_pid").is_not_null()).then((cost + pick("_fee")).round(9)))
            .drop(table.columns[1:])
        )


def _bucket_kind(r: Resolved) -> str | None:
    """How finely a request's time picks this model's price: by UTC day, by hour or minute (time-of-day
    prices), or not at all (one price for all time, a file row, free, unknown)."""
    if r.model is None or not isinstance(r.model.prices, list):
        return None
    times = [
        t
        for c in r.model.prices
        for t in (getattr(c.constraint, "start_time", None), getattr(c.constraint, "end_time", None))
        if t
    ]
    if not times:
        return "day"
    return "hour" if all(t.minute == 0 and t.second == 0 for t in times) else "minute"


def _rates(price) -> tuple[Rates, ...]:
    """Per-token rates of a genai-prices ``ModelPrice``, one set per long-context tier, taken from the
    package's own arithmetic: within a tier the price of a request is linear in each token kind, so
    pricing a few probe requests gives the rates exactly (cache writes without a price of their own
    fall back to input, and so on, as the package decides)."""
    from genai_prices import Usage

    starts = sorted({t.start for v in vars(price).values() if hasattr(v, "tiers") for t in v.tiers})
    out = []
    for above in [-1, *starts]:
        x = above + 1 if above >= 0 else 1  # an input size inside this tier

        def cost(**usage) -> Decimal:
            return price.calc_price(Usage(**usage))["total_price"]

        base = cost(input_tokens=x)
        per_input = cost(input_tokens=x + 1) - base
        fee = base - per_input * x
        rate = [
            per_input,
            (cost(input_tokens=x, cache_read_tokens=x) - fee) / x,
            (cost(input_tokens=x, cache_write_tokens=x, cache_write_5m_tokens=x) - fee) / x,
            (cost(input_tokens=x, cache_write_tokens=x, cache_write_1h_tokens=x) - fee) / x,
            cost(input_tokens=x, output_tokens=1) - base,
        ]
        out.append(Rates(above, tuple(float(r) for r in rate), float(fee)))
    return tuple(out)


def usd_exact_sum(col: str = "usd") -> pl.Expr:
    """Sum of dollars in whole nanodollars: the same total whatever order the rows come in."""
    return ((pl.col(col) * 1e9).round().cast(pl.Int64).sum() / 1e9).alias(col)


def usd_sum(col: str = "usd") -> pl.Expr:
    """Sum of dollars; null as soon as one part is unpriced (never a misleading partial sum)."""
    return pl.when(pl.col(col).is_null().any()).then(None).otherwise(usd_exact_sum(col)).alias(col)


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
