from __future__ import annotations

import shutil
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
