"""Runs stated by imported OCP documents: taken as stated, never re-inferred.

Each document gives one run (its own ``run.id``), one member per node (session id
``ocp:<run id>/<node id>``), its edges with their tiers, and its artifacts. Depth and the
spawn/launch tree come from the document's spawn and launch edges; roles and phases from its
first attempt at each node. A document whose run id is already a run inferred from logs (our
own export, imported into the store that made it), or that has no nodes, is skipped and counted;
so is one this step cannot read (a diagnostic naming its file). A spawn or launch edge from a node
to itself, or one closing a cycle, is left out of the tree (``cycle_broken``), so every run has a
root.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
import polars as pl

from sessiongraph.inference.edges import ARTIFACTS, EDGES, RUN_SESSIONS, RUNS, conform, diag_rows, edge_ids
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import as_dict, parse_ts
from sessiongraph.ingest.ocp import node_session

NAME = "declared"


@dataclass(frozen=True, slots=True)
class Declared:
    runs: pl.DataFrame
    run_sessions: pl.DataFrame
    edges: pl.DataFrame
    artifacts: pl.DataFrame
    diagnostics: pl.DataFrame


def declared(frames: Frames, taken: set[str]) -> Declared:
    runs, members, edges, artifacts, skipped, broken = [], [], [], [], [], []
    seen: set[str] = set(taken)
    for row in frames.documents.sort("source_path").iter_rows(named=True):
        if row["run_id"] in seen:
            skipped.append({"session_id": None, "detail": f"run {row['run_id'][:80]} already in the store"})
            continue
        seen.add(row["run_id"])
        doc = orjson.loads(row["document"])
        if not doc.get("nodes"):
            skipped.append({"session_id": None, "detail": f"run {row['run_id'][:80]} has no nodes"})
            continue
        try:
            r, m, e, a, cut = _one(doc, row["producer"])
        except Exception as exc:  # noqa: BLE001 - a crafted document loses its own run, never the others'
            detail = f"{row['source_path']}: {type(exc).__name__} reading the document; its run left out"
            skipped.append({"session_id": None, "detail": detail})
            continue
        broken += [{"session_id": sid, "detail": f"{row['source_path']}: {why}"} for sid, why in cut]
        runs.append(r)
        members += m
        edges += e
        artifacts += a
    schema = {"session_id": pl.String, "detail": pl.String}
    diags = pl.concat(
        [
            diag_rows(NAME, "document_skipped", pl.DataFrame(skipped, schema=schema), pl.col("detail")),
            diag_rows(NAME, "cycle_broken", pl.DataFrame(broken, schema=schema), pl.col("detail")),
        ]
    )
    return Declared(
        conform(pl.DataFrame(runs, schema=RUNS), RUNS),
        conform(pl.DataFrame(members, schema=RUN_SESSIONS), RUN_SESSIONS),
        edge_ids(conform(pl.DataFrame(edges, schema=EDGES), EDGES)),
        conform(pl.DataFrame(artifacts, schema=ARTIFACTS), ARTIFACTS),
        diags,
    )


def _one(doc: dict, producer: str | None) -> tuple[dict, list[dict], list[dict], list[dict], list[tuple[str, str]]]:
    run_id = doc["run"]["id"]
    sid = {n["id"]: node_session(run_id, n["id"]) for n in doc["nodes"]}
    attempts = [
        a
        for a in doc.get("attempts") or []
        if isinstance(a, dict) and isinstance(a.get("node"), str) and a["node"] in sid
    ]
    node_of_attempt = {a.get("id"): a["node"] for a in attempts}
    first: dict[str, dict] = {}
    for a in attempts:
        first.setdefault(a["node"], a)
    edges = [
        e
        for e in doc.get("edges") or []
        if isinstance(e, dict)
        and isinstance(e.get("from"), str)
        and isinstance(e.get("to"), str)
        and e["from"] in sid
        and e["to"] in sid
    ]
    # The spawn/launch tree, first parent wins. An edge from a node to itself, or one that would
    # close a cycle, cannot be part of a tree: it is left out and reported, so every run keeps a
    # root.
    parent: dict[str, tuple[str, str]] = {}
    cut: list[tuple[str, str]] = []
    kept = []
    for e in edges:
        if e.get("kind") in ("spawn", "launch") and e["to"] not in parent:
            up = e["from"]
            while up in parent and up != e["to"]:
                up = parent[up][0]
            if up == e["to"]:
                what = "to itself" if e["from"] == e["to"] else f"closing a cycle through {str(e['from'])[:60]}"
                cut.append((sid[e["to"]], f"{e['kind']} edge of node {str(e['to'])[:60]} {what}; left out"))
                continue
            parent[e["to"]] = (e["from"], e["kind"])
        kept.append(e)
    edges = kept

    def depth(node: str) -> int:
        d, seen = 0, {node}
        while node in parent and parent[node][0] not in seen:
            node = parent[node][0]
            seen.add(node)
            d += 1
        return d

    members = []
    for node in sid:
        a = first.get(node, {})
        role = as_dict(a.get("role"))
        phase = as_dict(a.get("phase"))
        up = parent.get(node)
        members.append(
            {
                "run_id": run_id,
                "session_id": sid[node],
                "parent_session_id": sid[up[0]] if up else None,
                "via": up[1] if up else None,
                "depth": depth(node),
                "role": role.get("value"),
                "role_tier": role.get("tier"),
                "phase": phase.get("value"),
            }
        )
    arts = {x["id"]: x for x in doc.get("artifacts") or [] if isinstance(x, dict) and "id" in x}
    out_edges = []
    for e in edges:
        art = arts.get(e.get("artifact")) or {}
        out_edges.append(
            {
                "kind": e.get("kind", "dep"),
                "src": sid[e["from"]],
                "dst": sid[e["to"]],
                "tier": e.get("tier", "reported"),
                "evidence": e.get("evidence"),
                "pass": NAME,
                "run_id": run_id,
                "path": art.get("path"),
                "version": (art.get("version") or 1) if art else None,
                "src_call_id": e.get("from_attempt"),
                "dst_call_id": e.get("to_attempt"),
            }
        )
    out_arts = []
    for x in arts.values():

        def sessions(ids):
            return [sid[node_of_attempt[i]] for i in ids or [] if i in node_of_attempt]

        kind = as_dict(x.get("kind"))
        producer_sid = sessions([x.get("producer")])
        if not producer_sid:
            continue
        out_arts.append(
            {
                "path": x.get("path"),
                "version": x.get("version") or 1,
                "producer": producer_sid[0],
                "call_id": x.get("producer"),
                "ts": parse_ts(x.get("first_write_at")),
                "how": "ocp",
                "tier": kind.get("tier"),
                "n_writes": x.get("n_writes") or len(x.get("writers") or []),
                "n_reads": x.get("n_reads") or 0,
                "writers": sessions(x.get("writers")),
                "consumers": sessions(x.get("consumers")),
            }
        )
    starts = [t for a in attempts if (t := parse_ts(a.get("started_at")))]
    ends = [t for a in attempts if (t := parse_ts(a.get("ended_at")))]
    harnesses = sorted({a["harness"] for a in attempts if isinstance(a.get("harness"), str)})
    models = sorted(
        {
            a["model"]["raw"]
            for a in attempts
            if isinstance(a.get("model"), dict) and isinstance(a["model"].get("raw"), str)
        }
    )
    roots = [n for n in sid if n not in parent]
    kinds = [e.get("kind") for e in edges]
    run = {
        "run_id": run_id,
        "root_session_id": sid[roots[0]] if roots else None,
        "root_harness": (first.get(roots[0]) or {}).get("harness") if roots else None,
        "started_at": parse_ts(doc["run"].get("started_at")) or (min(starts) if starts else None),
        "ended_at": parse_ts(doc["run"].get("ended_at")) or (max(ends) if ends else None),
        "n_sessions": len(sid),
        "n_spawns": kinds.count("spawn"),
        "n_launches": kinds.count("launch"),
        "n_artifact_edges": kinds.count("artifact"),
        "max_depth": max((m["depth"] for m in members), default=0),
        "harnesses": harnesses,
        "models": models,
        "producer": producer,
    }
    return run, members, out_edges, out_arts, cut
