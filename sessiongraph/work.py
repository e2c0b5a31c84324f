"""The worker contract: what an engine (``sessiongraph/engines/``) is handed for each file and
what it hands back, and :func:`parse_batch`, the one function every engine's workers run.

The records follow a file through an ingest:

- :class:`Job` (driver -> worker): a listed file to read and how to read it;
- :class:`FileRows` (inside the worker): the file as classified with all its rows, what
  :func:`parse_path` gives; it never leaves the worker whole;
- :class:`ParsedFile` (worker -> driver): the few facts the driver needs of one parsed file,
  without its rows;
- :class:`Batch` (worker -> driver): a run of consecutive files, one :class:`ParsedFile` each,
  and the rows of all of them built once into frames;
- :class:`WrittenFile` (driver -> store): the ``ingested_files`` row the store writes beside the
  file's rows (``Store.write``).

Everything here pickles (the local process pool) and is rebuilt from columns on Ray
(``engines.ray``); nothing here imports the pipeline or the store.
"""

from __future__ import annotations

import dataclasses
import os
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import NamedTuple

from sessiongraph.ingest import knobs, registry, resume, steps
from sessiongraph.ingest import privacy as profiles
from sessiongraph.ingest.discover import Found, classify
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import Diagnostics
from sessiongraph.ingest.resume import Checkpoint
from sessiongraph.ingest.shell_facts import carry, shell_facts

# A store transaction holds up to BATCH_FILES files (the pipeline's store batch; an engine's task
# is never larger). The variable exists for the crash tests, which need many batches from few files.
BATCH_FILES = knobs.number("SESSIONGRAPH_BATCH_FILES", 4096, int, least=1)
# Skip reasons that are problems with the file (a diagnostics row) rather than files that
# are simply not session logs.
DIAGNOSED_SKIPS = frozenset({"unknown_format", "empty_file", "unreadable_file", "symlink_loop", "special_file"})


class Job(NamedTuple):
    """A file to read: what discovery found (a path, or a Found for a folder it could not walk),
    the size and mtime it had when listed, the privacy profile to keep it under, the
    checkpoint to resume it from (a grown transcript) and the launcher table
    (``ingest.shell``) its shell commands are read with."""

    item: str | Found
    size: int
    mtime: int
    privacy: str = profiles.DEFAULT
    checkpoint: Checkpoint | None = None
    max_text_chars: int = steps.DEFAULT_MAX_TEXT_CHARS
    launchers: tuple[tuple[str, str], ...] = ()  # wrapper CLIs beyond the built-in table
    # The ingest's --since/--until: a file none of whose sessions falls in it is not kept.
    since: datetime | None = None
    until: datetime | None = None


class FileRows(NamedTuple):
    """One file read, in the worker: as classified, with every row its adapter gave (as the
    privacy profile keeps them). :func:`parse_batch` splits it into a :class:`ParsedFile` and
    the batch's frames."""

    found: Found
    frames: Frames  # as the privacy profile keeps them
    checkpoint: Checkpoint | None = None  # where the next ingest may resume this file


class ParsedFile(NamedTuple):
    """What the ingest loop needs of one parsed file besides its rows (which are in its batch's
    frames): small, so that it crosses from a worker cheaply."""

    job: Job | None  # the engine sets it on the driver side (a job never travels back)
    # The file as classified (a Found's fields: a tuple of strings unpickles far faster than a
    # slotted dataclass, and there is one per file).
    path: str
    harness: str | None
    skip_reason: str | None
    checkpoint: Checkpoint | None  # where the next ingest may resume this file
    harnesses: tuple[str, ...]  # the harness of each of its sessions
    codes: tuple[str, ...]  # the code of each of its diagnostics rows
    counts: tuple[int, ...]  # how many problems each of those rows stands for (repeats are folded)
    in_window: bool  # False: outside --since/--until, its rows are not in the batch


class Batch(NamedTuple):
    """What an engine yields for a run of consecutive jobs: one :class:`ParsedFile` per job, in
    order, and the rows of those in the window as frames built once (polars tables), in the same
    file order: the worker, not the driver, pays for building them."""

    files: list[ParsedFile]
    frames: Frames


@dataclass(frozen=True, slots=True)
class WrittenFile:
    """What the store records of one file an ingest read (its ``ingested_files`` row): its
    fingerprint and how many rows of each kind it gave (the rows themselves come with its
    batch's frames, ``Store.write``)."""

    path: str
    harness: str | None
    size_bytes: int
    mtime_ns: int
    n_sessions: int
    n_diagnostics: int
    skip_reason: str | None = None
    privacy: str | None = None  # the ingest privacy profile the frames were kept under
    replaces: bool = True  # the store may hold rows of this file already (False: a new file)
    checkpoint: Checkpoint | None = None  # where the next ingest may resume reading it


