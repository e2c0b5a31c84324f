"""Write the Qwen Code sample chats (run: python sample_logs/qwen-code/_generate.py).

Synthetic, in the ChatRecord shape of more-harness-formats.md section 3: every id, path, prompt
and token count is made up."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
CWD = "/home/dev/projects/harbor"
CHATS = HERE / "projects" / "-home-dev-projects-harbor" / "chats"
PARENT = "5b0c9f3e-2d41-4c7a-9e15-7a3f60d2b811"
CHILD = "c7e21a94-88f0-4b6d-a3c2-19d5e04f7a60"
VERSION = "0.14.1"
TASK_PROMPT = "Find every caller of parse_manifest in src/ and list them with line numbers."


def rec(sid, uuid, parent, ts, rtype, **kw):
    out = {"uuid": uuid, "parentUuid": parent, "sessionId": sid, "timestamp": ts, "type": rtype}
    out.update({"cwd": CWD, "version": VERSION, "gitBranch": "main"})
    out.update(kw)
    return out


def usage(prompt, cand, cached=0, thoughts=0):
    total = prompt + cand + thoughts
    return {
        "promptTokenCount": prompt,
        "candidatesTokenCount": cand,
        "thoughtsTokenCount": thoughts,
        "totalTokenCount": total,
        "cachedContentTokenCount": cached,
    }


def telemetry(sid, uuid, parent, ts, n, u, model):
    """The ui_telemetry record Qwen writes for the same API call (never counted as usage)."""
    event = {
        "event.name": "qwen-code.api_response",
        "model": model,
        "input_token_count": u["promptTokenCount"],
        "output_token_count": u["candidatesTokenCount"],
        "cached_content_token_count": u["cachedContentTokenCount"],
        "thoughts_token_count": u["thoughtsTokenCount"],
        "total_token_count": u["totalTokenCount"],
        "prompt_id": f"{sid}########{n}",
        "response_id": f"resp-{n}",
        "duration_ms": 1200 + n,
    }
    return rec(sid, uuid, parent, ts, "system", subtype="ui_telemetry", systemPayload={"uiEvent": event})


def call(cid, name, args):
    return {"functionCall": {"id": cid, "name": name, "args": args}}


def result(sid, uuid, parent, ts, cid, name, output, status="success"):
    return rec(
        sid,
        uuid,
        parent,
        ts,
        "tool_result",
        message={
            "role": "user",
            "parts": [{"functionResponse": {"id": cid, "name": name, "response": {"output": output}}}],
        },
        toolCallResult={"callId": cid, "status": status, "resultDisplay": output},
    )


def model_turn(sid, uuid, parent, ts, parts, u, model="qwen3-coder-plus"):
    return rec(
        sid, uuid, parent, ts, "assistant", message={"role": "model", "parts": parts}, model=model, usageMetadata=u
    )


def parent_chat():
    s = PARENT
    t = "2026-04-02T10:15:{:02d}.000Z".format
    u1, u2, u3, u4 = usage(5200, 180, 0, 60), usage(5600, 90, 4800), usage(6100, 140, 5200), usage(6900, 210, 5900)
    u5 = usage(7300, 120, 6600)
    return [
        rec(
            s,
            "q-p01",
            None,
            t(0),
            "user",
            message={
                "role": "user",
                "parts": [{"text": "Add a --strict flag to the manifest loader and run the tests."}],
            },
        ),
        model_turn(
            s,
            "q-p02",
            "q-p01",
            t(3),
            [
                {"text": "I should look at the loader first.", "thought": True},
                {"text": "Let me read the loader."},
                call("call_read_1", "read_file", {"absolute_path": f"{CWD}/src/harbor/manifest.py"}),
            ],
            u1,
        ),
        telemetry(s, "q-p03", "q-p02", t(3), 1, u1, "qwen3-coder-plus"),
        result(s, "q-p04", "q-p03", t(4), "call_read_1", "read_file", "def parse_manifest(path):\n    ..."),
        model_turn(
            s,
            "q-p05",
            "q-p04",
            t(9),
            [
                call(
                    "call_task_1",
                    "task",
                    {"description": "find callers", "prompt": TASK_PROMPT, "subagent_type": "general-purpose"},
                )
            ],
            u2,
        ),
        telemetry(s, "q-p06", "q-p05", t(9), 2, u2, "qwen3-coder-plus"),
        result(s, "q-p07", "q-p06", t(31), "call_task_1", "task", "src/harbor/cli.py:42, src/harbor/sync.py:17"),
        model_turn(
            s,
            "q-p08",
            "q-p07",
            t(35),
            [
                call(
                    "call_edit_1",
                    "edit",
                    {
                        "file_path": f"{CWD}/src/harbor/manifest.py",
                        "old_string": "def parse_manifest(path):",
                        "new_string": "def parse_manifest(path, strict=False):",
                    },
                )
            ],
            u3,
        ),
        telemetry(s, "q-p09", "q-p08", t(35), 3, u3, "qwen3-coder-plus"),
        result(s, "q-p10", "q-p09", t(36), "call_edit_1", "edit", "Successfully modified file"),
        model_turn(
            s,
            "q-p11",
            "q-p10",
            t(40),
            [
                call(
                    "call_write_1", "write_file", {"file_path": f"{CWD}/docs/STRICT.md", "content": "# Strict mode\n"}
                ),
                call(
                    "call_shell_1",
                    "run_shell_command",
                    {"command": "pytest -q tests/test_manifest.py", "description": "run the manifest tests"},
                ),
            ],
            u4,
        ),
        telemetry(s, "q-p12", "q-p11", t(40), 4, u4, "qwen3-coder-plus"),
        result(s, "q-p13", "q-p12", t(41), "call_write_1", "write_file", "Permission denied", status="error"),
        result(s, "q-p14", "q-p13", t(48), "call_shell_1", "run_shell_command", "3 passed in 0.41s"),
        model_turn(s, "q-p15", "q-p14", t(52), [{"text": "Added strict mode; the tests pass."}], u5),
        telemetry(s, "q-p16", "q-p15", t(52), 5, u5, "qwen3-coder-plus"),
    ]


def child_chat():
    s = CHILD
    t = "2026-04-02T10:15:{:02d}.500Z".format
    u1, u2 = usage(3100, 70, 0), usage(3400, 60, 3000, 20)
    return [
        rec(s, "q-c01", None, t(10), "system", subtype="parent_session", systemPayload={"parentSessionId": PARENT}),
        rec(s, "q-c02", "q-c01", t(10), "user", message={"role": "user", "parts": [{"text": TASK_PROMPT}]}),
        model_turn(
            s,
            "q-c03",
            "q-c02",
            t(14),
            [call("call_grep_1", "grep_search", {"pattern": "parse_manifest", "path": "src"})],
            u1,
        ),
        telemetry(s, "q-c04", "q-c03", t(14), 1, u1, "qwen3-coder-plus"),
        result(s, "q-c05", "q-c04", t(15), "call_grep_1", "grep_search", "src/harbor/cli.py:42\nsrc/harbor/sync.py:17"),
        model_turn(s, "q-c06", "q-c05", t(29), [{"text": "Two callers: cli.py:42 and sync.py:17."}], u2),
        telemetry(s, "q-c07", "q-c06", t(29), 2, u2, "qwen3-coder-plus"),
    ]


def write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))


if __name__ == "__main__":
    write(CHATS / f"{PARENT}.jsonl", parent_chat())
    write(CHATS / f"{CHILD}.jsonl", child_chat())
