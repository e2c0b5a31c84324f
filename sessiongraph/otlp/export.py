"""``sessiongraph export otlp``: each run as one OpenTelemetry trace, written as OTLP/JSON files
or sent over OTLP/HTTP.

Both go through the SDK's own OTLP encoder (protobuf); the files are that request in OTLP's JSON
form (ids as hex, enums as numbers). Sending uses the SDK's OTLP/HTTP exporter, which reads the
usual ``OTEL_EXPORTER_OTLP_[TRACES_]HEADERS`` / ``_TIMEOUT`` / ``_COMPRESSION`` variables and
retries what OTLP calls retryable; a batch it could not deliver stops the export with an error
that says how much was sent.
"""

from __future__ import annotations

import base64
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import urlsplit

import orjson

from sessiongraph.errors import SessiongraphError
from sessiongraph.inference.edges import file_name
from sessiongraph.ingest.frames import PROFILES
from sessiongraph.otlp.read import run_rows
from sessiongraph.otlp.spans import run_spans
from sessiongraph.store import Store

SUFFIX = ".otlp.json"
BATCH_SPANS = 512  # spans per OTLP/HTTP request: well under receivers' usual 4 MiB body limit
TRACES_PATH = "/v1/traces"
_ID_KEYS = ("traceId", "spanId", "parentSpanId")


@dataclass
class OtlpSummary:
    runs: int = 0
    spans: int = 0
    links: int = 0
    out: str | None = None
    endpoint: str | None = None
    files: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return asdict(self)


def export_otlp(
    out: str | os.PathLike | None = None,
    *,
    endpoint: str | None = None,
    db: str | None = None,
    runs: Sequence[str] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    harnesses: Sequence[str] = (),
    privacy: str = "metadata_only",
    batch_spans: int = BATCH_SPANS,
    on_batch: Callable[[int, int], None] | None = None,
) -> OtlpSummary:
    """Write one ``<run>.otlp.json`` per run into ``out`` and/or send every run's spans to the
    OTLP/HTTP ``endpoint``; ``on_batch(runs, spans)`` hears of each batch the receiver accepted
    (to show progress)."""
    if privacy not in PROFILES:
        raise SessiongraphError(f"unknown privacy profile {privacy!r}; use one of {', '.join(PROFILES)}")
    if out is None and endpoint is None:
        raise SessiongraphError("give --out DIR, --endpoint URL or both")
    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    summary = OtlpSummary(out=None if out_dir is None else str(out_dir), endpoint=endpoint and traces_url(endpoint))
    sender = _Sender(summary.endpoint, batch_spans, on_batch) if summary.endpoint else None
    try:
        with Store(db, read_only=True) as store:
            chosen = store.chosen_runs(runs, since=since, until=until, harnesses=harnesses)
            for rows in run_rows(store, chosen):
                spans = run_spans(rows, privacy=privacy)
                if out_dir is not None:
                    summary.files.append(_write(out_dir, rows.run["run_id"], spans))
                if sender is not None:
                    sender.add(spans)
                summary.runs += 1
                summary.spans += len(spans)
                summary.links += sum(len(s.links) for s in spans)
        if sender is not None:
            sender.flush()
    finally:
        if sender is not None:
            sender.exporter.shutdown()
    return summary


def traces_url(endpoint: str) -> str:
    """A bare ``http://host:port`` gets OTLP's traces path, as ``OTEL_EXPORTER_OTLP_ENDPOINT`` does."""
    parts = urlsplit(endpoint)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise SessiongraphError(f"--endpoint {endpoint!r} is not an http(s) URL (e.g. http://localhost:4318)")
    return endpoint.rstrip("/") + TRACES_PATH if parts.path in ("", "/") else endpoint


def otlp_json(spans) -> dict:
    """The OTLP/JSON form of an export request holding ``spans``."""
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    doc = MessageToDict(encode_spans(spans), use_integers_for_enums=True)
    for resource in doc.get("resourceSpans", []):
        for scope in resource.get("scopeSpans", []):
            for span in scope.get("spans", []):
                _hex_ids(span)
                for link in span.get("links", []):
                    _hex_ids(link)
    return doc


def _hex_ids(obj: dict) -> None:
    """Protobuf's JSON writes bytes as base64; OTLP/JSON writes trace and span ids as hex."""
    for key in _ID_KEYS:
        if key in obj:
            obj[key] = base64.b64decode(obj[key]).hex()


def _write(out_dir: Path, run_id: str, spans) -> str:
    path = out_dir / file_name(run_id, SUFFIX)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(otlp_json(spans), option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n")
    os.replace(tmp, path)  # a reader never sees half a file
    return str(path)


class _Sender:
    """Spans to the receiver in batches of ``size`` (the caller shuts its exporter down); a run
    counts as sent once all its spans are."""

    def __init__(self, url: str, size: int, on_batch: Callable[[int, int], None] | None):
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

        self.url = url
        self.size = max(1, size)
        self.exporter = OTLPSpanExporter(endpoint=url)
        self.on_batch = on_batch
        self.pending: list = []  # spans not yet sent
        self.run_ends: list[int] = []  # for each run added, the span count through its last span
        self.added = 0
        self.sent = 0

    def add(self, spans: list) -> None:
        self.pending.extend(spans)
        self.added += len(spans)
        self.run_ends.append(self.added)
        while len(self.pending) >= self.size:
            self._send(self.size)

    def flush(self) -> None:
        while self.pending:
            self._send(self.size)

    def _send(self, n: int) -> None:
        from opentelemetry.sdk.trace.export import SpanExportResult

        batch, self.pending = self.pending[:n], self.pending[n:]
        with _exporter_errors() as errors:
            result = self.exporter.export(batch)
        if result is not SpanExportResult.SUCCESS:
            # the first problem the exporter logged (the cause) and its last word (what it gave up on)
            why = f" ({'; '.join(dict.fromkeys(e.rstrip('.') for e in (errors[0], errors[-1])))})" if errors else ""
            runs = sum(1 for end in self.run_ends if end <= self.sent)
            partial = (
                "; the receiver holds a partial export: export again (same ids, so a span sent twice is the same span)"
                if self.sent
                else ""
            )
            raise SessiongraphError(
                f"OTLP export to {self.url} failed after {self.sent} spans ({runs} whole runs) were sent: "
                f"a batch of {len(batch)} spans was not delivered{why}{partial}"
            )
        self.sent += len(batch)
        if self.on_batch is not None:
            self.on_batch(sum(1 for end in self.run_ends if end <= self.sent), self.sent)


@contextmanager
def _exporter_errors() -> Iterator[list[str]]:
    """What the OTLP exporter logged while a batch was sent (its result says only failure)."""
    messages: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            messages.append(record.getMessage().splitlines()[0][:300])

    logger = logging.getLogger("opentelemetry.exporter")
    handler = Keep(logging.WARNING)
    logger.addHandler(handler)
    propagate, logger.propagate = logger.propagate, False  # said once, in our error, not as a log line too
    try:
        yield messages
    finally:
        logger.removeHandler(handler)
        logger.propagate = propagate
