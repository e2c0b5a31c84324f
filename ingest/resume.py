"""Reading an append-only transcript from where the last ingest stopped.

Claude Code and Codex append to a transcript for as long as a session lives, so most changed
files on a re-ingest are files that only grew. A resumable adapter keeps its parser state in a
:class:`Checkpoint` taken at the end of the last complete line; the next ingest checks that the
bytes it read are still there (the file's head and the bytes just before the offset), restores
the state and reads only what was appended. The frames it returns are those of a cold parse of
the whole file, so the store replaces the file's rows exactly as for any changed file.

A line still being written (no newline yet) is parsed for this ingest but is never part of a
checkpoint: the next ingest reads it again, whole, from the checkpoint's offset.

Parser state is stored as a pickle that only plain data may be loaded from (:func:`loads`): a
store file someone hands you cannot run code through it. The state holds no log text (prompts
are kept as hashes, commands only under the ``full`` profile; see ``scrub``).
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import BinaryIO, Protocol, TypeVar

import pyarrow as pa

from sessiongraph.ingest import knobs
from sessiongraph.ingest.files import MAX_LINE_BYTES, TOO_LONG, lines, open_regular
from sessiongraph.ingest.frames import Frames
from sessiongraph.ingest.jsonl import Diagnostics, decode_line

# A line decoder: decode_line's contract (a record, or None with a diagnostic).
Decode = Callable[[bytes, int, Diagnostics], "dict | None"]

# Files smaller than this are simply read again: a checkpoint would cost more than it saves.
MIN_BYTES = knobs.number("SESSIONGRAPH_CHECKPOINT_MIN_BYTES", 1 << 20, int, least=0)
SEAM = 4096  # bytes hashed at the head of the file and just before the offset
_READ = 1 << 20
_TAIL = 1 << 16  # steps of the backward search for the last newline (lines are mostly short)


@dataclass(frozen=True, slots=True)
class Checkpoint:
    offset: int  # bytes of complete lines already read
    line: int  # lines already read
    head_sha: str  # sha256 of the first SEAM bytes (fewer if the offset is smaller)
    seam_sha: str  # sha256 of the SEAM bytes before the offset
    state: bytes  # the parser's state, see dumps/loads
    carry: bytes = b""  # what the caller derived from text the state no longer holds (dumps/loads)
    resumed_from: int = 0  # not stored: where the parse that took this checkpoint began reading


class Parser(Protocol):
    """What a resumable adapter's parser offers."""

    diags: Diagnostics

    def feed(self, n: int, record: dict) -> None: ...

    def frames(self) -> Frames: ...

    def state(self) -> dict: ...


def parse(
    path: str,
    new: Callable[[str], Parser],
    restore: Callable[[str, dict], Parser],
    checkpoint: Checkpoint | None = None,
    scrub: Callable[[dict], dict] | None = None,
    decode: Decode = decode_line,
) -> tuple[Frames, Checkpoint | None]:
    """Parse ``path`` from ``checkpoint`` when its bytes are still there, else from the start.

    Returns the frames of the whole file and a checkpoint at its last complete line (None for a
    small file). ``scrub`` turns the parser state into what may be stored (the privacy profile);
    ``decode`` turns a line into the record the parser is fed.
    """
    parser: Parser | None
    try:
        # A large buffer: readline fills a long line in a few reads, not one per 8 KB.
        fh = open_regular(path, buffering=_READ)  # closed below, after both phases
    except OSError as exc:
        parser = new(path)
        parser.diags.add("unreadable_file", None, type(exc).__name__)
        return parser.frames(), None
    with fh:
        try:
            size = os.fstat(fh.fileno()).st_size
            # A small file keeps no checkpoint: no need to look for where one would go.
            complete = _complete_end(fh, size) if size >= MIN_BYTES or checkpoint is not None else size
            start, line, parser = 0, 0, None
            if checkpoint is not None and checkpoint.offset <= complete and _same_bytes(fh, checkpoint):
                try:
                    parser = restore(path, loads(checkpoint.state))
                    start, line = checkpoint.offset, checkpoint.line
                except (pickle.UnpicklingError, zlib.error, EOFError, KeyError, TypeError, ValueError):
                    parser = None  # a state this version cannot use: read the file whole
            if parser is None:
                parser = new(path)
            fh.seek(start)
            line, any_content = _feed(parser, fh, line, complete - start, decode)
            saved = None
            if complete >= MIN_BYTES:
                state = parser.state()
                saved = Checkpoint(
                    complete, line, *_hashes(fh, complete), dumps(scrub(state) if scrub else state), resumed_from=start
                )
            fh.seek(complete)
            _, tail = _feed(parser, fh, line, size - complete, decode)  # the line still being written
        except OSError as exc:
            parser = parser or new(path)
            parser.diags.add("unreadable_file", None, type(exc).__name__)
            return parser.frames(), None
    if start == 0 and not (any_content or tail):
        parser.diags.add("empty_file", None, "no records")
    return parser.frames(), saved


