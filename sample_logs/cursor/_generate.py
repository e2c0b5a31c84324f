"""Write the Cursor sample transcripts (run: python sample_logs/cursor/_generate.py).

Synthetic, in the shape of the real transcripts in shared/corpus/cursor/ (role and content
only) and the layouts of more-harness-formats.md section 5. Every id, path and text is made up.
The files carry no times: the adapter takes the file's mtime."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE / "projects" / "home-dev-projects-kiln" / "agent-transcripts"
FLAT = "3f2a9c1e-7b4d-4e8a-9c0f-5d6e7f8a9b01"
NESTED = "8d1c4b7a-2e5f-4a3b-8c9d-0e1f2a3b4c5d"
CHILD = "e6f7a8b9-c0d1-4e2f-a3b4-c5d6e7f8a9b0"
TASK_PROMPT = "List every TODO under /home/dev/projects/kiln/src and say which module owns each."


def line(role, *blocks):
    return {"role": role, "message": {"content": list(blocks)}}


def text(t):
    return {"type": "text", "text": t}


def tool(name, **inp):
    return {"type": "tool_use", "name": name, "input": inp}


def flat():
    return [
        line("user", text("<user_query>\nWhy does the kiln build fail on a clean checkout?\n</user_query>")),
        line("assistant", text("The build script expects a generated config."), text("Run `make config` first.")),
        line("user", text("<user_query>\nthanks\n</user_query>")),
        line("assistant", text("You're welcome.")),
    ]


FLAT_TXT = """user:
<user_query>
Why does the kiln build fail on a clean checkout?
</user_query>

assistant:
The build script expects a generated config.
Run `make config` first.
"""


def nested():
    return [
        line("user", text("<user_query>\nAdd a --dry-run flag to the kiln CLI.\n</user_query>")),
        line(
            "assistant",
            text("Reading the CLI first."),
            tool("Read", path="/home/dev/projects/kiln/src/kiln/cli.py"),
        ),
        line("assistant", tool("Task", description="find TODOs", prompt=TASK_PROMPT, subagent_type="explore")),
        line(
            "assistant",
            tool(
                "StrReplace",
                path="/home/dev/projects/kiln/src/kiln/cli.py",
                old_string="def main(",
                new_string="def main(dry_run=False, ",
            ),
            tool("Shell", command="pytest -q tests/test_cli.py", working_directory="/home/dev/projects/kiln"),
        ),
        line(
            "assistant",
            tool("Delete", path="/home/dev/projects/kiln/src/kiln/old_cli.py"),
            text("Done: --dry-run added."),
        ),
    ]


def child():
    return [
        line("user", text(TASK_PROMPT)),
        line("assistant", tool("Grep", pattern="TODO", path="/home/dev/projects/kiln/src")),
        line("assistant", text("Two TODOs, both in kiln/build.py.")),
    ]


def write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))


if __name__ == "__main__":
    write(ROOT / f"{FLAT}.jsonl", flat())
    (ROOT / f"{FLAT}.txt").write_text(FLAT_TXT)
    write(ROOT / NESTED / f"{NESTED}.jsonl", nested())
    write(ROOT / NESTED / "subagents" / f"{CHILD}.jsonl", child())
