"""Deterministic benchmark corpus: Claude Code and Codex CLI logs in their real on-disk layouts.

    python benchmarks/gen.py --out DIR --size 200 [--seed 1] [--big 2] [--json]
    python benchmarks/gen.py --out DIR --one-file-mb 700      # one big Claude transcript

A corpus is a fake home folder (``DIR/.claude/projects/<key>/...``, ``DIR/.codex/sessions/
YYYY/MM/DD/rollout-...jsonl``), so ``sessiongraph ingest DIR`` and ``HOME=DIR sessiongraph
ingest`` both read it. Record shapes follow sample_logs/ (and harness-log-formats.md); every id
comes from the seeded RNG, so one seed always gives the same bytes.

What it holds, per project (one cwd, sessions never overlap in time):
- Claude Code sessions in the four subagent eras: inline ``isSidechain`` children (2.0.20),
  flat ``agent-<id>.jsonl`` (2.0.64), nested ``<sessionId>/subagents/`` with ``agent_progress``
  (2.1.39) and nested with ``meta.json`` incl. depth-2 spawns (2.1.240, ``Agent`` tool); plus
  warm-ups and compaction runs, which are not spawns.
- Read/Write/Edit tool results carrying file bodies (mostly small, some 10 KB to 2 MB, in both
  the ``tool_result`` and ``toolUseResult``), Bash output, usage on every response.
- Codex rollouts launched from Claude Bash calls (``codex exec`` heuristic or with the printed
  session id, ``codex exec --json``, interactive ``codex "..."``) starting a second or two after
  the call, and standalone interactive Codex sessions, some launching ``claude -p``.
- A few shared files per project that sessions of both harnesses write and read again.
- ``--big N`` very large single-agent transcripts of ``--big-frac`` of the size each.

The ``Plan`` the generator returns is what a correct ingest must report: edges by kind and tier
(artifact edges simulated from the planted reads and writes with the artifact pass's rule),
sessions per harness, runs, and the inference counts it expects (reads of unwritten files,
warm-ups/compactions). Big bodies are built by repeating a pool of seeded chunks, and records
are streamed to disk one at a time.
"""

from __future__ import annotations

import argparse
import bisect
import json
import operator
import os
import random
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import orjson

BASE_MS = 1_767_600_000_000  # 2026-01-05T08:00:00Z
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
WORDS = (
    "user session token retry cache index parser render config handler client server queue batch "
    "record stream buffer schema widget lamp orbit sync fetch store commit branch patch build test "
    "route model value count limit offset cursor event signal worker task frame layout"
).split()
ADJECTIVES = "amber brisk quiet steady golden hollow lunar rapid silver tidal velvet woven".split()
NOUNS = "lamp orbit heron ferret lantern wick harbor quill ledger beacon comet anvil".split()
POOL = 256  # chunks in the text pool; bodies repeat them in seeded order

# Claude Code era per subagent layout (harness-log-formats.md 1.1).
LAYOUTS = ("inline", "flat", "nested", "meta")
LAYOUT_WEIGHTS = (15, 25, 25, 35)
VERSION = {"inline": "2.0.20", "flat": "2.0.64", "nested": "2.1.39", "meta": "2.1.240"}
CLAUDE_MODELS = ("claude-opus-4-5-20251101", "claude-sonnet-4-5-20250929")
SUBAGENT_MODEL = "claude-haiku-4-5-20251001"
CODEX_EXEC = ("codex_exec", "exec", "0.77.0", "gpt-5.1-codex-max")  # originator, source, version, model
CODEX_TUI = ("codex-tui", "cli", "0.125.0", "gpt-5.5")
# Commands that start nothing and touch no file the shell parser could name.
BASH_COMMANDS = (
    "npm test",
    "git status --short",
    "pytest -q",
    "make lint",
    "git log --oneline -20",
    "cargo build --release",
)
CODEX_COMMANDS = ("cargo test -q", "npm test --silent", "git status --short", "git diff --stat")
TIER_RANK = {"verified": 0, "heuristic": 1, "reported": 2}
_PREFIXES: list[str] = []  # "     1→" ... (Claude's `cat -n` line prefixes), grown on demand


# -- ids, times, text ------------------------------------------------------------------------


