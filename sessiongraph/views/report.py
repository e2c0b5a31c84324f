"""The store's history at a glance: runs and dollars per day, the costliest runs, subagents and
launches, the tier mix of every edge and the diagnostics counts; as text or one HTML page.

``since`` keeps the runs active on or after it (as ``export ocp --since``), and of those the
requests and days on or after it: per-day rows, dollars and totals cover the window only, a run's
own figure (most expensive runs) is the whole run's, as ``run_costs`` has it. Without it,
diagnostics of files that yielded no session count too. Dollars are the store's
(``sessiongraph.costs``: each request priced at ingest, at its date), summed by the views' one
rule (``sql/views/costs.sql``); tokens of a model without a price are shown as unpriced ("n/a"),
never as $0, and the "Prices" section says which source priced which model.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

import polars as pl

from sessiongraph.store import Store
from sessiongraph.views.html import asset, esc, page
from sessiongraph.views.output import table

TOP_RUNS = 10
LAST_COMMITS = 50  # the commits section lists the latest ones; its title counts them all

# Runs active on or after since, with their dollars (run_costs: the whole run).
_RUNS_SQL = """
SELECT run_id, root_session_id, root_harness, started_at, ended_at, n_sessions,
       CAST(timezone('UTC', started_at) AS DATE) AS day, usd, usd_priced, unpriced_tokens
FROM run_costs
WHERE $1::TIMESTAMPTZ IS NULL OR ended_at IS NULL OR ended_at >= $1::TIMESTAMPTZ
ORDER BY started_at NULLS LAST, run_id
"""
# The requests of those runs made in the window. Every dollar sum below is usd_total/usd_priced
# (sql/views/costs.sql), the store's one rule.
_WINDOW = """
usage_costs WHERE run_id IN (SELECT run_id FROM sg_report_runs)
AND ($1::TIMESTAMPTZ IS NULL OR ts IS NULL OR ts >= $1::TIMESTAMPTZ)
"""
_COST_SQL = f"""
SELECT day, harness, coalesce(model_id, '(none)') AS model, sum(tokens)::BIGINT AS tokens, usd_total(usd) AS usd
FROM {_WINDOW} GROUP BY ALL ORDER BY day NULLS LAST, harness NULLS LAST, model
"""
_SOURCES_SQL = f"""
SELECT coalesce(price_source, '(no price)') AS source, coalesce(model_id, '(none)') AS model,
       string_agg(DISTINCT priced_as, ' ' ORDER BY priced_as) AS priced_as, count(*) AS requests,
       sum(tokens)::BIGINT AS tokens, usd_total(usd) AS usd
FROM {_WINDOW} GROUP BY ALL ORDER BY source, model
"""
_TOTAL_SQL = f"""
SELECT usd_priced(usd) AS usd, coalesce(sum(tokens) FILTER (usd IS NULL), 0)::BIGINT AS unpriced_tokens FROM {_WINDOW}
"""
# Per UTC day: the runs and sessions active that day (a request made, or a session started), and
# the dollars of that day's requests.
_PER_DAY_SQL = f"""
WITH active AS (
    SELECT day, run_id, session_id FROM {_WINDOW}
    UNION
    SELECT CAST(timezone('UTC', s.started_at) AS DATE), m.run_id, m.session_id
    FROM run_sessions m JOIN (SELECT session_id, min(started_at) AS started_at FROM sessions GROUP BY 1) s
         USING (session_id)
    WHERE m.run_id IN (SELECT run_id FROM sg_report_runs)
      AND ($1::TIMESTAMPTZ IS NULL OR s.started_at >= $1::TIMESTAMPTZ)
), money AS (
    SELECT day, usd_priced(usd) AS usd, coalesce(sum(tokens) FILTER (usd IS NULL), 0)::BIGINT AS unpriced_tokens
    FROM {_WINDOW} GROUP BY day
)
SELECT day, count(DISTINCT run_id) AS runs, count(DISTINCT session_id) AS sessions,
       coalesce(any_value(money.usd), 0.0) AS usd, coalesce(any_value(money.unpriced_tokens), 0)::BIGINT AS unpriced_tokens
