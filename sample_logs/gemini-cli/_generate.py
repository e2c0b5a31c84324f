"""Writes the Gemini CLI sample logs (and the Claude Code run one of them launches).

Every id, path, prompt and count is made up; the shapes follow section 6 of
shared/specs/harness-log-formats.md (chat JSON, JSONL chat with ``$set`` lines, logs.json) and
section 1 for the launched ``claude -p`` transcript. Run from anywhere: ``python _generate.py``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent

LUMEN = "/home/dev/projects/lumen-api"
TIDE = "/home/dev/projects/tidewater"
CHAT_A = "7c1e4b2a-5d3f-4e8a-9b61-2f0c8d4e7a19"
CHAT_B = "3f9a0c11-8b2e-4c7d-a5f0-91d6e2b7c4a8"
CLAUDE_CHILD = "e3b4c2d1-7a6f-4c58-9d2e-0f1a2b3c4d5e"
PROOFREAD = "Proofread docs/RATE_LIMITS.md and fix typos in place"


def project_hash(root: str) -> str:
    return hashlib.sha256(root.encode()).hexdigest()


def ts(s: str) -> str:
    """'09:12:05.120' on the sample day -> ISO with millis and Z."""
    return f"2026-02-03T{s}Z"


def ms(s: str, day: str = "2026-02-03") -> int:
    return int(datetime.fromisoformat(f"{day}T{s}+00:00").timestamp() * 1000)


def call(name: str, start: str, rand: str, args: dict, end: str, output: str | None, *,
         status: str = "success", display: str, error: str | None = None, day: str = "2026-02-03",
         with_result: bool = True) -> dict:
    cid = f"{name}-{ms(start, day)}-{rand}"
    response = {"error": error} if error is not None else {"output": output}
    out = {"id": cid, "name": name, "args": args}
    if with_result:
        out["result"] = [{"functionResponse": {"id": cid, "name": name, "response": response}}]
    out.update({"status": status, "timestamp": f"{day}T{end}Z", "displayName": display,
                "description": f"{display} tool.", "renderOutputAsMarkdown": name != "run_shell_command"})
    return out


def shell_output(command: str, output: str, code: int, directory: str = "(root)") -> str:
    return (f"Command: {command}\nDirectory: {directory}\nOutput: {output}\nError: (none)\n"
            f"Exit Code: {code}\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 48211")


def tokens(inp: int, out: int, cached: int, thoughts: int, tool: int = 0) -> dict:
    return {"input": inp, "output": out, "cached": cached, "thoughts": thoughts, "tool": tool,
            "total": inp + out + thoughts + tool}


def chat_a() -> dict:
    claude_cmd = f'claude -p "{PROOFREAD}" --output-format json'
    claude_json = json.dumps({"type": "result", "subtype": "success", "is_error": False, "duration_ms": 17000,
                              "num_turns": 3, "result": "Fixed one typo.", "session_id": CLAUDE_CHILD})
    msgs = [
        {"id": "0d3a9f6e-1c2b-4a5d-8e7f-9a0b1c2d3e4f", "timestamp": ts("09:12:01.000"), "type": "info",
         "content": "Loaded cached credentials."},
        {"id": "1e4b0a7f-2d3c-4b6e-9f80-ab1c2d3e4f50", "timestamp": ts("09:12:05.120"), "type": "user",
         "content": "Add a rate-limit page to the docs and fix the typo in src/limits.py"},
        {"id": "2f5c1b80-3e4d-4c7f-a091-bc2d3e4f5061", "timestamp": ts("09:12:09.400"), "type": "gemini",
         "content": "", "thoughts": [{"subject": "Reading the docs", "description": "Looking at the API page.",
                                      "timestamp": ts("09:12:08.700")}],
         "tokens": tokens(8210, 64, 0, 212), "model": "gemini-2.5-pro",
         "toolCalls": [
             call("read_file", "09:12:08.950", "a1b2c3d4e5f6", {"file_path": f"{LUMEN}/docs/API.md"},
                  "09:12:09.390", "# lumen-api\n\n## Endpoints\n- GET /v1/items\n", display="ReadFile"),
             call("list_directory", "09:12:09.010", "b2c3d4e5f6a7", {"dir_path": f"{LUMEN}/src"},
                  "09:12:09.395", f"Directory listing for {LUMEN}/src:\nlimits.py\nserver.py",
                  display="ReadFolder"),
         ]},
        {"id": "3a6d2c91-4f5e-4d80-b1a2-cd3e4f506172", "timestamp": ts("09:12:20.000"), "type": "gemini",
         "content": "", "tokens": tokens(9034, 402, 6144, 96), "model": "gemini-2.5-pro",
         "toolCalls": [
             call("write_file", "09:12:19.100", "c3d4e5f6a7b8",
                  {"file_path": "docs/RATE_LIMITS.md",
                   "content": "# Rate limits\n\nEach API key gets 600 requets per minute.\n"},
                  "09:12:19.800", f"Successfully created and wrote to new file: {LUMEN}/docs/RATE_LIMITS.md.",
                  display="WriteFile"),
             call("replace", "09:12:24.300", "d4e5f6a7b8c9",
                  {"file_path": f"{LUMEN}/src/limits.py", "old_string": "DEFAULT_LIMTI = 600",
                   "new_string": "DEFAULT_LIMIT = 600"},
                  "09:12:24.900", f"Successfully modified file: {LUMEN}/src/limits.py (1 replacements).",
                  display="Edit"),
             call("read_file", "09:12:25.100", "e5f6a7b8c9d0", {"file_path": "src/limits_old.py"},
                  "09:12:25.150", None, status="error", display="ReadFile",
                  error=f"File not found: {LUMEN}/src/limits_old.py"),
         ]},
        {"id": "4b7e3da2-5061-4e91-c2b3-de4f50617283", "timestamp": ts("09:13:02.000"), "type": "gemini",
         "content": "", "tokens": tokens(9611, 58, 8192, 40), "model": "gemini-2.5-pro",
         "toolCalls": [
             call("run_shell_command", "09:13:01.500", "f6a7b8c9d0e1",
                  {"command": "pytest -q tests/test_limits.py", "description": "Run the limit tests."},
                  "09:13:04.700", shell_output("pytest -q tests/test_limits.py", "1 failed, 7 passed in 0.41s", 1),
                  display="Shell"),
             call("search_file_content", "09:13:05.000", "a7b8c9d0e1f2",
                  {"pattern": "DEFAULT_LIMIT", "dir_path": "src"},
                  "09:13:05.200", 'Found 2 matches for pattern "DEFAULT_LIMIT" in path "src":\n---\nFile: limits.py\nL3: DEFAULT_LIMIT = 600',
                  display="SearchText"),
         ]},
        {"id": "5c8f4eb3-6172-4fa2-d3c4-ef5061728394", "timestamp": ts("09:15:09.800"), "type": "gemini",
         "content": "I'll ask a headless Claude to proofread the new page.", "tokens": tokens(10220, 81, 8192, 130),
         "model": "gemini-2.5-pro",
         "toolCalls": [
             call("run_shell_command", "09:15:10.000", "b8c9d0e1f2a3",
                  {"command": claude_cmd, "description": "Proofread the rate-limit page with Claude."},
                  "09:15:31.400", shell_output(claude_cmd, claude_json, 0), display="Shell"),
         ]},
        {"id": "6d905fc4-7283-40b3-e4d5-f06172839405", "timestamp": ts("09:15:40.000"), "type": "gemini",
         "content": "", "tokens": tokens(11873, 120, 10240, 305, 14), "model": "gemini-2.5-pro",
         "toolCalls": [
             call("read_file", "09:15:40.500", "c9d0e1f2a3b4", {"absolute_path": f"{LUMEN}/docs/RATE_LIMITS.md"},
                  "09:15:40.600", "# Rate limits\n\nEach API key gets 600 requests per minute.\n", display="ReadFile"),
             call("delegate_to_agent", "09:15:41.000", "d0e1f2a3b4c5",
                  {"objective": "Map how a request reaches the rate limiter and list every place that reads DEFAULT_LIMIT.",
                   "agent_name": "codebase_investigator"},
                  "09:16:55.000",
                  "Subagent 'codebase_investigator' finished.\nTermination Reason: GOAL\nResult:\n"
                  '{"SummaryOfFindings": "Requests pass server.py middleware, then limits.check()."}',
                  display="Delegate to Agent"),
         ]},
        {"id": "7ea160d5-8394-41c4-f5e6-0172839405a6", "timestamp": ts("09:17:02.000"), "type": "gemini",
         "content": "Done: docs/RATE_LIMITS.md added and proofread, the typo in src/limits.py fixed; one test still fails.",
         "thoughts": [], "tokens": tokens(12410, 96, 11264, 0), "model": "gemini-2.5-pro"},
    ]
    return {"sessionId": CHAT_A, "projectHash": project_hash(LUMEN), "startTime": ts("09:12:01.000"),
            "lastUpdated": ts("09:17:02.000"), "messages": msgs}


def chat_b() -> list[dict]:
    day = "2026-03-10"

    def t(s: str) -> str:
        return f"{day}T{s}Z"

    context = ("<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\n"
               "Today's date is Tuesday, March 10, 2026.\nMy operating system is: linux\n"
               f"- **Workspace Directories:**\n  - {TIDE}\n</session_context>")
    read = call("read_file", "14:05:31.200", "a0b1c2d3e4f5", {"file_path": "tidewater/core.py"},
                "14:05:31.350", "def parse_tide(raw):\n    ...\n", display="ReadFile", day=day)
    replace = call("replace", "14:05:40.100", "b1c2d3e4f5a6",
                   {"file_path": "tidewater/core.py", "old_string": "def parse_tide(", "new_string": "def parse_tides("},
                   "14:05:40.600", None, display="Edit", day=day, with_result=False)
    write = call("write_file", "14:05:41.000", "c2d3e4f5a6b7",
                 {"file_path": "CHANGES.md", "content": "- parse_tide is now parse_tides\n"},
                 "14:05:41.300", f"Successfully created and wrote to new file: {TIDE}/CHANGES.md.",
                 display="WriteFile", day=day)
    shell = call("run_shell_command", "14:06:02.000", "d3e4f5a6b7c8",
                 {"command": "python -m pytest -q", "description": "Run the tests.", "dir_path": "tests"},
                 "14:06:05.500", shell_output("python -m pytest -q", "12 passed in 0.88s", 0, "tests"),
                 display="Shell", day=day)
    partial = {"id": "g1-9c0d", "timestamp": t("14:05:30.900"), "type": "gemini", "content": "",
               "model": "gemini-3-flash-preview", "tokens": tokens(9120, 12, 4096, 88), "toolCalls": [read]}
    final = dict(partial, tokens=tokens(9120, 57, 4096, 88), toolCalls=[read, replace, write])
    return [
        {"sessionId": CHAT_B, "projectHash": project_hash(TIDE), "startTime": t("14:05:12.000"),
         "lastUpdated": t("14:05:12.000"), "kind": "main"},
        {"$set": {"messages": [{"id": "ctx-01a2", "timestamp": t("14:05:12.010"), "type": "user",
                                "content": [{"text": context}]}]}},
        {"id": "u1-5b6c", "timestamp": t("14:05:29.400"), "type": "user",
         "content": [{"text": "Rename parse_tide to parse_tides in tidewater/core.py and note it in CHANGES.md"}]},
        {"$set": {"lastUpdated": t("14:05:29.410")}},
        partial,
        {"$set": {"lastUpdated": t("14:05:31.400")}},
        final,
        {"id": "u2-7d8e", "timestamp": t("14:05:40.650"), "type": "user",
         "content": [{"functionResponse": {"id": replace["id"], "name": "replace", "response": {
             "output": f"Successfully modified file: {TIDE}/tidewater/core.py (1 replacements)."}}}]},
        {"id": "g2-1f2a", "timestamp": t("14:06:01.800"), "type": "gemini", "content": "",
         "model": "gemini-3-flash-preview", "tokens": tokens(9866, 31, 8192, 40), "toolCalls": [shell]},
        {"$set": {"lastUpdated": t("14:06:05.600")}},
        {"id": "g3-3b4c", "timestamp": t("14:06:09.000"), "type": "gemini",
         "content": "Renamed; CHANGES.md notes it and the tests pass.", "model": "gemini-3-flash-preview",
         "tokens": tokens(10012, 22, 9216, 0)},
        {"id": "i1-5d6e", "timestamp": t("14:06:20.000"), "type": "info", "content": "Request cancelled."},
        {"$set": {"lastUpdated": t("14:06:20.010")}},
    ]


def prompt_log() -> list[dict]:
    return [
        {"sessionId": CHAT_A, "messageId": 0, "type": "user",
         "message": "Add a rate-limit page to the docs and fix the typo in src/limits.py", "timestamp": ts("09:12:05.118")},
    ]


def claude_child() -> list[dict]:
    """The `claude -p` run chat A launched: entrypoint sdk-cli, same cwd, starts during the call."""
    base = {"isSidechain": False, "userType": "external", "entrypoint": "sdk-cli", "cwd": LUMEN,
            "sessionId": CLAUDE_CHILD, "version": "2.1.240", "gitBranch": "main"}
    uuids = [f"9a{i:02d}c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c{i:02d}" for i in range(8)]
    model = "claude-sonnet-4-5-20250929"
    path = f"{LUMEN}/docs/RATE_LIMITS.md"
    text_v1 = "# Rate limits\n\nEach API key gets 600 requets per minute.\n"  # Gemini's typo

    def usage(inp, cc, cr, out):
        return {"input_tokens": inp, "cache_creation_input_tokens": cc, "cache_read_input_tokens": cr,
                "cache_creation": {"ephemeral_5m_input_tokens": cc, "ephemeral_1h_input_tokens": 0},
                "output_tokens": out, "service_tier": "standard"}

    def assistant(i, parent, at, msg_id, req, content, u, stop):
        return {"parentUuid": parent, **base, "message": {"model": model, "id": msg_id, "type": "message",
                "role": "assistant", "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": u}, "requestId": req, "type": "assistant", "uuid": uuids[i], "timestamp": ts(at)}

    return [
        {"parentUuid": None, **base, "type": "user", "message": {"role": "user", "content": PROOFREAD},
         "promptSource": "sdk", "permissionMode": "acceptEdits", "uuid": uuids[0], "timestamp": ts("09:15:12.300")},
        assistant(1, uuids[0], "09:15:14.900", "msg_01RdPrfA1", "req_011PrfA1",
                  [{"type": "tool_use", "id": "toolu_01PrfRead", "name": "Read", "input": {"file_path": path}}],
                  usage(3, 9800, 0, 61), "tool_use"),
        {"parentUuid": uuids[1], **base, "type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_01PrfRead", "type": "tool_result",
             "content": f"     1\t{text_v1.splitlines()[0]}\n"}]},
         "uuid": uuids[2], "timestamp": ts("09:15:15.000"),
         "toolUseResult": {"type": "text", "file": {"filePath": path, "content": text_v1, "numLines": 3,
                                                      "startLine": 1, "totalLines": 3}}},
        assistant(3, uuids[2], "09:15:19.600", "msg_01RdPrfA2", "req_011PrfA2",
                  [{"type": "tool_use", "id": "toolu_01PrfEdit", "name": "Edit",
                    "input": {"file_path": path, "old_string": "requets", "new_string": "requests"}}],
                  usage(5, 210, 9800, 88), "tool_use"),
        {"parentUuid": uuids[3], **base, "type": "user", "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_01PrfEdit", "type": "tool_result",
             "content": f"The file {path} has been updated."}]},
         "uuid": uuids[4], "timestamp": ts("09:15:20.100"),
         "toolUseResult": {"filePath": path, "oldString": "requets", "newString": "requests",
                           "originalFile": text_v1, "structuredPatch": [], "userModified": False, "replaceAll": False}},
        assistant(5, uuids[4], "09:15:28.800", "msg_01RdPrfA3", "req_011PrfA3",
                  [{"type": "text", "text": "Fixed one typo."}], usage(4, 95, 10010, 12), "end_turn"),
    ]


def write_json(rel: str, obj) -> None:
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(obj, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def write_jsonl(rel: str, records: list[dict]) -> None:
    path = HERE / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":"), ensure_ascii=False) + "\n" for r in records),
                    encoding="utf-8")


def main() -> None:
    a, b = project_hash(LUMEN), project_hash(TIDE)
    write_json(f"tmp/{a}/chats/session-2026-02-03T09-12-{CHAT_A[:8]}.json", chat_a())
    write_json(f"tmp/{a}/logs.json", prompt_log())
    write_jsonl(f"tmp/{b}/chats/session-2026-03-10T14-05-{CHAT_B[:8]}.jsonl", chat_b())
    write_jsonl(f"launched-claude/projects/-home-dev-projects-lumen-api/{CLAUDE_CHILD}.jsonl", claude_child())


if __name__ == "__main__":
    main()