def uuid4(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def uuid7(rng: random.Random, ms: int) -> str:
    """Codex thread ids are UUID v7: the start time leads, so they sort by time."""
    t, h = f"{ms:012x}", f"{rng.getrandbits(80):020x}"
    return f"{t[:8]}-{t[8:]}-7{h[:3]}-{'89ab'[int(h[3], 16) & 3]}{h[4:7]}-{h[8:20]}"


def b62(rng: random.Random, n: int) -> str:
    return "".join(rng.choices(B62, k=n))


def hexid(rng: random.Random, n: int) -> str:
    return f"{rng.getrandbits(4 * n):0{n}x}"


def iso(ms: int) -> str:
    s, frac = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{frac:03d}Z"


def numbered(lines: list[str]) -> str:
    """Claude's Read output (`cat -n` style) without formatting each line in Python."""
    while len(_PREFIXES) < len(lines):
        _PREFIXES.append(f"{len(_PREFIXES) + 1:>6}\u2192")
    return "".join(map(operator.add, _PREFIXES, lines))


class Text:
    """Code-like text from a pool of seeded chunks: a 2 MB body is a few hundred list picks."""

    def __init__(self, rng: random.Random):
        self.chunks = [self._chunk(rng) for _ in range(POOL)]
        self.sizes = [sum(map(len, c)) for c in self.chunks]

    @staticmethod
    def _line(rng: random.Random) -> str:
        a, b, c = rng.choice(WORDS), rng.choice(WORDS), rng.choice(WORDS)
        ind, k = "    " * rng.randrange(3), rng.random()
        if k < 0.2:
            return f"{ind}def {a}_{b}(self, {c}, limit={rng.randrange(100)}):\n"
        if k < 0.5:
            return f"{ind}    {a}_{b} = self.{c}.get('{a}', {rng.randrange(1000)})\n"
        if k < 0.65:
            return f"{ind}# {a} {b} {c} before the {rng.choice(WORDS)} is ready\n"
        if k < 0.8:
            return f"{ind}    if {a} is None or {b} > {c}:\n"
        if k < 0.92:
            return f"{ind}        return {a}.{b}({c})\n"
        return "\n"

    def _chunk(self, rng: random.Random) -> list[str]:
        return [self._line(rng) for _ in range(rng.randint(20, 60))]

    def lines(self, rng: random.Random, nbytes: int) -> list[str]:
        out: list[str] = []
        size = 0
        while size < nbytes:
            k = rng.randrange(POOL)
            out += self.chunks[k]
            size += self.sizes[k]
        return out

    @staticmethod
    def sentence(rng: random.Random, n: int = 10) -> str:
        words = [rng.choice(WORDS) for _ in range(n)]
        return " ".join(words).capitalize()


# -- the plan: what a correct ingest must find -----------------------------------------------


@dataclass
class Plan:
    files: int = 0
    bytes: int = 0
    sessions: Counter = field(default_factory=Counter)  # harness -> sessions
    kinds: Counter = field(default_factory=Counter)  # "claude main", "claude subagent flat", ...
    spawns: int = 0  # every subagent is a verified spawn
    launches: Counter = field(default_factory=Counter)  # tier -> launch edges
    not_spawns: int = 0  # warm-ups and compaction runs
    launched: int = 0  # sessions that are launch children (not roots)
    workspaces: list[str] = field(default_factory=list)
    largest: tuple[int, str] = (0, "")  # the largest Claude main transcript (bytes, relative path)
    # (path, ts ms, session, op, tier): every planted read and write, for the artifact rule
    events: list[tuple[str, int, str, str, str]] = field(default_factory=list)

    def session(self, harness: str, kind: str) -> None:
        self.sessions[harness] += 1
        self.kinds[kind] += 1

    def event(self, path: str, ts: int, session: str, op: str, tier: str = "verified") -> None:
        self.events.append((path, ts, session, op, tier))

    def summary(self) -> dict:
        artifacts, counts = simulate_artifacts(self.events)
        edges = {"spawn": {"verified": self.spawns}, "launch": dict(self.launches), "artifact": artifacts}
        inference = {"spawn.not_a_spawn": self.not_spawns, **counts}
        return {
            "files": self.files,
            "bytes": self.bytes,
            "mb": round(self.bytes / 1e6, 1),
            "sessions_by_harness": dict(sorted(self.sessions.items())),
            "session_kinds": dict(sorted(self.kinds.items())),
            "edges_by_kind": {k: dict(sorted(v.items())) for k, v in edges.items() if sum(v.values())},
            "runs": sum(self.sessions.values()) - self.spawns - self.not_spawns - self.launched,
            "inference_counts": {k: v for k, v in sorted(inference.items()) if v},
            "workspaces": sorted(self.workspaces),
            "largest_transcript": self.largest[1],
        }


def simulate_artifacts(events: list[tuple]) -> tuple[dict[str, int], dict[str, int]]:
    """The artifact pass's rule, replayed on the planted events (inference/artifacts.py):
    every write is a version; a read pairs with the latest earlier write by another session;
    one edge per (path, version, reader) at the strongest tier, the weaker end's tier."""
    writes: dict[str, list[tuple[int, str, str]]] = defaultdict(list)
    reads: list[tuple[str, int, str, str]] = []
    for path, ts, session, op, tier in events:
        if op == "write":
            writes[path].append((ts, session, tier))
        else:
            reads.append((path, ts, session, tier))
    for w in writes.values():
        w.sort()
    best: dict[tuple[str, int, str], int] = {}
    unwritten = early = 0
    for path, ts, reader, tier in reads:
        ws = writes.get(path)
        if not ws:
            unwritten += 1
            continue
        i = bisect.bisect_left(ws, (ts,)) - 1  # writes strictly before the read
        while i >= 0 and ws[i][1] == reader:
            i -= 1
        if i < 0:
            early += 1
            continue
        rank = max(TIER_RANK[tier], TIER_RANK[ws[i][2]])  # the weaker end
        key = (path, i, reader)
        best[key] = min(best.get(key, 9), rank)
    names = {v: k for k, v in TIER_RANK.items()}
    tiers = Counter(names[r] for r in best.values())
    return dict(tiers), {"artifacts.read_unwritten": unwritten, "artifacts.read_before_write": early}


# -- writing files ---------------------------------------------------------------------------


class Sink:
    """One output file, written record by record (never the whole file in memory)."""

    def __init__(self, path: Path, mode: str = "wb"):
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.fh = open(path, mode, buffering=1 << 20)
        self.bytes = 0

    def put(self, rec: dict) -> None:
        data = orjson.dumps(rec, option=orjson.OPT_APPEND_NEWLINE)
        self.fh.write(data)
        self.bytes += len(data)

    def close(self) -> None:
        self.fh.close()


@dataclass
class Project:
    name: str
    cwd: str
    key: str  # Claude's project folder: the cwd with every non-alphanumeric character as '-'
    shared: list[str]  # written and read by several sessions
    private: list[str]  # only ever read
    clock: int  # ms; the next record's time (sessions of one project never overlap)
    written: set[str] = field(default_factory=set)


class Gen:
    """Generation state: the RNG, the text pool, the output root and the plan."""

    def __init__(self, out: Path, seed: int, body_cap: int):
        self.rng = random.Random(seed)
        self.text = Text(random.Random(seed ^ 0x5EED))
        self.out = out
        self.cap = body_cap
        self.plan = Plan()

    def sink(self, rel: str) -> Sink:
        return Sink(self.out / rel)

    def close(self, sink: Sink, main_claude: bool = False) -> None:
        sink.close()
        self.plan.files += 1
        self.plan.bytes += sink.bytes
        if main_claude and sink.bytes > self.plan.largest[0]:
            self.plan.largest = (sink.bytes, sink.path.relative_to(self.out).as_posix())

    def write_json(self, rel: str, obj: dict) -> None:
        data = orjson.dumps(obj)
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        self.plan.files += 1
        self.plan.bytes += len(data)

    def body_size(self) -> int:
        """Most file bodies are small; about one in four is 10-100 KB, one in fourteen larger."""
        rng, k = self.rng, self.rng.random()
        if k < 0.65:
            return rng.randint(300, 4000)
        if k < 0.93:
            return min(self.cap, rng.randint(10_000, 100_000))
        return min(self.cap, int(100_000 * max(1.0, self.cap / 100_000) ** rng.random()))

    def project(self, i: int) -> Project:
        rng = self.rng
        name = f"{rng.choice(ADJECTIVES)}-{rng.choice(NOUNS)}-{i:02d}"
        cwd = f"/home/dev/projects/{name}"
        key = "".join(c if c.isalnum() else "-" for c in cwd)
        pkg = name.split("-")[1]
        shared = [f"src/{pkg}/{w}.py" for w in rng.sample(WORDS, 6)] + ["docs/PLAN.md", "CHANGELOG.md"]
        private = ["README.md", "pyproject.toml", *(f"tests/test_{w}.py" for w in rng.sample(WORDS, 4))]
        self.plan.workspaces.append(name)
        start = BASE_MS + rng.randrange(0, 12 * 3600_000)
        return Project(name, cwd, key, shared, private, start)


# -- Claude Code -----------------------------------------------------------------------------


@dataclass
class Call:
    id: str
    uuid: str  # the assistant record holding the tool_use


class Claude:
    """One Claude Code record stream: a transcript, a subagent file or an inline sidechain."""

    def __init__(
        self,
        g: Gen,
        proj: Project,
        sink: Sink,
        sid: str,
        layout: str,
        *,
        agent_id: str | None = None,
        sidechain: bool = False,
        entrypoint: str | None = None,
        model: str | None = None,
    ):
        self.g, self.proj, self.sink, self.sid, self.layout = g, proj, sink, sid, layout
        self.version = VERSION[layout]
        self.new = self.version.startswith("2.1")
        self.agent_id = agent_id
        self.sidechain = sidechain
        self.inline = sidechain and agent_id is None
        self.session_id = f"claude-code:{sid}" + (f"/{agent_id}" if agent_id else "")
        self.model = model or g.rng.choice(CLAUDE_MODELS)
        self.slug = None if layout == "inline" else f"{g.rng.choice(ADJECTIVES)}-{b62(g.rng, 6).lower()}"
        self.base = {
            "isSidechain": sidechain,
            "userType": "external",
            **({"entrypoint": entrypoint} if entrypoint else {}),
            "cwd": proj.cwd,
            "sessionId": sid,
            "version": self.version,
            "gitBranch": "main",
            **({"agentId": agent_id} if agent_id else {}),
        }
        self.prev: str | None = None
        self.context = g.rng.randint(8000, 16000)  # tokens in context: cache reads grow with it
        self.calls = 0

    # records

    def tick(self, lo: int, hi: int) -> int:
        self.proj.clock += self.g.rng.randint(lo, hi)
        return self.proj.clock

    def _put(self, rtype: str, fields: dict, tail: dict | None = None, uuid: str | None = None) -> str:
        u = uuid or uuid4(self.g.rng)
        if self.inline and self.prev is None:
            self.session_id = f"claude-code:{self.sid}/{u}"  # an inline child is named by its root
        rec = {"parentUuid": self.prev, **self.base}
        if self.slug and self.prev is not None:
            rec["slug"] = self.slug
        rec["type"] = rtype
        rec.update(fields)
        rec["uuid"] = u
        rec["timestamp"] = iso(self.proj.clock)
        if tail:
            rec.update(tail)
        self.sink.put(rec)
        self.prev = u
        return u

    def flat(self, rec: dict) -> None:
        self.sink.put(rec)

    def prompt(self, text: str, uuid: str | None = None, **extra) -> None:
        self.tick(2_000, 90_000)
        fields = {"message": {"role": "user", "content": text}, **extra}
        if self.new and not self.sidechain:
            fields["promptId"] = uuid4(self.g.rng)
        self._put("user", fields, uuid=uuid)

    def usage(self, out: int) -> dict:
        rng = self.g.rng
        created = rng.randint(50, 3000)
        usage = {
            "input_tokens": rng.randint(3, 12),
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": self.context,
            "cache_creation": {
                "ephemeral_5m_input_tokens": 0 if self.new else created,
                "ephemeral_1h_input_tokens": created if self.new else 0,
            },
            "output_tokens": out,
            "service_tier": "standard",
        }
        self.context += created + out
        return usage

    def _assistant(self, blocks: list[dict], stop: str | None) -> str:
        """One API response, logged once per content block with the same id and usage."""
        rng = self.g.rng
        self.tick(800, 12_000)
        msg_id, req = f"msg_01{b62(rng, 22)}", f"req_011C{b62(rng, 20)}"
        usage = self.usage(rng.randint(20, 900))
        u = ""
        for i, block in enumerate(blocks):
            last = i == len(blocks) - 1
            message = {
                "model": self.model,
                "id": msg_id,
                "type": "message",
                "role": "assistant",
                "content": [block],
                "stop_reason": stop if last else None,
                "stop_sequence": None,
                "usage": usage,
            }
            u = self._put("assistant", {"message": message, "requestId": req})
        return u

    def say(self, text: str) -> None:
        self._assistant([{"type": "text", "text": text}], "end_turn")

    def call(self, name: str, inp: dict, note: str | None = None) -> Call:
        rng = self.g.rng
        self.calls += 1
        block = {"type": "tool_use", "id": f"toolu_01{b62(rng, 22)}", "name": name, "input": inp}
        if self.version == "2.1.240":
            block["caller"] = {"type": "direct"}
        blocks = ([{"type": "text", "text": note}] if note else []) + [block]
        u = self._assistant(blocks, "tool_use")
        return Call(block["id"], u)

    def result(self, call: Call, content, sidecar=None, lo: int = 30, hi: int = 1500) -> int:
        self.tick(lo, hi)
        block = {"tool_use_id": call.id, "type": "tool_result", "content": content, "is_error": False}
        tail = {}
        if sidecar is not None:
            tail["toolUseResult"] = sidecar
        if self.new:
            tail["sourceToolAssistantUUID"] = call.uuid
        self._put("user", {"message": {"role": "user", "content": [block]}}, tail)
        return self.proj.clock

    def progress(self, call: Call, agent_id: str, prompt: str) -> None:
        """2.1.39-era parents log the child's first message as agent_progress."""
        self.tick(1, 20)
        msg = {
            "type": "user",
            "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
            "uuid": uuid4(self.g.rng),
            "timestamp": iso(self.proj.clock),
        }
        data = {
            "message": msg,
            "normalizedMessages": [],
            "type": "agent_progress",
            "prompt": prompt,
            "agentId": agent_id,
        }
        self._put(
            "progress", {"data": data, "toolUseID": f"agent_msg_{b62(self.g.rng, 24)}", "parentToolUseID": call.id}
        )


# Claude tool steps: each writes one call and its result, and records the file events.


def read_file(g: Gen, w: Claude, rel: str) -> None:
    path = f"{w.proj.cwd}/{rel}"
    call = w.call("Read", {"file_path": path})
    lines = g.text.lines(g.rng, g.body_size())
    file = {
        "filePath": path,
        "content": "".join(lines),
        "numLines": len(lines),
        "startLine": 1,
        "totalLines": len(lines),
    }
    ts = w.result(call, numbered(lines), {"type": "text", "file": file})
    g.plan.event(path, ts, w.session_id, "read")


def write_file(g: Gen, w: Claude, rel: str) -> None:
    path = f"{w.proj.cwd}/{rel}"
    content = "".join(g.text.lines(g.rng, g.body_size()))
    call = w.call("Write", {"file_path": path, "content": content}, note=f"Writing {rel}.")
    update = path in w.proj.written
    original = "".join(g.text.lines(g.rng, 2000)) if update else None
    sidecar = {
        "type": "update" if update else "create",
        "filePath": path,
        "content": content,
        "structuredPatch": [],
        "originalFile": original,
    }
    text = f"The file {path} has been updated." if update else f"File created successfully at: {path}"
    ts = w.result(call, text, sidecar)
    w.proj.written.add(path)
    g.plan.event(path, ts, w.session_id, "write")


def edit_file(g: Gen, w: Claude, rel: str) -> None:
    path = f"{w.proj.cwd}/{rel}"
    lines = g.text.lines(g.rng, g.body_size())
    k = g.rng.randrange(len(lines))
    old = lines[k].rstrip("\n") or "pass"
    new = f"{old}  # {Text.sentence(g.rng, 4).lower()}"
    call = w.call("Edit", {"file_path": path, "old_string": old, "new_string": new, "replace_all": False})
    snippet = lines[max(0, k - 3) : k + 4]
    content = (
        f"The file {path} has been updated. Here's the result of running `cat -n` on a snippet of "
        f"the edited file:\n{numbered(snippet)}"
    )
    patch = [{"oldStart": k + 1, "oldLines": 1, "newStart": k + 1, "newLines": 1, "lines": [f"-{old}", f"+{new}"]}]
    sidecar = {
        "filePath": path,
        "oldString": old,
        "newString": new,
        "originalFile": "".join(lines),
        "structuredPatch": patch,
        "userModified": False,
        "replaceAll": False,
    }
    ts = w.result(call, content, sidecar)
    w.proj.written.add(path)
    g.plan.event(path, ts, w.session_id, "write")


def bash(g: Gen, w: Claude) -> None:
    cmd = g.rng.choice(BASH_COMMANDS)
    call = w.call("Bash", {"command": cmd, "description": f"Run {cmd.split()[0]}"})
    size = g.rng.choice((200, 2000, 20_000)) if g.rng.random() < 0.9 else min(g.cap, 200_000)
    out = "".join(g.text.lines(g.rng, size))
    w.result(call, out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}, 500, 40_000)


