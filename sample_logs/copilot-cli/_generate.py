"""Write the GitHub Copilot CLI sample home (run: python sample_logs/copilot-cli/_generate.py).

Synthetic, in the shapes more-harness-formats.md section 1 gives from real files (one per storage
generation) and, for subagent events, from third-party parsers. Every id, path, prompt and count
is made up."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
CWD = "/home/dev/projects/beacon"
NEW = "4f8a2c1d-6b3e-4d5a-9c7f-0e1d2b3a4c5e"  # session-state/<uuid>/events.jsonl (1.0.x)
FLAT = "9b2e7d4c-1a3f-4e6b-8d5c-2f0a1b9c8d7e"  # session-state/<uuid>.jsonl (0.0.4xx)
OLD = "c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f"  # history-session-state (0.0.33x)
AGENT = "b7e1c2d3"
BRIEF = "Find where the beacon config is loaded and list its keys."


class Log:
    """Events chained by parentId, as copilot-agent writes them."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.lines: list[dict] = []

    def ev(self, at: str, etype: str, agent: str | None = None, **data) -> None:
        rec = {"type": etype, "data": data, "id": f"{self.prefix}-{len(self.lines):03d}", "timestamp": at,
               "parentId": self.lines[-1]["id"] if self.lines else None}  # fmt: skip
        if agent is not None:
            rec["agentId"] = agent
        self.lines.append(rec)


def metrics(**models):
    out = {}
    for model, (inp, outp, read, write, reasoning, count) in models.items():
        out[model] = {
            "requests": {"count": count, "cost": count},
            "usage": {"inputTokens": inp, "outputTokens": outp, "cacheReadTokens": read,
                      "cacheWriteTokens": write, "reasoningTokens": reasoning},
        }  # fmt: skip
    return out


def shutdown(log: Log, at: str, models: dict) -> None:
    log.ev(at, "session.shutdown", shutdownType="routine", totalPremiumRequests=3, totalApiDurationMs=9000,
           sessionStartTime=1785900000000, codeChanges={"linesAdded": 4, "linesRemoved": 1, "filesModified": []},
           modelMetrics=models, currentModel="claude-sonnet-4.5")  # fmt: skip


