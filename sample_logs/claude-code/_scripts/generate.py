"""Write the synthetic Claude Code sample logs under sample_logs/claude-code/ and sample_logs/broken/.

Everything here is invented (ids, paths under /home/dev/projects, text); the record shapes follow
shared/specs/harness-log-formats.md section 1 and the real files in shared/corpus/claude-code/.
Deterministic: a seeded RNG makes every id, so re-running rewrites the same bytes.
Run from anywhere: ``python sample_logs/claude-code/_scripts/generate.py``; then run
``compute_expected.py`` beside it to refresh expected.json / EXPECTED.md.
"""

from __future__ import annotations

import difflib
import json
import random
import shutil
import string
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
CC_ROOT = HERE.parent  # sample_logs/claude-code
BROKEN_ROOT = CC_ROOT.parent / "broken"

R = random.Random(20251209)
B62 = string.ascii_letters + string.digits


def uid() -> str:
    return str(uuid.UUID(int=R.getrandbits(128), version=4))


def _rand(prefix: str, n: int) -> str:
    return prefix + "".join(R.choice(B62) for _ in range(n))


def msg_id() -> str:
    return _rand("msg_01", 22)


def req_id() -> str:
    return _rand("req_011C", 20)


def toolu() -> str:
    return _rand("toolu_01", 22)


def hexid(n: int) -> str:
    return "".join(R.choice("0123456789abcdef") for _ in range(n))


def project_key(cwd: str) -> str:
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in cwd)


class Clock:
    def __init__(self, start: str):
        self.t = datetime.strptime(start, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)

    def now(self) -> str:
        return self.t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{self.t.microsecond // 1000:03d}Z"

    def tick(self, seconds: float) -> str:
        self.t += timedelta(seconds=seconds)
        return self.now()

    def epoch_ms(self) -> int:
        return int(self.t.timestamp() * 1000)


def usage(inp, out, read=0, c5=0, c1=0, *, cache_obj=True, extra=None):
    u = {"input_tokens": inp, "cache_creation_input_tokens": c5 + c1, "cache_read_input_tokens": read}
    if cache_obj:
        u["cache_creation"] = {"ephemeral_5m_input_tokens": c5, "ephemeral_1h_input_tokens": c1}
    u["output_tokens"] = out
    u["service_tier"] = "standard"
    if extra:
        u.update(extra)
    return u


def numbered(text: str) -> str:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    return "\n".join(f"{i:>6}\u2192{line}" for i, line in enumerate(lines, start=1))


def structured_patch(old: str, new: str) -> list[dict]:
    a, b = old.split("\n"), new.split("\n")
    hunks = []
    for group in difflib.SequenceMatcher(None, a, b).get_grouped_opcodes(3):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        lines: list[str] = []
        for tag, a1, a2, b1, b2 in group:
            if tag == "equal":
                lines += [" " + x for x in a[a1:a2]]
            else:
                lines += ["-" + x for x in a[a1:a2]]
                lines += ["+" + x for x in b[b1:b2]]
        hunks.append(
            {"oldStart": i1 + 1, "oldLines": i2 - i1, "newStart": j1 + 1, "newLines": j2 - j1, "lines": lines}
        )
    return hunks


def dumps(obj) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


class Stream:
    """One conversation stream (main, subagent, inline sidechain) appending records to ``out``."""

    def __init__(
        self,
        out: list,
        *,
        cwd: str,
        session_id: str,
        version: str,
        branch: str,
        clock: Clock,
        agent_id: str | None = None,
        sidechain: bool = False,
        slug: str | None = None,
        entrypoint: str | None = None,
        source_uuid: bool = False,
        request_id: bool = True,
        prompt_id: bool = False,
        caller: bool = False,
        model: str = "claude-sonnet-4-5-20250929",
        thinking_meta: bool = False,
    ):
        self.out = out
        self.cwd, self.session_id, self.version, self.branch = cwd, session_id, version, branch
        self.clock = clock
        self.agent_id, self.sidechain, self.slug, self.entrypoint = agent_id, sidechain, slug, entrypoint
        self.source_uuid, self.request_id, self.prompt_id, self.caller = source_uuid, request_id, prompt_id, caller
        self.model, self.thinking_meta = model, thinking_meta
        self.last_uuid: str | None = None
        self.current_prompt_id: str | None = None
        self.slug_active = False  # real files start writing slug after the first record
        self.team: str | None = None  # agent teams: every record carries teamName while a team is active

    # -- envelope -------------------------------------------------------
    def _env(self, parent: str | None, *, with_prompt_id: bool) -> dict:
        r: dict = {"parentUuid": parent, "isSidechain": self.sidechain}
        if with_prompt_id and self.prompt_id and self.current_prompt_id:
            r["promptId"] = self.current_prompt_id
        r["userType"] = "external"
        if self.entrypoint:
            r["entrypoint"] = self.entrypoint
        r["cwd"] = self.cwd
        r["sessionId"] = self.session_id
        r["version"] = self.version
        r["gitBranch"] = self.branch
        if self.agent_id:
            r["agentId"] = self.agent_id
        if self.slug and self.slug_active:
            r["slug"] = self.slug
        if self.team:
            r["teamName"] = self.team
        return r

    def _parent(self, parent):
        return self.last_uuid if parent == "__last__" else parent

    def _emit(self, rec: dict) -> dict:
        self.out.append(rec)
        if "uuid" in rec:
            self.last_uuid = rec["uuid"]
        if self.slug:
            self.slug_active = True
        return rec

    # -- records --------------------------------------------------------
    def prompt(self, content, *, dt=2.0, parent="__last__", extra_after_msg=None, extra_env=None, new_prompt=True):
        if new_prompt and self.prompt_id:
            self.current_prompt_id = uid()
        ts = self.clock.tick(dt)
        r = self._env(self._parent(parent), with_prompt_id=True)
        if extra_env:
            r.update(extra_env)
        r["type"] = "user"
        r["message"] = {"role": "user", "content": content}
        if extra_after_msg:
            r.update(extra_after_msg)
        r["uuid"] = uid()
        r["timestamp"] = ts
        if self.thinking_meta:
            r["thinkingMetadata"] = {"level": "none", "disabled": True, "triggers": []}
            r["todos"] = []
        return self._emit(r)

    def assistant(self, blocks, use, *, dt=2.0, gap=0.4, stop="tool_use", model=None, partial_out=None):
        """One API response written as one record per content block, sharing message.id/requestId.

        ``partial_out``: output_tokens shown on every line but the last (streaming snapshot); the
        last line carries the final usage. None repeats the final usage on every line.
        """
        mid = msg_id()
        rq = req_id() if self.request_id else None
        recs = []
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            if block.get("type") == "tool_use":
                if not block.get("id"):
                    block["id"] = toolu()
                if self.caller:
                    block["caller"] = {"type": "direct"}
            ts = self.clock.tick(dt if i == 0 else gap)
            u = dict(use)
            if partial_out is not None and not last:
                u["output_tokens"] = partial_out
            r = self._env(self.last_uuid, with_prompt_id=False)
            r["message"] = {
                "model": model or self.model,
                "id": mid,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if last else None,
                "stop_sequence": None,
                "usage": u,
            }
            if rq:
                r["requestId"] = rq
            r["type"] = "assistant"
            r["uuid"] = uid()
            r["timestamp"] = ts
            recs.append(self._emit(r))
        return recs

    def result(self, asst_rec, content, tur=None, *, is_error=None, dt=1.0, tur_present=True, parent=None):
        block = asst_rec["message"]["content"][0]
        ts = self.clock.tick(dt)
        r = self._env(parent or asst_rec["uuid"], with_prompt_id=True)
        r["type"] = "user"
        tr = {"tool_use_id": block["id"], "type": "tool_result", "content": content}
        if is_error is not None:
            tr["is_error"] = is_error
        r["message"] = {"role": "user", "content": [tr]}
        r["uuid"] = uid()
        r["timestamp"] = ts
        if tur_present:
            r["toolUseResult"] = tur
        if self.source_uuid:
            r["sourceToolAssistantUUID"] = asst_rec["uuid"]
        return self._emit(r)

    def system(self, subtype, fields, *, dt=0.05, parent="__last__", level=None, meta=False):
        ts = self.clock.tick(dt)
        r = self._env(self._parent(parent), with_prompt_id=False)
        r["type"] = "system"
        r["subtype"] = subtype
        r.update(fields)
        if level:
            r["level"] = level
        r["timestamp"] = ts
        r["uuid"] = uid()
        if meta is not None:
            r["isMeta"] = meta
        return self._emit(r)

    def progress(self, data, tool_use_id, parent_tool_use_id, *, ts=None, dt=0.01, parent="__last__"):
        ts = ts or self.clock.tick(dt)
        r = self._env(self._parent(parent), with_prompt_id=False)
        r["type"] = "progress"
        r["data"] = data
        r["toolUseID"] = tool_use_id
        r["parentToolUseID"] = parent_tool_use_id
        r["uuid"] = uid()
        r["timestamp"] = ts
        return self._emit(r)

    def attachment(self, att, *, dt=0.01):
        ts = self.clock.tick(dt)
        r = self._env(self.last_uuid, with_prompt_id=False)
        r["type"] = "attachment"
        r["attachment"] = att
        r["uuid"] = uid()
        r["timestamp"] = ts
        return self._emit(r)

    def flat(self, rec):
        self.out.append(rec)
        return rec


def snapshot(message_uuid, ts, backups=None, update=False):
    return {
        "type": "file-history-snapshot",
        "messageId": message_uuid,
        "snapshot": {"messageId": message_uuid, "trackedFileBackups": backups or {}, "timestamp": ts},
        "isSnapshotUpdate": update,
    }


def write_jsonl(path: Path, records: list) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        for rec in records:
            fh.write(dumps(rec) + "\n")


def write_json(path: Path, obj) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dumps(obj) + "\n", encoding="utf-8")


# -- tool helpers --------------------------------------------------------------------
def tu(name, inp):
    return {"type": "tool_use", "id": "", "name": name, "input": inp}


def txt(t):
    return {"type": "text", "text": t}


def read_tur(path, content):
    n = len(content.rstrip("\n").split("\n"))
    return {"type": "text", "file": {"filePath": path, "content": content, "numLines": n, "startLine": 1, "totalLines": n}}


def write_tur(path, content):
    return {"type": "create", "filePath": path, "content": content, "structuredPatch": [], "originalFile": None}


def edit_tur(path, old_s, new_s, original):
    return {
        "filePath": path,
        "oldString": old_s,
        "newString": new_s,
        "originalFile": original,
        "structuredPatch": structured_patch(original, original.replace(old_s, new_s, 1)),
        "userModified": False,
        "replaceAll": False,
    }