def todo(g: Gen, w: Claude) -> None:
    todos = [
        {"content": Text.sentence(g.rng, 5), "status": "pending", "activeForm": Text.sentence(g.rng, 4)}
        for _ in range(g.rng.randint(2, 5))
    ]
    call = w.call("TodoWrite", {"todos": todos})
    w.result(
        call,
        "Todos have been modified successfully. Ensure that you continue to use the todo list.",
        {"oldTodos": [], "newTodos": todos},
    )


def spawn(g: Gen, w: Claude, depth: int = 1) -> None:
    """A Task/Agent call and its subagent, in the layout of the parent's era."""
    rng, proj, layout = g.rng, w.proj, w.layout
    prompt = f"{Text.sentence(rng, 14)} in {proj.cwd}"
    desc, stype = Text.sentence(rng, 3), rng.choice(("general-purpose", "Explore", "Plan"))
    call = w.call(
        "Agent" if layout == "meta" else "Task", {"description": desc, "prompt": prompt, "subagent_type": stype}
    )
    child = open_child(
        g, w, call, {"agentType": stype, "description": desc, "toolUseId": call.id, "spawnDepth": depth}, prompt
    )
    aid = child.agent_id
    child_body(g, child, prompt, depth)
    if not child.inline:
        g.close(child.sink)
    g.plan.session("claude-code", f"claude subagent {layout}" + (" depth2" if depth > 1 else ""))
    g.plan.spawns += 1
    summary = [{"type": "text", "text": Text.sentence(rng, 20)}]
    content = summary + (
        [{"type": "text", "text": f"agentId: {aid} (for resuming to continue this agent's work if needed)"}]
        if aid
        else []
    )
    sidecar = None
    if not w.sidechain:  # nested results in a subagent's own file carry only the text tail
        sidecar = {
            "status": "completed",
            "prompt": prompt,
            **({"agentId": aid} if aid else {}),
            "content": summary,
            "totalDurationMs": rng.randint(3000, 90_000),
            "totalTokens": rng.randint(5000, 60_000),
            "totalToolUseCount": child.calls,
            "usage": child.usage(rng.randint(40, 400)),
        }
    w.result(call, content, sidecar, 50, 900)


