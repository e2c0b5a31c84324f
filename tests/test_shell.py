"""ingest.shell: agent-CLI launches and heuristic file I/O read from logged shell commands."""

from __future__ import annotations

import random

import pytest

from sessiongraph.ingest.shell import FileOp, Launch, file_ops, launches

CWD = "/repo"


def L(
    harness="codex", print_mode=True, cwd=CWD, background=False, looped=False, output_file=None, resume=False, segment=0
) -> Launch:
    return Launch(harness, print_mode, cwd, background, looped, output_file, resume, segment)


LAUNCH_CASES = [
    # plain forms of each harness
    ('codex exec "fix the failing tests"', [L()]),
    ("codex e 'short alias'", [L()]),
    ('codex "explain this repo"', [L(print_mode=False)]),
    ("codex", [L(print_mode=False)]),
    ('claude -p "summarise README.md"', [L("claude-code")]),
    ('claude --print --output-format json "x"', [L("claude-code")]),
    ('claude --model opus "add tests" --print', [L("claude-code")]),
    ('claude "interactive prompt"', [L("claude-code", print_mode=False)]),
    ('gemini -p "write docs"', [L("gemini-cli")]),
    ('gemini --prompt="write docs"', [L("gemini-cli")]),
    ("gemini", [L("gemini-cli", print_mode=False)]),
    ('opencode run "refactor auth"', [L("opencode")]),
    ("opencode", [L("opencode", print_mode=False)]),
    ("opencode ../other", [L("opencode", print_mode=False, cwd="/other")]),
    ('pi -p "review the diff"', [L("pi")]),
    ('pi --mode json -p --no-session "Task: x"', [L("pi")]),
    ("pi", [L("pi", print_mode=False)]),
    ('omp --print "hello"', [L("omp")]),
    ("omp", [L("omp", print_mode=False)]),
    # wrappers
    ('nohup codex exec "x" > run.log 2>&1 &', [L(background=True)]),
    ("env OPENAI_API_KEY=sk-test codex exec x", [L()]),
    ("env -i -u HOME PATH=/usr/bin codex exec x", [L()]),
    ("CODEX_HOME=/tmp/ch DEBUG=1 codex exec x", [L()]),
    ("timeout 600 codex exec x", [L()]),
    ("timeout -k 10 --signal=TERM 5m claude -p x", [L("claude-code")]),
    ("time codex exec x", [L()]),
    ("stdbuf -oL nice -n 10 codex exec x", [L()]),
    ("sudo -u builder codex exec x", [L()]),
    ("caffeinate -i codex exec x", [L()]),
    ("command codex exec x", [L()]),
    ("exec claude -p x", [L("claude-code")]),
    ("setsid codex exec x", [L(background=True)]),
    ("bash -lc 'codex exec \"x\"'", [L()]),
    ("sh -c \"cd sub && claude -p 'hi'\"", [L("claude-code", cwd="/repo/sub")]),
    ("zsh -c 'pi -p hi'", [L("pi")]),
    ("eval 'codex exec x'", [L()]),
    ("npx @openai/codex exec x", [L()]),
    ("npx -y @openai/codex@0.46.0 exec x", [L()]),
    ('bunx @anthropic-ai/claude-code -p "x"', [L("claude-code")]),
    ("pnpm dlx @google/gemini-cli -p hi", [L("gemini-cli")]),
    ("npx opencode-ai run hi", [L("opencode")]),
    ("/usr/local/bin/codex exec x", [L()]),
    ("~/.local/bin/claude -p x", [L("claude-code")]),
    # working directory
    ("cd /tmp/work && codex exec x", [L(cwd="/tmp/work")]),
    ("cd sub; codex exec x", [L(cwd="/repo/sub")]),
    ("cd sub\ncd ..\ncodex exec x", [L()]),
    ("codex -C ../other exec x", [L(cwd="/other")]),
    ("codex exec -C app x", [L(cwd="/repo/app")]),
    ("codex exec --cd=/srv/app x", [L(cwd="/srv/app")]),
    ("codex exec --cd /srv/app x", [L(cwd="/srv/app")]),
    ("cd && codex exec x", [L(cwd=None)]),
    ("cd ~/proj && codex exec x", [L(cwd=None)]),
    ("cd - && codex exec x", [L(cwd=None)]),
    ('cd "$DIR" && codex exec x', [L(cwd=None)]),
    ("pushd sub && codex exec x && popd && codex exec y", [L(cwd="/repo/sub"), L(segment=1)]),
    ("(cd /srv && codex exec x) & codex exec y", [L(cwd="/srv", background=True), L(segment=1)]),
    ("env -C sub codex exec x", [L(cwd="/repo/sub")]),
    # background, loops, resume, output file, several launches
    ('codex exec "x" &', [L(background=True)]),
    ("codex exec x & disown", [L(background=True)]),
    ("codex exec a && claude -p b &", [L(background=True), L("claude-code", background=True, segment=1)]),
    ("codex exec a | tee out.log", [L()]),
    ('for t in a b c; do codex exec "do $t"; done', [L(looped=True)]),
    ('for t in a b; do\n  claude -p "$t"\ndone\ncodex exec after', [L("claude-code", looped=True), L(segment=1)]),
    ('while read -r f; do claude -p "review $f" </dev/null; done < files.txt', [L("claude-code", looped=True)]),
    ("until codex exec check; do sleep 5; done", [L(looped=True)]),
    ('cat tasks.txt | xargs -I{} codex exec "{}"', [L(looped=True)]),
    ("ls *.md | xargs -n 1 -P 4 claude -p", [L("claude-code", looped=True)]),
    ("parallel -j4 codex exec {} ::: a b", [L(looped=True)]),
    ("ls -d */ | xargs -I{} sh -c 'cd {} && codex exec x'", [L(cwd=None, looped=True)]),
    ("for d in $(claude -p 'list dirs'); do codex exec \"$d\"; done", [L("claude-code"), L(looped=True, segment=1)]),
    ("find . -name '*.md' -exec claude -p summarise {} \\;", [L("claude-code", looped=True)]),
    ('codex exec resume --last "continue"', [L(resume=True)]),
    ("codex resume 0199aaaa", [L(print_mode=False, resume=True)]),
    ("claude -c", [L("claude-code", print_mode=False, resume=True)]),
    ('claude --resume abc123 -p "go on"', [L("claude-code", resume=True)]),
    ("codex exec -o out/last.md x", [L(output_file="/repo/out/last.md")]),
    ("codex exec --output-last-message=/tmp/o.txt x", [L(output_file="/tmp/o.txt")]),
    ("codex exec a && claude -p b; gemini -p c", [L(), L("claude-code", segment=1), L("gemini-cli", segment=2)]),
    ('OUT=$(claude -p "name it")', [L("claude-code")]),
    ('echo "do it" | codex exec -', [L()]),
    ("codex exec - <<'EOF'\nWrite the report\nEOF", [L()]),
    ("if codex exec check; then echo ok; fi", [L()]),
    # not launches
    ("codex --version", []),
    ("codex --help", []),
    ("codex exec --help", []),
    ("codex login", []),
    ("codex mcp list", []),
    ("codex apply task_123", []),
    ("codex completion bash", []),
    ("claude --version", []),
    ("claude mcp add fs -- npx fs-server -p 3000", []),
    ("claude config list", []),
    ("claude update", []),
    ("gemini --version", []),
    ("opencode serve --port 4096", []),
    ("opencode auth login", []),
    ("opencode models", []),
    ("pi --version", []),
    ("pi install npm:pi-subagents", []),
    ("which codex", []),
    ("which claude", []),
    ("command -v codex", []),
    ("man codex", []),
    ("echo codex exec", []),
    ('echo "codex exec"', []),
    ('grep -r "claude -p" .', []),
    ("rg 'codex exec' src/", []),
    ("git log --grep=codex", []),
    ("cat codex.md", []),
    ("python -c \"import os; os.system('claude -p hi')\"", []),
    ("printf '%s\\n' 'pi -p x'", []),
    ("pip install codex", []),
    ("pipx run pi", []),
    ("pi-hole status", []),
    ("npm install -g @openai/codex", []),
    ("# codex exec x", []),
    ("cat <<'EOF'\ncodex exec not-run\nEOF", []),
    ("ls -la", []),
]