def parse_path(
    item: str | Found,
    checkpoint: Checkpoint | None = None,
    privacy: str = profiles.DEFAULT,
    max_text_chars: int = steps.DEFAULT_MAX_TEXT_CHARS,
    launchers: tuple[tuple[str, str], ...] = (),
) -> FileRows:
    """The unit of work an engine runs: classify one listed file (reading its head), run it
    through its adapter (from ``checkpoint`` when the adapter reads grown files from where it
    stopped), read its shell commands into launches and file events while the text is at hand,
    and keep what ``privacy`` lets the store keep (step text only under ``full``, each step's cut
    to ``max_text_chars``). An adapter bug becomes a diagnostic."""
    with steps.text_policy(privacy == "full", max_text_chars):
        return _parse_path(item, checkpoint, privacy, launchers)


def _parse_path(
    item: str | Found, checkpoint: Checkpoint | None, privacy: str, launchers: tuple[tuple[str, str], ...]
) -> FileRows:
    found = item if isinstance(item, Found) else classify(item)
    diags = Diagnostics(found.path, found.harness)
    if found.harness is None:
        reason = found.skip_reason or "unknown_format"
        if reason in DIAGNOSED_SKIPS:
            diags.add(reason, None, "")
        return FileRows(found, Frames.from_rows(diagnostics=diags.rows))
    adapter = registry.get(found.harness)
    try:
        if not hasattr(adapter, "parse_from"):
            return FileRows(found, profiles.apply(shell_facts(adapter.parse(found.path), None, launchers), privacy))
        frames, saved = adapter.parse_from(found.path, checkpoint, lambda state: profiles.scrub_state(state, privacy))
        resumed = checkpoint is not None and saved is not None and saved.resumed_from > 0
        carried = resume.loads(checkpoint.carry) if resumed and checkpoint and checkpoint.carry else None
        frames = profiles.apply(shell_facts(frames, carried, launchers), privacy)
        if saved is not None and privacy != "full":
            # The state kept no commands: keep what they said for the next resume (masked rows,
            # the calls' kinds and lines are all it needs of them).
            saved = dataclasses.replace(saved, carry=resume.dumps(carry(frames, saved.line)))
        return FileRows(found, frames, saved)
    except Exception as exc:  # noqa: BLE001 - one bad file must not stop a batch of thousands
        where = traceback.extract_tb(exc.__traceback__)[-1]
        diags.add("internal_error", None, f"{type(exc).__name__} at {os.path.basename(where.filename)}:{where.lineno}")
        return FileRows(found, Frames.from_rows(diagnostics=diags.rows))


def parse_batch(jobs: Sequence[Job]) -> Batch:
    """The unit of work of every engine: each job through :func:`parse_path`, the files outside
    the window left out, and the rows of the others built into one set of frames."""
    files: list[ParsedFile] = []
    kept: list[Frames] = []
    for job in jobs:
        found, frames, checkpoint = parse_path(job.item, job.checkpoint, job.privacy, job.max_text_chars, job.launchers)
        in_window = _in_window(frames, job.since, job.until)
        harnesses = tuple(frames.values("sessions", "harness"))
        codes = tuple(frames.values("diagnostics", "code"))
        counts = tuple(n or 1 for n in frames.values("diagnostics", "count"))
        files.append(
            ParsedFile(
                None, found.path, found.harness, found.skip_reason, checkpoint, harnesses, codes, counts, in_window
            )
        )
        if in_window:
            kept.append(frames)
    built = Frames.concat(kept)
    built.tables()  # build every table now, here
    return Batch(files, built)


def text_bytes(frames: Frames) -> int:
    """The bytes of step text in ``frames`` (none but under ``--privacy full``)."""
    if not frames.height("texts"):
        return 0
    return int(frames.texts["text"].str.len_bytes().sum() or 0)


def _in_window(frames: Frames, since: datetime | None, until: datetime | None) -> bool:
    if frames.height("sessions") == 0 or (since is None and until is None):
        return True
    starts = [t for t in frames.values("sessions", "started_at") if t is not None]
    ends = [t for t in frames.values("sessions", "ended_at") if t is not None]
    if since is not None and ends and max(ends) < since:
        return False
    if until is not None and starts and min(starts) > until:
        return False
    return True
