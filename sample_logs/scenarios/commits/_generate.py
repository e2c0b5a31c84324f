"""Write the synthetic "commits" logs (issue 31 part 3): a Claude Code session that commits, opens
a PR and gets a pr-link record, and a Codex rollout whose session_meta.git names the repository
it started in and that commits. README.md says what each file shows.

  claude-code/projects/-home-dev-projects-beacon/<id>.jsonl   Claude Code transcript (2.1.39 shape)
  codex/sessions/2026/01/07/rollout-<local time>-<id>.jsonl   Codex rollout (0.125 shape)

Everything is invented; shapes follow sample_logs/claude-code and sample_logs/codex. Python stdlib
only, deterministic. Run: python sample_logs/scenarios/commits/_generate.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
MESSAGE = "Add a dim level to the beacon"  # log text: a commit subject is never stored
CC_ID = "5e8a1c24-7b39-4d0f-a6e2-91c3d7f40b85"
CC_CWD = "/home/dev/projects/beacon"
CC_BRANCH = "feat/x"
PR = "https://github.com/example/beacon/pull/17"
CODEX_ID = "019b9820-3c40-7a11-8d5e-2f6b9a0c4e71"
CODEX_CWD = "/home/dev/projects/ferry"


def _claude() -> list[dict]:
    base = {
        "isSidechain": False,
        "userType": "external",
        "cwd": CC_CWD,
        "sessionId": CC_ID,
        "version": "2.1.39",
        "gitBranch": CC_BRANCH,
        "slug": "steady-amber-heron",
    }
    out: list[dict] = []
    parent = [None]

    def add(rec: dict) -> None:
        rec = {"parentUuid": parent[0], **base, **rec}
        parent[0] = rec["uuid"]
        out.append(rec)

    def usage(inp: int, read: int, new: int, outp: int) -> dict:
        return {
            "input_tokens": inp,
            "cache_creation_input_tokens": new,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": new},
            "output_tokens": outp,
            "service_tier": "standard",
            "inference_geo": "not_available",
        }

    def bash(n: int, t: str, t_out: str, command: str, description: str, stdout: str, u: dict) -> None:
        tool_id = f"toolu_01Beacon{n:02d}Call"
        use_uuid = f"b3e0{n:04d}-1a2b-4c3d-8e4f-5a6b7c8d9e0f"
        add(
            {
                "message": {
                    "model": "claude-opus-4-5-20251101",
                    "id": f"msg_01BeaconStep{n:02d}",
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": tool_id,
                            "name": "Bash",
                            "input": {"command": command, "description": description},
                            "caller": {"type": "direct"},
                        }
                    ],
                    "stop_reason": "tool_use",
                    "stop_sequence": None,
                    "usage": u,
                },
                "requestId": f"req_011Beacon{n:02d}",
                "type": "assistant",
                "uuid": use_uuid,
                "timestamp": t,
            }
        )
        add(
            {
                "type": "user",
                "message": {
                    "role": "user",
                    "content": [{"tool_use_id": tool_id, "type": "tool_result", "content": stdout, "is_error": False}],
                },
                "uuid": f"c4f1{n:04d}-2b3c-4d4e-9f5a-6b7c8d9e0f1a",
                "timestamp": t_out,
                "toolUseResult": {
                    "stdout": stdout,
                    "stderr": "",
                    "interrupted": False,
                    "isImage": False,
                    "noOutputExpected": False,
                },
                "sourceToolAssistantUUID": use_uuid,
            }
        )

    prompt_uuid = "a1d2e3f4-0001-4a5b-8c6d-7e8f9a0b1c2d"
    out.append(
        {
            "type": "file-history-snapshot",
            "messageId": prompt_uuid,
            "snapshot": {"messageId": prompt_uuid, "trackedFileBackups": {}, "timestamp": "2026-01-07T09:00:00.000Z"},
            "isSnapshotUpdate": False,
        }
    )
    add(
        {
            "type": "user",
            "message": {"role": "user", "content": "Commit the dim level change on this branch and open a PR."},
            "uuid": prompt_uuid,
            "timestamp": "2026-01-07T09:00:00.000Z",
        }
    )
    bash(
        1,
        "2026-01-07T09:00:04.000Z",
        "2026-01-07T09:00:04.600Z",
        f"git add -A && git commit -m '{MESSAGE}'",
        "Commit the change",
        f"[{CC_BRANCH} 1a2b3c4] {MESSAGE}\n 2 files changed, 14 insertions(+), 3 deletions(-)",
        usage(2, 16220, 9310, 120),
    )
    bash(
        2,
        "2026-01-07T09:00:08.000Z",
        "2026-01-07T09:00:11.200Z",
        f"git push -u origin {CC_BRANCH} && gh pr create --title '{MESSAGE}' --body 'Adds a dim level.'",
        "Push and open a PR",
        f"branch '{CC_BRANCH}' set up to track 'origin/{CC_BRANCH}'.\n{PR}",
        usage(1, 25530, 402, 96),
    )
    out.append(
        {
            "type": "pr-link",
            "sessionId": CC_ID,
            "prNumber": 17,
            "prUrl": PR,
            "prRepository": "example/beacon",
            "timestamp": "2026-01-07T09:00:11.300Z",
        }
    )
    add(
        {
            "message": {
                "model": "claude-opus-4-5-20251101",
                "id": "msg_01BeaconStep03",
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": "Committed 1a2b3c4 on feat/x and opened PR #17."}],
                "stop_reason": "end_turn",
                "stop_sequence": None,
                "usage": usage(1, 25932, 180, 40),
            },
            "requestId": "req_011Beacon03",
            "type": "assistant",
            "uuid": "d5a2e3f4-0003-4a5b-8c6d-7e8f9a0b1c2d",
            "timestamp": "2026-01-07T09:00:13.000Z",
        }
    )
    return out


def _codex() -> list[dict]:
    turn = "019b9820-4a10-7c22-8e51-0b9d7f3c6a02"

    def rec(t: str, kind: str, payload: dict) -> dict:
        return {"timestamp": f"2026-01-07T{t}Z", "type": kind, "payload": payload}

    def tokens(t: str, total: tuple, last: tuple) -> dict:
        def block(v: tuple) -> dict:
            inp, cached, outp, reason = v
            return {
                "input_tokens": inp,
                "cached_input_tokens": cached,
                "output_tokens": outp,
                "reasoning_output_tokens": reason,
                "total_tokens": inp + outp,
            }

        info = {"total_token_usage": block(total), "last_token_usage": block(last), "model_context_window": 258400}
        return rec(t, "event_msg", {"type": "token_count", "info": info, "rate_limits": None})

    commit_out = f"[main 9c8b7a6] {MESSAGE}\n 1 file changed, 6 insertions(+)\n"
    args = {"cmd": f"git commit -am '{MESSAGE}'", "workdir": CODEX_CWD, "yield_time_ms": 10000}
    return [
        rec(
            "10:30:01.870",
            "session_meta",
            {
                "id": CODEX_ID,
                "timestamp": "2026-01-07T10:30:01.600Z",
                "cwd": CODEX_CWD,
                "originator": "codex-tui",
                "cli_version": "0.125.0",
                "source": "cli",
                "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent."},
                "git": {
                    "commit_hash": "e1f2a3b4c5d6e7f8091a2b3c4d5e6f708192a3b4",
                    "branch": "main",
                    "repository_url": "https://github.com/example/ferry.git",
                },
            },
        ),
        rec("10:30:01.872", "event_msg", {"type": "task_started", "turn_id": turn, "model_context_window": 258400}),
        rec(
            "10:30:01.873",
            "turn_context",
            {
                "turn_id": turn,
                "cwd": CODEX_CWD,
                "approval_policy": "on-request",
                "sandbox_policy": {"type": "workspace-write", "writable_roots": [], "network_access": False},
                "model": "gpt-5.5",
                "effort": "medium",
                "summary": "none",
            },
        ),
        rec(
            "10:30:01.874",
            "response_item",
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "commit the schedule fix"}]},
        ),
        rec("10:30:01.874", "event_msg", {"type": "user_message", "message": "commit the schedule fix", "images": []}),
        rec(
            "10:30:04.006",
            "response_item",
            {"type": "function_call", "name": "exec_command", "arguments": json.dumps(args), "call_id": "call_K1"},
        ),
        tokens("10:30:04.311", (15200, 0, 180, 64), (15200, 0, 180, 64)),
        rec(
            "10:30:04.920",
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_K1",
                "output": f"Chunk ID: 5d1e02\nWall time: 0.4100 seconds\nProcess exited with code 0\n"
                f"Original token count: 24\nOutput:\n{commit_out}",
            },
        ),
        rec(
            "10:30:04.930",
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": "call_K1",
                "process_id": "61200",
                "turn_id": turn,
                "command": ["/bin/zsh", "-lc", args["cmd"]],
                "cwd": CODEX_CWD,
                "parsed_cmd": [{"type": "unknown", "cmd": args["cmd"]}],
                "source": "unified_exec_startup",
                "stdout": "",
                "stderr": "",
                "aggregated_output": commit_out,
                "exit_code": 0,
                "duration": {"secs": 0, "nanos": 410000000},
                "formatted_output": "",
                "status": "completed",
            },
        ),
        tokens("10:30:06.402", (31000, 15104, 240, 64), (15800, 15104, 60, 0)),
        rec(
            "10:30:06.410",
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Committed 9c8b7a6 on main."}],
                "phase": "final_answer",
            },
        ),
        rec("10:30:06.433", "event_msg", {"type": "task_complete", "turn_id": turn, "duration_ms": 4561}),
    ]


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))


def main() -> None:
    _write(HERE / "claude-code" / "projects" / "-home-dev-projects-beacon" / f"{CC_ID}.jsonl", _claude())
    _write(
        HERE / "codex" / "sessions" / "2026" / "01" / "07" / f"rollout-2026-01-07T11-30-01-{CODEX_ID}.jsonl", _codex()
    )


if __name__ == "__main__":
    main()
