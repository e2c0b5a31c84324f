"""One run as a self-contained HTML page: a swimlane timeline, sortable tables, a details panel.

The page loads nothing: styles, script and data sit inline, and a Content-Security-Policy that
admits only those exact inline blocks (by hash) keeps a hostile path or id from fetching or
running anything. Data rides as JSON in a ``<script type="application/json">`` block and is
drawn by ``assets/run.js`` through ``textContent``/``setAttribute`` only. Ids, times, models,
token counts, paths and evidence labels go in; prompt, command and output text never does.
"""

from __future__ import annotations

import base64
import hashlib
import html
import os
from datetime import datetime
from importlib import resources

import orjson
import polars as pl

from sessiongraph.errors import SessiongraphError
from sessiongraph.inference.edges import EDGE_KINDS
from sessiongraph.ingest.frames import TIERS
from sessiongraph.store import Store
from sessiongraph.views.show import RunGraph, run_graph

# Fixed colour slots (hc-N in the CSS) so a harness looks the same on every page; others take the rest.
HARNESS_SLOTS = {"claude-code": 0, "codex": 1, "gemini-cli": 2, "pi": 3, "omp": 4, "opencode": 5, "ocp": 6}
N_SLOTS = 10
STREAMS = (
    "input_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cache_creation_5m_tokens",
    "cache_creation_1h_tokens",
    "output_tokens",
    "reasoning_tokens",
)


# -- the page shell, shared with the report --------------------------------------------------------


def asset(name: str) -> str:
    return resources.files("sessiongraph.views").joinpath("assets", name).read_text(encoding="utf-8")


def esc(value: object) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def json_text(data: object) -> str:
    """JSON safe inside a script element: no ``<``, ``>`` or ``&`` survives unescaped."""
    text = orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS).decode()
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def page(title: str, body: str, *, css: str, js: str = "", data: object = None) -> str:
    """A whole document. Only the given inline style and script may apply (CSP hashes)."""
    for text in (css, js):
        if "</" in text:
            raise ValueError("inline assets must not contain '</'")
    script_src = _sha(js) if js else "'none'"
    csp = (
        f"default-src 'none'; img-src data:; style-src {_sha(css)}; script-src {script_src}; "
        "base-uri 'none'; form-action 'none'"
    )
    blocks = []
    if data is not None:
        blocks.append(f'<script type="application/json" id="sg-data">{json_text(data)}</script>')
    if js:
        blocks.append(f"<script>{js}</script>")
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f'<meta http-equiv="Content-Security-Policy" content="{esc(csp)}">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="generator" content="sessiongraph">\n<title>{esc(title)}</title>\n'
        f"<style>{css}</style>\n</head>\n<body>\n{body}\n" + "\n".join(blocks) + "\n</body>\n</html>\n"
    )


def save(path: str | os.PathLike, text: str) -> None:
    try:
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    except OSError as exc:
        raise SessiongraphError(f"cannot write {path}: {exc.strerror or exc}", path=str(path)) from None


def harness_classes(harnesses: list[str]) -> dict[str, str]:
    free = [i for i in range(N_SLOTS) if i not in HARNESS_SLOTS.values()]
    out, n = {}, 0
    for h in sorted(set(harnesses)):
        if h in HARNESS_SLOTS:
            out[h] = f"hc-{HARNESS_SLOTS[h]}"
        else:
            out[h] = f"hc-{free[n % len(free)]}"
            n += 1
    return out


def ms(value: datetime | None) -> float | None:
    return None if value is None else round(value.timestamp() * 1000, 3)


# -- costs ---------------------------------------------------------------------------------------

# Per session of a run: dollars by the store's one summing rule (usd_total), requests by its one
# counting rule (n_requests: a session's totals are no request), the harness's own dollars apart
# (reported_total; sql/views/costs.sql); unpriced: the models of rows with tokens but no price.
_SESSION_COSTS_SQL = f"""
SELECT session_id, n_requests(scope) AS requests, count(*) FILTER (WHERE NOT is_request(scope)) AS session_rows,
       {", ".join(f"sum({c})::BIGINT AS {c}" for c in STREAMS)},
       usd_total(usd) AS usd, reported_total(reported_usd) AS reported_usd,
       list(DISTINCT model_id ORDER BY model_id) FILTER (usd IS NULL AND counted) AS unpriced
FROM usage_costs WHERE run_id = $1 GROUP BY session_id
"""


# -- the run page ----------------------------------------------------------------------------------

_EXTERNAL_SQL = """
SELECT o.session_id, o.harness, o.session_kind, o.model, o.started_at, o.ended_at, m.run_id
FROM session_overview o LEFT JOIN run_sessions m USING (session_id)
WHERE list_contains($1, o.session_id)
"""

_ARTIFACTS_SQL = """
WITH ids AS (SELECT list(session_id) AS ids FROM run_sessions WHERE run_id = $1)
SELECT a.path, a.version, a.producer, a.call_id, a.ts, a.how, a.tier, a.n_writes, a.consumers
FROM artifacts a, ids
WHERE list_contains(ids.ids, a.producer) OR list_has_any(ids.ids, coalesce(a.consumers, []))
ORDER BY a.path, a.version
"""