def open_child(g: Gen, w: Claude, call: Call, meta: dict, prompt: str) -> Claude:
    """The subagent's record stream where its era keeps it: inline in the parent's file, a flat
    ``agent-<id>.jsonl``, or ``<sessionId>/subagents/`` (with ``agent_progress`` in the parent
    for 2.1.39, a ``meta.json`` sidecar for 2.1.240)."""
    rng, proj, layout = g.rng, w.proj, w.layout
    if layout == "inline":
        child = Claude(g, proj, w.sink, w.sid, layout, sidechain=True, model=SUBAGENT_MODEL)
    else:
        aid = hexid(rng, 8) if layout == "flat" else "a" + hexid(rng, 6 if layout == "nested" else 16)
        folder = f".claude/projects/{proj.key}" + ("" if layout == "flat" else f"/{w.sid}/subagents")
        if layout == "nested":
            w.progress(call, aid, prompt)
        if layout == "meta":
            if meta["spawnDepth"] > 1:
                meta["parentAgentId"] = w.agent_id
            g.write_json(f"{folder}/agent-{aid}.meta.json", meta)
        child = Claude(
            g,
            proj,
            g.sink(f"{folder}/agent-{aid}.jsonl"),
            w.sid,
            layout,
            agent_id=aid,
            sidechain=True,
            model=SUBAGENT_MODEL,
        )
    child.slug = w.slug  # subagent records carry the parent's slug
    return child


def child_body(g: Gen, child: Claude, prompt: str, depth: int) -> None:
    rng, proj = g.rng, child.proj
    child.prompt(prompt)
    for _ in range(rng.randint(1, 4)):
        k = rng.random()
        if k < 0.45:
            read_file(g, child, rng.choice(proj.shared))
        elif k < 0.65:
            read_file(g, child, rng.choice(proj.private))
        elif k < 0.8:
            (write_file if rng.random() < 0.5 else edit_file)(g, child, rng.choice(proj.shared))
        else:
            bash(g, child)
    if child.layout == "meta" and depth == 1 and rng.random() < 0.25:
        spawn(g, child, depth=2)
    child.say(Text.sentence(rng, 25))


