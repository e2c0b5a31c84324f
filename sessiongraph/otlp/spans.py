"""One run's trace: its sessions as ``invoke_agent`` spans, their tool calls as ``execute_tool``
spans, with the times the logs give.

A session hangs under its parent (the spawning or launching call's span when that call is known,
else the parent session's span) only when the edge between them is ``verified``. A ``heuristic``
or ``reported`` edge, a placeholder parent and a helper tied to its session without an edge
(compaction, warm-up, reviewer) are a span link instead: the child is a root-level span of the
same trace, linked to its candidate parent, so no trace asserts more than the evidence. An
artifact flow is a link from the reading span to the writing one (in another run's trace when
the flow crosses runs).

Ids are derived from the run, session and call ids (sha256), so exporting again gives the same
trace. Attribute names follow the OpenTelemetry GenAI semantic conventions (README, "OpenTelemetry");
sessiongraph's own facts are under ``sessiongraph.``.
"""

from __future__ import annotations

import hashlib
from datetime import datetime

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.util.instrumentation import InstrumentationScope
from opentelemetry.trace import Link, SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue

from sessiongraph.ingest.secrets import mask
from sessiongraph.otlp.read import RunRows
from sessiongraph.version import __version__

# OpenTelemetry GenAI semantic conventions (the version README names).
OPERATION = "gen_ai.operation.name"
AGENT_NAME = "gen_ai.agent.name"
AGENT_ID = "gen_ai.agent.id"
CONVERSATION = "gen_ai.conversation.id"
REQUEST_MODEL = "gen_ai.request.model"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
INPUT_TOKENS = "gen_ai.usage.input_tokens"  # all input, cached included, as the conventions count it
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"  # reasoning included
CACHE_READ = "gen_ai.usage.cache_read.input_tokens"
CACHE_CREATION = "gen_ai.usage.cache_creation.input_tokens"
REASONING = "gen_ai.usage.reasoning.output_tokens"
INVOKE_AGENT = "invoke_agent"
EXECUTE_TOOL = "execute_tool"
# sessiongraph's extension attributes.
EXT = "sessiongraph"
USD = f"{EXT}.cost.usd"  # the session's list-price dollars (the views' usd_total); absent when unpriced
VERIFIED = "verified"  # the one tier that makes a parent

SCOPE = InstrumentationScope("sessiongraph", __version__)
RESOURCE = Resource({"service.name": "sessiongraph", "service.version": __version__})


def trace_id(run_id: str) -> int:
    return _id(128, "trace", run_id)


def span_id(run_id: str, session_id: str, call_id: str | None = None) -> int:
    return _id(64, run_id, session_id, "" if call_id is None else call_id)