@pytest.mark.parametrize(("command", "expected"), LAUNCH_CASES, ids=[c for c, _ in LAUNCH_CASES])
def test_launches(command: str, expected: list[Launch]) -> None:
    assert launches(command, CWD) == expected


def test_launch_without_cwd() -> None:
    assert launches("codex exec -C app x", None) == [L(cwd=None)]
    assert launches("cd /a/b/../c && codex exec x", None) == [L(cwd="/a/c")]


# Real print-mode shapes (issue 26): stdin piped in, output piped out, wrappers in front, Windows shims.
PRINT_CASES = [
    'echo "say hello" | timeout 15 claude -p "say hi"',
    'echo x | timeout 15 claude --debug -p "say hi"',
    'claude --print --dangerously-skip-permissions "say hello" 2>&1',
    'echo "say hello" | claude --print --setting-sources user 2>&1 | head -50',
    "env FOO=1 timeout -s KILL 30 nice -n 5 stdbuf -oL claude -p hi | tee /tmp/out.txt",
    "timeout --foreground -k 5 30s claude -p hi",
    "claude.exe -p hi",
    "C:/Users/me/AppData/Roaming/npm/claude.cmd --print hi",
]


@pytest.mark.parametrize("command", PRINT_CASES)
def test_print_mode_claude_launches(command: str) -> None:
    assert launches(command, CWD) == [L("claude-code")]