def warmup(g: Gen, w: Claude) -> None:
    """2.0.x pre-warm sidechains: child-shaped, never spawned by a call."""
    rng = g.rng
    if w.layout == "inline":
        c = Claude(g, w.proj, w.sink, w.sid, "inline", sidechain=True, model=SUBAGENT_MODEL)
    else:
        aid = hexid(rng, 8)
        rel = f".claude/projects/{w.proj.key}/agent-{aid}.jsonl"
        c = Claude(g, w.proj, g.sink(rel), w.sid, w.layout, agent_id=aid, sidechain=True, model=SUBAGENT_MODEL)
    c.prompt("Warmup")
    c.say(f"Ready. I can search and read files under {w.proj.cwd}; tell me what to look for.")
    if not c.inline:
        g.close(c.sink)
    g.plan.session("claude-code", f"claude warmup {w.layout}")
    g.plan.not_spawns += 1


def compaction(g: Gen, w: Claude) -> None:
    """An auto-compaction run (``agent-acompact-*``): spend, not a spawn."""
    aid = f"acompact-{hexid(g.rng, 6)}"
    rel = f".claude/projects/{w.proj.key}/{w.sid}/subagents/agent-{aid}.jsonl"
    c = Claude(g, w.proj, g.sink(rel), w.sid, w.layout, agent_id=aid, sidechain=True, model=w.model)
    c.context = w.context
    c.prompt(
        "Your task is to create a detailed summary of the conversation so far, paying close attention "
        "to the user's explicit requests and your previous actions."
    )
    c.say("".join(g.text.lines(g.rng, g.rng.randint(2000, 8000))))
    g.close(c.sink)
    g.plan.session("claude-code", "claude compaction")
    g.plan.not_spawns += 1


LAUNCH_VARIANTS = ("plain", "banner", "json", "cd", "interactive")


def launch_codex(g: Gen, w: Claude, variant: str | None = None) -> None:
    """A Bash call running Codex; the rollout starts a moment after the call and ends before it."""
    rng, proj = g.rng, w.proj
    prompt = Text.sentence(rng, 8).lower()
    variant = variant or rng.choice(LAUNCH_VARIANTS)
    cmd = {
        "plain": f'codex exec "{prompt}"',
        "banner": f'codex exec "{prompt}" 2>&1',
        "json": f'codex exec --json "{prompt}"',
        "cd": f'codex exec -C {proj.cwd} "{prompt}"',
        "interactive": f'codex "{prompt}"',
    }[variant]
    call = w.call("Bash", {"command": cmd, "description": "Ask codex", "timeout": 600_000})
    w.tick(300, 3000)
    tid, final = codex_session(g, proj, CODEX_TUI if variant == "interactive" else CODEX_EXEC, prompt, launched=True)
    if variant == "banner":
        out = (
            f"OpenAI Codex v{CODEX_EXEC[2]} (research preview)\n--------\nworkdir: {proj.cwd}\nmodel: "
            f"{CODEX_EXEC[3]}\nprovider: openai\napproval: never\nsandbox: read-only\nsession id: {tid}\n"
            f"--------\nuser\n{prompt}\n\ncodex\n{final}\ntokens used\n{rng.randint(2000, 90_000):,}\n"
        )
    elif variant == "json":
        out = "\n".join(
            orjson.dumps(x).decode()
            for x in (
                {"type": "thread.started", "thread_id": tid},
                {"type": "turn.started"},
                {"type": "item.completed", "item": {"id": "item_0", "type": "agent_message", "text": final}},
                {
                    "type": "turn.completed",
                    "usage": {
                        "input_tokens": rng.randint(5000, 50_000),
                        "cached_input_tokens": 0,
                        "output_tokens": rng.randint(50, 900),
                    },
                },
            )
        )
    else:
        out = final
    g.plan.launches["verified" if variant in ("banner", "json") else "heuristic"] += 1
    w.result(call, out, {"stdout": out, "stderr": "", "interrupted": False, "isImage": False}, 200, 2000)
    # The launch pass allows a child to start up to 5 s after its call ended: leave more than
    # that before the next call, so that a second launch's child is never a candidate of this one.
    w.tick(6000, 20_000)


STEPS = {"read_shared": 22, "read_private": 12, "write": 8, "edit": 8, "bash": 16, "todo": 4, "spawn": 7, "launch": 7}
BIG_STEPS = {"read_shared": 30, "read_private": 20, "write": 12, "edit": 12, "bash": 20}


def step(g: Gen, w: Claude, kind: str) -> None:
    """One tool step; ``launch:<variant>`` picks the launch variant."""
    rng, proj = g.rng, w.proj
    if kind == "read_shared":
        read_file(g, w, rng.choice(proj.shared))
    elif kind == "read_private":
        read_file(g, w, rng.choice(proj.private))
    elif kind == "write":
        write_file(g, w, rng.choice(proj.shared))
    elif kind == "edit":
        edit_file(g, w, rng.choice(proj.shared))
    elif kind == "bash":
        bash(g, w)
    elif kind == "todo":
        todo(g, w)
    elif kind == "spawn":
        spawn(g, w)
    else:
        launch_codex(g, w, kind.partition(":")[2] or None)