def bash_tur(stdout, stderr=""):
    return {"stdout": stdout, "stderr": stderr, "interrupted": False, "isImage": False, "noOutputExpected": False}


def task_tail(agent_id, total, tools, dur, usage_block=True):
    s = f"agentId: {agent_id} (for resuming to continue this agent's work if needed)"
    if usage_block:
        s += f"\n<usage>total_tokens: {total}\ntool_uses: {tools}\nduration_ms: {dur}</usage>"
    return s


def total_tokens(u):
    return u["input_tokens"] + u["cache_creation_input_tokens"] + u["cache_read_input_tokens"] + u["output_tokens"]


def ms_between(a: str, b: str) -> int:
    f = "%Y-%m-%dT%H:%M:%S.%fZ"
    return int((datetime.strptime(b, f) - datetime.strptime(a, f)).total_seconds() * 1000)


# ==================================================================================
# File contents (invented)
# ==================================================================================
INK_README = (
    "# ink_well\n\nA tiny static-site generator for notebooks.\n\n## Installation\n\n"
    "    pip install ink_well\n\n## CLI usage\n\n    inkwell build site/\n    inkwell serve --port 8040\n"
)
INK_OUTLINE = "# ink_well v2 docs\n\n1. Installation\n2. Configuration\n3. CLI usage\n4. Theming\n"
INK_NOTES_V1 = (
    "# ink_well v2 notes\n\n## Installation\nCovered by README.\n\n## Configuration\nTODO: describe inkwell.toml.\n\n"
    "## CLI usage\nCovered by README.\n\n## Theming\nTODO: list theme hooks.\n"
)
INK_NOTES_OLD = "## Configuration\nTODO: describe inkwell.toml.\n"
INK_NOTES_NEW = (
    "## Configuration\nSettings live in inkwell.toml at the site root: `title`, `base_url`, `theme`.\n"
)

TIDE_SYNC_V0 = (
    "import time\n\nfrom tidepool.client import RemoteError\n\n\ndef sync_once(client, batch):\n"
    "    while True:\n        try:\n            return client.push(batch)\n        except RemoteError as err:\n"
    "            if err.status != 429:\n                raise\n            time.sleep(1)\n"
)
TIDE_CONFIG = (
    "import os\nfrom dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    remote_url: str\n"
    "    batch_size: int = 200\n\n\ndef load() -> Config:\n"
    "    return Config(remote_url=os.environ[\"TIDEPOOL_REMOTE\"])\n"
)
TIDE_TEST = (
    "from tidepool.sync import sync_once\n\n\ndef test_sync_pushes_batch(fake_client):\n"
    "    assert sync_once(fake_client, [1, 2]) == 2\n\n\ndef test_sync_gives_up(flaky_client):\n"
    "    ...\n"
)

ORBIT_ARCH = (
    "# orbit-cli architecture\n\norbit-cli is a thin client over tidepool's sync API.\n\n"
    "- src/orbit/cli.py: argument parsing\n- src/orbit/sync_client.py: HTTP calls to tidepool\n"
)
ORBIT_SYNC_CLIENT = (
    "import httpx\n\nTIDEPOOL = \"http://localhost:8750\"\n\n\ndef push(batch):\n"
    "    r = httpx.post(f\"{TIDEPOOL}/sync\", json=batch, timeout=10)\n    r.raise_for_status()\n    return r.json()\n"
)
ORBIT_CLI = (
    "import argparse\n\n\ndef main(argv=None):\n    p = argparse.ArgumentParser(prog=\"orbit\")\n"
    "    p.add_argument(\"--remote\")\n    p.add_argument(\"--dry-run\", action=\"store_true\")\n"
    "    return p.parse_args(argv)\n"
)
ORBIT_PYPROJECT = "[project]\nname = \"orbit-cli\"\nversion = \"0.3.0\"\n\n[tool.ruff]\nline-length = 100\n"
ORBIT_CHANGELOG = "# Changelog\n\n## Unreleased\n\n- Nothing yet.\n"


# ==================================================================================
# Project 1: /home/dev/projects/ink_well.v2  (A: inline 2.0.20, B: flat 2.0.64)
# ==================================================================================
def build_project1():
    cwd = "/home/dev/projects/ink_well.v2"
    key = project_key(cwd)
    pdir = CC_ROOT / "projects" / key
    SA, SB = uid(), uid()
    readme, outline, notes = f"{cwd}/README.md", f"{cwd}/docs/outline.md", f"{cwd}/docs/NOTES.md"

    # ---------------- A: inline sidechains, version 2.0.20 ----------------
    out: list = []
    ck = Clock("2025-12-02T09:13:58.410Z")
    common = dict(cwd=cwd, session_id=SA, version="2.0.20", branch="main", clock=ck, thinking_meta=False)
    warm = Stream(out, sidechain=True, model="claude-haiku-4-5-20251001", **common)
    warm.prompt("Warmup", dt=0, parent=None)
    warm.assistant(
        [txt("Ready. I can search and read files under /home/dev/projects/ink_well.v2; tell me what to look for.")],
        usage(4, 61, 0, 11842),
        dt=2.6,
        stop="end_turn",
    )
    main = Stream(out, **{**common, "thinking_meta": True})
    ck.tick(1.2)
    first_prompt_uuid_placeholder = len(out)
    p = main.prompt(
        "Draft an outline for the v2 docs in docs/outline.md, and have a subagent check what the README already covers.",
        dt=3.0,
        parent=None,
    )
    out.insert(first_prompt_uuid_placeholder, snapshot(p["uuid"], p["timestamp"]))
    todos = [
        {"content": "Survey README coverage", "status": "in_progress", "activeForm": "Surveying README coverage"},
        {"content": "Write docs/outline.md", "status": "pending", "activeForm": "Writing docs/outline.md"},
    ]
    a1 = main.assistant(
        [txt("I'll track the two steps, then ask a subagent to survey the README."), tu("TodoWrite", {"todos": todos})],
        usage(3, 141, 0, 14210),
        partial_out=5,
    )
    main.result(a1[-1], "Todos have been modified successfully.", {"oldTodos": [], "newTodos": todos})
    task_prompt = (
        f"Read {readme} and list which of these topics it already covers: installation, configuration, "
        "CLI usage, theming. Reply with a short bullet list."
    )
    a2 = main.assistant(
        [tu("Task", {"description": "Survey README coverage", "prompt": task_prompt, "subagent_type": "general-purpose"})],
        usage(6, 112, 14210, 388),
    )
    side = Stream(out, **common)
    side.sidechain = True
    side.prompt(task_prompt, dt=0.8, parent=None)
    s1 = side.assistant([tu("Read", {"file_path": readme})], usage(3, 58, 0, 9120))
    side.result(s1[-1], numbered(INK_README), read_tur(readme, INK_README), dt=0.1)
    side_final_text = "- installation: covered\n- CLI usage: covered\n- configuration: missing\n- theming: missing"
    side_u = usage(7, 44, 9120, 402)
    side.assistant([txt(side_final_text)], side_u, dt=3.1, stop="end_turn")
    main.result(
        a2[-1],
        [txt(side_final_text)],
        {
            "content": [txt(side_final_text)],
            "totalDurationMs": 6420,
            "totalTokens": total_tokens(side_u),
            "totalToolUseCount": 1,
            "usage": side_u,
        },
        dt=0.7,
    )
    a3 = main.assistant(
        [txt("The README covers installation and CLI usage. Writing the outline now."), tu("Write", {"file_path": outline, "content": INK_OUTLINE})],
        usage(5, 203, 14598, 661),
        partial_out=12,
    )
    main.flat(snapshot(p["uuid"], p["timestamp"], {"docs/outline.md": {"backupFileName": None, "version": 1, "backupTime": ck.tick(0.9)}}, True))
    main.result(a3[-1], f"File created successfully at: {outline}", write_tur(outline, INK_OUTLINE), dt=0.05)
    main.assistant(
        [txt("Wrote docs/outline.md with four sections; configuration and theming still need content in the docs.")],
        usage(4, 38, 15259, 240),
        stop="end_turn",
    )
    write_jsonl(pdir / f"{SA}.jsonl", out)
    hist = [("Draft an outline for the v2 docs in docs/outline.md, and have a subagent check what the README already covers.", p["timestamp"], cwd)]

    # ---------------- B: flat agent files, version 2.0.64 ----------------
    B_CHILD, B_WARM = hexid(8), hexid(8)
    out = []
    ck = Clock("2025-12-09T14:02:01.512Z")
    slug = "amber-folding-lantern"
    common = dict(cwd=cwd, session_id=SB, version="2.0.64", branch="docs/outline", clock=ck, slug=slug)
    wout: list = []
    warm = Stream(wout, agent_id=B_WARM, sidechain=True, model="claude-haiku-4-5-20251001", **common)
    warm.prompt("Warmup", dt=0, parent=None)
    warm.assistant(
        [txt("Ready to search ink_well.v2 in read-only mode. What should I look for?")],
        usage(9870, 88, cache_obj=False),
        dt=3.4,
        stop=None,
    )
    # the real warm-up usage has only input/output tokens
    for rec in wout:
        if rec["type"] == "assistant":
            rec["message"]["usage"] = {"input_tokens": 9870, "output_tokens": 88}
    write_jsonl(pdir / f"agent-{B_WARM}.jsonl", wout)

    main = Stream(out, thinking_meta=True, **common)
    main.slug_active = False
    ck.tick(5.0)
    prompt_b = "Expand docs/outline.md into docs/NOTES.md with a subagent, then get a second opinion from codex."
    p = main.prompt(prompt_b, dt=3.088, parent=None)
    out.insert(0, snapshot(p["uuid"], p["timestamp"]))
    hist.append((prompt_b, p["timestamp"], cwd))
    a1 = main.assistant(
        [txt("Let me find the outline first."), tu("Glob", {"pattern": "docs/**/*.md"})],
        usage(3, 92, 0, 15020),
        partial_out=6,
    )
    main.result(a1[-1], outline, {"filenames": [outline], "durationMs": 41, "numFiles": 1, "truncated": False}, dt=0.2)
    a2 = main.assistant([tu("Read", {"file_path": outline})], usage(5, 71, 15020, 210))
    main.result(a2[-1], numbered(INK_OUTLINE), read_tur(outline, INK_OUTLINE), dt=0.05)
    child_prompt = (
        f"Create {notes} from the outline in {outline}: one '##' section per outline item, mark sections the README "
        "already covers, then fill in the Configuration section (settings live in inkwell.toml: title, base_url, theme)."
    )
    a3 = main.assistant(
        [tu("Task", {"description": "Write NOTES.md from outline", "prompt": child_prompt, "subagent_type": "general-purpose"})],
        usage(4, 160, 15230, 320),
    )
    task_start = a3[-1]["timestamp"]
    cout: list = []
    child = Stream(cout, agent_id=B_CHILD, sidechain=True, **{**common, "slug": slug})
    child.prompt(child_prompt, dt=0.4, parent=None)
    c1 = child.assistant([tu("Write", {"file_path": notes, "content": INK_NOTES_V1})], usage(3, 210, 0, 10450))
    child.result(c1[-1], f"File created successfully at: {notes}", write_tur(notes, INK_NOTES_V1), dt=0.1)
    c2 = child.assistant(
        [tu("Edit", {"file_path": notes, "old_string": INK_NOTES_OLD, "new_string": INK_NOTES_NEW})],
        usage(6, 132, 10450, 512),
    )
    child.result(
        c2[-1],
        f"The file {notes} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n"
        + numbered(INK_NOTES_V1.replace(INK_NOTES_OLD, INK_NOTES_NEW)),
        edit_tur(notes, INK_NOTES_OLD, INK_NOTES_NEW, INK_NOTES_V1),
        dt=0.1,
    )
    child_text = "Created docs/NOTES.md with four sections and filled in Configuration; Theming is still a TODO."
    cu = usage(5, 47, 10962, 390)
    child.assistant([txt(child_text)], cu, dt=2.7, stop="end_turn")
    write_jsonl(pdir / f"agent-{B_CHILD}.jsonl", cout)
    main.last_uuid = a3[-1]["uuid"]
    r = main.result(
        a3[-1],
        [txt(child_text), txt(task_tail(B_CHILD, 0, 0, 0, usage_block=False))],
        {
            "status": "completed",
            "prompt": child_prompt,
            "agentId": B_CHILD,
            "content": [txt(child_text)],
            "totalDurationMs": ms_between(task_start, ck.now()),
            "totalTokens": total_tokens(cu),
            "totalToolUseCount": 2,
            "usage": cu,
        },
        dt=0.3,
    )
    a4 = main.assistant([tu("Read", {"file_path": notes})], usage(5, 66, 15550, 402))
    notes_v2 = INK_NOTES_V1.replace(INK_NOTES_OLD, INK_NOTES_NEW)
    main.result(a4[-1], numbered(notes_v2), read_tur(notes, notes_v2), dt=0.05)
    codex_cmd = f'codex exec "review the diff" -C {cwd}'
    a5 = main.assistant(
        [txt("Asking codex for a review."), tu("Bash", {"command": codex_cmd, "description": "Ask codex to review the diff", "timeout": 300000})],
        usage(4, 118, 15952, 611),
        partial_out=9,
    )
    codex_stdout = (
        "OpenAI Codex v0.61.0 (research preview)\n--------\n"
        f"workdir: {cwd}\nmodel: gpt-5.1-codex\nprovider: openai\napproval: never\nsandbox: read-only\n"
        "reasoning effort: medium\nreasoning summaries: auto\n"
        "session id: 019b036b-c520-7c3e-9a41-5be0d7f2c816\n--------\n"
        "user\nreview the diff\n\ncodex\nNOTES.md follows the outline. Consider linking the Theming TODO to an issue.\n"
        "tokens used\n4,210\n"
    )
    main.result(a5[-1], codex_stdout.rstrip("\n"), bash_tur(codex_stdout.rstrip("\n")), is_error=False, dt=42.77)
    main.assistant(
        [txt("NOTES.md is written (Configuration filled in). Codex's review suggests tracking the Theming TODO in an issue.")],
        usage(6, 52, 16563, 288),
        stop="end_turn",
    )
    write_jsonl(pdir / f"{SB}.jsonl", out)
    return {"A": SA, "B": SB, "B_CHILD": B_CHILD, "B_WARM": B_WARM, "cwd1": cwd}, hist