def new_session() -> list[dict]:
    d = "2026-08-05T10:"
    log = Log("e")
    ctx = {"cwd": CWD, "gitRoot": CWD, "branch": "main", "headCommit": "3e1f2a9", "repository": "dev/beacon",
           "hostType": "github"}  # fmt: skip
    log.ev(d + "00:00.000Z", "session.start", sessionId=NEW, version=1, producer="copilot-agent",
           copilotVersion="1.0.18", startTime=d + "00:00.000Z", selectedModel="claude-sonnet-4.5", context=ctx)  # fmt: skip
    log.ev(d + "00:05.000Z", "user.message", content="Add a --dry-run flag to beacon sync.", interactionId="i-1")
    log.ev(d + "00:05.100Z", "assistant.turn_start", interactionId="i-1", turnId="0")
    task = {"agent_type": "explore", "description": "find the config loader", "prompt": BRIEF}
    log.ev(d + "00:08.000Z", "assistant.message", messageId="m-1", turnId="0", model="claude-sonnet-4.5",
           content="Let me look at the config first.", outputTokens=40,
           toolRequests=[{"toolCallId": "toolu_task1", "name": "task", "arguments": task, "type": "function"}])  # fmt: skip
    log.ev(d + "00:08.100Z", "tool.execution_start", toolCallId="toolu_task1", toolName="task", arguments=task)
    log.ev(d + "00:08.200Z", "subagent.started", agentId=AGENT, toolCallId="toolu_task1", agentName="explore",
           agentDisplayName="Explore", agentDescription="read-only explorer")  # fmt: skip
    log.ev(d + "00:08.300Z", "user.message", agent=AGENT, content=BRIEF)
    view = {"path": "src/beacon/config.py"}
    log.ev(d + "00:10.000Z", "assistant.message", agent=AGENT, messageId="m-s1", model="claude-haiku-4.5",
           content="", outputTokens=15,
           toolRequests=[{"toolCallId": "toolu_v1", "name": "view", "arguments": view, "type": "function"}])  # fmt: skip
    log.ev(d + "00:10.100Z", "tool.execution_start", agent=AGENT, toolCallId="toolu_v1", toolName="view",
           arguments=view)  # fmt: skip
    log.ev(d + "00:10.300Z", "tool.execution_complete", agent=AGENT, toolCallId="toolu_v1", success=True,
           result={"content": "def load(path): ..."})  # fmt: skip
    log.ev(d + "00:12.000Z", "assistant.message", agent=AGENT, messageId="m-s2", model="claude-haiku-4.5",
           content="Config is loaded in src/beacon/config.py: keys url, token_file, retries.", outputTokens=30)  # fmt: skip
    log.ev(d + "00:12.100Z", "subagent.completed", agentId=AGENT, toolCallId="toolu_task1", agentName="explore")
    log.ev(d + "00:12.200Z", "tool.execution_complete", toolCallId="toolu_task1", success=True,
           result={"content": "Config is loaded in src/beacon/config.py: keys url, token_file, retries."})  # fmt: skip
    edit = {"path": "src/beacon/sync.py", "old_str": "def sync(", "new_str": "def sync(dry_run=False, "}
    log.ev(d + "00:15.000Z", "assistant.message", messageId="m-2", turnId="0", model="claude-sonnet-4.5",
           content="", reasoningText="Add the parameter, then the flag.", outputTokens=60,
           toolRequests=[{"toolCallId": "toolu_e1", "name": "edit", "arguments": edit, "type": "function"}])  # fmt: skip
    log.ev(d + "00:15.100Z", "tool.execution_start", toolCallId="toolu_e1", toolName="edit", arguments=edit)
    log.ev(d + "00:15.400Z", "tool.execution_complete", toolCallId="toolu_e1", success=True,
           result={"content": "File src/beacon/sync.py updated."})  # fmt: skip
    log.ev(d + "00:16.000Z", "assistant.turn_end", turnId="0")
    shutdown(log, d + "01:00.000Z", metrics(**{"claude-sonnet-4.5": (12000, 100, 8000, 1500, 0, 2),
                                               "claude-haiku-4.5": (3000, 45, 1000, 0, 0, 2)}))  # fmt: skip
    # Resumed the next hour: this shutdown repeats the first run's figures and adds its own.
    e = "2026-08-05T11:"
    log.ev(e + "00:00.000Z", "session.resume", resumeTime=e + "00:00.000Z", eventCount=19)
    log.ev(e + "00:04.000Z", "user.message", content="Now run the sync tests.", interactionId="i-2")
    bash = {"command": "pytest -q tests/test_sync.py", "description": "run sync tests"}
    log.ev(e + "00:06.000Z", "assistant.message", messageId="m-3", turnId="1", model="claude-sonnet-4.5",
           content="", outputTokens=25,
           toolRequests=[{"toolCallId": "toolu_b1", "name": "bash", "arguments": bash, "type": "function"}])  # fmt: skip
    log.ev(e + "00:06.100Z", "tool.execution_start", toolCallId="toolu_b1", toolName="bash", arguments=bash)
    log.ev(e + "00:09.000Z", "tool.execution_complete", toolCallId="toolu_b1", success=False,
           error={"message": "2 failed"})  # fmt: skip
    log.ev(e + "00:09.500Z", "abort", reason="user initiated")
    shutdown(log, e + "00:30.000Z", metrics(**{"claude-sonnet-4.5": (15500, 125, 10000, 1500, 0, 3),
                                               "claude-haiku-4.5": (3000, 45, 1000, 0, 0, 2)}))  # fmt: skip
    return log.lines