def short_id(session_id: str) -> str:
    """``claude-code:b720e73d-...`` -> ``b720e73d``; a subagent ``.../aba3165e31922a567`` -> its agent id."""
    tail = _tail(session_id)
    return tail.split("-", 1)[0][:18] if "-" in tail and len(tail) > 18 else tail[:18]


def _tail(session_id: str) -> str:
    return session_id.split(":", 1)[-1].rsplit("/", 1)[-1]


def short_ids(session_ids: list[str]) -> dict[str, str]:
    """Each id's :func:`short_id`, made longer (more of its tail, then its whole id) until no other
    id on the page has the same: two Codex sessions started in the same minute share their first
    eight digits (time-ordered UUIDs)."""
    ids = sorted(set(session_ids))
    tails = {sid: _tail(sid) for sid in ids}
    out = {}
    for sid in ids:
        short = short_id(sid)
        others = [t for o, t in tails.items() if o != sid]
        n = len(short)
        while tails[sid].startswith(short) and any(t.startswith(short) for t in others) and n < len(tails[sid]):
            n += 1
            short = tails[sid][:n]
        if any(t == short for t in others) or not tails[sid].startswith(short):  # same tail: the whole id
            short = sid if any(t == tails[sid] for t in others) else short
        out[sid] = short
    return out


def lane_order(members: pl.DataFrame) -> list[str]:
    """Depth first from the root, children by start time: a lane sits under its parent."""
    rows = members.sort("started_at", "session_id", nulls_last=True).iter_rows(named=True)
    ids, depth = [], {}
    kids: dict[str, list[str]] = {}
    roots: list[str] = []
    present = set(members["session_id"])
    for m in rows:
        parent, depth[m["session_id"]] = m["parent_session_id"], m["depth"]
        (kids.setdefault(parent, []) if parent in present else roots).append(m["session_id"])
    roots.sort(key=lambda s: depth[s] or 0)
    stack = list(reversed(roots))
    seen = set()
    while stack:
        sid = stack.pop()
        if sid in seen:
            continue
        seen.add(sid)
        ids.append(sid)
        stack.extend(reversed(kids.get(sid, [])))
    return ids + [s for s in members["session_id"] if s not in seen]


def run_data(store: Store, graph: RunGraph) -> dict:
    """Everything the page draws, as plain JSON-able values (times in ms since the epoch, UTC)."""
    run = graph.run
    per_session = store.query(_SESSION_COSTS_SQL, [run["run_id"]])
    run_usd = store.query("SELECT usd FROM run_costs WHERE run_id = $1", [run["run_id"]])["usd"]
    cost = {r["session_id"]: r for r in per_session.iter_rows(named=True)}
    order = lane_order(graph.members)
    lane = {sid: i for i, sid in enumerate(order)}
    sessions = []
    for m in graph.members.iter_rows(named=True):
        c = cost.get(m["session_id"], {})
        start, end = m["started_at"], m["ended_at"]
        sessions.append(
            {
                "id": m["session_id"],
                "short": m["session_id"],  # made unique over the page below
                "lane": lane[m["session_id"]],
                "parent": m["parent_session_id"],
                "via": m["via"],
                "depth": m["depth"],
                "role": m["role"],
                "role_tier": m.get("role_tier"),
                "phase": m.get("phase"),
                "harness": m["harness"],
                "kind": m["session_kind"],
                "model": m["model"],
                "entrypoint": m["entrypoint"],
                "start": ms(start),
                "end": ms(end),
                "dur_s": (end - start).total_seconds() if start and end else None,
                "tokens": {k.removesuffix("_tokens"): int(c.get(k) or 0) for k in STREAMS}
                | {"total": int(m["total_tokens"] or 0)},
                "requests": int(c.get("requests") or 0),
                "session_totals": bool(c.get("session_rows")),  # tokens the harness totals per session
                "usd": c["usd"] if c else 0.0,
                "reported_usd": c.get("reported_usd"),
                "unpriced": c.get("unpriced") or [],
                "external": False,
                "run": run["run_id"],
            }
        )
    sessions.sort(key=lambda s: s["lane"])
    edges = [
        {
            "id": e["edge_id"],
            "kind": e["kind"],
            "src": e["src"],
            "dst": e["dst"],
            "tier": e["tier"],
            "evidence": e["evidence"],
            "pass": e["pass"],
            "ts": ms(e["ts"]),
            "lag_s": e["lag_s"],
            "path": e["path"],
            "version": e["version"],
            "run": e["run_id"],
            "src_call": e["src_call_id"],
            "dst_call": e["dst_call_id"],
            "src_tier": e["src_tier"],
            "dst_tier": e["dst_tier"],
        }
        for e in graph.edges.iter_rows(named=True)
    ]
    sessions += _external(store, edges, lane)
    shorts = short_ids([x["id"] for x in sessions])
    for x in sessions:
        x["short"] = shorts[x["id"]]
    artifacts = _artifacts(store, run["run_id"])
    kinds = list(EDGE_KINDS) + sorted({e["kind"] for e in edges} - set(EDGE_KINDS))
    tiers = list(TIERS) + sorted({e["tier"] for e in edges} - set(TIERS))
    harnesses = sorted({s["harness"] or "unknown" for s in sessions})
    return {
        "run": {
            "id": run["run_id"],
            "root": run["root_session_id"],
            "start": ms(run["started_at"]),
            "end": ms(run["ended_at"]),
            "n_sessions": run["n_sessions"],
            "producer": run.get("producer"),
            "usd": run_usd[0] if len(run_usd) else 0.0,
            "tokens": sum(s["tokens"]["total"] for s in sessions if not s["external"]),
        },
        "sessions": sessions,
        "edges": edges,
        "artifacts": artifacts,
        "legend": {
            "kinds": kinds,
            "tiers": tiers,
            "harnesses": harnesses,
            "kind_class": {k: f"k-{k}" if k in EDGE_KINDS else "k-other" for k in kinds},
            "tier_class": {t: f"t-{t}" if t in TIERS else "t-other" for t in tiers},
            "harness_class": harness_classes(harnesses),
        },
    }