# ==================================================================================
# Project 2: /home/dev/projects/tidepool  (C: nested 2.1.39, F: plan hand-off)
# ==================================================================================
def build_project2():
    cwd = "/home/dev/projects/tidepool"
    key = project_key(cwd)
    pdir = CC_ROOT / "projects" / key
    SC, SF = uid(), uid()
    CHILD = "a" + hexid(6)
    COMPACT = "acompact-" + hexid(6)
    slug = "brisk-tidal-ferret"
    sync_py, config_py = f"{cwd}/src/tidepool/sync.py", f"{cwd}/src/tidepool/config.py"
    test_py, notes_md = f"{cwd}/tests/test_sync.py", f"{cwd}/docs/sync-notes.md"
    opus, haiku = "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"
    out: list = []
    ck = Clock("2026-01-08T10:19:52.310Z")
    common = dict(cwd=cwd, session_id=SC, version="2.1.39", branch="fix/sync-retry", clock=ck, slug=slug, source_uuid=True, caller=True)
    main = Stream(out, model=opus, **common)
    hook_id = uid()
    main.progress(
        {"type": "hook_progress", "hookEvent": "SessionStart", "hookName": "SessionStart:startup", "command": "/home/dev/.claude/hooks/session-start.sh"},
        hook_id,
        hook_id,
        ts=ck.now(),
        parent=None,
    )
    prompt1 = (
        "The sync job retries forever when the remote returns 429. Cap retries at 5 with exponential backoff, "
        "and have a subagent check which tests cover sync."
    )
    p = main.prompt(prompt1, dt=7.69)
    out.insert(0, snapshot(p["uuid"], p["timestamp"]))
    hist = [(prompt1, p["timestamp"], cwd)]
    a1 = main.assistant(
        [txt("Let me find the retry loop."), tu("Grep", {"pattern": "def sync_", "path": f"{cwd}/src", "output_mode": "files_with_matches"})],
        usage(2, 97, 16220, 0, 9310, extra={"inference_geo": "not_available"}),
    )
    main.result(a1[-1], f"Found 1 file\n{sync_py}", {"mode": "files_with_matches", "filenames": [sync_py], "numFiles": 1}, dt=0.3)
    a2 = main.assistant([tu("Read", {"file_path": sync_py})], usage(1, 64, 25530, 0, 402, extra={"inference_geo": "not_available"}))
    main.result(a2[-1], numbered(TIDE_SYNC_V0), read_tur(sync_py, TIDE_SYNC_V0), dt=0.05)
    bad_old = "    while True:\n        try:\n            return client.push(batch)\n        except RemoteError:"
    a3 = main.assistant(
        [tu("Edit", {"file_path": sync_py, "old_string": bad_old, "new_string": "    for attempt in range(MAX_RETRIES):\n        try:\n            return client.push(batch)\n        except RemoteError:"})],
        usage(1, 180, 25932, 0, 655, extra={"inference_geo": "not_available"}),
    )
    err = f"String to replace not found in file.\nString: {bad_old}"
    main.result(a3[-1], f"<tool_use_error>{err}</tool_use_error>", f"Error: {err}", is_error=True, dt=0.05)
    edits = [
        {"old_string": "from tidepool.client import RemoteError\n", "new_string": "from tidepool.client import RemoteError\n\nMAX_RETRIES = 5\n", "replace_all": False},
        {
            "old_string": "    while True:\n        try:\n            return client.push(batch)\n        except RemoteError as err:\n            if err.status != 429:\n                raise\n            time.sleep(1)\n",
            "new_string": "    for attempt in range(MAX_RETRIES):\n        try:\n            return client.push(batch)\n        except RemoteError as err:\n            if err.status != 429:\n                raise\n            time.sleep(2 ** attempt)\n    raise RemoteError(429, \"retries exhausted\")\n",
            "replace_all": False,
        },
    ]
    sync_v1 = TIDE_SYNC_V0
    for e in edits:
        sync_v1 = sync_v1.replace(e["old_string"], e["new_string"], 1)
    a4 = main.assistant(
        [txt("The exception is bound as `err`; applying both changes in one edit."), tu("MultiEdit", {"file_path": sync_py, "edits": edits})],
        usage(1, 402, 26587, 0, 388, extra={"inference_geo": "not_available"}),
    )
    main.result(
        a4[-1],
        f"Applied 2 edits to {sync_py}:\n1. Replaced \"from tidepool.client import RemoteError\\n\" with \"from tidepool.client import RemoteError\\n\\nMAX_RETRIES = 5\\n\"\n2. Replaced the retry loop",
        {"filePath": sync_py, "edits": edits, "originalFileContents": TIDE_SYNC_V0, "structuredPatch": structured_patch(TIDE_SYNC_V0, sync_v1), "userModified": False},
        dt=0.1,
    )
    task_prompt = f"Find the tests that exercise tidepool's sync module under {cwd}/tests and say whether any covers the 429 retry path."
    a5 = main.assistant(
        [tu("Task", {"description": "Find sync tests", "prompt": task_prompt, "subagent_type": "Explore"})],
        usage(1, 131, 26975, 0, 812, extra={"inference_geo": "not_available"}),
    )
    task_rec = a5[-1]
    task_id = task_rec["message"]["content"][0]["id"]
    agent_msg = "agent_msg_" + task_rec["message"]["id"]
    # child file, built now; progress records in the parent mirror each child record
    cout: list = []
    child = Stream(cout, model=haiku, agent_id=CHILD, sidechain=True, **common)
    child.prompt(task_prompt, dt=0.02, parent=None)
    g = child.assistant([tu("Glob", {"pattern": "test_*sync*.py", "path": f"{cwd}/tests"})], usage(3, 77, 0, 0, 8820, extra={"inference_geo": "not_available"}), dt=1.9)
    child.result(g[-1], test_py, {"filenames": [test_py], "durationMs": 12, "numFiles": 1, "truncated": False}, dt=0.1)
    rd = child.assistant([tu("Read", {"file_path": test_py})], usage(5, 52, 8820, 0, 133, extra={"inference_geo": "not_available"}), dt=1.2)
    child.result(rd[-1], numbered(TIDE_TEST), read_tur(test_py, TIDE_TEST), dt=0.05)
    child_text = "tests/test_sync.py has test_sync_pushes_batch and test_sync_gives_up; the second is a stub (`...`), so the 429 path is untested."
    cu = usage(6, 58, 8953, 0, 290, extra={"inference_geo": "not_available"})
    child.assistant([txt(child_text)], cu, dt=2.2, stop="end_turn")
    write_jsonl(pdir / SC / "subagents" / f"agent-{CHILD}.jsonl", cout)
    prev = task_rec["uuid"]
    for crec in cout:
        inner = {"type": crec["type"], "message": crec["message"]}
        if crec["type"] == "assistant":
            inner = {"type": "assistant", "timestamp": crec["timestamp"], "message": crec["message"], "requestId": crec["requestId"]}
        elif isinstance(crec["message"]["content"], str):
            inner = {"type": "user", "message": {"role": "user", "content": [txt(crec["message"]["content"])]}}
        inner["uuid"] = crec["uuid"]
        if crec["type"] == "user":
            inner["timestamp"] = crec["timestamp"]
            if "toolUseResult" in crec:
                inner["toolUseResult"] = crec["toolUseResult"]
        t = crec["timestamp"]
        pt = t[:-4] + f"{(int(t[-4:-1]) + 1) % 1000:03d}Z" if int(t[-4:-1]) < 999 else t
        data = {"message": inner, "normalizedMessages": [], "type": "agent_progress", "prompt": task_prompt, "agentId": CHILD}
        pr = main.progress(data, agent_msg, task_id, ts=pt, parent=prev)
        prev = pr["uuid"]
    ck.tick(0.4)
    dur = ms_between(task_rec["timestamp"], ck.now())
    main.result(
        task_rec,
        [txt(child_text), txt(task_tail(CHILD, total_tokens(cu), 2, dur))],
        {
            "status": "completed",
            "prompt": task_prompt,
            "agentId": CHILD,
            "content": [txt(child_text)],
            "totalDurationMs": dur,
            "totalTokens": total_tokens(cu),
            "totalToolUseCount": 2,
            "usage": cu,
        },
        dt=0.01,
        parent=task_rec["uuid"],
    )
    notes_text = "# Sync retry notes\n\n- sync_once now gives up after MAX_RETRIES = 5 attempts.\n- Backoff is 2 ** attempt seconds.\n- The 429 path has no test yet (tests/test_sync.py::test_sync_gives_up is a stub).\n"
    a6 = main.assistant([tu("Write", {"file_path": notes_md, "content": notes_text})], usage(1, 170, 27787, 0, 330, extra={"inference_geo": "not_available"}))
    main.flat(snapshot(p["uuid"], p["timestamp"], {"src/tidepool/sync.py": {"backupFileName": hexid(16) + "@v1", "version": 1, "backupTime": ck.tick(0.2)}, "docs/sync-notes.md": {"backupFileName": None, "version": 1, "backupTime": ck.tick(0.01)}}, True))
    main.result(a6[-1], f"File created successfully at: {notes_md}", write_tur(notes_md, notes_text), dt=0.05)
    a7 = main.assistant([tu("Bash", {"command": "python -m pytest tests/test_sync.py -q", "description": "Run sync tests"})], usage(1, 61, 28117, 0, 251, extra={"inference_geo": "not_available"}))
    main.result(a7[-1], "..                                                                       [100%]\n2 passed in 0.38s", bash_tur("..                                                                       [100%]\n2 passed in 0.38s"), is_error=False, dt=1.9)
    a8 = main.assistant(
        [txt("Retries are capped at 5 with exponential backoff; tests pass. The 429 path itself is not tested yet (see docs/sync-notes.md).")],
        usage(1, 49, 28368, 0, 140, extra={"inference_geo": "not_available"}),
        stop="end_turn",
    )
    main.system("turn_duration", {"durationMs": ms_between(p["timestamp"], ck.now()) + 120, "messageCount": 31}, dt=0.12, meta=False)
    pre_boundary = main.last_uuid
    # auto-compaction run
    kout: list = []
    comp = Stream(kout, model=opus, agent_id=COMPACT, sidechain=True, **common)
    ck.tick(30.0)
    comp.prompt(
        "Summarize this conversation so it can continue in a fresh context: files touched, decisions made, open tasks.",
        dt=0.0,
        parent=None,
    )
    summary = (
        "Summary: capped sync retries at MAX_RETRIES = 5 with 2 ** attempt backoff in src/tidepool/sync.py "
        "(MultiEdit after a failed Edit); wrote docs/sync-notes.md; tests/test_sync.py passes but the 429 path is a stub."
    )
    comp.assistant([txt(summary)], usage(3, 1420, 158200, 2900, 0, extra={"inference_geo": "not_available"}), dt=18.4, stop="end_turn")
    write_jsonl(pdir / SC / "subagents" / f"agent-{COMPACT}.jsonl", kout)
    b = main.system(
        "compact_boundary",
        {"content": "Conversation compacted"},
        dt=0.3,
        parent=None,
        level="info",
    )
    b["logicalParentUuid"] = pre_boundary
    b["compactMetadata"] = {"trigger": "auto", "preTokens": 161203}
    main.prompt(
        "This session continues an earlier conversation that ran out of context.\n\n" + summary,
        dt=0.02,
        extra_after_msg={"isCompactSummary": True, "isVisibleInTranscriptOnly": True},
    )
    prompt2 = "Plan the next step: make the retry cap configurable via TIDEPOOL_MAX_RETRIES."
    p2 = main.prompt(prompt2, dt=41.0, extra_after_msg={"permissionMode": "plan"})
    hist.append((prompt2, p2["timestamp"], cwd))
    a9 = main.assistant([tu("Read", {"file_path": config_py})], usage(3, 58, 4100, 0, 3120, extra={"inference_geo": "not_available"}))
    main.result(a9[-1], numbered(TIDE_CONFIG), read_tur(config_py, TIDE_CONFIG), dt=0.05)
    plan = (
        "# Make the retry cap configurable\n\n"
        "1. Add `max_retries: int = 5` to `Config` in src/tidepool/config.py, read from TIDEPOOL_MAX_RETRIES.\n"
        "2. Use `config.max_retries` in src/tidepool/sync.py instead of the MAX_RETRIES constant.\n"
        "3. Turn tests/test_sync.py::test_sync_gives_up into a real test of the 429 path.\n"
    )
    a10 = main.assistant(
        [txt("Here is the plan."), tu("ExitPlanMode", {"plan": plan})],
        usage(1, 236, 7220, 0, 420, extra={"inference_geo": "not_available"}),
    )
    write_jsonl(pdir / f"{SC}.jsonl", out)
    c_tail = a10[-1]

    # ---------------- F: plan hand-off, new session ----------------
    fout: list = [c_tail]  # first line: a verbatim copy of C's last record (C's sessionId, with usage)
    fck = Clock(c_tail["timestamp"])
    fck.tick(9.85)
    fmain = Stream(fout, model=opus, **{**common, "session_id": SF, "clock": fck})
    fmain.slug_active = True  # slug persists across the hand-off
    handoff = (
        f"Implement the following plan:\n\n{plan}\n"
        "If you need details from before plan mode (exact snippets, errors, output), "
        f"read the full transcript at: ~/.claude/projects/{key}/{SC}.jsonl"
    )
    fp = fmain.prompt(handoff, dt=0.0, parent=None, extra_after_msg={"planContent": plan})
    fout.insert(2, snapshot(fp["uuid"], fp["timestamp"]))
    f1 = fmain.assistant([tu("Read", {"file_path": notes_md})], usage(3, 61, 0, 0, 12990, extra={"inference_geo": "not_available"}))
    fmain.result(f1[-1], numbered(notes_text), read_tur(notes_md, notes_text), dt=0.05)
    cfg_old = "    batch_size: int = 200\n"
    cfg_new = "    batch_size: int = 200\n    max_retries: int = int(os.environ.get(\"TIDEPOOL_MAX_RETRIES\", \"5\"))\n"
    f2 = fmain.assistant([tu("Edit", {"file_path": config_py, "old_string": cfg_old, "new_string": cfg_new})], usage(1, 144, 12990, 0, 380, extra={"inference_geo": "not_available"}))
    fmain.result(f2[-1], f"The file {config_py} has been updated successfully.", edit_tur(config_py, cfg_old, cfg_new, TIDE_CONFIG), dt=0.08)
    s_old = "    for attempt in range(MAX_RETRIES):\n"
    s_new = "    for attempt in range(config.max_retries):\n"
    f3 = fmain.assistant(
        [tu("Edit", {"file_path": sync_py, "old_string": s_old, "new_string": s_new})],
        usage(1, 102, 13370, 0, 266, extra={"inference_geo": "not_available"}),
    )
    fmain.result(f3[-1], f"The file {sync_py} has been updated successfully.", edit_tur(sync_py, s_old, s_new, sync_v1), dt=0.08)
    fmain.assistant(
        [txt("Steps 1 and 2 are done: Config.max_retries reads TIDEPOOL_MAX_RETRIES and sync_once uses it. Step 3 (the 429 test) is next.")],
        usage(1, 53, 13636, 0, 190, extra={"inference_geo": "not_available"}),
        stop="end_turn",
    )
    write_jsonl(pdir / f"{SF}.jsonl", fout)
    return {"C": SC, "F": SF, "C_CHILD": CHILD, "C_COMPACT": COMPACT}, hist


