"""``sessiongraph export``: write the store's runs out in exchange formats."""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import datetime
from pathlib import Path

import orjson
import polars as pl

from sessiongraph.errors import SessiongraphError
from sessiongraph.inference.edges import file_name
from sessiongraph.ingest.frames import PROFILES
from sessiongraph.ingest.privacy import without_ext
from sessiongraph.ocp.bundle import bundles
from sessiongraph.ocp.limits import fit
from sessiongraph.ocp.writer import EXT, document
from sessiongraph.store import Store, batches

STATED_BATCH = 200  # imported runs whose stated documents are read at once


@dataclass
class ExportSummary:
    out: str
    documents: int = 0
    files: list[str] = field(default_factory=list)
    unpriced_models: dict[str, int] = field(default_factory=dict)  # model -> attempts left without usd
    priced_by: dict[str, int] = field(default_factory=dict)  # price source -> attempts it priced

    def to_dict(self) -> dict:
        return asdict(self)


def safe_name(run_id: str) -> str:
    return file_name(run_id, ".ocp.json")


def export_ocp(
    out: str | os.PathLike,
    *,
    db: str | None = None,
    runs: list[str] | tuple[str, ...] = (),
    since: datetime | None = None,
    until: datetime | None = None,
    harnesses: list[str] | tuple[str, ...] = (),
    privacy: str = "metadata_only",
) -> ExportSummary:
    """Write one ``<run>.ocp.json`` per run into ``out`` (created if missing)."""
    if privacy not in PROFILES:
        raise SessiongraphError(f"unknown privacy profile {privacy!r}; use one of {', '.join(PROFILES)}")
    out_dir = Path(out)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = ExportSummary(out=str(out_dir))
    unpriced: Counter[str] = Counter()
    sources: Counter[str] = Counter()
    with Store(db, read_only=True) as store:
        chosen = store.chosen_runs(runs, since=since, until=until, harnesses=harnesses)
        inferred = chosen.filter(pl.col("producer").is_null())
        for bundle in bundles(store, inferred):
            doc, missing = document(bundle, privacy=privacy)
            unpriced.update(missing)
            sources.update(s for b in bundle.usage["sources"] for s in b)
            summary.files.append(_write(out_dir, bundle.run["run_id"], doc))
        for run_id, doc in stated_documents(store, chosen.filter(pl.col("producer").is_not_null())):
            # as stated, but within OCP's length limits: a producer's 100k-character title is cut
            summary.files.append(_write(out_dir, run_id, fit(restrict(doc, privacy), EXT)))
    summary.documents = len(summary.files)
    summary.unpriced_models = dict(sorted(unpriced.items()))
    summary.priced_by = dict(sorted(sources.items()))
    return summary


def _write(out_dir: Path, run_id: str, doc: dict) -> str:
    path = out_dir / safe_name(run_id)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2) + b"\n")
    os.replace(tmp, path)  # a reader never sees half a document
    return str(path)


def stated_documents(store: Store, chosen: pl.DataFrame):
    """Imported runs are re-emitted as their producer stated them (as 0.3), not rebuilt."""
    if chosen.height == 0:
        return
    done: set[str] = set()
    ids = sorted(chosen["run_id"].to_list())
    for group in batches.groups(ids, {}, STATED_BATCH):  # a group's documents in memory at once
        docs = store.query(
            "SELECT run_id, document FROM documents WHERE list_contains($1, run_id) ORDER BY run_id, source_path",
            [group],
        )
        for run_id, text in docs.iter_rows():
            if run_id not in done:
                done.add(run_id)
                yield run_id, orjson.loads(text)


def restrict(doc: dict, privacy: str) -> dict:
    """A ``full`` document exported as ``metadata_only`` loses every ``ext`` (where OCP lets text
    live) and says so in its profile."""
    if privacy == "full" or doc.get("privacy", {}).get("profile") == "metadata_only":
        return doc
    out = without_ext(doc)
    out["privacy"] = {"profile": "metadata_only"}
    return out
