"""Dollars in the store: every usage row carries its price, set at ingest and kept current.

Each row of ``usage`` is priced on its own by :mod:`sessiongraph.pricing` (the ``genai-prices``
package, at the request's date, under its harness; rows of a ``--prices`` file win for the models
they name) into the columns of :data:`COLUMNS`. ``priced_with`` names the price set that did it:
the package's version, plus the override file's name and content hash. An ingest prices every row
whose ``priced_with`` is not the current set, so new rows are priced and an upgraded package or an
edited override file re-prices the store at the next ingest (or ``sessiongraph reprice``); a
store whose figures are older than the installed package says so (:func:`stale`).

The store remembers the override file (``sessiongraph_meta.price_file``): a later ingest without
``--prices`` keeps using it; ``reprice --no-prices`` drops it.

Sums of dollars are made in SQL only, by the ``usd_total``/``usd_priced`` macros of
``sql/views/costs.sql``, so the views, the report and the exports agree to the cent.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from importlib import metadata

import polars as pl

from sessiongraph.errors import SessiongraphError
from sessiongraph.pricing import TOKENS, Prices, normalise_model
from sessiongraph.store import Store

# The priced columns of `usage` (besides the frames contract), with their DuckDB types.
COLUMNS = {
    "usd": "DECIMAL(18,9)",  # whole nanodollars: sums are exact in any order; null: no price
    "price_source": "VARCHAR",  # "genai-prices X.Y.Z", the override file's name, "free", null
    "priced_as": "VARCHAR",  # "anthropic:claude-sonnet-4-5", the file row's pattern, ...
    "model_id": "VARCHAR",  # pricing.normalise_model of the label (the label when it has none)
    "priced_with": "VARCHAR",  # the price set that priced the row (see priced_with())
}
META_PRICES = "prices"  # the price set the store was last priced with
META_FILE = "price_file"  # the override file it remembers ("" or absent: none)

_ROWS_SQL = """
SELECT u.rowid AS rid, u.model, s.harness, coalesce(u.ts, s.started_at) AS ts, u.scope,
       {tokens}, u.usd AS old_usd, u.price_source AS old_source
FROM usage u
LEFT JOIN (SELECT session_id, any_value(harness) AS harness, min(started_at) AS started_at
           FROM sessions WHERE session_id IN (SELECT session_id FROM usage u WHERE {where})
           GROUP BY session_id) s USING (session_id)
WHERE {where}
"""
_UPDATE_SQL = """
UPDATE usage SET usd = p.usd, price_source = p.price_source, priced_as = p.priced_as,
       model_id = p.model_id, priced_with = $1
FROM sg_priced p WHERE usage.rowid = p.rid
"""


@dataclass(frozen=True, slots=True)
class Repriced:
    """What one pricing pass did."""

    priced_with: str
    rows_priced: int  # rows whose price was (re)computed
    rows_changed: int  # of those, rows whose dollars or source differ from before (new rows included)
    price_file: str | None

    def to_dict(self) -> dict:
        return {
            "priced_with": self.priced_with,
            "rows_priced": self.rows_priced,
            "rows_changed": self.rows_changed,
            "price_file": self.price_file,
        }


def reprice_db(
    *, db: str | None = None, prices: str | None = None, drop_file: bool = False, force: bool = False
) -> Repriced:
    """``sessiongraph reprice``: :func:`reprice` the store at ``db`` (opened for writing)."""
    with Store(db) as store:
        return reprice(store, prices, drop_file=drop_file, force=force)


def library() -> str:
    """``genai-prices X.Y.Z``: the installed package's version (without loading its data)."""
    return f"genai-prices {metadata.version('genai-prices')}"


def priced_with(price_file: str | None) -> str:
    """The name of a price set: the package version, and the override file's name and content."""
    if not price_file:
        return library()
    try:
        with open(price_file, "rb") as fh:
            digest = hashlib.sha256(fh.read()).hexdigest()[:12]
    except OSError as exc:
        raise SessiongraphError(
            f"cannot read price file {price_file}: {exc.strerror or exc}; pass --prices FILE, or "
            "`sessiongraph reprice --no-prices` to price with genai-prices alone",
            path=price_file,
        ) from None
    return f"{library()} + {os.path.basename(price_file)} sha256:{digest}"


def price_file(store: Store, given: str | os.PathLike | None = None, *, drop: bool = False) -> str | None:
    """The override file to price with: ``given``, else the one the store remembers (none if ``drop``)."""
    if drop:
        return None
    if given is not None:
        return os.path.abspath(os.fspath(given))
    return _meta(store, META_FILE) or None


def reprice(
    store: Store, prices_file: str | os.PathLike | None = None, *, drop_file: bool = False, force: bool = False
) -> Repriced:
    """Price every usage row not priced with the current price set (``force``: every row), in one
    transaction, and remember the set and the override file."""
    path = price_file(store, prices_file, drop=drop_file)
    name = priced_with(path)
    where = "TRUE" if force else "u.priced_with IS DISTINCT FROM $1"
    con = store.con
    count = con.execute(f"SELECT count(*) FROM usage u WHERE {where}", None if force else [name]).fetchone()
    n = int(count[0]) if count else 0
    changed = 0
    con.execute("BEGIN TRANSACTION")
    try:
        if n:
            prices = Prices.load(path)
            tokens = ", ".join(f"u.{t}" for t in TOKENS)
            rows = store.query(_ROWS_SQL.format(tokens=tokens, where=where), None if force else [name])
            priced = price_rows(prices, rows)
            changed = priced.filter(
                pl.col("usd").ne_missing(pl.col("old_usd").cast(pl.Float64))
                | pl.col("price_source").ne_missing(pl.col("old_source"))
            ).height
            con.register("sg_priced", priced.select("rid", "usd", "price_source", "priced_as", "model_id").to_arrow())
            try:
                con.execute(_UPDATE_SQL, [name])
            finally:
                con.unregister("sg_priced")
        con.execute(
            "INSERT OR REPLACE INTO sessiongraph_meta VALUES (?, ?), (?, ?)", [META_PRICES, name, META_FILE, path or ""]
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return Repriced(name, n, changed, path)


def price_rows(prices: Prices, rows: pl.DataFrame) -> pl.DataFrame:
    """``rows`` (``model``, ``harness``, ``ts`` and the token columns) with the priced columns;
    ``usd`` rounded to whole nanodollars, as stored."""
    labels = rows["model"].unique().to_list()
    ids = pl.DataFrame(
        {"model": labels, "model_id": [normalise_model(m) or m for m in labels]},
        schema={"model": pl.String, "model_id": pl.String},
    )
    return prices.price(rows).with_columns(pl.col("usd").round(9)).join(ids, on="model", how="left", nulls_equal=True)


def stale(store: Store) -> str | None:
    """A warning when the store's dollars were priced with another genai-prices than the installed one."""
    stored = _meta(store, META_PRICES)
    if stored is None:
        has_rows = store.con.execute("SELECT count(*) > 0 FROM usage").fetchone()
        return (
            "this store's usage rows are not priced yet; run `sessiongraph reprice`"
            if has_rows and has_rows[0]
            else None
        )
    current = library()
    if stored.split(" + ", 1)[0] != current:
        return f"dollars in this store were priced with {stored.split(' + ', 1)[0]}, not the installed {current}; run `sessiongraph reprice`"
    return None


def _meta(store: Store, key: str) -> str | None:
    row = store.con.execute("SELECT value FROM sessiongraph_meta WHERE key = ?", [key]).fetchone()
    return row[0] if row else None