def claude_session(
    g: Gen,
    proj: Project,
    layout: str,
    *,
    budget: int = 0,
    prompt: str | None = None,
    entrypoint: str | None = None,
    first: tuple[str, ...] = (),
    extras: bool = False,
    turns: int = 0,
) -> str:
    """One main transcript with its children. ``budget``: write turns until the file has that
    many bytes, with no children (a big single-agent session). ``first``: steps the first turn
    starts with; ``extras``: always add the era's warm-up or compaction run; ``turns``: how many
    prompts (default: random). Returns the sessionId."""
    rng = g.rng
    sid = uuid4(rng)
    rel = f".claude/projects/{proj.key}/{sid}.jsonl"
    w = Claude(g, proj, g.sink(rel), sid, layout, entrypoint=entrypoint or ("cli" if layout == "meta" else None))
    root = uuid4(rng)
    if layout in ("inline", "flat") and rng.random() < 0.3:
        w.flat({"type": "summary", "summary": Text.sentence(rng, 5), "leafUuid": uuid4(rng)})
    w.flat(
        {
            "type": "file-history-snapshot",
            "messageId": root,
            "snapshot": {"messageId": root, "trackedFileBackups": {}, "timestamp": iso(proj.clock)},
            "isSnapshotUpdate": False,
        }
    )
    sdk = entrypoint == "sdk-cli"
    if layout in ("inline", "flat") and not budget and not sdk and (extras or rng.random() < 0.3):
        warmup(g, w)
    turns = 1 if sdk else (10**9 if budget else turns or rng.randint(3, 12))
    weights = BIG_STEPS if budget else STEPS
    kinds, odds = list(weights), list(weights.values())
    children = 0
    for t in range(turns):
        extra = {"promptSource": "sdk"} if sdk and t == 0 else {}
        w.prompt(prompt if t == 0 and prompt else Text.sentence(rng, 16), uuid=root if t == 0 else None, **extra)
        n = rng.randint(1, 3) if sdk else rng.randint(1, 5)
        for kind in (first if t == 0 else ()) + tuple(rng.choices(kinds, odds, k=n)):
            if kind.startswith(("spawn", "launch")):
                if sdk or children >= 4 + len(first):
                    kind = "read_shared"
                children += 1
            step(g, w, kind)
        w.say(Text.sentence(rng, 30))
        if budget and w.sink.bytes >= budget:
            break
    if layout == "nested" and not budget and (extras or rng.random() < 0.15):
        compaction(g, w)
    if layout == "meta":
        w.flat({"type": "ai-title", "aiTitle": Text.sentence(rng, 4), "sessionId": sid})
        w.flat({"type": "last-prompt", "lastPrompt": Text.sentence(rng, 8), "leafUuid": w.prev, "sessionId": sid})
    g.close(w.sink, main_claude=True)
    g.plan.session("claude-code", "claude sdk-cli" if sdk else f"claude main {layout}")
    return sid


# -- Codex CLI -------------------------------------------------------------------------------


class Codex:
    """One rollout file: envelope lines, a turn, tool calls with their end events, token counts."""

    def __init__(self, g: Gen, proj: Project, kind: tuple[str, str, str, str]):
        self.g, self.proj = g, proj
        self.originator, self.source, self.version, self.model = kind
        start = proj.clock
        self.tid = uuid7(g.rng, start)
        self.session_id = f"codex:{self.tid}"
        day = time.strftime("%Y/%m/%d", time.gmtime(start // 1000))
        stamp = time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(start // 1000))
        # UTC in the name and folders, as on a machine whose local time is UTC
        self.sink = g.sink(f".codex/sessions/{day}/rollout-{stamp}-{self.tid}.jsonl")
        self.totals = [0, 0, 0, 0]  # cumulative input, cached, output, reasoning tokens
        self.turn_id = ""
        self.tick(20, 200)
        self.put(
            "session_meta",
            {
                "id": self.tid,
                "timestamp": iso(start),
                "cwd": proj.cwd,
                "originator": self.originator,
                "cli_version": self.version,
                "source": self.source,
                "model_provider": "openai",
                "base_instructions": {"text": "You are Codex, a coding agent working in the user's repository."},
                "git": {
                    "commit_hash": hexid(g.rng, 40),
                    "branch": "main",
                    "repository_url": f"git@github.com:dev/{proj.name}.git",
                },
            },
        )

    def tick(self, lo: int, hi: int) -> int:
        self.proj.clock += self.g.rng.randint(lo, hi)
        return self.proj.clock

    def put(self, kind: str, payload: dict) -> None:
        self.sink.put({"timestamp": iso(self.proj.clock), "type": kind, "payload": payload})

    def item(self, payload: dict) -> None:
        self.tick(1, 5)
        self.put("response_item", payload)

    def event(self, payload: dict) -> None:
        self.tick(1, 5)
        self.put("event_msg", payload)

    def turn(self, prompt: str) -> None:
        self.turn_id = uuid7(self.g.rng, self.proj.clock)
        self.event({"type": "task_started", "turn_id": self.turn_id, "model_context_window": 272000})
        self.item(
            {
                "type": "message",
                "role": "developer",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<permissions instructions>\nsandbox_mode is workspace-write; approval_policy is never.\n"
                        "</permissions instructions>",
                    }
                ],
            }
        )
        self.item(
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": f"<environment_context>\n  <cwd>{self.proj.cwd}</cwd>\n  <shell>bash</shell>\n</environment_context>",
                    }
                ],
            }
        )
        ctx = {
            "turn_id": self.turn_id,
            "cwd": self.proj.cwd,
            "approval_policy": "never",
            "sandbox_policy": {"type": "workspace-write", "network_access": False},
            "model": self.model,
            "effort": "medium",
            "summary": "auto",
        }
        if self.source == "cli":
            ctx["timezone"] = "Etc/UTC"
        self.tick(1, 5)
        self.put("turn_context", ctx)
        self.item({"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]})
        self.event({"type": "user_message", "message": prompt, "images": []})

    def tokens(self) -> None:
        rng = self.g.rng
        last = [rng.randint(5000, 30_000), 0, rng.randint(30, 900), rng.randint(0, 300)]
        last[1] = rng.randint(0, last[0])
        self.totals = [a + b for a, b in zip(self.totals, last, strict=True)]

        def usage(v: list[int]) -> dict:
            return {
                "input_tokens": v[0],
                "cached_input_tokens": v[1],
                "output_tokens": v[2],
                "reasoning_output_tokens": v[3],
                "total_tokens": v[0] + v[2],
            }

        self.event(
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": usage(self.totals),
                    "last_token_usage": usage(last),
                    "model_context_window": 272000,
                },
                "rate_limits": None,
            }
        )

    def reasoning(self) -> None:
        self.tick(500, 8000)
        self.put(
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": f"**{Text.sentence(self.g.rng, 4)}**"}],
                "content": None,
                "encrypted_content": "gAAAAAB" + b62(self.g.rng, 120),
            },
        )

    def exec(self, cmd: str, output: str, parsed: list[dict], lo: int = 30, hi: int = 3000) -> tuple[str, int]:
        """A unified-exec call, its end event and its output; returns (call id, end time)."""
        rng = self.g.rng
        call_id = f"call_{b62(rng, 24)}"
        args = {"cmd": cmd, "workdir": self.proj.cwd, "yield_time_ms": 10000, "max_output_tokens": 10000}
        self.item(
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": orjson.dumps(args).decode(),
                "call_id": call_id,
            }
        )
        start = self.proj.clock
        end = self.tick(lo, hi)
        dur = end - start
        self.put(
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": call_id,
                "process_id": str(rng.randint(1000, 99999)),
                "turn_id": self.turn_id,
                "command": ["/bin/bash", "-lc", cmd],
                "cwd": self.proj.cwd,
                "parsed_cmd": parsed,
                "source": "unified_exec_startup",
                "stdout": "",
                "stderr": "",
                "aggregated_output": output,
                "exit_code": 0,
                "duration": {"secs": dur // 1000, "nanos": dur % 1000 * 1_000_000},
                "formatted_output": "",
                "status": "completed",
            },
        )
        self.item(
            {
                "type": "function_call_output",
                "call_id": call_id,
                "output": f"Chunk ID: {hexid(rng, 6)}\nWall time: {dur / 1000:.4f} seconds\nProcess exited with code 0\n"
                f"Original token count: {len(output) // 4}\nOutput:\n{output}",
            }
        )
        return call_id, end

    def read(self, rel: str) -> None:
        """``sed -n`` of a file: Codex's own parsed_cmd (reported) and our parse (heuristic)."""
        cmd = f"sed -n '1,400p' {rel}"
        body = "".join(self.g.text.lines(self.g.rng, self.g.body_size()))
        parsed = [{"type": "read", "cmd": cmd, "name": rel.rsplit("/", 1)[-1], "path": rel}]
        _, end = self.exec(cmd, body, parsed)
        self.g.plan.event(f"{self.proj.cwd}/{rel}", end, self.session_id, "read", "heuristic")

    def patch(self, rel: str) -> None:
        rng, path = self.g.rng, f"{self.proj.cwd}/{rel}"
        call_id = f"call_{b62(rng, 24)}"
        lines = self.g.text.lines(rng, rng.choice((300, 3000, 30_000)))
        diff = "@@\n" + "".join("+" + ln for ln in lines)
        self.item(
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": call_id,
                "name": "apply_patch",
                "input": f"*** Begin Patch\n*** Update File: {rel}\n{diff}*** End Patch",
            }
        )
        end = self.tick(50, 600)
        self.put(
            "event_msg",
            {
                "type": "patch_apply_end",
                "call_id": call_id,
                "turn_id": self.turn_id,
                "stdout": f"Success. Updated the following files:\nM {rel}\n",
                "stderr": "",
                "success": True,
                "changes": {path: {"type": "update", "unified_diff": diff, "move_path": None}},
                "status": "completed",
            },
        )
        self.item(
            {
                "type": "custom_tool_call_output",
                "call_id": call_id,
                "output": orjson.dumps(
                    {
                        "output": f"Success. Updated the following files:\nM {rel}\n",
                        "metadata": {"exit_code": 0, "duration_seconds": 0.1},
                    }
                ).decode(),
            }
        )
        self.proj.written.add(path)
        self.g.plan.event(path, end, self.session_id, "write")

    def launch_claude(self) -> None:
        """``claude -p ... --output-format json``: the child's session_id lands in the output."""
        rng, proj = self.g.rng, self.proj
        prompt = Text.sentence(rng, 8).lower()
        cmd = f'claude -p "{prompt}" --output-format json'
        call_id = f"call_{b62(rng, 24)}"
        args = {"cmd": cmd, "workdir": proj.cwd, "yield_time_ms": 30000, "max_output_tokens": 10000}
        self.item(
            {
                "type": "function_call",
                "name": "exec_command",
                "arguments": orjson.dumps(args).decode(),
                "call_id": call_id,
            }
        )
        start = proj.clock
        self.tick(300, 2000)
        sid = claude_session(self.g, proj, "meta", prompt=prompt, entrypoint="sdk-cli")
        self.g.plan.launched += 1
        self.g.plan.launches["verified"] += 1
        out = (
            orjson.dumps(
                {
                    "type": "result",
                    "subtype": "success",
                    "is_error": False,
                    "duration_ms": proj.clock - start,
                    "num_turns": 2,
                    "result": Text.sentence(rng, 12),
                    "session_id": sid,
                    "total_cost_usd": round(rng.random() / 10, 4),
                }
            ).decode()
            + "\n"
        )
        end = self.tick(200, 2000)
        dur = end - start
        self.put(
            "event_msg",
            {
                "type": "exec_command_end",
                "call_id": call_id,
                "process_id": str(rng.randint(1000, 99999)),
                "turn_id": self.turn_id,
                "command": ["/bin/bash", "-lc", cmd],
                "cwd": proj.cwd,
                "parsed_cmd": [{"type": "unknown", "cmd": cmd}],
                "source": "unified_exec_startup",
                "stdout": "",
                "stderr": "",
                "aggregated_output": out,
                "exit_code": 0,
                "duration": {"secs": dur // 1000, "nanos": dur % 1000 * 1_000_000},
                "formatted_output": "",
                "status": "completed",
            },
        )
        self.item(
            {
                "type": "function_call_output",
                "call_id": call_id,
                "output": f"Chunk ID: {hexid(rng, 6)}\nWall time: {dur / 1000:.4f} seconds\nProcess exited with code 0\n"
                f"Output:\n{out}",
            }
        )

    def finish(self, final: str) -> None:
        self.tick(500, 5000)
        self.event({"type": "agent_message", "message": final})
        self.item({"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": final}]})
        self.tokens()
        self.event({"type": "task_complete", "turn_id": self.turn_id, "last_agent_message": final})


