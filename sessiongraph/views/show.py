"""One run as a tree for the terminal, or as Graphviz DOT."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from sessiongraph.store import Store

# One line style per tier, as the HTML legend will use: verified solid, heuristic dashed,
# reported dotted.
DOT_STYLE = {"verified": "solid", "heuristic": "dashed", "reported": "dotted"}
DOT_COLOR = {"spawn": "black", "launch": "blue", "artifact": "darkgreen", "continue": "purple", "fork": "orange"}


@dataclass(frozen=True, slots=True)
class RunGraph:
    run: dict
    members: pl.DataFrame  # run_sessions joined with session_overview
    edges: pl.DataFrame  # edges inside the run, plus lineage edges touching it


def run_graph(store: Store, ref: str) -> RunGraph:
    run_id = store.resolve_run(ref)
    run = store.query("SELECT * FROM runs WHERE run_id = $1", [run_id]).row(0, named=True)
    members = store.query(
        """SELECT m.*, o.harness, o.session_kind, o.model, o.entrypoint, o.started_at, o.ended_at, o.total_tokens
           FROM run_sessions m JOIN session_overview o USING (session_id)
           WHERE m.run_id = $1 ORDER BY m.depth, o.started_at, m.session_id""",
        [run_id],
    )
    edges = store.query(
        """SELECT * FROM all_edges
           WHERE run_id = $1
              OR src IN (SELECT session_id FROM run_sessions WHERE run_id = $1)
              OR dst IN (SELECT session_id FROM run_sessions WHERE run_id = $1)
           ORDER BY ts, kind, edge_id""",
        [run_id],
    )
    return RunGraph(run, members, edges)


def _label(m: dict) -> str:
    bits = [m["session_id"], m["harness"], m["role"] or m["session_kind"]]
    if m["model"]:
        bits.append(m["model"])
    if m["started_at"] is not None:
        bits.append(m["started_at"].strftime("%Y-%m-%d %H:%M:%S"))
    bits.append(f"{m['total_tokens']:,} tokens")
    return "  ".join(bits)


def tree(g: RunGraph) -> str:
    r = g.run
    span = ""
    if r["started_at"] is not None and r["ended_at"] is not None:
        span = f", {r['started_at']:%Y-%m-%d %H:%M:%S} -> {r['ended_at']:%H:%M:%S}"
    lines = [f"run {r['run_id']} ({r['n_sessions']} sessions{span})"]
    members = {m["session_id"]: m for m in g.members.iter_rows(named=True)}
    tree_edges = {e["dst"]: e for e in g.edges.filter(pl.col("kind").is_in(("spawn", "launch"))).iter_rows(named=True)}
    children: dict[str, list[str]] = {}
    for sid, m in members.items():
        if m["parent_session_id"]:
            children.setdefault(m["parent_session_id"], []).append(sid)

    def walk(sid: str, prefix: str, last: bool, top: bool) -> None:
        m = members[sid]
        if top:
            lines.append(_label(m))
            inner = ""
        else:
            e = tree_edges.get(sid)
            how = f"{e['kind']} [{e['tier']}] " if e else ""
            lines.append(f"{prefix}{'└── ' if last else '├── '}{how}{_label(m)}")
            inner = prefix + ("    " if last else "│   ")
        kids = children.get(sid, [])
        for i, kid in enumerate(kids):
            walk(kid, inner, i == len(kids) - 1, False)

    walk(r["root_session_id"], "", True, True)
    others = g.edges.filter(~pl.col("kind").is_in(("spawn", "launch")))
    if others.height:
        lines.append("")
        lines.append("other edges:")
        for e in others.iter_rows(named=True):
            where = "" if e["run_id"] else "  (across runs)"
            what = f" {e['path']}" if e["path"] else ""
            what += f" v{e['version']}" if e["version"] is not None else ""
            lines.append(f"  {e['kind']} [{e['tier']}]{what}: {e['src']} -> {e['dst']}{where}")
    return "\n".join(lines)


def dot(g: RunGraph) -> str:
    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    out = [f"digraph {q(g.run['run_id'])} {{", "  rankdir=LR;", "  node [shape=box, fontsize=10];"]
    ids = set(g.members["session_id"])
    for m in g.members.iter_rows(named=True):
        label = f"{m['session_id']}\n{m['harness']} {m['role'] or ''}\n{m['model'] or ''}"
        out.append(f"  {q(m['session_id'])} [label={q(label)}];")
    for e in g.edges.iter_rows(named=True):
        for end in (e["src"], e["dst"]):
            if end not in ids:
                ids.add(end)
                out.append(f"  {q(end)} [style=dashed];")
        label = e["kind"] + (f" {e['path']}" if e["path"] else "") + f" [{e['tier']}]"
        out.append(
            f"  {q(e['src'])} -> {q(e['dst'])} [label={q(label)}, style={DOT_STYLE.get(e['tier'], 'solid')}, "
            f"color={DOT_COLOR.get(e['kind'], 'gray')}];"
        )
    out.append("}")
    return "\n".join(out)
