"""The Claude Code adapter on real transcripts (../shared/corpus/claude-code)."""

from __future__ import annotations

import polars as pl
import pytest

from sessiongraph.ingest import claude_code

TOKEN_COLS = [
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_creation_tokens",
    "cache_creation_5m_tokens",
    "cache_creation_1h_tokens",
]

# Sums per file after de-duplicating by message.id, computed by an independent script over the
# raw JSON (not this adapter). 2.0.64 logs no 5m/1h split: all of it was 5-minute cache then.
EXPECTED_TOKENS = {
    "flat-2.0.64/4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl": (7, [33, 806, 214627, 37172, 37172, 0]),
    "flat-2.0.64/agent-36541525.jsonl": (1, [3, 3, 0, 16976, 16976, 0]),
    "flat-2.0.64/agent-50243ee8.jsonl": (1, [16878, 237, 0, 0, 0, 0]),
    "spotter-2.1.38/short.jsonl": (1, [3, 13, 11515, 13835, 0, 13835]),
    "spotter-2.1.38/subagent.jsonl": (12, [1576, 1586, 427286, 25842, 0, 25842]),
    "spotter-2.1.38/tool_heavy.jsonl": (4, [54, 212, 88231, 17696, 0, 17696]),
    "subagents-2.1.7/turn-2.jsonl": (11, [537, 10099, 223343, 157962, 157962, 0]),
    "subagents-2.1.7/turn-2/subagents/agent-a485154.jsonl": (6, [5233, 1845, 91980, 115531, 115531, 0]),
}


@pytest.mark.parametrize("rel", sorted(EXPECTED_TOKENS))
def test_tokens_deduplicated_per_message(corpus, rel):
    frames = claude_code.parse(str(corpus / "claude-code" / rel))
    n, sums = EXPECTED_TOKENS[rel]
    assert frames.usage.height == n
    assert frames.usage.select(TOKEN_COLS).sum().row(0) == tuple(sums)
    assert frames.diagnostics.height == 0


def _calls_by_tool(frames) -> dict[str, int]:
    return dict(frames.calls.group_by("tool").len().sort("tool").iter_rows())


def test_2_1_7_task_call_names_its_child(corpus):
    main = claude_code.parse(str(corpus / "claude-code/subagents-2.1.7/turn-2.jsonl"))
    s = main.sessions.row(0, named=True)
    assert s["session_id"] == "claude-code:e9fb405b-169f-40eb-9396-7e75076f045d"
    assert (s["session_kind"], s["layout"], s["harness_version"], s["git_branch"]) == ("main", "main", "2.1.7", "hooks")
    assert s["cwd"] == "/Users/User/repo/codemie-ai/codemie-code"
    assert s["model"] == "claude-sonnet-4-5-20250929"
    assert _calls_by_tool(main) == {"Bash": 6, "Glob": 2, "Read": 4, "Task": 1, "Write": 1}
    spawn = main.calls.filter(pl.col("kind") == "spawn").row(0, named=True)
    assert spawn["call_id"] == "toolu_bdrk_019PUUtqzQg8U5ogfuyQ7yLV"
    assert spawn["tool"] == "Task"
    assert spawn["subagent_type"] == "solution-architect"
    assert spawn["result_agent_id"] == "a485154"
    assert spawn["ended_at"] > spawn["started_at"]

    child = claude_code.parse(str(corpus / "claude-code/subagents-2.1.7/turn-2/subagents/agent-a485154.jsonl"))
    c = child.sessions.row(0, named=True)
    assert c["session_id"] == "claude-code:e9fb405b-169f-40eb-9396-7e75076f045d/a485154"
    assert (c["session_kind"], c["layout"], c["agent_id"]) == ("subagent", "nested", "a485154")
    assert c["parent_native_id"] == "e9fb405b-169f-40eb-9396-7e75076f045d"
    assert _calls_by_tool(child) == {"Bash": 3, "Glob": 3, "Grep": 3, "Read": 11}
    # Reads name files; Grep names folders; Glob without a path reads nothing; the one Read
    # that failed (no such file) read nothing either.
    ops = child.file_events.group_by("how").len().sort("how")
    assert dict(ops.iter_rows()) == {"Grep": 3, "Read": 10}
    failed = child.calls.filter(pl.col("is_error"))
    assert failed.select("tool", "paths").rows() == [
        ("Read", ["/Users/User/repo/codemie-ai/codemie-code/src/agents/core/registry.ts"])
    ]
    assert set(child.file_events["tier"]) == {"verified"}


def test_2_0_64_warmups_are_not_subagents(corpus):
    folder = corpus / "claude-code/flat-2.0.64"
    for agent in ("36541525", "50243ee8"):
        s = claude_code.parse(str(folder / f"agent-{agent}.jsonl")).sessions.row(0, named=True)
        assert s["session_id"] == f"claude-code:4c2ddfdc-b619-4525-8d03-1950fb1b0257/{agent}"
        assert (s["session_kind"], s["layout"], s["harness_version"]) == ("warmup", "flat", "2.0.64")
    main = claude_code.parse(str(folder / "4c2ddfdc-b619-4525-8d03-1950fb1b0257.jsonl"))
    assert main.sessions["session_kind"].to_list() == ["main"]
    assert _calls_by_tool(main) == {"Bash": 1, "Edit": 1, "Read": 1, "Write": 3}
    events = main.file_events.select("path", "op", "how").rows()
    assert events == [
        ("/tmp/private/hello.py", "write", "Write"),
        ("/tmp/private/hello.md", "write", "Write"),
        ("/tmp/private/hello.js", "write", "Write"),
        ("/tmp/private/hello.py", "read", "Read"),
        ("/tmp/private/hello.py", "write", "Edit"),
    ]


def test_2_1_38_progress_records_tie_the_dangling_child(corpus):
    frames = claude_code.parse(str(corpus / "claude-code/spotter-2.1.38/subagent.jsonl"))
    spawn = frames.calls.filter(pl.col("kind") == "spawn").row(0, named=True)
    assert spawn["call_id"] == "toolu_01Cz2Pnv7qNcnK1ZiocxWhQX"
    assert spawn["subagent_type"] == "Plan"
    assert spawn["result_agent_id"] == "afb92ff"
    assert spawn["progress_agent_id"] == "afb92ff"
    assert frames.sessions["session_id"].to_list() == ["claude-code:491e126e-1e71-469c-ade2-fcc8af567c74"]
    assert frames.file_events.select("path", "op").rows() == [
        ("/home/marco/projects/spotter/mix.exs", "read"),
        ("/home/marco/projects/spotter/plan.md", "write"),
    ]


def test_2_1_38_tool_heavy_web_tools_are_other(corpus):
    frames = claude_code.parse(str(corpus / "claude-code/spotter-2.1.38/tool_heavy.jsonl"))
    kinds = dict(frames.calls.group_by("kind").len().sort("kind").iter_rows())
    assert kinds == {"other": 3, "read": 1, "shell": 2}
    shell = frames.calls.filter(pl.col("kind") == "shell")
    assert shell["command"].null_count() == 0
