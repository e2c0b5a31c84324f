"""OCP run documents (0.1, 0.2, 0.3) as a source: ``*.ocp.json`` written by any producer.

A document is the producer's statement of a run, so its graph is taken as stated, not inferred:
the document itself (converted to 0.3) goes to the ``documents`` frame, from which the
``declared`` step builds the run, its edges and artifacts. Each attempt also becomes a
``sessions`` row (session kind ``imported``, id ``ocp:<run id>/<node id>``) and its cost a
``usage`` row of scope ``session`` (the attempt's sum: no request of its own), so SQL over sessions
and tokens sees imported runs like any other.

Converting 0.1/0.2 to 0.3 (OCP digest sections 5-6): an edge without a tier gets ``reported``
(the producer asserted it), a model given as a bare string becomes ``{raw}``, missing
``producer.capabilities`` are declared from what the document holds.
"""

from __future__ import annotations

import re

import orjson

from sessiongraph.ingest.files import read_bounded
from sessiongraph.ingest.frames import SESSION_SCOPE, Frames
from sessiongraph.ingest.jsonl import Diagnostics, as_dict, as_int, as_str, json_type, parse_ts

NAME = "ocp"
VERSIONS = ("0.1", "0.2", "0.3")
MAX_BYTES = 32 * 1024 * 1024  # a run document is kilobytes; parsed whole, about 10x its size in memory
_OCP_KEY = re.compile(rb'"ocp"\s*:\s*"0\.[123]"')


def detect(path: str, head: bytes) -> bool:
    """A ``*.ocp.json`` object, or a JSON object whose opening bytes hold ``ocp`` and ``nodes``."""
    stripped = head.lstrip()
    if not stripped.startswith(b"{"):
        return False
    # Keys of a large document written sorted can lie past the head: the name then decides.
    # Plain substring tests first: far cheaper than the pattern over a transcript's 64 KB head.
    return path.endswith(".ocp.json") or (b'"nodes"' in head and b'"ocp"' in head and bool(_OCP_KEY.search(head)))


def canonical(doc: dict) -> str:
    return orjson.dumps(doc, option=orjson.OPT_SORT_KEYS).decode()


def to_v03(doc: dict) -> dict:
    """The same run as a 0.3 document (a copy; the input is never changed)."""
    doc = orjson.loads(orjson.dumps(doc))
    version = doc.get("ocp")
    doc["ocp"] = "0.3"
    for edge in doc.get("edges") or []:
        if isinstance(edge, dict) and "tier" not in edge:
            edge["tier"] = "reported"
    for attempt in doc.get("attempts") or []:
        if isinstance(attempt, dict) and isinstance(attempt.get("model"), str):
            attempt["model"] = {"raw": attempt["model"]}
    producer = doc.setdefault("producer", {})
    if isinstance(producer, dict) and "capabilities" not in producer and isinstance(doc.get("run"), dict):
        producer["capabilities"] = capabilities(doc)
    if version != "0.3" and isinstance(doc.get("run"), dict):
        ext = doc["run"].setdefault("ext", {})
        if isinstance(ext, dict):
            ext["dev.sessiongraph.import"] = {"from": version}
    return doc


def capabilities(doc: dict) -> dict:
    """Declared from what the document holds, so no capability is ever false but present."""
    # A crafted document may hold anything where objects belong: such members count for nothing.
    edges = [e for e in doc.get("edges") or [] if isinstance(e, dict)]
    attempts = [a for a in doc.get("attempts") or [] if isinstance(a, dict)]
    costs = [as_dict(a.get("cost")) for a in attempts]
    token_keys = (
        "input_tokens",
        "cached_input_tokens",
        "cache_creation_tokens",
        "cache_creation_5m_tokens",
        "cache_creation_1h_tokens",
        "output_tokens",
        "reasoning_tokens",
    )
    run = doc["run"]
    return {
        "groups": bool(doc.get("groups")),
        "events": bool(doc.get("events")),
        "artifacts": bool(doc.get("artifacts")),
        "edges_dep": any(e.get("kind", "dep") in ("dep", "fan_in") for e in edges),
        "edges_spawn": any(e.get("kind") == "spawn" for e in edges),
        "edges_launch": any(e.get("kind") == "launch" for e in edges),
        "edges_artifact": any(e.get("kind") == "artifact" for e in edges),
        "cost_usd": any("usd" in c for c in costs),
        "cost_tokens": any(k in c for c in costs for k in token_keys),
        "outcome_evidence": any("evidence" in as_dict(a.get("outcome")) for a in attempts),
        "task": "task" in run,
        "configuration": "configuration" in run,
        "signals": bool(run.get("signals")),
        "slate": "slate" in run,
        "receipt": "receipt" in run,
    }