FROM active LEFT JOIN money USING (day)
GROUP BY day ORDER BY day NULLS LAST
"""
_MEMBERS_SQL = """
SELECT m.run_id, m.session_id, m.via, s.harness
FROM run_sessions m JOIN (SELECT session_id, any_value(harness) AS harness FROM sessions GROUP BY 1) s
     USING (session_id)
WHERE m.run_id IN (SELECT run_id FROM sg_report_runs)
"""
_EDGES_SQL = """
SELECT kind, tier, count(*) AS edges FROM all_edges
WHERE run_id IN (SELECT run_id FROM sg_report_runs)
   OR src IN (SELECT session_id FROM sg_report_sessions) OR dst IN (SELECT session_id FROM sg_report_sessions)
GROUP BY ALL ORDER BY kind, tier
"""
# Commits, pushes and PRs the chosen runs made (commit_costs), with the run's dollars; and per
# branch the runs that committed, pushed or opened a PR there, each run's dollars and each commit
# and PR counted once (as branch_costs, for the chosen runs only). A repository URL is shown
# without its scheme: the HTML page links nowhere outside itself.
_REPO = "regexp_replace(repo, '^[A-Za-z][A-Za-z0-9+.-]*://', '')"
_COMMITS_SQL = f"""
SELECT ts, run_id, kind, tier, evidence, {_REPO} AS repo, branch, commit_hash, pr_number, run_usd AS usd
FROM commit_costs WHERE run_id IN (SELECT run_id FROM sg_report_runs)
ORDER BY ts DESC NULLS LAST, source_path, line
"""
_BRANCHES_SQL = f"""
WITH c AS (SELECT * FROM commit_costs WHERE branch IS NOT NULL AND run_id IN (SELECT run_id FROM sg_report_runs)),
r AS (SELECT branch, run_id, any_value({_REPO}) AS repo FROM c GROUP BY branch, run_id),
n AS (SELECT branch, count(DISTINCT commit_hash) FILTER (kind = 'commit') AS commits,
             count(DISTINCT pr_url) AS prs FROM c GROUP BY branch)
SELECT r.branch, any_value(r.repo) AS repo, count(*) AS runs, any_value(n.commits)::BIGINT AS commits,
       any_value(n.prs)::BIGINT AS prs, usd_total(rc.usd) AS usd