# ==================================================================================
# Project 3: /home/dev/projects/orbit-cli  (D: nested + meta.json 2.1.240, E: claude -p)
# ==================================================================================
def build_project3(tidepool_cwd: str):
    cwd = "/home/dev/projects/orbit-cli"
    key = project_key(cwd)
    pdir = CC_ROOT / "projects" / key
    SD, SE = uid(), uid()
    X1, X2, X3, W1 = ("a" + hexid(16) for _ in range(4))
    RUN = "wf_" + hexid(8)
    slug = "quiet-orbiting-heron"
    opus, haiku = "claude-opus-4-5-20251101", "claude-haiku-4-5-20251001"
    arch, sync_client, cli_py = f"{cwd}/docs/ARCHITECTURE.md", f"{cwd}/src/orbit/sync_client.py", f"{cwd}/src/orbit/cli.py"
    changelog, pyproject = f"{cwd}/CHANGELOG.md", f"{cwd}/pyproject.toml"
    tide_sync = f"{tidepool_cwd}/src/tidepool/sync.py"
    geo = {"inference_geo": "not_available"}
    out: list = []
    ck = Clock("2026-01-20T16:40:00.000Z")
    common = dict(
        cwd=cwd, session_id=SD, version="2.1.240", branch="feat/agent-graph", clock=ck, slug=slug,
        entrypoint="cli", source_uuid=True, prompt_id=True, caller=True,
    )
    main = Stream(out, model=opus, **common)
    prompt1 = "Map how orbit-cli talks to tidepool's sync API (see @docs/ARCHITECTURE.md), and check current guidance on Retry-After headers."
    p = main.prompt(prompt1, dt=0.0, parent=None, extra_after_msg={"permissionMode": "default"})
    out.insert(0, snapshot(p["uuid"], p["timestamp"]))
    hist = [(prompt1, p["timestamp"], cwd)]
    main.attachment(
        {
            "type": "file",
            "filename": arch,
            "displayPath": "docs/ARCHITECTURE.md",
            "content": {"type": "text", "file": {"filePath": arch, "content": ORBIT_ARCH, "numLines": 6, "startLine": 1, "totalLines": 6}},
        }
    )
    a1 = main.assistant(
        [
            {"type": "thinking", "thinking": "Search first, then send an Explore agent into the client code.", "signature": _rand("Eu", 86)},
            tu("WebSearch", {"query": "HTTP 429 Retry-After header client backoff best practice"}),
        ],
        usage(3, 112, 0, 3120, 18400, extra=geo),
    )
    ws_results = [
        {"tool_use_id": _rand("srvtoolu_01", 22), "content": [
            {"title": "Retry-After - HTTP reference", "url": "https://example.org/http/headers/retry-after"},
            {"title": "Backoff strategies for rate-limited APIs", "url": "https://example.org/blog/backoff"},
        ]},
        "Clients should honour Retry-After (seconds or HTTP date) and fall back to capped exponential backoff with jitter.",
    ]
    main.result(
        a1[-1],
        "Web search results for query: \"HTTP 429 Retry-After header client backoff best practice\"\n\nHonour Retry-After; otherwise capped exponential backoff with jitter.",
        {"query": "HTTP 429 Retry-After header client backoff best practice", "results": ws_results, "durationSeconds": 6.21},
        dt=6.3,
    )
    # --- Agent 1: Explore, sync
    x1_prompt = f"Explore {cwd}/src/orbit and report every call orbit-cli makes to tidepool's HTTP API, and which tidepool functions serve them."
    a2 = main.assistant(
        [tu("Agent", {"description": "Explore sync client", "prompt": x1_prompt, "subagent_type": "Explore"})],
        usage(1, 148, 21520, 0, 702, extra=geo),
    )
    ag1 = a2[-1]
    ag1_id = ag1["message"]["content"][0]["id"]
    x1out: list = []
    x1 = Stream(x1out, model=haiku, agent_id=X1, sidechain=True, **common)
    x1.current_prompt_id = main.current_prompt_id
    x1.prompt(x1_prompt, dt=0.05, parent=None, new_prompt=False)
    g = x1.assistant([tu("Glob", {"pattern": "**/*.py", "path": f"{cwd}/src/orbit"})], usage(3, 71, 0, 0, 9400, extra=geo), dt=1.6)
    x1.result(g[-1], f"{cli_py}\n{sync_client}", {"filenames": [cli_py, sync_client], "durationMs": 9, "numFiles": 2, "truncated": False}, dt=0.05)
    r1 = x1.assistant([tu("Read", {"file_path": sync_client})], usage(5, 49, 9400, 0, 212, extra=geo), dt=1.1)
    x1.result(r1[-1], numbered(ORBIT_SYNC_CLIENT), read_tur(sync_client, ORBIT_SYNC_CLIENT), dt=0.05)
    x3_prompt = f"In {tidepool_cwd}/src/tidepool, find the function that serves POST /sync and say how it handles HTTP 429."
    n1 = x1.assistant(
        [tu("Agent", {"description": "Check tidepool endpoints", "prompt": x3_prompt, "subagent_type": "general-purpose"})],
        usage(6, 118, 9612, 0, 330, extra=geo),
        dt=1.4,
    )
    nested_call = n1[-1]
    nested_id = nested_call["message"]["content"][0]["id"]
    x3out: list = []
    x3 = Stream(x3out, model=haiku, agent_id=X3, sidechain=True, **common)
    x3.current_prompt_id = main.current_prompt_id
    x3.prompt(x3_prompt, dt=0.05, parent=None, new_prompt=False)
    g3 = x3.assistant([tu("Grep", {"pattern": "def sync_|/sync", "path": f"{tidepool_cwd}/src/tidepool", "output_mode": "files_with_matches"})], usage(3, 66, 0, 0, 8100, extra=geo), dt=1.5)
    x3.result(g3[-1], f"Found 1 file\n{tide_sync}", {"mode": "files_with_matches", "filenames": [tide_sync], "numFiles": 1}, dt=0.1)
    r3 = x3.assistant([tu("Read", {"file_path": tide_sync})], usage(5, 41, 8100, 0, 260, extra=geo), dt=1.0)
    tide_now = (
        "import time\n\nfrom tidepool.client import RemoteError\n\nMAX_RETRIES = 5\n\n\ndef sync_once(client, batch):\n"
        "    for attempt in range(config.max_retries):\n        try:\n            return client.push(batch)\n"
        "        except RemoteError as err:\n            if err.status != 429:\n                raise\n"
        "            time.sleep(2 ** attempt)\n    raise RemoteError(429, \"retries exhausted\")\n"
    )
    x3.result(r3[-1], numbered(tide_now), read_tur(tide_sync, tide_now), dt=0.05)
    x3_text = "tidepool's sync_once (src/tidepool/sync.py) retries 429 up to config.max_retries with 2 ** attempt backoff; it ignores Retry-After."
    x3u = usage(6, 57, 8360, 0, 301, extra=geo)
    x3.assistant([txt(x3_text)], x3u, dt=2.0, stop="end_turn")
    write_jsonl(pdir / SD / "subagents" / f"agent-{X3}.jsonl", x3out)
    write_json(pdir / SD / "subagents" / f"agent-{X3}.meta.json", {"agentType": "general-purpose", "description": "Check tidepool endpoints", "toolUseId": nested_id, "spawnDepth": 2, "parentAgentId": X1})
    ck.tick(0.3)
    ndur = ms_between(nested_call["timestamp"], ck.now())
    x1.result(nested_call, [txt(x3_text), txt(task_tail(X3, total_tokens(x3u), 2, ndur))], tur_present=False, dt=0.01)
    x1_text = "orbit-cli makes one call: sync_client.push() POSTs to /sync on tidepool, served by tidepool.sync.sync_once, which retries 429 but ignores Retry-After."
    x1u = usage(7, 88, 9942, 0, 412, extra=geo)
    x1.assistant([txt(x1_text)], x1u, dt=2.4, stop="end_turn")
    write_jsonl(pdir / SD / "subagents" / f"agent-{X1}.jsonl", x1out)
    write_json(pdir / SD / "subagents" / f"agent-{X1}.meta.json", {"agentType": "Explore", "description": "Explore sync client", "toolUseId": ag1_id, "spawnDepth": 1})
    ck.tick(0.4)
    d1 = ms_between(ag1["timestamp"], ck.now())
    main.last_uuid = ag1["uuid"]
    main.result(
        ag1,
        [txt(x1_text), txt(task_tail(X1, total_tokens(x1u), 3, d1))],
        {
            "status": "completed",
            "prompt": x1_prompt,
            "agentId": X1,
            "agentType": "Explore",
            "content": [txt(x1_text)],
            "totalDurationMs": d1,
            "totalTokens": total_tokens(x1u),
            "totalToolUseCount": 3,
            "usage": x1u,
            "toolStats": {"readCount": 1, "searchCount": 1, "bashCount": 0, "editFileCount": 0, "linesAdded": 0, "linesRemoved": 0, "otherToolCount": 1},
        },
        dt=0.01,
    )
    # --- Agent 2: background
    x2_prompt = f"Audit the command-line flags in {cli_py} and list any flag that has no help text."
    a3 = main.assistant(
        [tu("Agent", {"description": "Audit CLI flags", "prompt": x2_prompt, "subagent_type": "general-purpose", "run_in_background": True})],
        usage(1, 121, 22222, 0, 566, extra=geo),
    )
    ag2 = a3[-1]
    ag2_id = ag2["message"]["content"][0]["id"]
    out_file = f"/tmp/claude-1000/{key}/{SD}/tasks/{X2}.output"
    main.result(
        ag2,
        f"Async agent launched successfully.\nagentId: {X2} (internal ID; use it to resume or check on this agent later)\nThe agent is working in the background; you will be notified when it completes.\noutput_file: {out_file}",
        {"isAsync": True, "status": "async_launched", "agentId": X2, "description": "Audit CLI flags", "prompt": x2_prompt, "outputFile": out_file, "canReadOutputFile": True},
        dt=0.2,
    )
    bg_clock = Clock(ck.now())
    x2out: list = []
    x2 = Stream(x2out, model=haiku, agent_id=X2, sidechain=True, **{**common, "clock": bg_clock})
    x2.current_prompt_id = main.current_prompt_id
    x2.prompt(x2_prompt, dt=0.1, parent=None, new_prompt=False)
    r2 = x2.assistant([tu("Read", {"file_path": cli_py})], usage(3, 55, 0, 0, 7900, extra=geo), dt=1.8)
    x2.result(r2[-1], numbered(ORBIT_CLI), read_tur(cli_py, ORBIT_CLI), dt=0.05)
    x2_text = "Both flags (--remote, --dry-run) lack help text."
    x2.assistant([txt(x2_text)], usage(5, 31, 7900, 0, 188, extra=geo), dt=2.1, stop="end_turn")
    write_jsonl(pdir / SD / "subagents" / f"agent-{X2}.jsonl", x2out)
    write_json(pdir / SD / "subagents" / f"agent-{X2}.meta.json", {"agentType": "general-purpose", "description": "Audit CLI flags", "toolUseId": ag2_id, "spawnDepth": 1})
    x2_done = bg_clock.now()
    # --- claude -p launch (session E)
    cl_prompt = "Write a CHANGELOG.md stub for orbit-cli with an Unreleased section"
    a4 = main.assistant(
        [tu("Bash", {"command": f'claude -p "{cl_prompt}" --output-format json', "description": "Draft the changelog with headless Claude"})],
        usage(1, 96, 22788, 0, 402, extra=geo),
    )
    bash_call = a4[-1]
    eck = Clock(bash_call["timestamp"])
    eck.tick(1.35)
    eout: list = []
    e = Stream(eout, model=opus, cwd=cwd, session_id=SE, version="2.1.240", branch="feat/agent-graph", clock=eck, entrypoint="sdk-cli", source_uuid=True, prompt_id=True, caller=True)
    ep = e.prompt(cl_prompt, dt=0.0, parent=None, extra_after_msg={"promptSource": "sdk", "permissionMode": "default"})
    eout.insert(0, snapshot(ep["uuid"], ep["timestamp"]))
    ew = e.assistant([txt("Creating the changelog stub."), tu("Write", {"file_path": changelog, "content": ORBIT_CHANGELOG})], usage(3, 118, 0, 0, 11200, extra=geo), dt=2.9)
    e.result(ew[-1], f"File created successfully at: {changelog}", write_tur(changelog, ORBIT_CHANGELOG), dt=0.05)
    e_text = "Created CHANGELOG.md with an Unreleased section."
    e.assistant([txt(e_text)], usage(5, 19, 11200, 0, 160, extra=geo), dt=1.9, stop="end_turn")
    write_jsonl(pdir / f"{SE}.jsonl", eout)
    ck.t = eck.t
    result_json = {
        "type": "result", "subtype": "success", "is_error": False,
        "duration_ms": ms_between(ep["timestamp"], eck.now()) + 310, "duration_api_ms": 4620, "num_turns": 2,
        "result": e_text, "session_id": SE, "total_cost_usd": 0.0931,
        "usage": {"input_tokens": 8, "cache_creation_input_tokens": 11360, "cache_read_input_tokens": 11200, "output_tokens": 137},
    }
    stdout = dumps(result_json)
    main.last_uuid = bash_call["uuid"]
    main.result(bash_call, stdout, bash_tur(stdout), is_error=False, dt=0.6)
    a5 = main.assistant([tu("Read", {"file_path": changelog})], usage(1, 52, 23190, 0, 455, extra=geo))
    main.result(a5[-1], numbered(ORBIT_CHANGELOG), read_tur(changelog, ORBIT_CHANGELOG), dt=0.05)
    a6 = main.assistant(
        [tu("Grep", {"pattern": "Retry-After", "path": f"{tidepool_cwd}/src", "output_mode": "content", "-n": True})],
        usage(1, 77, 23645, 0, 233, extra=geo),
    )
    main.result(a6[-1], "No matches found", {"mode": "content", "numFiles": 0, "filenames": [], "content": "", "numLines": 0}, dt=0.2)
    # background agent completion notification
    if ck.now() < x2_done:
        ck.t = Clock(x2_done).t
    notif = (
        f"<task-notification>\n<task-id>{X2}</task-id>\n<tool-use-id>{ag2_id}</tool-use-id>\n<status>completed</status>\n"
        f"<summary>Agent \"Audit CLI flags\" completed</summary>\n<result>{x2_text}</result>\n<output-file>{out_file}</output-file>\n</task-notification>"
    )
    main.flat({"type": "queue-operation", "operation": "enqueue", "timestamp": ck.tick(0.5), "sessionId": SD, "content": notif})
    main.prompt(notif, dt=0.4, extra_after_msg={"origin": {"kind": "task-notification"}})
    # workflow run
    wf_dir = f"/home/dev/.claude/projects/{key}/{SD}/subagents/workflows/{RUN}"
    a7 = main.assistant(
        [tu("Workflow", {"script": "export const meta = { name: 'lint-check', description: 'Run ruff over src and summarise findings' }\nawait agent('Run ruff on src/ and summarise the findings.')\n"})],
        usage(1, 133, 24100, 0, 512, extra=geo),
    )
    wf_call = a7[-1]
    wck = Clock(wf_call["timestamp"])
    wout: list = []
    w = Stream(wout, model=haiku, agent_id=W1, sidechain=True, **{**common, "clock": wck})
    w.current_prompt_id = main.current_prompt_id
    w.prompt("Run ruff on src/ and summarise the findings.", dt=0.8, parent=None, new_prompt=False)
    wb = w.assistant([tu("Bash", {"command": "ruff check src", "description": "Lint src with ruff"})], usage(3, 40, 0, 0, 6100, extra=geo), dt=1.3)
    w.result(wb[-1], "All checks passed!", bash_tur("All checks passed!"), is_error=False, dt=0.7)
    wr = w.assistant([tu("Read", {"file_path": pyproject})], usage(5, 33, 6100, 0, 150, extra=geo), dt=0.9)
    w.result(wr[-1], numbered(ORBIT_PYPROJECT), read_tur(pyproject, ORBIT_PYPROJECT), dt=0.05)
    w_text = "ruff reports no findings under src/ (line-length 100 from pyproject.toml)."
    w.assistant([txt(w_text)], usage(6, 29, 6250, 0, 120, extra=geo), dt=1.2, stop="end_turn")
    wf_path = pdir / SD / "subagents" / "workflows" / RUN
    write_jsonl(wf_path / f"agent-{W1}.jsonl", wout)
    write_json(wf_path / f"agent-{W1}.meta.json", {"agentType": "workflow-subagent", "spawnDepth": 1})
    ck.t = wck.t
    main.last_uuid = wf_call["uuid"]
    main.result(
        wf_call,
        f"Workflow lint-check completed.\nRun ID: {RUN}\nTranscript dir: {wf_dir}\n\n{w_text}",
        {
            "status": "completed", "taskId": "w" + hexid(6), "runId": RUN, "workflowName": "lint-check",
            "transcriptDir": wf_dir, "scriptPath": f"/home/dev/.claude/projects/{key}/{SD}/workflows/{RUN}.js",
            "summary": w_text,
        },
        dt=0.4,
    )
    main.assistant(
        [txt("orbit-cli calls tidepool only via POST /sync (sync_client.push -> tidepool.sync.sync_once). Neither side honours Retry-After yet; CHANGELOG.md now exists, both CLI flags need help text, and ruff is clean.")],
        usage(1, 164, 24612, 0, 690, extra=geo),
        stop="end_turn",
    )
    main.system("turn_duration", {"durationMs": ms_between(p["timestamp"], ck.now()) + 90, "messageCount": 38}, dt=0.09, meta=False)
    main.flat({"type": "ai-title", "aiTitle": "Map orbit-cli to tidepool sync API", "sessionId": SD})
    main.flat({"type": "last-prompt", "lastPrompt": prompt1, "leafUuid": main.last_uuid, "sessionId": SD})
    write_jsonl(pdir / f"{SD}.jsonl", out)
    return {"D": SD, "E": SE, "X1": X1, "X2": X2, "X3": X3, "W1": W1, "RUN": RUN}, hist


