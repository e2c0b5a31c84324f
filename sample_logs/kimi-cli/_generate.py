"""Write the Kimi CLI sample share dir (run: python sample_logs/kimi-cli/_generate.py).

Synthetic, in the shape more-harness-formats.md section 2 gives for kimi-cli (source and a real
family): ``kimi.json``, and a session folder with its wire, its context and two subagent context
files. Every id, path, prompt and count is made up."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

HERE = Path(__file__).parent
WORKDIR = "/home/dev/projects/lantern"
SESSION = "7c1e9a52-3b8d-4f60-a2e4-9d5b1c0f8e37"
FOLDER = HERE / "sessions" / hashlib.md5(WORKDIR.encode()).hexdigest() / SESSION
T0 = 1785700000.0
PROMPT = "Rename the --colour flag to --color and keep the old spelling as an alias."
BRIEF_1 = "List every place under /home/dev/projects/lantern/src that reads the --colour flag."
BRIEF_2 = "Run the CLI test suite in /home/dev/projects/lantern and report failures."


def rec(t, mtype, **payload):
    return {"timestamp": T0 + t, "message": {"type": mtype, "payload": payload}}


def call(t, call_id, name, **args):
    return rec(t, "ToolCall", type="function", id=call_id, function={"name": name, "arguments": json.dumps(args)})


def result(t, call_id, output, error=False):
    return rec(t, "ToolResult", tool_call_id=call_id,
               return_value={"is_error": error, "output": output, "message": "", "display": []})  # fmt: skip


def status(t, inp, out, read, write=0, msg=None):
    usage = {"input_other": inp, "output": out, "input_cache_read": read, "input_cache_creation": write}
    return rec(t, "StatusUpdate", context_usage=0.05, token_usage=usage, message_id=msg)


def sub(t, task_id, inner):
    return {"timestamp": T0 + t, "message": {"type": "SubagentEvent",
            "payload": {"task_tool_call_id": task_id, "event": inner["message"]}}}  # fmt: skip


def wire():
    return [
        {"type": "metadata", "protocol_version": "1.3"},
        rec(0, "TurnBegin", user_input=PROMPT),
        rec(0.1, "StepBegin", n=1),
        rec(1.0, "ContentPart", type="think", think="Find the readers first."),
        call(1.2, "Task:0", "Task", description="find flag readers", subagent_name="coder", prompt=BRIEF_1),
        status(1.3, 3200, 80, 0, 1500, "chatcmpl-a1"),
        sub(1.5, "Task:0", rec(0, "TurnBegin", user_input=BRIEF_1)),
        sub(1.6, "Task:0", rec(0, "StepBegin", n=1)),
        sub(2.0, "Task:0", call(0, "Grep:0", "Grep", pattern="colour", path="src")),
        sub(2.1, "Task:0", status(0, 1800, 30, 0, 0, "chatcmpl-s1")),
        sub(2.4, "Task:0", result(0, "Grep:0", "src/lantern/cli.py:12\nsrc/lantern/render.py:40")),
        sub(2.5, "Task:0", rec(0, "StepBegin", n=2)),
        sub(3.0, "Task:0", rec(0, "ContentPart", type="text", text="Two readers: cli.py and render.py.")),
        sub(3.1, "Task:0", status(0, 200, 20, 1800, 0, "chatcmpl-s2")),
        sub(3.2, "Task:0", rec(0, "TurnEnd")),
        result(3.3, "Task:0", "Two readers: cli.py and render.py."),
        rec(3.4, "StepBegin", n=2),
        call(
            3.8,
            "StrReplaceFile:1",
            "StrReplaceFile",
            path="/home/dev/projects/lantern/src/lantern/cli.py",
            edit={"old": "--colour", "new": "--color"},
        ),  # fmt: skip
        status(3.9, 400, 60, 4700, 0, "chatcmpl-a2"),
        rec(
            4.0,
            "ApprovalRequest",
            id="ap-1",
            tool_call_id="StrReplaceFile:1",
            sender="StrReplaceFile",
            action="edit file",
            description="edit cli.py",
        ),  # fmt: skip
        rec(4.5, "ApprovalResponse", request_id="ap-1", response="approve"),
        result(4.6, "StrReplaceFile:1", "Replaced 1 occurrence."),
        rec(4.7, "StepBegin", n=3),
        call(5.0, "ReadFile:2", "ReadFile", path="/home/dev/projects/lantern/src/lantern/render.py"),
        status(5.1, 300, 40, 5100, 0, "chatcmpl-a3"),
        result(5.2, "ReadFile:2", "    40\tif args.colour:"),
        rec(5.3, "StepBegin", n=4),
        call(5.6, "Task:3", "Task", description="run the tests", subagent_name="coder", prompt=BRIEF_2),
        status(5.7, 350, 70, 5400, 0, "chatcmpl-a4"),
        sub(5.8, "Task:3", rec(0, "TurnBegin", user_input=BRIEF_2)),
        sub(5.9, "Task:3", rec(0, "StepBegin", n=1)),
        sub(6.0, "Task:3", call(0, "Shell:0", "Shell", command="pytest -q tests/cli")),
        sub(6.1, "Task:3", status(0, 1900, 25, 0, 0, "chatcmpl-t1")),
        sub(9.0, "Task:3", result(0, "Shell:0", "1 failed, 41 passed", error=True)),
        sub(9.1, "Task:3", rec(0, "StepBegin", n=2)),
        sub(9.5, "Task:3", rec(0, "ContentPart", type="text", text="One failure: test_render_colour.")),
        sub(9.6, "Task:3", status(0, 150, 15, 1900, 0, "chatcmpl-t2")),
        sub(9.7, "Task:3", rec(0, "TurnEnd")),
        result(9.8, "Task:3", "One failure: test_render_colour."),
        rec(9.9, "StepBegin", n=5),
        rec(10.0, "CompactionBegin"),
        rec(10.5, "CompactionEnd"),
        rec(11.0, "ContentPart", type="text", text="Renamed the flag; one render test still reads --colour."),
        status(11.1, 500, 120, 2000, 0, "chatcmpl-a5"),
        rec(11.2, "TurnEnd"),
    ]


def context(first):
    return [
        {"role": "_system_prompt", "content": "You are Kimi CLI. [sample]"},
        {"role": "_checkpoint", "id": 0},
        {"role": "user", "content": first},
        {"role": "assistant", "content": [{"type": "text", "text": "[sample answer]"}]},
        {"role": "_usage", "token_count": 2100},
    ]


def write(path: Path, lines: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(x, separators=(",", ":")) + "\n" for x in lines))


if __name__ == "__main__":
    index = {"work_dirs": [{"path": WORKDIR, "kaos": "local", "last_session_id": SESSION}]}
    (HERE / "kimi.json").write_text(json.dumps(index, indent=2) + "\n")
    write(FOLDER / "wire.jsonl", wire())
    write(FOLDER / "context.jsonl", context(PROMPT))
    write(FOLDER / "context_sub_1.jsonl", context(BRIEF_1))
    write(FOLDER / "context_sub_2.jsonl", context(BRIEF_2))