def test_a_named_wrapper_script_is_a_launcher() -> None:
    named = (("claude-wrapper.js", "claude-code"),)
    stem = (("claude-wrapper", "claude-code"),)
    assert launches('node claude-wrapper.js --print "say hi"', CWD) == []  # unnamed: no launch
    assert launches('node claude-wrapper.js --print "say hi"', CWD, named) == [L("claude-code")]
    assert launches('node --no-warnings tools/claude-wrapper.js -p "x"', CWD, stem) == [L("claude-code")]
    assert launches("./claude-wrapper.js --print x", CWD, stem) == [L("claude-code")]
    assert launches("node claude-wrapper.js --help", CWD, named) == []
    assert launches("node other.js --print x", CWD, named) == []


def R(path: str, how: str) -> FileOp:
    return FileOp(path, "read", how)


def W(path: str, how: str) -> FileOp:
    return FileOp(path, "write", how)


def D(path: str, how: str) -> FileOp:
    return FileOp(path, "delete", how)


PATCH = """apply_patch <<'EOF'
*** Begin Patch
*** Add File: docs/new.md
+hello
*** Update File: src/app.py
@@
-a
+b
*** Update File: src/old_name.py
*** Move to: src/new_name.py
@@
-x
+y
*** Delete File: tmp/scratch.txt
*** End Patch
EOF"""