# ==================================================================================
# Project 4: /home/dev/projects/harbor  (T: an agent team, 2.1.88)
# ==================================================================================
HARBOR_LEXER = "def tokens(text):\n    for word in text.split():\n        yield word\n"
HARBOR_GRAMMAR = "def parse(tokens):\n    return [t for t in tokens if t]\n"
HARBOR_TESTS = "from harbor.parser import parse\n\n\ndef test_parse():\n    assert parse(['a']) == ['a']\n"
HARBOR_DOCS = "# Parser\n\nTokens, then a flat list.\n"


def teammate_prompt(description: str, prompt: str) -> str:
    return f'<teammate-message teammate_id="team-lead" summary="{description}">\n{prompt}\n</teammate-message>'


def teammate_message(sender: str, color: str, summary: str, body: str) -> str:
    return f'<teammate-message teammate_id="{sender}" color="{color}" summary="{summary}">\n{body}\n</teammate-message>'


def build_project4():
    R.seed(20260210)  # the projects before keep their bytes whatever is added here
    cwd = "/home/dev/projects/harbor"
    pdir = CC_ROOT / "projects" / project_key(cwd)
    ST = uid()
    EXP = "a" + hexid(16)
    team = "parser-review"
    names = ("lexer", "grammar", "tester", "scribe")
    colors = dict(zip(names, ("blue", "green", "yellow", "purple"), strict=True))
    ids_ = {n: "a" + hexid(16) for n in names}
    TESTER2 = "a" + hexid(16)
    COMPACT = "acompact-" + hexid(6)
    opus, sonnet, haiku = "claude-opus-4-6", "claude-sonnet-4-6", "claude-haiku-4-5-20251001"
    files = {
        "lexer": f"{cwd}/src/harbor/parser/lexer.py",
        "grammar": f"{cwd}/src/harbor/parser/grammar.py",
        "tester": f"{cwd}/tests/test_parser.py",
        "scribe": f"{cwd}/docs/parser.md",
    }
    bodies = {"lexer": HARBOR_LEXER, "grammar": HARBOR_GRAMMAR, "tester": HARBOR_TESTS, "scribe": HARBOR_DOCS}
    geo = {"inference_geo": "not_available"}
    sub = pdir / ST / "subagents"
    out: list = []
    ck = Clock("2026-02-10T09:00:00.000Z")
    common = dict(cwd=cwd, session_id=ST, version="2.1.88", branch="feat/parser-split", clock=ck, entrypoint="cli", source_uuid=True, prompt_id=True)
    lead = Stream(out, model=opus, slug="steady-harbor-crane", **common)
    prompt1 = "Review the parser in src/harbor/parser/: map it first, then split the review across a team (lexer, grammar, tests, docs) and merge what they find."
    p = lead.prompt(prompt1, dt=0.0, parent=None, extra_after_msg={"permissionMode": "default"})
    out.insert(0, snapshot(p["uuid"], p["timestamp"]))
    hist = [(prompt1, p["timestamp"], cwd)]
    # --- a plain Agent call: an Explore subagent
    exp_prompt = f"List the modules under {cwd}/src/harbor/parser and say what each one does."
    a1 = lead.assistant([tu("Agent", {"description": "Map parser modules", "prompt": exp_prompt, "subagent_type": "Explore"})], usage(3, 121, 0, 0, 14200, extra=geo))
    call = a1[-1]
    xout: list = []
    x = Stream(xout, model=haiku, agent_id=EXP, sidechain=True, **common)
    x.current_prompt_id = lead.current_prompt_id
    x.prompt(exp_prompt, dt=0.05, parent=None, new_prompt=False)
    g = x.assistant([tu("Glob", {"pattern": "*.py", "path": f"{cwd}/src/harbor/parser"})], usage(3, 52, 0, 0, 8100, extra=geo), dt=1.4)
    x.result(g[-1], f"{files['lexer']}\n{files['grammar']}", {"filenames": [files["lexer"], files["grammar"]], "durationMs": 7, "numFiles": 2, "truncated": False}, dt=0.05)
    x_text = "Two modules: lexer.py splits text into tokens, grammar.py turns tokens into a flat list."
    xu = usage(5, 47, 8100, 0, 190, extra=geo)
    x.assistant([txt(x_text)], xu, dt=1.8, stop="end_turn")
    write_jsonl(sub / f"agent-{EXP}.jsonl", xout)
    write_json(sub / f"agent-{EXP}.meta.json", {"agentType": "Explore"})
    ck.tick(0.3)
    dur = ms_between(call["timestamp"], ck.now())
    lead.result(
        call,
        [txt(x_text), txt(task_tail(EXP, total_tokens(xu), 1, dur))],
        {"status": "completed", "prompt": exp_prompt, "agentId": EXP, "content": [txt(x_text)], "totalDurationMs": dur, "totalTokens": total_tokens(xu), "totalToolUseCount": 1, "usage": xu},
        dt=0.01,
    )
    # --- the team
    a2 = lead.assistant([tu("TeamCreate", {"team_name": team, "description": "Review harbor's parser in parallel"})], usage(1, 64, 14200, 0, 420, extra=geo))
    created = {"team_name": team, "team_file_path": f"/home/dev/.claude/teams/{team}/config.json", "lead_agent_id": f"team-lead@{team}"}
    lead.result(a2[-1], dumps(created), created, dt=0.2)
    lead.team = team
    tasks = {
        "lexer": ("Review the lexer", f"Review {files['lexer']} for tokenising bugs and send me what you find."),
        "grammar": ("Review the grammar", f"Review {files['grammar']} for parse errors it swallows and send me what you find."),
        "tester": ("Check parser tests", f"Read {files['tester']} and say which parser paths have no test."),
        "scribe": ("Check parser docs", f"Check that {files['scribe']} matches the code and send me the gaps."),
    }
    blocks = [
        tu("Agent", {"description": d, "prompt": pr, "subagent_type": "general-purpose", "name": n, "team_name": team, "run_in_background": True})
        for n, (d, pr) in tasks.items()
    ]
    spawns = lead.assistant(blocks, usage(1, 512, 14620, 0, 880, extra=geo))
    spawned_at = {}
    for n, rec in zip(names, spawns, strict=True):
        d, pr = tasks[n]
        res = {
            "status": "teammate_spawned", "prompt": pr, "teammate_id": f"{n}@{team}", "agent_id": f"{n}@{team}", "agent_type": "general-purpose",
            "model": "sonnet", "name": n, "color": colors[n], "team_name": team, "is_splitpane": False, "plan_mode_required": False,
        }
        text = f"Spawned successfully.\nagent_id: {n}@{team}\nname: {n}\nteam_name: {team}\nThe agent is now running and will receive instructions via mailbox."
        r = lead.result(rec, [txt(text)], res, dt=0.15, parent=rec["uuid"])
        spawned_at[n] = r["timestamp"]
    # teammates: their own transcripts, each opening with the lead's message
    reports = {}
    for n in names:
        d, pr = tasks[n]
        start = Clock(spawned_at[n])
        start.tick(0.4)
        tout: list = []
        tm = Stream(tout, model=sonnet, agent_id=ids_[n], sidechain=True, **{**common, "clock": start})
        tm.team = team
        first = tm.prompt(teammate_prompt(d, pr), dt=0.0, parent=None)
        if n == "tester":
            # a second file of the same teammate, opening at the same moment with the same message
            t2out: list = []
            twin_clock = Clock(first["timestamp"])
            twin = Stream(t2out, model=sonnet, agent_id=TESTER2, sidechain=True, **{**common, "clock": twin_clock})
            twin.team = team
            twin.prompt(teammate_prompt(d, pr), dt=0.0, parent=None)
            twin.assistant([txt("Starting on the parser tests.")], usage(3, 9, 0, 0, 6100, extra=geo), dt=1.1, stop="end_turn")
            write_jsonl(sub / f"agent-{TESTER2}.jsonl", t2out)
            write_json(sub / f"agent-{TESTER2}.meta.json", {"agentType": n})
        rd = tm.assistant([tu("Read", {"file_path": files[n]})], usage(3, 44, 0, 0, 6200, extra=geo), dt=1.5)
        tm.result(rd[-1], numbered(bodies[n]), read_tur(files[n], bodies[n]), dt=0.05)
        finding = {
            "lexer": "tokens() drops quoted strings with spaces.",
            "grammar": "parse() silently drops empty tokens instead of reporting them.",
            "tester": "No test covers empty input or quoted strings.",
            "scribe": "docs/parser.md does not mention that empty tokens are dropped.",
        }[n]
        sm = tm.assistant([tu("SendMessage", {"type": "message", "recipient": "team-lead", "content": finding, "summary": f"{n} findings"})], usage(5, 61, 6200, 0, 240, extra=geo), dt=2.0)
        sent = {"success": True, "message": "Message sent to team-lead's inbox", "routing": {"sender": n, "senderColor": colors[n], "target": "@team-lead", "targetColor": None, "summary": f"{n} findings", "content": finding}}
        tm.result(sm[-1], dumps(sent), sent, dt=0.05)
        reports[n] = (finding, tm.clock.now())
        if n == "tester":
            tester_stream, tester_out = tm, tout
        else:
            tm.assistant([txt("Sent my findings to team-lead.")], usage(6, 11, 6440, 0, 80, extra=geo), dt=1.0, stop="end_turn")
            write_jsonl(sub / f"agent-{ids_[n]}.jsonl", tout)
            write_json(sub / f"agent-{ids_[n]}.meta.json", {"agentType": n})
    # the lead hears from each teammate, in the order they reported
    latest = max(t for _, t in reports.values())
    ck.t = datetime.strptime(latest, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    for n in sorted(names, key=lambda k: reports[k][1]):
        lead.prompt(teammate_message(n, colors[n], f"{n} findings", reports[n][0]), dt=0.3, new_prompt=False)
    # work goes back to one teammate
    ask = "Also cover the empty-input case and send me the test you would add."
    a3 = lead.assistant([tu("SendMessage", {"type": "message", "recipient": "tester", "content": ask, "summary": "empty input case"})], usage(1, 88, 15500, 0, 640, extra=geo))
    sent = {"success": True, "message": "Message sent to tester's inbox", "routing": {"sender": "team-lead", "senderColor": None, "target": "@tester", "targetColor": colors["tester"], "summary": "empty input case", "content": ask}}
    lead.result(a3[-1], dumps(sent), sent, dt=0.05)
    tester_stream.clock.t = ck.t
    tester_stream.prompt(teammate_message("team-lead", "blue", "empty input case", ask), dt=0.6)
    reply = "def test_parse_empty():\n    assert parse([]) == []"
    sm2 = tester_stream.assistant([tu("SendMessage", {"type": "message", "recipient": "team-lead", "content": reply, "summary": "empty input test"})], usage(4, 70, 6520, 0, 150, extra=geo), dt=1.8)
    sent2 = {"success": True, "message": "Message sent to team-lead's inbox", "routing": {"sender": "tester", "senderColor": colors["tester"], "target": "@team-lead", "targetColor": None, "summary": "empty input test", "content": reply}}
    tester_stream.result(sm2[-1], dumps(sent2), sent2, dt=0.05)
    tester_stream.assistant([txt("Sent the test to team-lead.")], usage(5, 9, 6670, 0, 70, extra=geo), dt=0.9, stop="end_turn")
    write_jsonl(sub / f"agent-{ids_['tester']}.jsonl", tester_out)
    write_json(sub / f"agent-{ids_['tester']}.meta.json", {"agentType": "tester"})
    ck.t = tester_stream.clock.t
    lead.prompt(teammate_message("tester", colors["tester"], "empty input test", reply), dt=0.3, new_prompt=False)
    a4 = lead.assistant([tu("TeamDelete", {})], usage(1, 40, 16140, 0, 520, extra=geo))
    deleted = {"success": True, "message": f"Cleaned up directories and worktrees for team {team}", "team_name": team}
    lead.result(a4[-1], dumps(deleted), deleted, dt=0.3)
    lead.team = None
    # auto-compaction before the last turn
    pre = lead.last_uuid
    kout: list = []
    comp = Stream(kout, model=opus, agent_id=COMPACT, sidechain=True, **common)
    ck.tick(5.0)
    comp.prompt("Summarize this conversation so it can continue in a fresh context: files touched, decisions made, open tasks.", dt=0.0, parent=None)
    summary = "Summary: a team of four reviewed src/harbor/parser; findings: quoted strings split, empty tokens dropped silently, no empty-input test, docs silent on dropping."
    comp.assistant([txt(summary)], usage(3, 610, 40100, 1800, 0, extra=geo), dt=9.0, stop="end_turn")
    write_jsonl(sub / f"agent-{COMPACT}.jsonl", kout)
    b = lead.system("compact_boundary", {"content": "Conversation compacted"}, dt=0.3, parent=None, level="info")
    b["logicalParentUuid"] = pre
    b["compactMetadata"] = {"trigger": "auto", "preTokens": 152210}
    lead.prompt("This session continues an earlier conversation that ran out of context.\n\n" + summary, dt=0.02, extra_after_msg={"isCompactSummary": True, "isVisibleInTranscriptOnly": True})
    review = f"{cwd}/docs/parser-review.md"
    a5 = lead.assistant([tu("Write", {"file_path": review, "content": "# Parser review\n\n" + summary + "\n"})], usage(2, 140, 2100, 0, 900, extra=geo), dt=3.0)
    lead.result(a5[-1], f"File created successfully at: {review}", write_tur(review, "# Parser review\n\n" + summary + "\n"), dt=0.05)
    lead.assistant([txt("The merged review is in docs/parser-review.md.")], usage(3, 17, 3000, 0, 60, extra=geo), stop="end_turn")
    write_jsonl(pdir / f"{ST}.jsonl", out)
    ids = {"T": ST, "T_EXPLORE": EXP, "T_COMPACT": COMPACT, "T_TESTER2": TESTER2, "TEAM": team, **{f"T_{n.upper()}": i for n, i in ids_.items()}}
    return ids, hist


# ==================================================================================
# Project 5: /home/dev/projects/quill  (W: a workflow run with its journal, 2.1.240)
# ==================================================================================
def build_project5():
    R.seed(20260305)
    cwd = "/home/dev/projects/quill"
    pdir = CC_ROOT / "projects" / project_key(cwd)
    SW = uid()
    RUN = f"wf_{hexid(8)}-{hexid(3)}"
    WA, WB, WB2 = ("a" + hexid(16) for _ in range(3))
    TASK = "w" + hexid(7)
    opus, haiku = "claude-opus-4-6", "claude-haiku-4-5-20251001"
    geo = {"inference_geo": "not_available"}
    out: list = []
    ck = Clock("2026-03-05T14:00:00.000Z")
    common = dict(cwd=cwd, session_id=SW, version="2.1.240", branch="main", clock=ck, entrypoint="cli", source_uuid=True, prompt_id=True, caller=True)
    lead = Stream(out, model=opus, slug="inky-paper-wren", **common)
    prompt1 = "Run a docs audit over README.md and docs/guide.md as a workflow and tell me what is stale."
    p = lead.prompt(prompt1, dt=0.0, parent=None, extra_after_msg={"permissionMode": "default"})
    out.insert(0, snapshot(p["uuid"], p["timestamp"]))
    hist = [(prompt1, p["timestamp"], cwd)]
    script = (
        "export const meta = { name: 'docs-audit', description: 'Audit each doc for stale statements' }\n"
        "await phase('Audit', () => Promise.all([\n  agent('Audit README.md for stale statements.', { label: 'Audit README' }),\n"
        "  agent('Audit docs/guide.md for stale statements.', { label: 'Audit guide' }),\n]))\n"
    )
    a1 = lead.assistant([tu("Workflow", {"script": script})], usage(3, 190, 0, 0, 16800, extra=geo))
    call = a1[-1]
    run_dir = pdir / SW / "subagents" / "workflows" / RUN
    key_a, key_b = "v2:" + hexid(64), "v2:" + hexid(64)
    readme, guide = f"{cwd}/README.md", f"{cwd}/docs/guide.md"
    readme_text, guide_text = "# quill\n\nRuns on Python 3.9.\n", "# Guide\n\nInstall with `pip install quill`.\n"

    def agent(agent_id, prompt, start, path, text, *, finish=True, dt_read=1.2):
        aout: list = []
        s = Stream(aout, model=haiku, agent_id=agent_id, sidechain=True, **{**common, "clock": Clock(start)})
        s.current_prompt_id = lead.current_prompt_id
        s.prompt(prompt, dt=0.0, parent=None, new_prompt=False)
        rd = s.assistant([tu("Read", {"file_path": path})], usage(3, 38, 0, 0, 5200, extra=geo), dt=dt_read)
        if finish:
            s.result(rd[-1], numbered(text), read_tur(path, text), dt=0.05)
            s.assistant([txt(f"{path}: one stale statement.")], usage(5, 29, 5200, 0, 160, extra=geo), dt=1.4, stop="end_turn")
        write_jsonl(run_dir / f"agent-{agent_id}.jsonl", aout)
        write_json(run_dir / f"agent-{agent_id}.meta.json", {"agentType": "workflow-subagent", "spawnDepth": 1})
        return s.clock.now()

    t0 = Clock(call["timestamp"])
    t0.tick(0.8)
    end_a = agent(WA, "Audit README.md for stale statements.", t0.now(), readme, readme_text)
    t0.tick(0.05)
    agent(WB, "Audit docs/guide.md for stale statements.", t0.now(), guide, guide_text, finish=False)
    t1 = Clock(end_a)
    t1.tick(2.0)
    end_b = agent(WB2, "Audit docs/guide.md for stale statements.", t1.now(), guide, guide_text)
    journal = [
        {"type": "launched"},
        {"type": "started", "agentId": WA, "key": key_a, "label": "Audit README", "phase": "Audit"},
        {"type": "started", "agentId": WB, "key": key_b, "label": "Audit guide", "phase": "Audit"},
        {"type": "result", "agentId": WA, "key": key_a, "result": "README.md: 'Runs on Python 3.9' is stale (3.11 is the floor)."},
        # WB was interrupted; the runtime restarted it under the same key
        {"type": "started", "agentId": WB2, "key": key_b, "label": "Audit guide", "phase": "Audit"},
        {"type": "result", "agentId": WB2, "key": key_b, "result": "docs/guide.md: the install line names the old package."},
    ]
    write_jsonl(run_dir / "journal.jsonl", journal)
    ck.t = datetime.strptime(end_b, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)
    summary = "README.md says Python 3.9 (stale); docs/guide.md names the old package."
    transcript_dir = f"/home/dev/.claude/projects/{project_key(cwd)}/{SW}/subagents/workflows/{RUN}"
    script_path = f"/home/dev/.claude/projects/{project_key(cwd)}/{SW}/workflows/scripts/docs-audit-{RUN}.js"
    state = {
        "runId": RUN, "taskId": TASK, "workflowName": "docs-audit", "status": "completed", "scriptPath": script_path,
        "agentCount": 3, "durationMs": ms_between(call["timestamp"], end_b), "summary": summary,
    }
    write_json(pdir / SW / "workflows" / f"{RUN}.json", state)
    lead.result(
        call,
        f"Workflow docs-audit completed.\nRun ID: {RUN}\nTranscript dir: {transcript_dir}\n\n{summary}",
        {"status": "completed", "taskId": TASK, "runId": RUN, "workflowName": "docs-audit", "transcriptDir": transcript_dir, "scriptPath": script_path, "summary": summary},
        dt=0.4,
    )
    lead.assistant([txt(summary)], usage(2, 41, 16800, 0, 300, extra=geo), stop="end_turn")
    write_jsonl(pdir / f"{SW}.jsonl", out)
    return {"W": SW, "W_RUN": RUN, "W_A": WA, "W_B": WB, "W_B2": WB2}, hist


# ==================================================================================
# history.jsonl
# ==================================================================================
def write_history(entries):
    recs = []
    for display, ts, project in sorted(entries, key=lambda e: e[1]):
        c = Clock(ts)
        pasted = {}
        if display.startswith("The sync job"):
            pasted = {"1": {"id": 1, "type": "text", "content": "RemoteError: 429 Too Many Requests (attempt 37)"}}
        recs.append({"display": display, "pastedContents": pasted, "timestamp": c.epoch_ms(), "project": project})
    write_jsonl(CC_ROOT / "history.jsonl", recs)


# ==================================================================================
# broken inputs
# ==================================================================================
def build_broken():
    cwd = "/home/dev/projects/broken"
    pdir = BROKEN_ROOT / "projects" / project_key(cwd)
    readme = f"{cwd}/README.md"
    readme_text = "# broken\n\nFixture project for bad-input tests.\n"
    ids = {}

    def base(name, start):
        sid = uid()
        ids[name] = sid
        out: list = []
        ck = Clock(start)
        s = Stream(out, cwd=cwd, session_id=sid, version="2.1.39", branch="main", clock=ck, source_uuid=True, caller=True, model="claude-opus-4-5-20251101")
        return s, out

    def good_turn(s, prompt="Summarise README.md.", u1=(3, 41, 0, 0, 5200), u2=(5, 27, 5200, 0, 140)):
        s.prompt(prompt, dt=1.0, parent=s.last_uuid)
        a = s.assistant([tu("Read", {"file_path": readme})], usage(*u1[:3], u1[3], u1[4]))
        s.result(a[-1], numbered(readme_text), read_tur(readme, readme_text), dt=0.05)
        s.assistant([txt("README.md says this is a fixture project for bad-input tests.")], usage(*u2[:3], u2[3], u2[4]), stop="end_turn")

    def lines_of(out):
        return [dumps(r).encode() + b"\n" for r in out]

    def save(name, chunks):
        pdir.mkdir(parents=True, exist_ok=True)
        (pdir / name).write_bytes(b"".join(chunks))

    # truncated: 4 good lines, then an assistant record cut mid-object with no newline
    s, out = base("truncated.jsonl", "2026-01-25T08:00:00.000Z")
    good_turn(s)
    s.prompt("Now list the files.", dt=2.0)
    cut = s.assistant([tu("Glob", {"pattern": "*", "path": cwd})], usage(3, 30, 5200, 0, 90))[-1]
    out.remove(cut)
    raw = dumps(cut).encode()
    save("truncated.jsonl", lines_of(out) + [raw[: len(raw) // 2]])

    # not-json: lines 1-2 good, 3 garbage, 4-5 good
    s, out = base("not-json.jsonl", "2026-01-25T08:10:00.000Z")
    good_turn(s)
    L = lines_of(out)
    save("not-json.jsonl", L[:2] + [b"this is not json\n"] + L[2:])

    s, out = base("array-line.jsonl", "2026-01-25T08:20:00.000Z")
    good_turn(s)
    L = lines_of(out)
    save("array-line.jsonl", L[:2] + [b"[1,2,3]\n"] + L[2:])

    s, out = base("unknown-type.jsonl", "2026-01-25T08:30:00.000Z")
    good_turn(s)
    L = lines_of(out)
    holo = {"type": "hologram-sync", "sessionId": ids["unknown-type.jsonl"], "timestamp": "2026-01-25T08:30:04.500Z", "payload": {"frames": 3, "channel": "beta"}}
    save("unknown-type.jsonl", L[:2] + [dumps(holo).encode() + b"\n"] + L[2:])

    # bad-timestamp: assistant without timestamp (line 2), assistant with "yesterday-ish" (line 4)
    s, out = base("bad-timestamp.jsonl", "2026-01-25T08:40:00.000Z")
    good_turn(s)
    del out[1]["timestamp"]
    out[3]["timestamp"] = "yesterday-ish"
    s.prompt("Thanks, that's all.", dt=3.0)
    s.assistant([txt("You're welcome.")], usage(4, 6, 5340, 0, 60), stop="end_turn")
    save("bad-timestamp.jsonl", lines_of(out))

    # invalid-utf8: line 3 is a user record whose text has raw 0xff 0xfe bytes
    s, out = base("invalid-utf8.jsonl", "2026-01-25T08:50:00.000Z")
    s.prompt("Say hello.", dt=0.0, parent=None)
    s.assistant([txt("Hello!")], usage(3, 4, 0, 0, 4800), stop="end_turn")
    marker = "@@BAD@@"
    s.prompt(f"Decode this: {marker} please.", dt=4.0)
    s.assistant([txt("Those bytes are not valid UTF-8, so I can't decode them as text.")], usage(5, 19, 4800, 0, 70), stop="end_turn")
    L = lines_of(out)
    L[2] = L[2].replace(marker.encode(), b"\xff\xfe")
    save("invalid-utf8.jsonl", L)

    pdir.mkdir(parents=True, exist_ok=True)
    (pdir / "empty.jsonl").write_bytes(b"")
    ids["empty.jsonl"] = None

    # wrong-type: usage as a string (line 2), content as a number (line 4)
    s, out = base("wrong-type.jsonl", "2026-01-25T09:00:00.000Z")
    s.prompt("Count the files.", dt=0.0, parent=None)
    s.assistant([txt("There are three files.")], usage(3, 7, 0, 0, 4900), stop="end_turn")
    out[1]["message"]["usage"] = "lots"
    s.prompt("And the lines?", dt=3.0)
    s.assistant([txt("placeholder")], usage(5, 9, 4900, 0, 40), stop="end_turn")
    out[3]["message"]["content"] = 42
    s.prompt("OK, thanks.", dt=3.0)
    s.assistant([txt("Done.")], usage(4, 3, 4940, 0, 30), stop="end_turn")
    save("wrong-type.jsonl", lines_of(out))

    misc = BROKEN_ROOT / "misc"
    misc.mkdir(parents=True, exist_ok=True)
    (misc / "notes.jsonl").write_text('{"hello":"world"}\n{"hello":"again","n":2}\n{"hello":"world","tags":["a","b"]}\n', encoding="utf-8")
    return ids


def main() -> None:
    # wipe only what this script owns
    for sub in ("projects",):
        shutil.rmtree(CC_ROOT / sub, ignore_errors=True)
    for sub in ("projects", "misc"):
        shutil.rmtree(BROKEN_ROOT / sub, ignore_errors=True)
    ids1, h1 = build_project1()
    ids2, h2 = build_project2()
    ids3, h3 = build_project3("/home/dev/projects/tidepool")
    build_broken()
    ids4, h4 = build_project4()
    ids5, h5 = build_project5()
    write_history(h1 + h2 + h3 + h4 + h5)
    write_json(HERE / "ids.json", {**ids1, **ids2, **ids3, **ids4, **ids5})


if __name__ == "__main__":
    main()