def codex_session(
    g: Gen, proj: Project, kind: tuple, prompt: str, *, launched: bool, launch_first: bool = False
) -> tuple[str, str]:
    """A rollout: one turn per prompt, shell reads, patches and tests; a standalone interactive
    session may launch ``claude -p`` (``launch_first``: as its first step). Returns (thread id,
    final message)."""
    rng = g.rng
    c = Codex(g, proj, kind)
    turns = 1 if launched else rng.randint(1, 4)
    final = ""
    launches = 0
    for t in range(turns):
        c.turn(prompt if t == 0 else Text.sentence(rng, 10).lower())
        for i in range(rng.randint(2, 6)):
            c.reasoning()
            k = 0.75 if launch_first and t == i == 0 else rng.random()
            if k < 0.35:
                c.read(rng.choice(proj.shared))
            elif k < 0.5:
                c.read(rng.choice(proj.private))
            elif k < 0.7:
                c.patch(rng.choice(proj.shared))
            elif not launched and launches == 0 and k < 0.8:
                c.launch_claude()
                launches += 1
            else:
                cmd = rng.choice(CODEX_COMMANDS)
                c.exec(
                    cmd,
                    "".join(g.text.lines(rng, rng.choice((100, 1000, 8000)))),
                    [{"type": "unknown", "cmd": cmd}],
                    500,
                    30_000,
                )
            c.tokens()
        final = Text.sentence(rng, 18)
        c.finish(final)
        if t < turns - 1:
            c.tick(10_000, 300_000)
    g.close(c.sink)
    g.plan.session("codex", f"codex {c.source}" + (" launched" if launched else ""))
    g.plan.launched += launched
    return c.tid, final