FROM r JOIN run_costs rc USING (run_id) JOIN n USING (branch)
GROUP BY r.branch ORDER BY usd DESC NULLS LAST, r.branch
"""
_DIAG_SQL = """
SELECT 'ingest' AS source, code, sum(coalesce(count, 1))::BIGINT AS count FROM diagnostics
WHERE $1 OR source_path IN (SELECT s.source_path FROM sessions s JOIN sg_report_sessions USING (session_id))
GROUP BY ALL
UNION ALL
SELECT 'inference', pass || '.' || code, sum(count)::BIGINT FROM inference_diagnostics
WHERE $1 OR session_id IN (SELECT session_id FROM sg_report_sessions)
GROUP BY ALL
ORDER BY 1, 2
"""


@dataclass(frozen=True, slots=True)
class Report:
    since: datetime | None
    runs: pl.DataFrame  # one row per run, with usd (priced part) and unpriced_tokens
    per_day: pl.DataFrame  # day, runs, sessions, usd, unpriced_tokens
    cost: pl.DataFrame  # day, harness, model, tokens, usd (null: no price)
    sources: pl.DataFrame  # source, model, priced_as, requests, tokens, usd: which source priced what
    spawned: pl.DataFrame  # harness, sessions, subagents, launched
    tiers: pl.DataFrame  # kind, tier, edges
    diagnostics: pl.DataFrame  # source, code, count
    commits: pl.DataFrame  # ts, run_id, kind, tier, evidence, repo, branch, commit_hash, pr_number, usd (the run's)
    branches: pl.DataFrame  # branch, repo, runs, commits, prs, usd: dollars per branch
    total: dict  # usd (priced part), unpriced_tokens: the window's requests

    @property
    def top_runs(self) -> pl.DataFrame:
        return (
            self.runs.filter(pl.col("usd_priced") > 0)
            .sort(["usd_priced", "run_id"], descending=[True, False])
            .head(TOP_RUNS)
        )


def _unknown_usd() -> pl.Expr:
    """Only unpriced tokens: no dollar figure at all (n/a); no tokens at all: $0."""
    return (
        pl.when((pl.col("usd") == 0) & (pl.col("unpriced_tokens") > 0)).then(None).otherwise(pl.col("usd")).alias("usd")
    )


def build(store: Store, *, since: datetime | None = None) -> Report:
    runs = store.query(_RUNS_SQL, [since])
    store.con.register("sg_report_runs", runs.select("run_id").to_arrow())
    try:
        members = store.query(_MEMBERS_SQL)
        store.con.register("sg_report_sessions", members.select("session_id").to_arrow())
        tiers = store.query(_EDGES_SQL)
        diagnostics = store.query(_DIAG_SQL, [since is None])
        cost = store.query(_COST_SQL, [since])
        sources = store.query(_SOURCES_SQL, [since])
        total = store.query(_TOTAL_SQL, [since]).row(0, named=True)
        per_day = store.query(_PER_DAY_SQL, [since]).with_columns(_unknown_usd())
        commits = store.query(_COMMITS_SQL)
        branches = store.query(_BRANCHES_SQL)
    finally:
        store.con.unregister("sg_report_runs")
        store.con.unregister("sg_report_sessions")
    spawned = (
        members.group_by("harness")
        .agg(
            sessions=pl.len(),
            subagents=(pl.col("via") == "spawn").sum(),
            launched=(pl.col("via") == "launch").sum(),
        )
        .sort("harness")
    )
    return Report(since, runs, per_day, cost, sources, spawned, tiers, diagnostics, commits, branches, total)


# -- text ------------------------------------------------------------------------------------------


def usd_text(usd: float | None) -> str:
    return "n/a" if usd is None else f"${usd:,.2f}" if usd >= 0.01 or usd == 0 else f"${usd:.4f}"


USD_TEXT = pl.col("usd").map_elements(usd_text, return_dtype=pl.String, skip_nulls=False)


def _totals(r: Report) -> dict[str, str]:
    s = r.spawned
    unpriced = r.total["unpriced_tokens"]
    return {
        "runs": f"{r.runs.height:,}",
        "sessions": f"{int(s['sessions'].sum()):,}",
        "subagents": f"{int(s['subagents'].sum()):,}",
        "launched": f"{int(s['launched'].sum()):,}",
        "edges": f"{int(r.tiers['edges'].sum()):,}",
        "dollars": usd_text(r.total["usd"]) + (f" (+ {unpriced:,} unpriced tokens)" if unpriced else ""),
    }


def _tier_mix(r: Report) -> pl.DataFrame:
    return (
        r.tiers.group_by("tier")
        .agg(pl.col("edges").sum())
        .with_columns(share=(100 * pl.col("edges") / pl.col("edges").sum()).round(1))
        .sort("tier")
    )


def text(r: Report) -> str:
    since = f" since {r.since:%Y-%m-%d %H:%M}" if r.since else ""
    out = [f"sessiongraph report{since}", ""]
    out += [f"{k:>10}: {v}" for k, v in _totals(r).items()]
    peak = max([u for u in r.per_day["usd"] if u] or [1.0])
    days = r.per_day.with_columns(
        USD_TEXT,
        bar=pl.col("usd").map_elements(lambda u: "#" * math.ceil(30 * u / peak) if u else "", return_dtype=pl.String),
    )
    sections = [
        ("Runs and dollars per day (UTC)", days),
        ("Dollars per day by harness and model", r.cost.with_columns(USD_TEXT)),
        ("Prices: which source priced which model", r.sources.with_columns(USD_TEXT)),
        (f"Most expensive runs (top {TOP_RUNS})", _runs_out(r.top_runs)),
        ("Subagents and launched sessions by harness", r.spawned),
        ("Edges by kind and tier", r.tiers),
        ("Tier mix of all edges", _tier_mix(r)),
        (_commits_title(r), r.commits.head(LAST_COMMITS).with_columns(USD_TEXT)),
        (
            "Dollars per branch (the runs that committed, pushed or opened a PR there)",
            r.branches.with_columns(USD_TEXT),
        ),
        ("Diagnostics", r.diagnostics),
    ]
    for title, df in sections:
        out += ["", title, table(df) if df.height else "(none)"]
    return "\n".join(out)


def _commits_title(r: Report) -> str:
    c = r.commits
    n_commits = c.filter(pl.col("kind") == "commit").height
    n_prs = c.filter(pl.col("kind") == "pr")["pr_number"].n_unique() if c.height else 0
    shown = f", latest {LAST_COMMITS}" if c.height > LAST_COMMITS else ""
    return f"Commits and PRs made ({n_commits} commits, {n_prs} PRs{shown}; usd: the run's)"


def _runs_out(df: pl.DataFrame) -> pl.DataFrame:
    # usd as run_costs has it (n/a when a request has no price); priced: the known part
    priced = pl.col("usd_priced").map_elements(usd_text, return_dtype=pl.String).alias("priced")
    return df.select("run_id", "root_harness", "started_at", "n_sessions", USD_TEXT, priced, "unpriced_tokens")


# -- html ------------------------------------------------------------------------------------------


def html(r: Report) -> str:
    since = f" since {r.since:%Y-%m-%d %H:%M}" if r.since else ""
    cards = "".join(
        f'<div class="card" data-total="{k}"><b>{esc(v)}</b><span>{k}</span></div>' for k, v in _totals(r).items()
    )
    known = r.per_day.filter(pl.col("day").is_not_null())
    cost = r.cost.filter(pl.col("day").is_not_null() & pl.col("usd").is_not_null())
    series = sorted({(h or "unknown", m) for h, m in cost.select("harness", "model").iter_rows()})
    cls = series_classes(series)
    values = {(d, (h or "unknown", m)): u for d, h, m, u in cost.select("day", "harness", "model", "usd").iter_rows()}
    days = _day_range(known["day"].to_list())
    runs_chart = bar_chart(
        days,
        [("runs", "hc-1")],
        {(d, "runs"): n for d, n in known.select("day", "runs").iter_rows()},
        fmt=lambda v: f"{v:,g}",
        label="Runs per day",
    )
    usd_chart = bar_chart(
        days,
        [(s, cls[s]) for s in series],
        values,
        fmt=usd_text,
        label="Dollars per day by harness and model",
        name=lambda s: f"{s[0]} · {s[1]}",
    )
    legend = "".join(
        f'<li data-series="{esc(h)} {esc(m)}"><span class="chip {cls[(h, m)]}"></span>{esc(h)} · {esc(m)}</li>'
        for h, m in series
    )
    unpriced = r.cost.filter(pl.col("usd").is_null()).group_by("harness", "model").agg(pl.col("tokens").sum())
    body = f"""<header><h1>sessiongraph report{esc(since)}</h1></header>