def _feed(parser: Parser, fh: BinaryIO, line: int, length: int, decode: Decode) -> tuple[int, bool]:
    """Feed ``length`` bytes of lines from the current position; returns (last line, any content)."""
    any_content = False
    for raw in lines(fh, length):
        line += 1
        if not raw or raw.isspace():  # as `not raw.strip()`, without copying a long line
            continue
        any_content = True
        if raw is TOO_LONG:
            parser.diags.add("line_too_long", line, f"longer than {MAX_LINE_BYTES} bytes; skipped")
            continue
        record = decode(raw, line, parser.diags)
        if record is not None:
            parser.feed(line, record)
    return line, any_content


def _complete_end(fh: BinaryIO, size: int) -> int:
    """Offset just past the last newline: where a checkpoint may be taken."""
    pos = size
    while pos > 0:
        step = min(_TAIL, pos)
        fh.seek(pos - step)
        chunk = fh.read(step)
        k = chunk.rfind(b"\n")
        if k >= 0:
            return pos - step + k + 1
        pos -= step
    return 0


def _hashes(fh: BinaryIO, offset: int) -> tuple[str, str]:
    fh.seek(0)
    head = hashlib.sha256(fh.read(min(SEAM, offset))).hexdigest()
    fh.seek(max(0, offset - SEAM))
    seam = hashlib.sha256(fh.read(min(SEAM, offset))).hexdigest()
    return head, seam


def _same_bytes(fh: BinaryIO, cp: Checkpoint) -> bool:
    """The file still starts, and still reads up to the offset, as when the checkpoint was taken
    (a rewritten file fails this and is read whole)."""
    return _hashes(fh, cp.offset) == (cp.head_sha, cp.seam_sha)


# -- state serialisation ---------------------------------------------------------------------


def save_fields(parser: Parser, names: tuple[str, ...]) -> dict:
    """A parser's state: the named attributes and its diagnostics rows so far."""
    return {**{k: getattr(parser, k) for k in names}, "diagnostics": parser.diags.rows}


P = TypeVar("P", bound=Parser)


def load_fields(parser: P, names: tuple[str, ...], state: dict) -> P:
    """The inverse of :func:`save_fields`, onto a fresh parser."""
    for k in names:
        setattr(parser, k, state[k])
    parser.diags.rows = state["diagnostics"]
    return parser


# Everything a parser state may hold besides dicts, lists, tuples, strings and numbers.
_ALLOWED = {
    ("datetime", "datetime"),
    ("datetime", "timezone"),
    ("datetime", "timedelta"),
    ("collections", "Counter"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
}


# A state is pickled, then compressed with zstd at level 1 (through pyarrow, already a dependency):
# about 3x faster than zlib at level 1 and a little smaller, which matters because every large
# file's state (its steps included) is written on every ingest of it. The blob is the magic, the
# pickle's length (zstd through pyarrow needs it to decompress) and the frame.
_ZSTD = pa.Codec("zstd", 1)
_MAGIC = b"SGZ1"
_LENGTH = struct.Struct("<Q")


def dumps(state: dict) -> bytes:
    return pack(pickle.dumps(state, protocol=5))


def pack(raw: bytes) -> bytes:
    """A pickle as a checkpoint blob (see :func:`dumps`)."""
    return _MAGIC + _LENGTH.pack(len(raw)) + _ZSTD.compress(raw, asbytes=True)


def _unpack(blob: bytes) -> bytes:
    if not blob.startswith(_MAGIC):
        return zlib.decompress(blob)  # a checkpoint an earlier version took
    try:
        (length,) = _LENGTH.unpack_from(blob, len(_MAGIC))
        # A damaged length must not allocate gigabytes (a state compresses about 3x; a refused
        # one only means the file is read whole).
        if length > 1024 * len(blob) + (1 << 20):
            raise ValueError(f"length {length} for a {len(blob)}-byte blob")
        return _ZSTD.decompress(memoryview(blob)[len(_MAGIC) + _LENGTH.size :], length, asbytes=True)
    except (struct.error, OSError) as exc:  # pyarrow's codec errors are OSErrors
        raise ValueError(f"corrupt checkpoint: {exc}") from exc


class _PlainData(pickle.Unpickler):
    def find_class(self, module: str, name: str):
        if (module, name) in _ALLOWED:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"checkpoint holds {module}.{name}, which is not plain data")


def loads(blob: bytes) -> dict:
    return _PlainData(io.BytesIO(_unpack(blob))).load()
