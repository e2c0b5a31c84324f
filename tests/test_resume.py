"""Reading a grown transcript from its checkpoint gives exactly the frames of a cold read.

Every resumable adapter's sample (and corpus) file is cut at several line boundaries: the head is
parsed (taking a checkpoint), the rest appended, and the file parsed again from the checkpoint.
"""

from __future__ import annotations

import pytest
from polars.testing import assert_frame_equal

from sessiongraph.ingest import claude_code, codex, resume
from sessiongraph.ingest.discover import classify
from tests.conftest import CORPUS, SAMPLES

RESUMABLE = {"claude-code": claude_code, "codex": codex}


def _files() -> list:
    roots = [SAMPLES] + ([CORPUS] if CORPUS.is_dir() else [])
    out = []
    for root in roots:
        for path in sorted(root.rglob("*.jsonl")):
            harness = classify(str(path)).harness
            if harness in RESUMABLE:
                out.append(pytest.param(path, harness, id=f"{root.name}/{path.relative_to(root)}"))
    return out


def _assert_same(got, want) -> None:
    for name, table in want.tables().items():
        try:
            assert_frame_equal(got.table(name), table, check_row_order=True)
        except AssertionError as exc:
            raise AssertionError(f"{name}: {exc}") from None


@pytest.fixture(autouse=True)
def _checkpoint_every_file(monkeypatch):
    monkeypatch.setattr(resume, "MIN_BYTES", 0)


@pytest.mark.parametrize(("src", "harness"), _files())
def test_resume_after_an_append_equals_a_cold_read(src, harness, tmp_path):
    adapter = RESUMABLE[harness]
    data = src.read_bytes()
    path = tmp_path / src.relative_to(src.parents[1])  # keep the layout the adapter reads
    path.parent.mkdir(parents=True)
    sidecar = src.with_name(src.name.removesuffix(".jsonl") + ".meta.json")
    if sidecar.exists():
        path.with_name(sidecar.name).write_bytes(sidecar.read_bytes())
    path.write_bytes(data)
    cold, _ = adapter.parse_from(str(path))
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    for cut in sorted({ends[len(ends) * k // 4] for k in range(4)} | {ends[0]} if ends else set()):
        path.write_bytes(data[:cut])
        _, checkpoint = adapter.parse_from(str(path))
        assert checkpoint is not None and checkpoint.offset == cut
        path.write_bytes(data)
        resumed, again = adapter.parse_from(str(path), checkpoint)
        _assert_same(resumed, cold)
        assert again.offset == ends[-1]


def test_a_partial_last_line_is_read_again_next_time(tmp_path):
    first = _a_claude_sample()
    data = first.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == 0x0A]
    path = tmp_path / first.name
    cut = ends[-2] + 10  # ten bytes of the last line are on disk
    path.write_bytes(data[:cut])
    partial, checkpoint = claude_code.parse_from(str(path))
    assert checkpoint.offset == ends[-2]
    assert "truncated_line" in partial.diagnostics["code"].to_list()
    path.write_bytes(data)
    resumed, _ = claude_code.parse_from(str(path), checkpoint)
    cold, _ = claude_code.parse_from(str(path))
    _assert_same(resumed, cold)
    assert "truncated_line" not in resumed.diagnostics["code"].to_list()


def _a_claude_sample():
    return sorted(p for p in (SAMPLES / "claude-code").rglob("*.jsonl") if classify(str(p)).harness == "claude-code")[0]


def test_a_rewritten_head_is_read_whole(tmp_path):
    src = _a_claude_sample()
    data = src.read_bytes()
    path = tmp_path / src.name
    path.write_bytes(data)
    _, checkpoint = claude_code.parse_from(str(path))
    changed = data.replace(b'"timestamp":"2', b'"timestamp":"1', 1)
    assert changed != data
    assert claude_code.parse_from(str(path))[0].sessions["started_at"].min().year >= 2000
    path.write_bytes(changed + b"\n")
    resumed, _ = claude_code.parse_from(str(path), checkpoint)
    cold, _ = claude_code.parse_from(str(path))
    _assert_same(resumed, cold)
    assert resumed.sessions["started_at"].min().year < 2000  # the new head was read


def test_a_checkpoint_loads_plain_data_only():
    import pickle

    evil = resume.dumps({"x": 1})
    assert resume.loads(evil) == {"x": 1}

    class Boom:
        def __reduce__(self):
            return (print, ("owned",))

    for blob in (
        resume.pack(pickle.dumps({"x": Boom()})),
        __import__("zlib").compress(pickle.dumps({"x": Boom()})),  # as an earlier version stored it
    ):
        with pytest.raises(pickle.UnpicklingError):
            resume.loads(blob)


def test_a_damaged_checkpoint_is_refused_with_a_value_error():
    """resume.parse reads a file whole when its checkpoint cannot be loaded (ValueError, zlib.error):
    a damaged blob never allocates what its length field claims, nor loads half a state."""
    good = resume.dumps({"x": list(range(1000))})
    for bad in (good[:6], good[:4] + b"\xff" * 8 + good[12:], good[:-3], good[:12] + b"junk" + good[16:]):
        with pytest.raises(ValueError):
            resume.loads(bad)
