"""ingest.secrets.mask: credential-shaped tokens are replaced, everything else passes untouched."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sessiongraph.ingest.secrets import _ASSIGNED, _SEPARATOR, _SEPARATOR_BYTES, RULES, _folded, mask, mask_plain

# Fake credentials, assembled so that no scanner mistakes this file for a leak.
OPENAI = "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1w"
OPENAI_LEGACY = "sk-" + "Q1w2E3r4T5y6U7i8O9p0A1s2D3f4G5h6J7k8L9z0X1c2V3b4"
ANTHROPIC = "sk-ant-" + "api03-Zq8Xw7Vu6Ts5Rq4Po3Nm2Lk1Jh0Gf9Ed8Cb7A"
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
GITHUB_PAT = "github_pat_" + "11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
AWS = "AKIA" + "IOSFODNN7EXAMPLE"
SLACK = "xoxb-" + "123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
GOOGLE = "AIza" + "SyD4f6Gh8Jk0Lm2Np4Qr6St8Uv0Wx2Yz4Ab6"
JWT = "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
STRIPE = "sk_live_" + "51H8xYzAbCdEfGhIjKlMnOp"
HF = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
NPM = "npm_" + "a1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8"
PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1b2c3\nq8w7e6r5\n-----END RSA PRIVATE KEY-----"

POSITIVES = [
    (f"export OPENAI_API_KEY={OPENAI}", "export OPENAI_API_KEY=[REDACTED:openai]"),
    (f"OPENAI_API_KEY={OPENAI_LEGACY} codex exec x", "OPENAI_API_KEY=[REDACTED:openai] codex exec x"),
    (f"ANTHROPIC_API_KEY='{ANTHROPIC}' claude -p hi", "ANTHROPIC_API_KEY='[REDACTED:anthropic]' claude -p hi"),
    (f"git clone https://{GITHUB}@github.com/o/r", "git clone https://[REDACTED:github]@github.com/o/r"),
    (f"gh auth login --with-token <<< {GITHUB_PAT}", "gh auth login --with-token <<< [REDACTED:github]"),
    (f"aws_access_key_id = {AWS}", "aws_access_key_id = [REDACTED:aws]"),
    ("https://alice:" + "hunter2Pa55" + "@git.acme.dev/x.git", "https://[REDACTED:url_credentials]@git.acme.dev/x.git"),
    (
        f"https://x-access-token:{GITHUB}@github.com/o/r.git",
        "https://[REDACTED:url_credentials]@github.com/o/r.git",
    ),
    (f"curl -d token={SLACK} https://slack.com/api", "curl -d token=[REDACTED:slack] https://slack.com/api"),
    (f"https://maps.googleapis.com/x?key={GOOGLE}", "https://maps.googleapis.com/x?key=[REDACTED:google]"),
    (f"jwt: {JWT}", "jwt: [REDACTED:jwt]"),
    (f"key.pem:\n{PEM}\nnext line", "key.pem:\n[REDACTED:private_key]\nnext line"),
    ("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk", "[REDACTED:private_key]"),  # cut off: all of it
    ('curl -H "Authorization: Bearer abc123def456ghi789jkl" x', 'curl -H "Authorization: Bearer [REDACTED:bearer]" x'),
    ("curl -H 'Authorization: Basic dXNlcjpwYXNzd29yZA==' x", "curl -H 'Authorization: Basic [REDACTED:basic]' x"),
    ("mysql -u root --password=hunter22 db", "mysql -u root --password=[REDACTED:password] db"),
    ("psql --password s3cretpw", "psql --password [REDACTED:password]"),
    ('{"password": "correct horse"}', '{"password": "[REDACTED:password]"}'),
    ("DB_PASSWORD=Tr0ub4dor3 ./run", "DB_PASSWORD=[REDACTED:password] ./run"),
    (f"stripe.api_key = '{STRIPE}'", "stripe.api_key = '[REDACTED:stripe]'"),
    (f"huggingface-cli login --token {HF}", "huggingface-cli login --token [REDACTED:huggingface]"),
    (f"//registry.npmjs.org/:_authToken={NPM}", "//registry.npmjs.org/:_authToken=[REDACTED:npm]"),
    ("api_key=4f9c2e1b7a8d3f60", "api_key=[REDACTED:secret]"),
    ("GITLAB_TOKEN=glpat-x1y2z3w4v5u6t7s8", "GITLAB_TOKEN=[REDACTED:secret]"),
    ("client_secret: 9a8b7c6d5e4f3a2b1c0d", "client_secret: [REDACTED:secret]"),
    ("--auth-token abcdefgh12345678", "--auth-token [REDACTED:secret]"),
    ("access_token=aBcDeFgHiJkLmNoPqRsTuV", "access_token=[REDACTED:secret]"),  # 16+ letters, no digit
]

NEGATIVES = [
    "fix the failing tests in src/auth and run pytest -q",
    "git show 9fceb02d0ae598e95dc970b74767f19372d61af8",  # a commit SHA
    "session 019b036b-c520-7c3e-9a41-5be0d7f2c816 resumed",  # a uuid
    "ssh://git@github.com/o/r.git and git@github.com:o/r.git",  # a user, no password
    "http://[::1]:8080/x, mail dev@example.com",
    "sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "max_tokens=4096 and output_tokens: 12345678",
    "token = get_token()",  # a call, not a value
    "GITHUB_TOKEN=$GITHUB_TOKEN gh pr create",  # a variable, not a value
    "password: ${{ secrets.DB_PASSWORD }}",
    "Change your password before lunch; the token: required",
    "python -m task-runner --sk-learn",
    "desk-0123456789abcdefghij is a desk id",  # `sk-` inside a word
    "Bearer tokens are short-lived",
    "use the tokenizer=bert-base-uncased",
    "ask-anything-about-the-repo-with-codex-2025",
    "the AKIA prefix marks AWS access key ids",
    "",
]


@pytest.mark.parametrize(
    ("text", "want"), POSITIVES, ids=[w.split("[REDACTED:")[1].split("]")[0] for _, w in POSITIVES]
)
def test_secrets_are_masked(text, want):
    assert mask(text) == want
    assert mask(want) == want  # idempotent: masking an export of a masked store changes nothing


@pytest.mark.parametrize("text", NEGATIVES)
def test_ordinary_text_is_untouched(text):
    assert mask(text) == text


def test_none_stays_none():
    assert mask(None) is None


def test_every_rule_has_a_positive_case():
    kinds = {kind for kind, _ in RULES}
    masked = {w.split("[REDACTED:")[1].split("]")[0] for _, w in POSITIVES}
    assert kinds == masked


# mask skips a rule whose hint is absent; mask_plain runs every rule. They must agree on every text:
# the samples above, and random texts built from the rules' own pieces (prefixes, keywords,
# separators, case-folding look-alikes) so that near-misses of every rule are tried.
_PIECES = [
    *(p for _, w in POSITIVES for p in (w, w[:12])),
    *(t for t, _ in POSITIVES),
    *NEGATIVES,
    "sk-",
    "sk-ant-",
    "ghp_",
    "github_pat_",
    "AKIA",
    "ASIA",
    "xoxb-",
    "AIza",
    "sk_live_",
    "rk_test_",
    "hf_",
    "npm_",
    "eyJ",
    ".",
    "https://",
    "user:",
    "@",
    "Bearer ",
    "Authorization: Basic ",
    "password=",
    "PASSWD: ",
    "--api-key ",
    "token=",
    "SECRET_KEY=",
    "credentials: ",
    "private_key",
    "\u017fecret=",
    "\u212aey=",
    "\u0130",
    "\u0131",
    "pa\u017f\u017f=",
    "credent\u0130al: ",
    "tokenkey=",
    "--",
    "-",
    "_",
    "X" * 38,
    "a.b-c_d" * 7,
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "[REDACTED:secret]",
    "Ab3dEf6hIj9kLm2nOp5q",
    "0123456789abcdef",
    " ",
    "\n",
    "'",
    '"',
    "=",
    "(",
    # characters of several UTF-8 bytes (the literal scan's byte offsets are then mapped back),
    # lone surrogates, and the spaces a str `\s` takes beyond ASCII's
    "\u00e9",
    "\u4e2d\u6587",
    "\U0001f600",
    "\ud800",
    "\udfff",
    "\u00a0",
    "\u2003",
    "\x1c",
]


@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=12)), max_size=12).map("".join))
@settings(max_examples=400, deadline=None)
def test_mask_equals_its_plain_reference(text):
    assert mask(text) == mask_plain(text)


@pytest.mark.parametrize("text", [t for t, _ in POSITIVES] + NEGATIVES)
def test_mask_equals_its_plain_reference_on_samples(text):
    assert mask(text) == mask_plain(text)


def test_case_folding_is_what_the_patterns_see():
    """mask looks for the case-insensitive rules' keywords in ``_folded(text)``, UTF-8 bytes: every
    code point must fold to one character, an ASCII letter exactly where a ``(?i)`` pattern sees
    one and no ASCII letter elsewhere, and pass the bytes' separator test wherever a pattern takes
    it for what follows a keyword."""
    letter = re.compile("(?i)[a-z]").fullmatch
    separator = re.compile(_SEPARATOR).fullmatch
    scanned_separator = re.compile(_SEPARATOR_BYTES).match
    ascii_letter = re.compile(rb"[A-Za-z]").search
    for cp in range(0x110000):
        c = chr(cp)
        folded = _folded(c)
        assert len(folded.decode("utf-8", "surrogatepass")) == 1, hex(cp)  # offsets map back
        if separator(c):
            assert scanned_separator(folded), hex(cp)  # what may follow a keyword
        if letter(c):
            assert len(folded) == 1 and folded.isalpha(), hex(cp)
            assert re.fullmatch("(?i)" + re.escape(folded.decode()), c), hex(cp)
        else:
            assert not ascii_letter(folded), hex(cp)


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("X" * 41 + "TOKEN=4f9c2e1b7a8d3f60", False),  # a name longer than the rule allows
        ("X" * 40 + "TOKEN=4f9c2e1b7a8d3f60", True),  # the longest it allows
        ("--" + "x" * 40 + "token 4f9c2e1b7a8d3f60", True),
        ("tokenkey=4f9c2e1b7a8d3f60 and secret_token: 'abcdefgh1' then API_KEY=zz99zz99zz", True),
        ("pass=abcdef passwd=abcdefg \u017fecret=12345678a DB_PA\u017f\u017fWORD='x y z w'", True),
        ("a=b\u0130 credent\u0130als=abcd1234efgh", True),
        ("API_\u212aEY=abcdefgh12", True),
        ("monkey=abcdefgh12 tokens: many keys passing", False),
    ],
)
def test_generic_assignments_found_from_their_keywords(text, masked):
    """The generic rules are searched only from their keywords back: the same matches as a plain
    search, at the edges of how far back a match may start."""
    assert mask(text) == mask_plain(text)
    assert ("[REDACTED:" in mask(text)) == masked


def _edge_first(pattern: str) -> str | None:
    """A rule's pattern as written before its edge moved after its prefix (``_edged``, ``_bounded``):
    the lookbehind in front, as a plain reading of the rule has it; None for the other rules."""
    m = re.fullmatch(r"(?s)([^(\\]+)\(\?<!\[A-Za-z0-9_-\]\1\)(.*)", pattern)
    if m:
        return r"(?<![A-Za-z0-9_-])" + m[1] + m[2]
    m = re.fullmatch(r"(?s)(\w+)\(\?<!\\w\1\)(.*)", pattern)
    return r"\b" + m[1] + m[2] if m else None


_EDGED = [(kind, p, _edge_first(p)) for kind, p in RULES if _edge_first(p) is not None]


def test_the_edged_rules_are_the_rewritten_ones():
    assert {kind for kind, _, _ in _EDGED} >= {"anthropic", "openai", "slack", "jwt", "bearer", "basic"}


@given(
    st.lists(
        st.one_of(st.sampled_from(_PIECES + ["a", "_", "-", "9", "\u00e9"]), st.text(max_size=6)), max_size=10
    ).map("".join)
)
@settings(max_examples=400, deadline=None)
def test_an_edge_after_the_prefix_is_the_edge_before_it(text):
    """The token rules test their edge after their literal prefix (so re searches for the prefix):
    the same matches as with the edge in front."""
    for _, pattern, before in _EDGED:
        assert re.sub(pattern, "<>", text, flags=re.S) == re.sub(before, "<>", text, flags=re.S), pattern


_WIDE = ["", "\u00e9", "\u4e2d\u6587", "\U0001f600", "\ud800x", "\udfff", "\u0130", "\u017f\u212a", "\u00e9" * 50]


@pytest.mark.parametrize("before", _WIDE)
@pytest.mark.parametrize(
    "secret",
    [
        "API_KEY=abcdefgh12",
        "my.db-pa\u017f\u017fword: 'x y z w'",
        "--api-key 4f9c2e1b7a8d3f60",
        "A" * 30 + "_TOKEN\u00a0=\u20034f9c2e1b7a8d3f60",
        "credent\u0130als=abcd1234efgh",
        f"Bearer {OPENAI}",
        f"https://x-access-token:{GITHUB}@github.com/o/r",
    ],
)
def test_masked_after_characters_of_several_bytes(before, secret):
    """The literal scan runs over UTF-8 bytes: a secret after characters of two, three or four
    bytes, lone surrogates or fold characters is masked as the plain reference masks it, at the
    same characters, once or twice in one text."""
    for text in (before + secret, before + " " + secret + " " + before + secret + before):
        assert mask(text) == mask_plain(text)
        assert "[REDACTED:" in mask(text), text


def _spellings(keywords: str) -> list[str]:
    """Every keyword an assignment rule's alternation spells (`api[_-]?key`: apikey, api_key, api-key)."""
    out = []
    for word in keywords.split("|"):
        forms = [""]
        for part in re.findall(r"\[_-\]\?|.\?|.", word):
            options = {"[_-]?": ["", "_", "-"]}.get(part) or (["", part[0]] if part.endswith("?") else [part])
            forms = [f + o for f in forms for o in options]
        out += forms
    return out


@pytest.mark.parametrize(("kind", "keyword"), [(k, w) for k, kw in _ASSIGNED.items() for w in _spellings(kw)])
def test_every_keyword_is_found_at_the_longest_name(kind, keyword):
    """mask looks for a literal of each keyword (`key` of `private_key`) and tries the starts up to
    a reach before it: a keyword whose literal is not its first letters, after the longest name the
    rule allows, is still masked."""
    for text in (
        "--" + "X" * 40 + keyword.upper() + "=abcdefgh12",
        "x " + "n" * 40 + keyword + ": 'abcdefgh12'",
        "--" + keyword + " abcdefgh12",
    ):
        assert mask(text) == mask_plain(text)
        assert f"[REDACTED:{kind}]" in mask(text), text