<section class="cards">{cards}</section>
<h2>Runs per day <span class="n">UTC</span></h2>{runs_chart}
<h2>Dollars per day by harness and model</h2>{usd_chart}<ul class="series">{legend}</ul>
{_unpriced_note(unpriced)}
<h2>Prices: which source priced which model</h2>{html_table(r.sources.with_columns(USD_TEXT), "sources")}
<h2>Most expensive runs</h2>{html_table(_runs_out(r.top_runs), "top-runs", links={"run_id": run_page_name})}
<p class="hint">Each run id links to its page in <code>{RUN_PAGES}/</code> beside this report (written with it by
<code>sessiongraph report --format html --out FILE</code>); or <code>sessiongraph show RUN --format html --out run.html</code>.</p>
<h2>Subagents and launched sessions</h2>{html_table(r.spawned, "spawned")}
<h2>Tier mix of all edges</h2>{tier_bar(_tier_mix(r))}{html_table(r.tiers, "tiers")}
<h2>{esc(_commits_title(r))}</h2>{html_table(r.commits.head(LAST_COMMITS).with_columns(USD_TEXT), "commits")}
<h2>Dollars per branch</h2>{html_table(r.branches.with_columns(USD_TEXT), "branches")}
<h2>Diagnostics</h2>{html_table(r.diagnostics, "diagnostics")}
<h2>Per day</h2>{html_table(r.per_day.with_columns(USD_TEXT), "per-day")}
<footer class="hint">Written by sessiongraph from session metadata; no prompt, command or output text.
Dollars are list prices at each request's date (see "Prices" for their source); tokens of models without a price are counted as unpriced, never as $0.</footer>"""
    return page(f"sessiongraph report{since}", body, css=asset("page.css") + asset("report.css") + _pattern_css())