FILE_CASES = [
    ("cat README.md", [R("/repo/README.md", "cat")]),
    ('cat "My Notes.md"', [R("/repo/My Notes.md", "cat")]),
    ("cat My\\ Notes.md", [R("/repo/My Notes.md", "cat")]),
    ("cat ../shared/x.md", [R("/shared/x.md", "cat")]),
    ("cat /etc/hosts", [R("/etc/hosts", "cat")]),
    ("cd docs && cat index.md", [R("/repo/docs/index.md", "cat")]),
    ("cd docs; cd ..; cat a.txt", [R("/repo/a.txt", "cat")]),
    ("cd docs\nhead -n 5 a.md\ncd /tmp\ntail -f b.log", [R("/repo/docs/a.md", "head"), R("/tmp/b.log", "tail")]),
    ("cd && cat x.txt", []),
    ("cd ~/proj && cat x.txt", []),
    ("cat ~/notes.md", []),
    ("pushd sub && cat x && popd && cat y", [R("/repo/sub/x", "cat"), R("/repo/y", "cat")]),
    ("(cd sub && touch x); touch y", [W("/repo/sub/x", "touch"), W("/repo/y", "touch")]),
    ("bash -lc 'cd sub && cat x'", [R("/repo/sub/x", "cat")]),
    ("echo hi > out.txt", [W("/repo/out.txt", ">")]),
    ("echo hi >> logs/run.log", [W("/repo/logs/run.log", ">>")]),
    ("echo x 1> one.txt", [W("/repo/one.txt", ">")]),
    ("make 2> err.log", [W("/repo/err.log", ">")]),
    ("make &> all.log", [W("/repo/all.log", ">")]),
    ("pytest > /dev/null 2>&1", []),
    ("echo oops >&2", []),
    ("ls 2>/dev/null", []),
    ("sort < in.txt", [R("/repo/in.txt", "<")]),
    ("cat > notes/plan.md <<'EOF'\n# Plan\n- step $(not run)\nEOF", [W("/repo/notes/plan.md", "heredoc")]),
    ("cat <<EOF > a.txt\nx\nEOF\ncat a.txt", [W("/repo/a.txt", "heredoc"), R("/repo/a.txt", "cat")]),
    ("echo x | tee -a log.txt other.txt", [W("/repo/log.txt", "tee"), W("/repo/other.txt", "tee")]),
    ("sudo tee /etc/app.conf <<EOF\nk=v\nEOF", [W("/etc/app.conf", "tee")]),
    ("cp a.txt b.txt", [R("/repo/a.txt", "cp"), W("/repo/b.txt", "cp")]),
    ("cp -r src/ backup/", [R("/repo/src", "cp"), W("/repo/backup/src", "cp")]),
    (
        "cp a.txt b.txt dest",
        [R("/repo/a.txt", "cp"), W("/repo/dest/a.txt", "cp"), R("/repo/b.txt", "cp"), W("/repo/dest/b.txt", "cp")],
    ),
    ("cp -t out a.txt", [R("/repo/a.txt", "cp"), W("/repo/out/a.txt", "cp")]),
    ("mv old.py new.py", [D("/repo/old.py", "mv"), W("/repo/new.py", "mv")]),
    ("mv draft.md docs/", [D("/repo/draft.md", "mv"), W("/repo/docs/draft.md", "mv")]),
    ("rm -rf build dist", [D("/repo/build", "rm"), D("/repo/dist", "rm")]),
    ("rm -f *.pyc", []),
    ("touch src/__init__.py", [W("/repo/src/__init__.py", "touch")]),
    ("mkdir -p out", []),
    ("wc -l a.txt b.txt", [R("/repo/a.txt", "wc"), R("/repo/b.txt", "wc")]),
    ("less +G app.log", [R("/repo/app.log", "less")]),
    ("nl -ba src/x.py", [R("/repo/src/x.py", "nl")]),
    ("bat -l py --style=plain x.py", [R("/repo/x.py", "bat")]),
    ("sed -n '1,80p' docs/outline.md", [R("/repo/docs/outline.md", "sed -n")]),
    ("sed -i 's/a/b/g' src/app.py", [W("/repo/src/app.py", "sed -i")]),
    ("sed -i '' 's/a/b/' f.txt", [W("/repo/f.txt", "sed -i")]),
    ("sed -i.bak -e 's/a/b/' -e 's/c/d/' f.txt", [W("/repo/f.txt", "sed -i")]),
    ("sed 's/x/y/' in.txt > out.txt", [R("/repo/in.txt", "sed"), W("/repo/out.txt", ">")]),
    ('grep -n "def main" src/cli.py', [R("/repo/src/cli.py", "grep")]),
    ("grep -rn TODO src tests", [R("/repo/src", "grep"), R("/repo/tests", "grep")]),
    ('grep -r "claude -p" .', [R("/repo", "grep")]),
    ("grep -e foo -e bar notes.txt", [R("/repo/notes.txt", "grep")]),
    ("rg -g '*.py' -A 3 pattern lib", [R("/repo/lib", "rg")]),
    ("rg foo", []),
    ("awk -F, '{print $1}' data.csv", [R("/repo/data.csv", "awk")]),
    ("jq '.items[]' data.json", [R("/repo/data.json", "jq")]),
    ("jq --arg k v -r '.[$k]' cfg.json", [R("/repo/cfg.json", "jq")]),
    ("python scripts/build.py --out dist", [R("/repo/scripts/build.py", "python")]),
    ("python3.12 -u tools/x.py a.txt", [R("/repo/tools/x.py", "python")]),
    ("python3 -m pytest tests", []),
    ('python -c "print(1)"', []),
    ("python - <<'EOF'\nopen('x.txt','w')\nEOF", []),
    ("node scripts/gen.js", [R("/repo/scripts/gen.js", "node")]),
    ("bun run scripts/x.ts", [R("/repo/scripts/x.ts", "bun")]),
    ("bun run build", []),
    ("bash scripts/setup.sh --fast", [R("/repo/scripts/setup.sh", "bash")]),
    ("source .venv/bin/activate", [R("/repo/.venv/bin/activate", "source")]),
    (". ./env.sh", [R("/repo/env.sh", "source")]),
    ("diff -u a.txt b.txt", [R("/repo/a.txt", "diff"), R("/repo/b.txt", "diff")]),
    ("git diff HEAD -- x.py && git add x.py && git commit -m 'x > y'", []),
    ("git show HEAD:README.md", []),
    (
        PATCH,
        [
            W("/repo/docs/new.md", "apply_patch"),
            W("/repo/src/app.py", "apply_patch"),
            D("/repo/src/old_name.py", "apply_patch"),
            W("/repo/src/new_name.py", "apply_patch"),
            D("/repo/tmp/scratch.txt", "apply_patch"),
        ],
    ),
    (
        "cd pkg && apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch\nEOF",
        [W("/repo/pkg/a.py", "apply_patch")],
    ),
    ('codex exec -o result.md "x"', [W("/repo/result.md", "codex -o")]),
    ("cat $FILE", []),
    ('cat "$(ls | head -1)"', []),
    ("cat `which python`", []),
    ("cat https://example.com/x.md", []),
    ("cat {a,b}.txt", []),
    ('cp "$SRC" dst/', []),
    ("echo 1 > 2", [W("/repo/2", ">")]),
    ("cat a.txt; cat a.txt > b.txt; head a.txt", [R("/repo/a.txt", "cat"), W("/repo/b.txt", ">")]),
    ('for f in a b; do cat "$f"; done', []),
    ("while read l; do echo $l; done < list.txt", [R("/repo/list.txt", "<")]),
    ('for f in $(cat list.txt); do wc -l "$f"; done', [R("/repo/list.txt", "cat")]),
    ("cat file.txt | grep foo | wc -l", [R("/repo/file.txt", "cat")]),
    ("find . -name '*.tmp' -exec rm {} \\;", []),
    ("cat README.md # > not-a-file", [R("/repo/README.md", "cat")]),
    ("cat /proc/cpuinfo /dev/stdin", []),
    ("X=$(cat VERSION) && echo $X > out/v.txt", [R("/repo/VERSION", "cat"), W("/repo/out/v.txt", ">")]),
    ("diff <(sort a.txt) b.txt", [R("/repo/a.txt", "sort"), R("/repo/b.txt", "diff")]),
]