def flat_session() -> list[dict]:
    d = "2026-03-02T09:"
    log = Log("f")
    log.ev(d + "00:00.000Z", "session.start", sessionId=FLAT, version=1, producer="copilot-agent",
           copilotVersion="unknown", startTime=d + "00:00.000Z", context={"cwd": CWD})  # fmt: skip
    log.ev(d + "00:03.000Z", "session.model_change", newModel="gpt-5")
    log.ev(d + "00:04.000Z", "user.message", content="Write a CHANGELOG entry for 0.4.")
    create = {"path": f"{CWD}/CHANGELOG.md", "file_text": "## 0.4\n- dry runs\n"}
    log.ev(d + "00:07.000Z", "assistant.message", messageId="f-1", content="Writing it.", outputTokens=20,
           toolRequests=[{"toolCallId": "call_c1", "name": "create", "arguments": create}])  # fmt: skip
    log.ev(d + "00:07.100Z", "tool.execution_start", toolCallId="call_c1", toolName="create", arguments=create)
    log.ev(d + "00:07.200Z", "tool.execution_complete", toolCallId="call_c1", success=True,
           result={"content": "Created CHANGELOG.md"})  # fmt: skip
    shutdown(log, d + "00:20.000Z", metrics(**{"gpt-5": (5000, 300, 2000, 0, 120, 2)}))
    # Resumed: this build starts its counters again, so the second figure is lower and the run's own.
    e = "2026-03-02T10:"
    log.ev(e + "00:00.000Z", "session.resume", resumeTime=e + "00:00.000Z", eventCount=6)
    log.ev(e + "00:02.000Z", "user.message", content="Also mention the new flag in the README.")
    log.ev(e + "00:05.000Z", "assistant.message", messageId="f-2", content="Done in the README too.", outputTokens=12)
    shutdown(log, e + "00:10.000Z", metrics(**{"gpt-5": (1800, 12, 900, 0, 0, 1)}))
    # Resumed again and cut off (no shutdown): its messages' output tokens are all it has.
    log.ev("2026-03-02T11:00:00.000Z", "session.resume", resumeTime="2026-03-02T11:00:00.000Z", eventCount=10)
    log.ev("2026-03-02T11:00:02.000Z", "user.message", content="Tag the release.")
    log.ev("2026-03-02T11:00:04.000Z", "assistant.message", messageId="f-3", content="Which tag name?", outputTokens=7)
    return log.lines


def history() -> dict:
    view = {"command": "view", "path": f"{CWD}/README.md"}
    return {
        "sessionId": OLD,
        "startTime": "2025-10-08T21:10:16.398Z",
        "chatMessages": [
            {"role": "user", "content": "Summarise the README."},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": "call_h1",
                        "type": "function",
                        "function": {"name": "str_replace_editor", "arguments": json.dumps(view)},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_h1", "content": "# beacon\nSyncs beacons."},
            {"role": "assistant", "content": "beacon syncs beacons."},
        ],  # fmt: skip
        "timeline": [
            {"id": "t1", "type": "user", "timestamp": "2025-10-08T21:10:20.000Z"},
            {"id": "t2", "type": "tool_call_completed", "timestamp": "2025-10-08T21:10:24.000Z"},
            {"id": "t3", "type": "copilot", "timestamp": "2025-10-08T21:10:27.500Z"},
        ],
    }


WORKSPACE = f"""id: {NEW}
cwd: {CWD}
git_root: {CWD}
repository: dev/beacon
host_type: github
branch: main
name: Add dry-run flag to beacon sync
client_name: github/cli
user_named: false
summary_count: 0
created_at: 2026-08-05T10:00:00.000Z
updated_at: 2026-08-05T11:00:30.000Z
"""


def write(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))


if __name__ == "__main__":
    write(HERE / "session-state" / NEW / "events.jsonl", new_session())
    (HERE / "session-state" / NEW / "workspace.yaml").write_text(WORKSPACE)
    write(HERE / "session-state" / f"{FLAT}.jsonl", flat_session())
    old = HERE / "history-session-state" / f"session_{OLD}_1759957816398.json"
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_text(json.dumps(history(), indent=2) + "\n")
