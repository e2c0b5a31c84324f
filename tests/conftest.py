from __future__ import annotations

import hashlib
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "sample_logs"
CORPUS = ROOT.parent / "shared" / "corpus"


@pytest.fixture
def corpus() -> Path:
    """The shared corpus of real logs; tests that need it skip where it is absent."""
    if not CORPUS.is_dir():
        pytest.skip(f"real-log corpus not found at {CORPUS}")
    return CORPUS


@pytest.fixture
def samples() -> Path:
    return SAMPLES


@pytest.fixture
def copy_tree(tmp_path: Path):
    """Copy a file or folder into tmp_path (shared/ is read-only in CI)."""

    def copy(src: Path, name: str | None = None) -> Path:
        dst = tmp_path / (name or src.name)
        if src.is_dir():
            shutil.copytree(src, dst)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
        return dst

    return copy


# Small helpers the adapter tests share (imported from tests.conftest).


def ts(text: str) -> datetime:
    """An ISO timestamp from a test's expectations, as the aware UTC datetime frames hold."""
    return datetime.fromisoformat(text).astimezone(UTC)


def sha(text: str) -> str:
    """sha256 of a prompt, computed here independently of ingest.jsonl.text_hash."""
    return hashlib.sha256(text.strip().encode()).hexdigest()


def head(path: Path, n: int = 65536) -> bytes:
    """The first bytes of a file, as discovery hands them to ``detect``."""
    with open(path, "rb") as fh:
        return fh.read(n)


def kinds(frames) -> dict[str, int]:
    """Calls per kind."""
    return dict(frames.calls.group_by("kind").len().sort("kind").iter_rows())