@pytest.mark.parametrize(("command", "expected"), FILE_CASES, ids=[c[:60] for c, _ in FILE_CASES])
def test_file_ops(command: str, expected: list[FileOp]) -> None:
    assert file_ops(command, CWD) == expected


def test_file_ops_without_cwd() -> None:
    assert file_ops("cat rel.txt /abs/x.txt", None) == [R("/abs/x.txt", "cat")]
    assert file_ops("cd /w && cat rel.txt", None) == [R("/w/rel.txt", "cat")]


def test_windows_cwd() -> None:
    assert file_ops("cat notes.md", "C:\\Users\\dev\\repo") == [R("C:/Users/dev/repo/notes.md", "cat")]


_FRAGMENTS = [
    "'",
    '"',
    "$(",
    ")",
    "`",
    "<<",
    "<<-",
    "EOF",
    "\x00",
    "é",
    "😀",
    "\\",
    "&&",
    "||",
    "|",
    ";",
    "&",
    "(",
    "((",
    "{",
    "}",
    "${",
    "<(",
    ">",
    ">>",
    "2>&1",
    "<",
    "\n",
    " ",
    "\t",
    "codex exec",
    "claude -p",
    "cd ",
    "cd ..",
    "bash -lc ",
    "sh -c",
    "eval",
    "for x in y; do",
    "done",
    "xargs",
    "nohup",
    "cat",
    "cp a",
    "mv",
    "rm -rf",
    "tee",
    "sed -i",
    "*** Add File: ",
    "apply_patch",
    "#",
    "~",
    "-C",
    "--cd=",
    "-o",
    "find . -exec",
    "\\;",
    "$'",
    "npx",
]