# Colour-blind-safe qualitative colours (Paul Tol's "muted" scheme), one per model series in the
# chart, kept together by harness; past nine series the colours come again hatched, then
# back-hatched, then dotted, so 36 models each have a look of their own (report.css, _patterns).
PALETTE = ("#332288", "#88ccee", "#44aa99", "#117733", "#999933", "#ddcc77", "#cc6677", "#882255", "#aa4499")
STYLES = ("", "hatch", "back", "dots")
RUN_PAGES = "runs"  # the folder beside an HTML report that holds its runs' pages


def series_classes(series: list) -> dict:
    n = len(PALETTE)
    return {s: f"m-{i % n}" + (f" {STYLES[i // n % len(STYLES)]}" if i >= n else "") for i, s in enumerate(series)}


def run_page_name(run_id: str) -> str:
    """The address of a run's page from the report: ``runs/<run id, made file-safe>.html``."""
    return f"{RUN_PAGES}/{re.sub(r'[^A-Za-z0-9._-]', '_', run_id)}.html"


def _unpriced_note(df: pl.DataFrame) -> str:
    if not df.height:
        return ""
    items = ", ".join(f"{esc(h)} · {esc(m)} ({t:,} tokens)" for h, m, t in df.sort("harness", "model").iter_rows())
    return f'<p class="hint" id="unpriced">No price (n/a, left out of the chart): {items}</p>'


def _day_range(days: list[date]) -> list[date]:
    if not days:
        return []
    lo, hi = min(days), max(days)
    return [lo + timedelta(days=i) for i in range((hi - lo).days + 1)]


def bar_chart(days, series, values, *, fmt, label, name=str) -> str:
    """Stacked bars, one per day, one segment per series; inline SVG with a <title> per segment."""
    if not days:
        return '<p class="hint">No data.</p>'
    w, h, left, top, bottom = 900, 220, 64, 10, 28
    totals = [sum(values.get((d, s), 0) or 0 for s, _ in series) for d in days]
    step = _nice((max(totals) or 1) / 4)
    ticks = math.ceil((max(totals) or 1) / step - 1e-9)
    peak = step * ticks
    bw = (w - left - 8) / len(days)
    y = lambda v: top + (h - top - bottom) * (1 - v / peak)  # noqa: E731
    out = [f'<svg class="chart" viewBox="0 0 {w} {h}" role="img" aria-label="{esc(label)}">', _patterns()]
    for i in range(ticks + 1):
        v = step * i
        out.append(
            f'<line class="grid" x1="{left}" x2="{w - 8}" y1="{y(v):.1f}" y2="{y(v):.1f}"/>'
            f'<text class="tick" x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{esc(fmt(v))}</text>'
        )
    every = max(1, math.ceil(len(days) / 12))
    for i, (d, total) in enumerate(zip(days, totals, strict=True)):
        x, base = left + i * bw, 0.0
        for s, css in series:
            v = values.get((d, s)) or 0
            if v > 0:
                out.append(
                    f'<rect class="{css}" x="{x + bw * 0.1:.1f}" y="{y(base + v):.1f}" width="{bw * 0.8:.1f}" '
                    f'height="{y(base) - y(base + v):.1f}" data-day="{d}"><title>{d} · {esc(name(s))}: '
                    f"{esc(fmt(v))}</title></rect>"
                )
                base += v
        if i % every == 0:
            out.append(f'<text class="tick" x="{x + bw / 2:.1f}" y="{h - 10}" text-anchor="middle">{d:%m-%d}</text>')
        out.append(
            f'<rect class="hover" x="{x:.1f}" y="{top}" width="{bw:.1f}" height="{h - top - bottom}">'
            f"<title>{d}: {esc(fmt(total))}</title></rect>"
        )
    out.append("</svg>")
    return "".join(out)


