"""Heuristic reading of logged shell command lines: agent-CLI launches and file I/O.

The lexer (``ingest.bash_lex``: quotes, ``$(...)``, backticks, heredocs, redirections, operators)
feeds a walker that tracks ``cd``, subshells, loops and wrappers. Nothing is executed and nothing
raises: garbage in, best-effort (often empty) lists out. A command is log text, so this runs at
ingest (``ingest.shell_facts``), while the text is at hand, never in the inference passes.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, TypeGuard

from sessiongraph.ingest import apply_patch
from sessiongraph.ingest.bash_lex import Tok, lex
from sessiongraph.ingest.errors import SessiongraphError
from sessiongraph.ingest.paths import normalise


@dataclass(frozen=True, slots=True)
class Launch:
    harness: str  # "codex" | "claude-code" | "gemini-cli" | "opencode" | "pi" | "omp"
    print_mode: bool  # a non-interactive run (codex exec, claude -p, gemini -p, opencode run, pi -p)
    cwd: str | None  # effective working dir (call cwd, then `cd`, then codex -C/--cd)
    background: bool  # trailing `&`, nohup, setsid, disown
    looped: bool  # inside for/while/until, xargs, parallel, find -exec: may start several sessions
    output_file: str | None  # codex exec -o/--output-last-message FILE
    resume: bool  # continues an existing session
    segment: int  # index of the launch within the command
    script: str | None = None  # the workspace script the command ran that runs the CLI


@dataclass(frozen=True, slots=True)
class ScriptRun:
    """A command word that runs a file as a script (``./x.sh``, ``tools/r.sh``, ``bash x.sh``,
    ``source x.sh``): what ``ingest.scripts`` needs to read it, or why it cannot."""

    word: str | None  # the path as written; None when it holds an expansion (`tools/$t.sh`)
    cwd: str | None  # effective working dir where it runs
    background: bool
    looped: bool


@dataclass(frozen=True, slots=True)
class FileOp:
    path: str  # absolute, normalised
    op: str  # "read" | "write" | "delete"
    how: str  # the construct: ">", ">>", "tee", "cp", "sed -i", "heredoc", "apply_patch", ...


def _w(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _meanings(**groups: str) -> dict[str, str | None]:
    """word -> "print" | "resume" | None (not a session run); unlisted flags mean nothing."""
    return {w: (None if kind == "stop" else kind) for kind, ws in groups.items() for w in ws.split()}


MAX_CHARS = 2_000_000  # beyond this it is pasted data; the head still holds the commands
MAX_DEPTH = 6  # how deep we follow bash -c / $(...) / eval nesting

# program basename -> harness; npm package -> program (npm registry names, 2025-26)
HARNESSES = {
    "codex": "codex",
    "claude": "claude-code",
    "gemini": "gemini-cli",
    "opencode": "opencode",
    "pi": "pi",
    "omp": "omp",
}
NPM_PACKAGES = {
    "@openai/codex": "codex",
    "@anthropic-ai/claude-code": "claude",
    "@google/gemini-cli": "gemini",
    "opencode-ai": "opencode",
    "@mariozechner/pi-coding-agent": "pi",
    "@oh-my-pi/pi-coding-agent": "omp",
}
# program -> (options taking a value, flag meanings, first-positional subcommand meanings); an
# unlisted first positional is a prompt. Sources: codex-rs `codex --help` (late 2025), `claude
# --help` 2.x, gemini-cli 0.x docs, `opencode --help` 1.x, pi-mono README (Jan 2026; omp forks pi).
_PI = (
    _w(
        "--provider --model --api-key --system-prompt --append-system-prompt --mode --session "
        "--session-dir --models --tools --thinking -e --extension --skill"
    ),
    _meanings(print="-p --print --mode", resume="-c --continue -r --resume --session", stop="--export --list-models"),
    _meanings(stop="install remove uninstall update list config search plugin setup stats commit"),
)
CLI_SPECS = {
    "codex": (
        _w(
            "-c --config -m --model -p --profile -C --cd -s --sandbox -a --ask-for-approval -i "
            "--image --enable --disable --add-dir --color -o --output-last-message --output-schema"
        ),
        {},
        _meanings(
            print="exec e review",
            resume="resume",
            stop="login logout mcp mcp-server "
            "app-server app completion sandbox debug apply a cloud features help "
            "responses-api-proxy stdio-to-uds execpolicy generate-ts",
        ),
    ),
    "claude": (
        _w(
            "--model --output-format --input-format --allowedTools --allowed-tools "
            "--disallowedTools --disallowed-tools --append-system-prompt --system-prompt "
            "--permission-mode --max-turns --add-dir --mcp-config --session-id --settings "
            "--agents --agent --fallback-model --permission-prompt-tool --tools"
        ),
        _meanings(print="-p --print", resume="-c --continue -r --resume"),
        _meanings(stop="mcp config update upgrade doctor install migrate-installer setup-token plugin auth"),
    ),
    "gemini": (
        _w(
            "-m --model -p --prompt -i --prompt-interactive -e --extensions --approval-mode "
            "--allowed-tools --include-directories -o --output-format --proxy"
        ),
        _meanings(
            print="-p --prompt", resume="-r --resume", stop="-l --list-extensions --list-sessions --delete-session"
        ),
        _meanings(stop="mcp extensions extension skills hooks"),
    ),
    "opencode": (
        _w(
            "-m --model -s --session --agent --port --hostname --prompt -f --file --format --title --attach --log-level"
        ),
        _meanings(resume="-c --continue -s --session"),
        _meanings(
            print="run",
            stop="serve auth models web upgrade uninstall mcp agent "
            "github export import stats acp debug session pr plugin completion",
        ),
    ),
    "pi": _PI,
    "omp": _PI,
}
HELP_FLAGS = _w("-h --help -V -v --version")
# harness -> the program whose command line a launcher's arguments follow
PROGRAMS = {harness: prog for prog, harness in HARNESSES.items()}
# Wrapper CLIs that run an agent CLI themselves: program -> (harness, subcommands that start no
# single session). oh-my-codex (npm oh-my-codex, 2026): `omx exec ...` takes `codex exec`'s
# arguments, bare `omx` starts an interactive Codex; setup/doctor/status... manage OMX and `team`
# starts tmux workers no one call can be matched to. More: `--launcher NAME=HARNESS`.
BUILTIN_LAUNCHERS: dict[str, tuple[str, frozenset[str]]] = {
    "omx": ("codex", _w("setup doctor status cancel team hud help version update uninstall")),
}

# wrapper -> its options that take a value; the wrapped command follows (coreutils 9, util-linux
# 2.39, sudo 1.9, findutils 4.9 xargs, GNU parallel 2024, npm 10 npx, pnpm 9, bun 1.x).
WRAPPERS = {
    name: _w(opts)
    for name, opts in {
        "nohup": "",
        "setsid": "",
        "command": "",
        "caffeinate": "-t -w",
        "exec": "-a",
        "env": "-u --unset -C --chdir -S --split-string",
        "timeout": "-s --signal -k --kill-after",
        "time": "-f --format -o --output",
        "nice": "-n --adjustment",
        "stdbuf": "-i -o -e",
        "sudo": "-u -g -C -D -h -p -r -t -U --user --group",
        "doas": "-u -C",
        "xargs": "-n -P -I -L -d -E -s -a --max-args --max-procs --delimiter --arg-file",
        "parallel": "-j --jobs -N -n -S --joblog --results --delay -I --timeout --colsep -d -a",
        "npx": "-p --package -c --call",
        "bunx": "-p --package",
    }.items()
}
TWO_WORD_WRAPPERS = {("pnpm", "dlx"): "npx", ("yarn", "dlx"): "npx", ("npm", "exec"): "npx", ("bun", "x"): "bunx"}
BACKGROUND_WRAPPERS, LOOP_WRAPPERS = _w("nohup setsid"), _w("xargs parallel")
SHELLS = _w("bash sh zsh dash ksh")

# program -> (kind, options taking a value) for the file-touching commands we recognise
# (GNU coreutils 9, grep 3.11, ripgrep 14, ag 2, jq 1.7, GNU sed 4.9, CPython 3, Node 22 docs).
FILE_PROGRAMS = {
    **{
        p: ("read", frozenset())
        for p in "cat less more wc tac uniq strings xxd od hexdump file "
        "stat md5sum sha1sum sha256sum shasum cmp comm diff".split()
    },
    "head": ("read", _w("-n -c --lines --bytes")),
    "tail": ("read", _w("-n -c -s --lines --pid")),
    "nl": ("read", _w("-b -i -n -s -v -w")),
    "cut": ("read", _w("-d -f -c -b")),
    "sort": ("read", _w("-k -t -S -T -o --key --field-separator")),
    "bat": ("read", _w("-l --language -r --line-range -H --highlight-line --style --theme -m")),
    "touch": ("write", _w("-t -d -r")),
    "tee": ("write", frozenset()),
    **{p: ("delete", frozenset()) for p in ("rm", "rmdir", "unlink")},
    **{p: ("copy", _w("-t --target-directory -S --suffix")) for p in ("cp", "mv")},
    "sed": ("sed", _w("-e -f -l --expression --file --line-length")),
    **{p: ("grep", _w("-e -f -m -A -B -C -d -D --regexp --file --max-count")) for p in ("grep", "egrep", "fgrep")},
    "rg": (
        "grep",
        _w(
            "-e -f -g --glob --iglob -t --type -T --type-not -m -A -B -C -j -M -r "
            "--replace --max-depth -d --type-add -E --encoding --sort --sortr --color "
            "--colors --max-filesize --pre --pre-glob --ignore-file --regexp"
        ),
    ),
    **{p: ("grep", _w("-A -B -C -G -m -g --ignore --depth")) for p in ("ag", "ack")},
    **{p: ("awk", _w("-F -v -f")) for p in ("awk", "gawk", "mawk")},
    "jq": ("jq", _w("--indent -f --from-file -L")),
    "python": ("interp", _w("-W -X -Q -c -m")),
    **{
        p: ("interp", _w("-e -p --eval --print -r --require --import --loader"))
        for p in ("node", "bun", "deno", "ruby", "perl", "tsx", "ts-node")
    },
    "source": ("source", frozenset()),
    ".": ("source", frozenset()),
    "apply_patch": ("patch", frozenset()),
    "applypatch": ("patch", frozenset()),
}
INLINE_CODE_OPTS = _w("-c -m -e -p --eval --print")  # python -c/-m, node -e: no script file read
JQ_TWO_VALUE_OPTS = _w("--arg --argjson --slurpfile --rawfile")
LOOP_WORDS, HEADER_WORDS = _w("while until for select"), _w("for select case function")
RESERVED = _w("if then else elif fi do ! { } esac coproc while until done") | HEADER_WORDS
SKIP_PREFIXES = ("/dev/", "/proc/")
# Programs run by an absolute path here are installed tools, not a workspace's scripts.
SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/", "/opt/", "/nix/", "/snap/", "/Applications/", "/System/")

_ASSIGN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\+?=")


# The tokens of a text depend on nothing else, and a text comes back in other cwds (`git status`
# in every project) where the (command, cwd) cache of analyse misses: they are cached on their
# own, for texts short enough that the cache stays small. The walker only reads tokens.
_LEX_CACHE_CHARS = 20_000
_lex_cached = lru_cache(maxsize=1024)(lambda s: tuple(lex(s)))


def _lex(s: str) -> tuple[Tok, ...] | list[Tok]:
    return _lex_cached(s) if len(s) < _LEX_CACHE_CHARS else lex(s)


def _base(word: str) -> str:
    return posixpath.basename(word.replace("\\", "/")) or word


# What Windows runs as a program without its suffix (`claude.cmd` is npm's shim for `claude`).
_WINDOWS_EXE = re.compile(r"\.(?:exe|cmd|bat|ps1)$", re.I)


def _program(word: str) -> str:
    """The program a command word runs: its basename, less a Windows executable suffix."""
    return _WINDOWS_EXE.sub("", _base(word)) or word


def _scan(args: list[Tok], arg_opts: frozenset[str]):
    """getopt-like: yield (option, value token or None) and (None, positional token)."""
    i, n = 0, len(args)
    while i < n:
        t, i = args[i], i + 1
        a = t.text
        if a == "--":
            yield from ((None, x) for x in args[i:])
            return
        if len(a) < 2 or not a.startswith("-"):
            yield None, t
        elif a.startswith("--") and "=" in a:
            yield a.partition("=")[0], Tok("w", a.partition("=")[2], t.dyn)
        elif a in arg_opts:
            yield a, args[i] if i < n else None
            i += 1
        elif a[:2] in arg_opts and a[1] != "-":  # -Cdir, -n1
            yield a[:2], Tok("w", a[2:], t.dyn)
        else:
            yield a, None


def _unwrap(argv: list[Tok]):
    """Strip wrappers: (program basename or None, its args, background, looped, env -C dir,
    the program's own word)."""
    bg = looped = False
    chdir, i, n = None, 0, len(argv)
    while i < n:
        if _ASSIGN.match(argv[i].text):
            i += 1
            continue
        name = _program(argv[i].text)
        if i + 1 < n and (name, argv[i + 1].text) in TWO_WORD_WRAPPERS:
            name, i = TWO_WORD_WRAPPERS[(name, argv[i + 1].text)], i + 1
        if name == "find":  # find ... -exec CMD ... \; runs CMD once per match
            ex = [k for k in range(i, n) if argv[k].text in ("-exec", "-execdir", "-ok", "-okdir")]
            if not ex:
                break
            n = next((k for k in range(ex[0], n) if argv[k].text in (";", "+")), n)
            i, looped = ex[0] + 1, True
            continue
        if name not in WRAPPERS:
            break
        i += 1
        while i < n and argv[i].text.startswith("-") and len(argv[i].text) > 1:
            a, i = argv[i].text, i + 1
            if a == "--":
                break
            if name == "command" and a in ("-v", "-V"):
                return None, [], bg, looped, chdir, None  # a lookup, not a run
            if a in WRAPPERS[name]:
                chdir = argv[i] if name == "env" and a in ("-C", "--chdir") and i < n else chdir
                i += 1
        i += name == "timeout"  # its DURATION
        if name == "parallel":  # arguments after ::: are inputs, not the command
            n = next((k for k in range(i, n) if argv[k].text.startswith(":::")), n)
        bg, looped = bg or name in BACKGROUND_WRAPPERS, looped or name in LOOP_WRAPPERS
        if name in ("npx", "bunx") and i < n:
            pkg = re.sub(r"(?<=.)@[^/]*$", "", argv[i].text)  # drop @version
            return NPM_PACKAGES.get(pkg, _base(pkg)), argv[i + 1 : n], bg, looped, chdir, None
    if i >= n:
        return None, [], bg, looped, chdir, None
    return _program(argv[i].text), argv[i + 1 : n], bg, looped, chdir, argv[i]


def _launch(prog: str, args: list[Tok], launchers: dict[str, str]):
    """(harness, print_mode, resume, dir token, -o token) or None when no session starts.
    ``launchers`` (program -> harness) adds wrapper CLIs whose arguments follow the harness's."""
    stops: frozenset[str] = frozenset()
    if _interpreter(prog) and launchers:  # `node claude-wrapper.js --print ...`: the script is the launcher
        opts = FILE_PROGRAMS["python" if prog.startswith("python") else prog][1]
        script = next((t for o, t in _scan(args, opts) if o is None), None)
        if script is not None:
            name = _program(script.text)
            name = name if name in launchers else posixpath.splitext(name)[0]
            if name in launchers:
                prog, args = name, args[next(k for k, t in enumerate(args) if t is script) + 1 :]
    elif prog not in launchers and posixpath.splitext(prog)[0] in launchers:
        prog = posixpath.splitext(prog)[0]  # `./claude-wrapper.js` named `claude-wrapper`
    if prog not in CLI_SPECS and prog in launchers:
        prog, stops = PROGRAMS.get(launchers[prog], ""), BUILTIN_LAUNCHERS.get(prog, ("", frozenset()))[1]
    if prog not in CLI_SPECS:
        return None
    arg_opts, flags, subs = CLI_SPECS[prog]
    if stops:
        subs = {**subs, **dict.fromkeys(stops)}
    pm = resume = False
    cd = out = sub = None
    npos = 0
    for opt, val in _scan(args, arg_opts):
        if opt is None:
            npos += 1
            if npos == 1 and val.text in subs and not pm:  # `claude -p update` is a prompt
                if (sub := subs[val.text]) is None:
                    return None
            elif npos == 1 and prog == "opencode":
                cd = val  # `opencode [project]`
            elif npos == 2 and prog == "codex" and sub == "print" and val.text == "resume":
                sub = "resume-print"  # codex exec resume
            meaning = sub if npos == 1 else None
        elif opt in HELP_FLAGS or (opt in flags and flags[opt] is None):
            return None
        else:
            meaning = flags.get(opt)
            if prog == "codex" and opt in ("-C", "--cd", "-o", "--output-last-message"):
                cd, out = (val, out) if opt in ("-C", "--cd") else (cd, val)
        pm = pm or meaning == "print" or sub == "resume-print"
        resume = resume or meaning == "resume" or sub == "resume-print"
    return HARNESSES[prog], pm, resume, cd, out


def _interpreter(prog: str) -> bool:
    """A program that runs the script file it is given first (`node x.js`, `python3 x.py`)."""
    kind = FILE_PROGRAMS.get("python" if re.fullmatch(r"python[\d.]*", prog) else prog, ("",))[0]
    return kind == "interp"


def _usable(tok: Tok | None) -> TypeGuard[Tok]:
    """A literal path we can place: no expansion, glob, URL, option, `~`, or VAR=value."""
    t = tok.text if tok is not None and not tok.dyn else ""
    return (
        bool(t)
        and t != "-"
        and not t.startswith(("-", "+", "~"))
        and "://" not in t
        and not any(c in t for c in "*?[{}")
        and not _ASSIGN.match(t)
    )


def _patch_ops(patch: str) -> list[tuple[Tok | None, str]]:
    """The files an apply_patch envelope names (``ingest.apply_patch``), as words as written."""
    return list(apply_patch.file_ops(patch, lambda path: Tok("w", path)))


class _Walker:
    def __init__(self, launchers: dict[str, str]) -> None:
        self.launchers = launchers
        self.launches: list[list] = []  # [harness, print, cwd, background, looped, out, resume]
        self.ops: dict[tuple[str, str], str] = {}  # (path, op) -> how, in first-seen order
        self.scripts: list[list] = []  # [word, cwd, background, looped], as ScriptRun

    def script_run(self, tok: Tok, cwd: str | None, bg: bool, looped: bool) -> None:
        self.scripts.append([None if tok.dyn else tok.text, cwd, bg, looped])

    def op(self, tok: Tok | None, op: str, how: str, cwd: str | None) -> None:
        if _usable(tok) and (p := normalise(tok.text, cwd)) and not p.startswith(SKIP_PREFIXES):
            self.ops.setdefault((p, op), how)

    def script(self, s: str, cwd: str | None, depth: int, looped: bool, bg: bool) -> None:
        if depth > MAX_DEPTH:
            return
        st: dict[str, Any] = {"cwd": cwd, "dirs": [], "loop": 0, "looped": looped, "bg": bg, "depth": depth}
        toks, stack, words, redirs, k = [*_lex(s), Tok("op", ";")], [], [], [], 0
        start = len(self.launches)  # first launch of the current list, for a trailing `&`
        sstart = len(self.scripts)  # and first script run
        while k < len(toks):
            t, k = toks[k], k + 1
            if t.kind == "r":
                tgt = toks[k] if t.body is None and toks[k].kind == "w" else None
                k += tgt is not None
                redirs.append((t, tgt))
            elif t.kind == "w":
                words.append(t)
            if t.kind != "op":
                continue
            if words or redirs:
                try:
                    self.command(words, redirs, st)
                except Exception:  # noqa: BLE001 - one odd command must not hide the rest of the script
                    pass
            words, redirs = [], []
            if t.text == "(":
                stack.append((st["cwd"], start, sstart))
            elif t.text == ")" and stack:
                st["cwd"], start, sstart = stack.pop()  # a subshell's cd does not leak out
            elif t.text == "&":
                for rec in self.launches[start:]:
                    rec[3] = True
                for rec in self.scripts[sstart:]:
                    rec[2] = True
            if t.text in ("&", ";", ";;"):
                start, sstart = len(self.launches), len(self.scripts)

    def command(self, words: list[Tok], redirs: list, st: dict) -> None:
        cwd, depth = st["cwd"], st["depth"] + 1
        for w in words + [t for _, t in redirs if t is not None]:  # $(...) runs first
            for sub in w.subs:
                self.script(sub, cwd, depth, st["looped"] or st["loop"] > 0, st["bg"])
        while words and words[0].text in RESERVED:  # compound-command words around the real one
            w0 = words[0].text
            st["loop"] = max(0, st["loop"] + (w0 in LOOP_WORDS) - (w0 == "done"))
            words = [] if w0 in HEADER_WORDS else words[1:]  # `for x in ...`, `case $x in`
        looped = st["looped"] or st["loop"] > 0
        prog, args, bg, wloop, chdir, word = _unwrap(words)
        bg, looped = bg or st["bg"], looped or wloop
        pcwd = (normalise(chdir.text, cwd) if _usable(chdir) else None) if chdir else cwd
        body = next((r.body for r, _ in redirs if r.body is not None), None)
        if prog in ("cd", "pushd", "popd"):
            pos = [t for o, t in _scan(args, frozenset()) if o is None]
            if prog == "pushd":
                st["dirs"].append(cwd)
            if prog == "popd":
                st["cwd"] = st["dirs"].pop() if st["dirs"] else None
            else:  # `cd`, `cd ~`, `cd -`, `cd $X` leave the directory unknown
                st["cwd"] = normalise(pos[0].text, cwd) if pos and _usable(pos[0]) else None
        elif prog == "disown" and (self.launches or self.scripts):
            for recs, col in ((self.launches, 3), (self.scripts, 2)):
                if recs:
                    recs[-1][col] = True
        elif prog == "eval":
            self.script(" ".join(t.text for t in args), pcwd, depth, looped, bg)
        elif prog in SHELLS:
            self.shell(prog, args, body, pcwd, depth, looped, bg)
        elif prog and (info := _launch(prog, args, self.launchers)):
            harness, pm, resume, cd, out = info
            lcwd = pcwd if cd is None else (normalise(cd.text, pcwd) if _usable(cd) else None)
            out_path = normalise(out.text, pcwd) if _usable(out) else None
            self.launches.append([harness, pm, lcwd, bg, looped, out_path, resume])
            self.op(out, "write", "codex -o", pcwd)
        elif prog and word is not None and "/" in word.text and not word.text.startswith(SYSTEM_DIRS):
            self.script_run(word, pcwd, bg, looped)
        elif prog:
            if prog in ("source", ".") and args:
                self.script_run(args[0], pcwd, bg, looped)
            self.program(prog, args, body, pcwd)
        for r, tgt in redirs:  # `>&2`, `2>&1`, `>&-` duplicate descriptors: no file
            if tgt is None or (r.text == ">&" and (tgt.text.isdigit() or tgt.text == "-")):
                continue
            if r.text in (">", ">>", ">&"):
                how = "heredoc" if body is not None and prog in (None, "cat") else r.text.rstrip("&")
                self.op(tgt, "write", how, cwd)
            elif r.text == "<":
                self.op(tgt, "read", "<", cwd)

    def shell(self, prog, args, body, cwd, depth, looped, bg) -> None:
        k = 0
        while k < len(args):
            a, k = args[k].text, k + 1
            if a.startswith("-") and not a.startswith("--") and "c" in a:
                if k < len(args):  # `bash -lc SCRIPT` runs SCRIPT in our cwd
                    self.script(args[k].text, cwd, depth, looped, bg)
                return
            if a in ("-o", "+o", "-O", "+O"):
                k += 1
            elif not a.startswith(("-", "+")):
                self.script_run(args[k - 1], cwd, bg, looped)
                return self.op(args[k - 1], "read", prog, cwd)  # `bash script.sh`
        if body:  # `bash <<'EOF' ... EOF`
            self.script(body, cwd, depth, looped, bg)

    def program(self, prog: str, args: list[Tok], body: str | None, cwd: str | None) -> None:
        how = "python" if re.fullmatch(r"python[\d.]*", prog) else prog
        kind, opts = FILE_PROGRAMS.get(how, (None, frozenset()))
        if kind == "jq":  # --arg NAME VALUE and friends take two values
            drop = {k + d for k, t in enumerate(args) if t.text in JQ_TWO_VALUE_OPTS for d in range(3)}
            args = [t for k, t in enumerate(args) if k not in drop]
        scanned = list(_scan(args, opts))
        pos = [t for o, t in scanned if o is None]
        names = {o for o, _ in scanned if o}
        ops: list[tuple[Tok | None, str]] = []
        if kind in ("read", "write", "delete"):
            ops = [(t, kind) for t in pos]
        elif kind == "copy":
            tdir = next((v for o, v in scanned if o in ("-t", "--target-directory")), None)
            srcs, dst = (pos, tdir) if tdir else (pos[:-1], pos[-1] if pos else None)
            into = tdir is not None or len(srcs) > 1 or (dst is not None and dst.text.endswith("/"))
            for src in srcs:  # into a directory: dst/basename(src)
                inside = f"{dst.text.rstrip('/')}/{_base(src.text.rstrip('/'))}" if dst else ""
                tgt = Tok("w", inside, dst.dyn or src.dyn) if into and dst else dst
                ops += [(src, "read" if prog == "cp" else "delete"), (tgt, "write")]
        elif kind == "sed":
            inplace = any(re.match(r"-[a-zA-Z]*i|--in-place", o) for o in names)
            quiet = any(re.match(r"-[a-zA-Z]*n|--quiet|--silent", o) for o in names)
            how = "sed -i" if inplace else "sed -n" if quiet else "sed"
            pos = [t for t in pos if t.text]  # BSD `sed -i '' ...` passes an empty suffix
            files = pos if names & {"-e", "-f", "--expression", "--file"} else pos[1:]
            ops = [(t, "write" if inplace else "read") for t in files]
        elif kind in ("grep", "awk", "jq"):  # the first positional is the pattern/program
            given = names & {"-e", "-f", "--regexp", "--file", "--from-file", "--files"}
            ops = [(t, "read") for t in (pos if given else pos[1:])]
        elif kind == "interp" and pos and not names & INLINE_CODE_OPTS:
            script = pos[1] if pos[0].text == "run" and len(pos) > 1 else pos[0]
            if "." in _base(script.text) or "/" in script.text:  # not `bun run build`
                ops = [(script, "read")]
        elif kind == "source" and pos:
            how, ops = "source", [(pos[0], "read")]
        elif kind == "patch":
            patch = body if body is not None else pos[0].text if pos else ""  # or an argument
            how, ops = "apply_patch", _patch_ops(patch)
        for tok, op in ops:
            self.op(tok, op, how, cwd)


Launchers = tuple[tuple[str, str], ...]  # (program, harness) pairs: hashable, for the cache


def check_launchers(launchers: dict[str, str]) -> Launchers:
    """The user's launcher table as sorted pairs; an unknown harness or a name with a path
    separator is an error that names the known harnesses."""
    for name, harness in launchers.items():
        if harness not in PROGRAMS:
            raise SessiongraphError(
                f"launcher {name}={harness}: unknown harness {harness!r} (known: {', '.join(sorted(PROGRAMS))})"
            )
        if not name or "/" in name or any(c.isspace() for c in name):
            raise SessiongraphError(f"launcher {name!r}: give the program's name, e.g. omx=codex")
    return tuple(sorted(launchers.items()))


Analysis = tuple[tuple[Launch, ...], tuple[FileOp, ...], tuple[ScriptRun, ...]]


def _analyse(command: str, cwd: str | None, launchers: Launchers = ()) -> Analysis:
    table = {name: harness for name, (harness, _) in BUILTIN_LAUNCHERS.items()} | dict(launchers)
    walker = _Walker(table)
    try:
        walker.script(command[:MAX_CHARS], normalise(cwd, None) if cwd else None, 0, False, False)
    except Exception:  # noqa: BLE001 - last resort (e.g. RecursionError): keep what was found so far
        pass
    # rec holds the fields before segment (mypy cannot know a list's length)
    found = tuple(Launch(*rec, segment=i) for i, rec in enumerate(walker.launches))  # type: ignore[misc]
    ops = tuple(FileOp(p, op, how) for (p, op), how in walker.ops.items())
    return found, ops, tuple(ScriptRun(*rec) for rec in walker.scripts)


_analyse_cached = lru_cache(maxsize=256)(_analyse)  # launches() and file_ops() share one parse


def analyse(command: object, cwd: object, launchers: Launchers = ()) -> Analysis:
    """(launches, file ops, script runs) of ``command`` run from ``cwd``; ``launchers`` adds
    wrapper CLIs to the built-in table (:data:`BUILTIN_LAUNCHERS`). Reads no file."""
    if not isinstance(command, str):
        return (), (), ()
    cwd = cwd if isinstance(cwd, str) else None
    return (_analyse_cached if len(command) < 100_000 else _analyse)(command, cwd, launchers)


def launches(command: str, cwd: str | None, launchers: Launchers = ()) -> list[Launch]:
    """Agent-CLI runs that ``command`` (run from ``cwd``) starts, in script order."""
    return list(analyse(command, cwd, launchers)[0])


def file_ops(command: str, cwd: str | None) -> list[FileOp]:
    """Heuristic file reads/writes/deletes in ``command``, one per (path, op), first seen first."""
    return list(analyse(command, cwd)[1])