def _id(bits: int, *parts: str) -> int:
    digest = hashlib.sha256("\x1f".join(parts).encode("utf-8", "replace")).digest()
    return int.from_bytes(digest[: bits // 8], "big") or 1  # an all-zero id is invalid


def _ns(ts: datetime | None) -> int | None:
    return None if ts is None else int(ts.timestamp() * 1_000_000) * 1000


def _attrs(values: dict[str, object]) -> dict[str, AttributeValue]:
    """The attributes that have a value (OTLP has no null)."""
    return {k: v for k, v in values.items() if v is not None and v != ""}  # type: ignore[misc]


def run_spans(rows: RunRows, *, privacy: str) -> list[ReadableSpan]:
    """The run's spans, sessions first (by depth, then start), each session's calls after it."""
    run = rows.run
    rid = run["run_id"]
    trace_id(rid)
    fallback = _ns(run["started_at"]) or _ns(run["ended_at"]) or 0
    calls_of: dict[str, list[dict]] = {}
    for c in rows.calls.iter_rows(named=True):
        calls_of.setdefault(c["session_id"], []).append(c)
    call_ids = {(c["session_id"], c["call_id"]) for c in rows.calls.iter_rows(named=True) if c["call_id"]}

    def ctx(session_id: str, call_id: str | None = None, run_id: str = rid) -> SpanContext:
        return SpanContext(
            trace_id(run_id), span_id(run_id, session_id, call_id), False, TraceFlags(TraceFlags.SAMPLED)
        )

    def at(session_id: str, call_id: str | None, run_id: str = rid) -> SpanContext:
        """The call's span when the export has it, else the session's."""
        known = run_id != rid or (session_id, call_id) in call_ids
        return ctx(session_id, call_id if call_id and known else None, run_id)

    links: dict[tuple[str, str | None], list[Link]] = {}
    for f in rows.flows.iter_rows(named=True):
        reader = (f["dst"], f["dst_call_id"] if (f["dst"], f["dst_call_id"]) in call_ids else None)
        attributes = _attrs(
            {
                f"{EXT}.link.kind": "artifact",
                f"{EXT}.artifact.path": f["path"],
                f"{EXT}.artifact.version": f["version"],
                f"{EXT}.edge.tier": f["tier"],
                f"{EXT}.edge.evidence": f["evidence"],
                f"{EXT}.edge.id": f["edge_id"],
                f"{EXT}.run.id": f["src_run_id"] if f["src_run_id"] != rid else None,
            }
        )
        links.setdefault(reader, []).append(Link(at(f["src"], f["src_call_id"], f["src_run_id"]), attributes))

    spans: list[ReadableSpan] = []
    for m in rows.members.iter_rows(named=True):
        sid = m["session_id"]
        start = _ns(m["started_at"]) or _ns(m["ended_at"]) or fallback
        end = max(_ns(m["ended_at"]) or start, start)
        parent = None
        own_links = list(links.get((sid, None), []))
        if m["parent_session_id"]:
            edge = _attrs(
                {
                    f"{EXT}.edge.kind": m["via"],
                    f"{EXT}.edge.tier": m["edge_tier"] or ("reported" if not _on_disk(rows, m) else None),
                    f"{EXT}.edge.evidence": m["edge_evidence"],
                    f"{EXT}.edge.id": m["edge_id"],
                }
            )
            toward = at(m["parent_session_id"], m["edge_call_id"])
            if m["edge_tier"] == VERIFIED:
                parent = toward
            else:
                own_links.insert(0, Link(toward, {**edge, f"{EXT}.link.kind": "candidate_parent"}))
        else:
            edge = {}
        name = m["agent_name"] or m["agent_type"] or m["harness"]
        attributes = _attrs(
            {
                OPERATION: INVOKE_AGENT,
                AGENT_NAME: name,
                AGENT_ID: sid,
                CONVERSATION: m["native_id"],
                REQUEST_MODEL: m["model"],
                INPUT_TOKENS: _sum(m, "input_tokens", "cache_read_tokens", "cache_creation_tokens"),
                OUTPUT_TOKENS: m["output_tokens"],
                CACHE_READ: m["cache_read_tokens"],
                CACHE_CREATION: m["cache_creation_tokens"],
                REASONING: m["reasoning_tokens"],
                USD: m["usd"],
                f"{EXT}.usage.requests": m["requests"] or None,
                f"{EXT}.usage.reported_usd": m["reported_usd"],
                f"{EXT}.run.id": rid,
                f"{EXT}.harness": m["harness"],
                f"{EXT}.session.kind": m["session_kind"],
                f"{EXT}.session.depth": m["depth"],
                f"{EXT}.session.role": m["role"],
                f"{EXT}.session.on_disk": m["on_disk"],
                f"{EXT}.session.end_status": m["end_status"],
                f"{EXT}.session.cwd": m["cwd"],
                **(edge if parent is not None else {}),
            }
        )
        spans.append(
            ReadableSpan(
                name=f"{INVOKE_AGENT} {name}",
                context=ctx(sid),
                parent=parent,
                resource=RESOURCE,
                attributes=attributes,
                links=own_links,
                kind=SpanKind.INTERNAL,
                status=Status(StatusCode.ERROR, "the log ends in an error")
                if m["end_status"] == "error"
                else Status(StatusCode.UNSET),
                start_time=start,
                end_time=end,
                instrumentation_scope=SCOPE,
            )
        )
        for c in calls_of.get(sid, []):
            spans.append(_call_span(rows, c, ctx(sid), ctx, start, links, privacy))
    return spans


def _call_span(rows: RunRows, c: dict, session, ctx, session_start: int, links, privacy: str) -> ReadableSpan:
    sid, cid = c["session_id"], c["call_id"]
    key = cid if cid else f"{c['source_path']}:{c['line']}"  # a call the log gives no id
    start = _ns(c["started_at"]) or _ns(c["ended_at"]) or session_start
    end = max(_ns(c["ended_at"]) or start, start)
    text = privacy == "full"  # log text only under full, masked as everywhere
    attributes = _attrs(
        {
            OPERATION: EXECUTE_TOOL,
            TOOL_NAME: c["tool"],
            TOOL_CALL_ID: cid,
            f"{EXT}.call.kind": c["kind"],
            f"{EXT}.call.exit_code": c["exit_code"],
            f"{EXT}.call.is_error": c["is_error"],
            f"{EXT}.call.command": mask(c["command"]) if text else None,
            f"{EXT}.call.description": mask(c["description"]) if text else None,
        }
    )
    return ReadableSpan(
        name=f"{EXECUTE_TOOL} {c['tool'] or 'tool'}",
        context=ctx(sid, key),
        parent=session,
        resource=RESOURCE,
        attributes=attributes,
        links=list(links.get((sid, cid), [])) if cid else [],
        kind=SpanKind.INTERNAL,
        status=Status(StatusCode.ERROR, "the tool reported an error") if c["is_error"] else Status(StatusCode.UNSET),
        start_time=start,
        end_time=end,
        instrumentation_scope=SCOPE,
    )


def _sum(m: dict, *cols: str) -> int | None:
    values = [m[c] for c in cols if m[c] is not None]
    return sum(values) if values else None


def _on_disk(rows: RunRows, m: dict) -> bool:
    parent = rows.members.filter(rows.members["session_id"] == m["parent_session_id"])
    return bool(parent.height and parent["on_disk"][0])