def _external(store: Store, edges: list[dict], lane: dict[str, int]) -> list[dict]:
    """Sessions of other runs at the far end of an edge get a lane of their own, marked external."""
    ids = sorted({e[end] for e in edges for end in ("src", "dst")} - set(lane))
    found = {r["session_id"]: r for r in store.query(_EXTERNAL_SQL, [ids]).iter_rows(named=True)} if ids else {}
    out = []
    for i, sid in enumerate(ids):
        r = found.get(sid, {})
        out.append(
            {
                "id": sid,
                "short": sid,
                "lane": len(lane) + i,
                "parent": None,
                "via": None,
                "depth": 0,
                "role": None,
                "harness": r.get("harness"),
                "kind": r.get("session_kind"),
                "model": r.get("model"),
                "start": ms(r.get("started_at")),
                "end": ms(r.get("ended_at")),
                "external": True,
                "run": r.get("run_id"),
            }
        )
    return out


def _artifacts(store: Store, run_id: str) -> list[dict]:
    rows = store.query(_ARTIFACTS_SQL, [run_id])
    out: dict[str, dict] = {}
    for r in rows.iter_rows(named=True):
        a = out.setdefault(r["path"], {"path": r["path"], "versions": [], "writers": [], "readers": []})
        readers = list(r["consumers"] or [])
        a["versions"].append(
            {
                "version": r["version"],
                "producer": r["producer"],
                "call": r["call_id"],
                "ts": ms(r["ts"]),
                "how": r["how"],
                "tier": r["tier"],
                "readers": readers,
                "of": r["n_writes"],
            }
        )
        for key, ids in (("writers", [r["producer"]]), ("readers", readers)):
            a[key] += [s for s in ids if s not in a[key]]
    return list(out.values())


def render_run(data: dict) -> str:
    r = data["run"]
    title = f"run {r['id']} · sessiongraph"
    body = asset("run.html").format(
        run_id=esc(r["id"]),
        root=esc(r["root"]),
        legend=legend(data),
        n_sessions=r["n_sessions"],
        n_edges=len(data["edges"]),
        n_artifacts=len(data["artifacts"]),
    )
    return page(title, body, css=asset("page.css") + asset("run.css"), js=asset("run.js"), data=data)


def legend(data: dict) -> str:
    lg = data["legend"]
    count: dict[tuple[str, str], int] = {}
    for e in data["edges"]:
        count[("kind", e["kind"])] = count.get(("kind", e["kind"]), 0) + 1
        count[("tier", e["tier"])] = count.get(("tier", e["tier"]), 0) + 1
    items = []
    for what, names, cls in (("kind", lg["kinds"], lg["kind_class"]), ("tier", lg["tiers"], lg["tier_class"])):
        for name in names:
            n = count.get((what, name), 0)
            line_cls = f"{cls[name]} t-verified" if what == "kind" else f"k-sample {cls[name]}"
            items.append(
                f'<li data-legend-{what}="{esc(name)}" class="{"present" if n else "absent"}">'
                f'<svg class="swatch" width="34" height="10" aria-hidden="true"><line x1="2" y1="5" x2="32" y2="5" '
                f'class="{line_cls}"/></svg>{esc(name)} <span class="n">{n}</span></li>'
            )
    for h in lg["harnesses"]:
        items.append(
            f'<li data-legend-harness="{esc(h)}"><span class="chip {lg["harness_class"][h]}"></span>{esc(h)}</li>'
        )
    return "\n".join(items)


def run_page(store: Store, ref: str) -> str:
    """The page of the run ``ref`` names (a run id, a member session id, or a unique prefix)."""
    graph = run_graph(store, ref)
    return render_run(run_data(store, graph))
