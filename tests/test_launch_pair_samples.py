"""sample_logs hold a real-shaped launch pair: a Claude Bash call running `codex exec`, and the
rollout it started. The launch pass (next issue) builds on these ingest facts."""

from __future__ import annotations

import polars as pl

from sessiongraph.ingest import claude_code, codex
from tests.conftest import SAMPLES

PARENT = SAMPLES / "claude-code/projects/-home-dev-projects-ink-well-v2/b7ff63c1-1ce1-4867-8acb-8574d4cd7c25.jsonl"
CHILD = SAMPLES / "codex/sessions/2025/12/09/rollout-2025-12-09T14-02-33-019b036b-c520-7c3e-9a41-5be0d7f2c816.jsonl"


def test_codex_exec_child_of_a_claude_bash_call():
    parent = claude_code.parse(str(PARENT))
    call = parent.calls.filter(pl.col("command").str.starts_with("codex exec")).row(0, named=True)
    child = codex.parse(str(CHILD))
    s = child.sessions.row(0, named=True)
    assert (s["entrypoint"], s["originator"], s["harness_version"]) == ("exec", "codex_exec", "0.61.0")
    assert s["native_id"] in call["output_ids"]
    assert s["cwd"] == "/home/dev/projects/ink_well.v2" == call["cwd"]
    assert call["started_at"] < s["started_at"] < call["ended_at"]
    # Tokens: cumulative totals turned into deltas, the re-emitted last total counted once.
    sums = child.usage.select("input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens").sum()
    assert sums.row(0) == (10118 - 6528, 6528, 262, 128)
    assert child.usage.height == 3
    assert child.diagnostics.height == 0