def _garbage(rng: random.Random) -> str:
    return "".join(rng.choice(_FRAGMENTS) for _ in range(rng.randint(0, 60)))


def test_never_raises() -> None:
    rng = random.Random(20240611)
    inputs: list[object] = [_garbage(rng) for _ in range(400)]
    inputs += ["".join(chr(rng.randint(0, 0x10FFFF) % 0xD800) for _ in range(300)) for _ in range(30)]
    inputs += [
        "codex exec x && " * 20000,
        "$(" * 20000,
        "(" * 20000,
        "'" * 5001,
        '"' * 5001,
        "`" * 5001,
        "<<EOF\n" * 5000,
        "bash -c '" * 2000,
        "a" * 1_000_000,
        "cat a\n" * 100_000,
        None,
        123,
        b"codex exec",
        ["codex", "exec"],
        "",
        "\x00codex exec\x00",
    ]
    for cwd in (CWD, None, "", "relative/dir", 42):
        for text in inputs[:50] if cwd != CWD else inputs:
            out_l, out_f = launches(text, cwd), file_ops(text, cwd)  # type: ignore[arg-type]
            assert isinstance(out_l, list) and all(isinstance(x, Launch) for x in out_l)
            assert isinstance(out_f, list) and all(isinstance(x, FileOp) for x in out_f)


def test_one_text_in_two_cwds_reads_each_cwd():
    """Tokens are cached by text alone (shell._lex): the second cwd reuses the first's tokens
    and still resolves every path, launch and script against its own cwd."""
    from sessiongraph.ingest import shell

    command = "cd sub && cat notes.md > out.txt; ./run.sh & codex exec -C .. 'x'"
    shell._lex_cached.cache_clear()
    first = shell.analyse(command, "/one")
    second = shell.analyse(command, "/two")
    assert shell._lex_cached.cache_info().hits >= 1
    assert [op.path for op in second[1]] == ["/two/sub/notes.md", "/two/sub/out.txt"]
    assert [r.cwd for r in second[2]] == ["/two/sub"] and [ln.cwd for ln in second[0]] == ["/two"]
    assert second == shell._analyse(command, "/two")  # as a parse that shares no tokens
    assert first != second and first == shell._analyse(command, "/one")