def node_session(run_id: str, node_id: str) -> str:
    return f"ocp:{run_id}/{node_id}"


def parse(path: str) -> Frames:
    diags = Diagnostics(path, NAME)
    try:
        raw = read_bounded(path, MAX_BYTES)
        if raw is None:
            diags.add("bad_document", None, f"larger than {MAX_BYTES} bytes")
            return Frames.from_rows(diagnostics=diags.rows)
    except OSError as exc:
        diags.add("unreadable_file", None, type(exc).__name__)
        return Frames.from_rows(diagnostics=diags.rows)
    try:
        doc = orjson.loads(raw)
    except orjson.JSONDecodeError:
        diags.add("invalid_json", None, f"{len(raw)} bytes")
        return Frames.from_rows(diagnostics=diags.rows)
    problem = _problem(doc)
    if problem:
        diags.add("bad_document", None, problem)
        return Frames.from_rows(diagnostics=diags.rows)
    version = doc["ocp"]
    doc = to_v03(doc)
    run_id = doc["run"]["id"]
    producer = as_str(doc["producer"].get("name"))
    sessions, usage = [], []
    nodes = {n["id"] for n in doc["nodes"]}
    for a in doc.get("attempts") or []:
        if not isinstance(a, dict) or not isinstance(a.get("node"), str) or a["node"] not in nodes:
            diags.add(
                "bad_document",
                None,
                f"attempt {str(a.get('id'))[:60] if isinstance(a, dict) else '?'} names no node; left out",
            )
            continue
        sid = node_session(run_id, a["node"])
        model = as_dict(a.get("model"))
        sessions.append(
            {
                "session_id": sid,
                "harness": as_str(a.get("harness")) or NAME,
                "native_id": as_str(a.get("session")) or a["node"],
                "session_kind": "imported",
                "layout": "ocp",
                "source_path": path,
                "source_bytes": len(raw),
                "cwd": as_str(a.get("cwd")),
                "started_at": parse_ts(a.get("started_at")),
                "ended_at": parse_ts(a.get("ended_at")),
                "model": as_str(model.get("raw")) or as_str(model.get("id")),
                "originator": producer,
                "n_records": 1,
            }
        )
        cost = a.get("cost")
        if isinstance(cost, dict):
            created = as_int(cost.get("cache_creation_tokens"))
            one_hour = as_int(cost.get("cache_creation_1h_tokens"))
            usage.append(
                {
                    "session_id": sid,
                    "ts": parse_ts(a.get("ended_at")) or parse_ts(a.get("started_at")),
                    "model": sessions[-1]["model"],
                    "message_id": f"ocp:{a['id']}",
                    "input_tokens": as_int(cost.get("input_tokens")),
                    "output_tokens": as_int(cost.get("output_tokens")),
                    "cache_read_tokens": as_int(cost.get("cached_input_tokens")),
                    "cache_creation_tokens": created,
                    "cache_creation_5m_tokens": as_int(cost.get("cache_creation_5m_tokens")) or created - one_hour,
                    "cache_creation_1h_tokens": one_hour,
                    "reasoning_tokens": as_int(cost.get("reasoning_tokens")),
                    "scope": SESSION_SCOPE,  # the attempt's sum over its requests
                    "source_path": path,
                }
            )
    document = {
        "source_path": path,
        "run_id": run_id,
        "producer": producer,
        "ocp_version": version,
        "document": canonical(doc),
    }
    return Frames.from_rows(sessions=sessions, usage=usage, diagnostics=diags.rows, documents=[document])


def _problem(doc: object) -> str | None:
    """What keeps a document from being imported at all, or None."""
    if not isinstance(doc, dict):
        return f"top level is a JSON {json_type(doc)}, not an object"
    if doc.get("ocp") not in VERSIONS:
        return f"ocp version {str(doc.get('ocp'))[:20]!r} is not one of {', '.join(VERSIONS)}"
    run, producer, nodes = doc.get("run"), doc.get("producer"), doc.get("nodes")
    if not isinstance(producer, dict) or not isinstance(producer.get("name"), str):
        return "producer.name missing"
    if not isinstance(run, dict) or not isinstance(run.get("id"), str) or not run["id"]:
        return "run.id missing"
    if not isinstance(nodes, list) or not all(isinstance(n, dict) and isinstance(n.get("id"), str) for n in nodes):
        return "nodes must be a list of objects with an id"
    return None