# -- the corpus ------------------------------------------------------------------------------

# The first episodes of every corpus: each subagent era with a spawn and a launch of each variant,
# the era's warm-up or compaction run, and a Codex session launching `claude -p`, so that even a
# 1 MB corpus holds every shape.
TOUR = (
    ("inline", ("spawn", "launch:plain")),
    ("flat", ("spawn", "launch:banner")),
    ("nested", ("spawn", "launch:json")),
    ("meta", ("spawn", "launch:interactive", "launch:cd")),
)


def tour(g: Gen, projects: list[Project]) -> None:
    for i, (layout, first) in enumerate(TOUR):
        proj = projects[i % len(projects)]
        claude_session(g, proj, layout, first=first, extras=True, turns=2)
        proj.clock += g.rng.randint(5 * 60_000, 3600_000)
    codex_session(g, projects[0], CODEX_TUI, Text.sentence(g.rng, 12).lower(), launched=False, launch_first=True)
    projects[0].clock += 5 * 60_000


def episode(g: Gen, proj: Project) -> None:
    """One top-level session with everything it starts, then a pause."""
    if g.rng.random() < 0.8:
        claude_session(g, proj, g.rng.choices(LAYOUTS, LAYOUT_WEIGHTS)[0])
    else:
        codex_session(g, proj, CODEX_TUI, Text.sentence(g.rng, 12).lower(), launched=False)
    proj.clock += g.rng.randint(5 * 60_000, 36 * 3600_000)


def generate(out: str | os.PathLike, size_mb: float, *, seed: int = 1, big: int = 2, big_frac: float = 0.05) -> dict:
    """Write a corpus of about ``size_mb`` MB (10^6 bytes) under ``out``; returns the plan."""
    t0 = time.perf_counter()
    target = int(size_mb * 1e6)
    g = Gen(Path(out), seed, body_cap=max(10_000, min(2_000_000, target // 40)))
    projects = [g.project(i) for i in range(max(2, min(48, round(size_mb / 8))))]
    big_each = int(target * big_frac)
    tour(g, projects)
    while g.plan.bytes < target - big * big_each:
        episode(g, g.rng.choice(projects))
    for _ in range(big):
        proj = g.rng.choice(projects)
        claude_session(g, proj, "meta", budget=big_each)
        proj.clock += 3600_000
    return _finish(g, t0)


def one_file(out: str | os.PathLike, size_mb: float, *, seed: int = 1) -> dict:
    """A single Claude transcript of about ``size_mb`` MB (a long single-agent session)."""
    t0 = time.perf_counter()
    g = Gen(Path(out), seed, body_cap=2_000_000)
    claude_session(g, g.project(0), "meta", budget=int(size_mb * 1e6))
    return _finish(g, t0)


def _finish(g: Gen, t0: float) -> dict:
    summary = g.plan.summary()
    secs = time.perf_counter() - t0
    summary["seconds"] = round(secs, 2)
    summary["mb_s"] = round(summary["bytes"] / 1e6 / secs, 1) if secs else None
    return summary


def append_records(path: str | os.PathLike, nbytes: int, *, seed: int = 7) -> int:
    """Append about ``nbytes`` of valid records to the Claude transcript at ``path``, continuing
    its session (same sessionId, cwd and uuid chain, later times). Returns the bytes written."""
    last = _last_record(Path(path))
    cwd = last["cwd"]
    proj = Project("append", cwd, "", [], ["README.md", "docs/NOTES.md"], _ms(last["timestamp"]) + 60_000)
    g = Gen(Path(path).parent, seed, body_cap=200_000)
    version = last.get("version", "2.1.240")
    layout = next((k for k, v in VERSION.items() if v == version), "meta")
    sink = Sink(Path(path), "ab")
    w = Claude(g, proj, sink, last["sessionId"], layout, entrypoint=last.get("entrypoint"))
    w.prev, w.slug = last.get("uuid"), last.get("slug")
    while sink.bytes < nbytes:
        w.prompt(Text.sentence(g.rng, 12))
        read_file(g, w, g.rng.choice(proj.private))
        bash(g, w)
        w.say(Text.sentence(g.rng, 20))
    sink.close()
    return sink.bytes


def _last_record(path: Path) -> dict:
    """The last threaded record (it has sessionId, uuid, cwd, timestamp), read from the end."""
    size = path.stat().st_size
    window = 1 << 20
    with open(path, "rb") as fh:
        while True:
            fh.seek(max(0, size - window))
            lines = fh.read().split(b"\n")
            if size > window:
                lines = lines[1:]  # the first one is cut
            for raw in reversed(lines):
                try:
                    rec = orjson.loads(raw) if raw.strip() else None
                except orjson.JSONDecodeError:
                    continue
                if isinstance(rec, dict) and all(k in rec for k in ("sessionId", "uuid", "cwd", "timestamp")):
                    return rec
            if window >= size:
                raise ValueError(f"{path}: no Claude record with sessionId, uuid, cwd and timestamp")
            window *= 4


def _ms(stamp: str) -> int:
    from datetime import datetime

    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


# -- command line ----------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path, help="corpus root (a fake home folder); must be empty")
    ap.add_argument("--size", type=float, default=100, help="approximate total size in MB (10^6 bytes)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--big", type=int, default=2, help="very large transcripts in the corpus")
    ap.add_argument("--big-frac", type=float, default=0.05, help="size of each big transcript, as a share of --size")
    ap.add_argument("--one-file-mb", type=float, help="write only one Claude transcript of this many MB")
    ap.add_argument("--json", action="store_true", help="print the plan as one JSON object")
    args = ap.parse_args(argv)
    if args.out.exists() and any(args.out.iterdir()):
        ap.error(f"{args.out} is not empty")
    if args.one_file_mb:
        plan = one_file(args.out, args.one_file_mb, seed=args.seed)
    else:
        plan = generate(args.out, args.size, seed=args.seed, big=args.big, big_frac=args.big_frac)
    if args.json:
        print(json.dumps(plan))
        return 0
    edges = plan["edges_by_kind"]
    print(f"{plan['files']} files, {plan['mb']} MB in {args.out} ({plan['seconds']} s, {plan['mb_s']} MB/s)")
    print("sessions: " + ", ".join(f"{k} {v}" for k, v in plan["session_kinds"].items()))
    print(
        "expected edges: " + "; ".join(f"{k} " + ", ".join(f"{n} {t}" for t, n in v.items()) for k, v in edges.items())
    )
    print(
        f"expected runs: {plan['runs']}; inference counts: "
        + ", ".join(f"{k} {v}" for k, v in plan["inference_counts"].items())
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