def _patterns() -> str:
    """A patterned fill per palette colour and style (``rect.<style>.m-N``, :func:`_pattern_css`)."""
    marks = {
        "hatch": ('patternTransform="rotate(45)"', '<rect width="2.5" height="6" fill="#fff"/>'),
        "back": ('patternTransform="rotate(-45)"', '<rect width="2.5" height="6" fill="#fff"/>'),
        "dots": ("", '<circle cx="3" cy="3" r="1.4" fill="#fff"/>'),
    }
    defs = "".join(
        f'<pattern id="{style}-{i}" width="6" height="6" patternUnits="userSpaceOnUse" {turn}>'
        f'<rect width="6" height="6" fill="{c}"/>{mark}</pattern>'
        for style, (turn, mark) in marks.items()
        for i, c in enumerate(PALETTE)
    )
    return f"<defs>{defs}</defs>"


def _pattern_css() -> str:
    return "".join(
        f".chart rect.{style}.m-{i} {{ fill: url(#{style}-{i}); }}\n"
        for style in STYLES[1:]
        for i in range(len(PALETTE))
    )


def _nice(v: float) -> float:
    """The smallest 1, 2 or 5 times a power of ten that is at least ``v``."""
    mag = 10 ** math.floor(math.log10(v))
    return next(m * mag for m in (1, 2, 5, 10) if m * mag >= v * (1 - 1e-9))


def tier_bar(mix: pl.DataFrame) -> str:
    total = int(mix["edges"].sum()) if mix.height else 0
    if not total:
        return ""
    x, parts = 0.0, []
    for tier, n, share in mix.iter_rows():
        w = 600 * n / total
        parts.append(
            f'<rect class="tier-{esc(tier)}" x="{x:.1f}" y="0" width="{w:.1f}" height="18"><title>{esc(tier)}: '
            f"{n} edges ({share}%)</title></rect>"
        )
        if w > 70:
            parts.append(f'<text x="{x + 6:.1f}" y="13">{esc(tier)} {share}%</text>')
        x += w
    return f'<svg class="tierbar" viewBox="0 0 600 18" role="img" aria-label="Tier mix">{"".join(parts)}</svg>'


def html_table(df: pl.DataFrame, name: str, links: dict | None = None) -> str:
    """A table; ``links`` (column -> value -> relative address) makes that column's cells links."""
    if not df.height:
        return f'<p class="hint" id="{name}">(none)</p>'
    links = links or {}
    head = "".join(f'<th class="{"num" if df.schema[c].is_numeric() else ""}">{esc(c)}</th>' for c in df.columns)
    rows = []
    for row in df.iter_rows():
        cells = "".join(
            f'<td class="{"num" if df.schema[c].is_numeric() else ""}">'
            + (f'<a href="{esc(links[c](v))}">{_cell(v)}</a>' if c in links and v is not None else _cell(v))
            + "</td>"
            for c, v in zip(df.columns, row, strict=True)
        )
        rows.append(f"<tr>{cells}</tr>")
    return f'<div class="scroll"><table id="{name}"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def _cell(v: object) -> str:
    if v is None:
        return '<span class="na">n/a</span>'
    if isinstance(v, datetime):
        return esc(f"{v:%Y-%m-%d %H:%M:%S}")
    if isinstance(v, int):
        return f"{v:,}"
    return esc(v)


def report(store: Store, *, since: datetime | None = None, fmt: str = "text") -> str:
    r = build(store, since=since)
    return html(r) if fmt == "html" else text(r)
