"""Masking of credentials in log text: ``mask(text)`` replaces anything shaped like a secret with
``[REDACTED:<kind>]``.

It runs wherever log text may be kept (``ingest.privacy`` before the store, and the ``full``
exports), so a key pasted into a shell command never reaches a store or a dataset, whatever the
profile. The patterns favour recall for well-known key formats and stay narrow for generic ones:
git SHAs, uuids, hashes and ordinary words must pass through untouched. Masking is idempotent.
"""

from __future__ import annotations

import re
from operator import itemgetter

import ahocorasick_rs

# (kind, pattern): the whole match is the secret, unless the pattern has groups named ``secret...``
# (then only the one that matched is replaced: `password=[REDACTED:password]` keeps the key readable).
# Prefixes are the vendors' documented token formats (2025-26): OpenAI `sk-`/`sk-proj-`,
# Anthropic `sk-ant-`, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, AWS access key ids
# `AKIA`/`ASIA`, Slack `xoxa/b/p/r/s-`, Google API keys `AIza`, Stripe `sk_live_`, Hugging Face
# `hf_`, npm `npm_`.
_EDGE = r"(?<![A-Za-z0-9_-])"  # a token starts at a boundary: `task-...` is not `sk-...`


def _edged(prefix: str) -> str:
    """``_EDGE + prefix`` with the edge tested after the prefix (a lookbehind over both): the same
    matches, but a pattern that begins with a literal is searched for it (re's prefix scan), not
    tried at every character, some 15 times faster on a long text."""
    return prefix + _EDGE[:-1] + prefix + ")"


def _bounded(word: str) -> str:
    """``\\b`` + ``word`` (a word that begins with a word character), the boundary tested after it."""
    return rf"{word}(?<!\w{word})"


_VALUE = r"[^\s\"'`,;&|<>(){}\[\]$]"  # a literal value: not `$VAR`, `${{ secrets.X }}`, quotes
_NAME_CHARS = 40  # the most name characters before an assignment's keyword (`OPENAI_API_` of `..._KEY`)
# The keywords of the two assignment rules (the rules fold case).
_ASSIGNED: dict[str, str] = {
    "password": "password|passwd|passphrase",
    "secret": r"secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key|credentials?",
}


def _assigned(keywords: str, min_len: int, digit: bool) -> str:
    """``key=value``, ``key: "value"``, ``KEY_TOKEN=value``, ``--key value``: the value is the
    secret (all of it when quoted). A value followed by ``(`` is a call (``token = get_token()``)."""
    # The name before the keyword is bounded: unbounded, a long word of `-`/`_`-joined characters
    # (base64url data) makes every start rescan the word, quadratic in its length.
    key = rf"[A-Za-z0-9_.-]{{0,{_NAME_CHARS}}}(?:{keywords})"
    sep = rf"(?:(?<![A-Za-z0-9])--?{key}(?:\s*=\s*|\s+)|(?<![A-Za-z0-9]){key}[\"']?\s*[:=]\s*)"

    def value(chars: str, name: str) -> str:
        need = rf"(?=(?:{chars}*\d|{chars}{{16}}))" if digit else ""
        return rf"(?!\[REDACTED:){need}(?P<{name}>{chars}{{{min_len},}}+)"  # masked once, not twice

    double, single = value(r'[^"\n]', "secret_dq"), value(r"[^'\n]", "secret_sq")
    return rf"""(?i){sep}(?:"{double}"|'{single}'|{value(_VALUE, "secret")}(?!\())"""


RULES: tuple[tuple[str, str], ...] = (
    (
        "private_key",
        r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:.*?-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|.*)",
    ),
    ("anthropic", _edged("sk-ant-") + r"[A-Za-z0-9_-]{20,}"),
    ("openai", _edged("sk-") + r"(?=[A-Za-z0-9_-]*\d)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("github", _EDGE + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("aws", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("slack", _edged("xox") + r"[abprs]-[A-Za-z0-9-]{10,}"),
    ("google", _edged("AIza") + r"[0-9A-Za-z_-]{35,}"),
    ("stripe", _EDGE + r"[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("huggingface", _edged("hf_") + r"[A-Za-z0-9]{30,}"),
    ("npm", _edged("npm_") + r"[A-Za-z0-9]{36}"),
    ("jwt", _edged("eyJ") + r"[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    # The userinfo of a URL (`https://user:pass@host`, `https://x-access-token:ghp_...@host`): a
    # password, or a user name long enough to be a token; `ssh://git@host` keeps its user.
    (
        "url_credentials",
        r"(?i)\b[a-z][a-z0-9+.-]*://(?!\[REDACTED:)"
        r"(?P<secret>[^\s/?#@:\[\]]*:[^\s/?#@]+|[A-Za-z0-9_.~-]{16,})@",
    ),
    ("bearer", _bounded("Bearer") + r"\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    ("basic", _bounded("Authorization") + r":\s*Basic\s+(?P<secret>[A-Za-z0-9+/=]{8,})"),
    # Generic assignments: a password may be any 6+ characters; a token, secret or key value
    # needs 8+ and a digit (or 16+ characters), so `token: required` in prose survives.
    ("password", _assigned(_ASSIGNED["password"], 6, digit=False)),
    ("secret", _assigned(_ASSIGNED["secret"], 8, digit=True)),
)
_COMPILED = tuple((kind, re.compile(pattern, re.S)) for kind, pattern in RULES)
# mask_plain's pre-check: most text has none of these, and then no pattern needs to run.
_HINT = re.compile(
    r"(?i)PRIVATE KEY|sk-|gh[pousr]_|github_pat_|AKIA|ASIA|xox|AIza|k_live_|k_test_|hf_|npm_|eyJ"
    r"|bearer|basic|pass|secret|token|key|credential|://[^\s/@]+@"
)


def _replace(kind: str):
    def sub(m: re.Match) -> str:
        name = next((g for g in m.re.groupindex if g.startswith("secret") and m.group(g) is not None), None)
        if name is None:
            return f"[REDACTED:{kind}]"
        start, end = m.start(name) - m.start(), m.end(name) - m.start()
        return m.group(0)[:start] + f"[REDACTED:{kind}]" + m.group(0)[end:]

    return sub


# What each rule's match must contain: literals as written (in the rule's case), or, for the two
# generic rules, a keyword's literal in any case and what must follow it: the rest of the keyword
# (none, `s` of `credentials`, `word` of `password`), then a separator's first character (`=`,
# `:`, a quote or a space), so that most `key`, `token`, `pass` in text (`keys`, `tokens`,
# `passed`) are never looked at again. A rule none of whose literals is in the text cannot match,
# so skipping it changes nothing; most text holds none, and then no pattern runs. `mask_plain` is
# the reference `mask` must equal.
_LITERALS: dict[str, tuple[str, ...]] = {
    "private_key": ("-----BEGIN",),
    "anthropic": ("sk-ant-",),
    "openai": ("sk-",),
    "github": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    "aws": ("AKIA", "ASIA"),
    "slack": ("xox",),
    "google": ("AIza",),
    "stripe": ("k_live_", "k_test_"),
    "huggingface": ("hf_",),
    "npm": ("npm_",),
    "jwt": ("eyJ",),
    "url_credentials": ("://",),
    "bearer": ("Bearer",),
    "basic": ("Authorization:",),
}
_KEYWORDS: dict[str, dict[str, str]] = {  # rule -> literal -> what follows it in the keyword
    "password": {"pass": "(?:word|wd|phrase)"},
    "secret": {"secret": "", "token": "", "key": "", "credential": "s?"},
}
# The non-ASCII characters a `(?i)` pattern takes for an ASCII letter (Python's re documents these
# four; tests/test_secrets.py checks every code point), as the letter. Folded to it, then
# lowered, a text has the same length (U+0130 is the one character whose lowercase is two) and an
# ASCII letter wherever the pattern would see one.
_FOLDS = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
_FOLD_CHARS = tuple(map(chr, _FOLDS))


def _folded(text: str) -> bytes:
    """``text`` folded and lowered as UTF-8 bytes (a lone surrogate as its three bytes): the
    haystack of the literal scan, whose literals are all ASCII."""
    if text.isascii():
        return text.encode().lower()  # a copy of an ASCII text, lowered in one C loop
    if any(c in text for c in _FOLD_CHARS):  # four `in` tests cost a tenth of a character class search
        text = text.translate(_FOLDS)
    # Folded, no character's lowercase holds an ASCII letter but an ASCII letter's
    # (tests/test_secrets.py checks every code point), and every literal is ASCII: lowering the
    # ASCII letters alone, as bytes do, finds the same, at half the cost of str.lower on such text.
    return text.encode("utf-8", "surrogatepass").lower()


# Every literal, lower case, found in one pass over the folded text (Aho-Corasick: every
# occurrence of all of them at once; a loop of `in` tests costs a pass per literal, and masking
# is most of a --privacy full ingest's extra time). A literal as written is in the folded text
# lowered, so what is found says which rules may match, and where the keywords are; a literal as
# written is then confirmed in the text itself. The scan runs over the folded text's UTF-8 bytes
# (twice as fast as over the str): in an ASCII text (most texts) a byte offset is a character
# offset; elsewhere the few offsets a generic rule needs are mapped back (``_chars``).
_ALL: tuple[str, ...] = tuple(
    dict.fromkeys([w.lower() for ws in _LITERALS.values() for w in ws] + [w for ws in _KEYWORDS.values() for w in ws])
)
_FIND = ahocorasick_rs.BytesAhoCorasick([w.encode() for w in _ALL], implementation=ahocorasick_rs.Implementation.DFA)
# What may follow a keyword in the patterns (a quote, a space, `=`, `:`), tested on the folded
# bytes: `\s` of a str pattern also takes U+001C-U+001F and non-ASCII spaces (U+00A0, U+2003,
# ...), so any byte of a non-ASCII character passes too. A looser test only tries more starts
# (``_anchored_sub`` then finds no match there), never fewer (tests/test_secrets.py).
_SEPARATOR = r"""[\s"'=:]"""
_SEPARATOR_BYTES = rb"""[\s\x1c-\x1f"'=:\x80-\xff]"""
_KEYWORD_IDS = {
    kind: {_ALL.index(w): re.compile(tail.encode() + _SEPARATOR_BYTES).match for w, tail in ws.items()}
    for kind, ws in _KEYWORDS.items()
}
# rule -> the ids of its literals: a rule none of whose literals is found is skipped
_LITERAL_IDS = {kind: frozenset(_ALL.index(w.lower()) for w in ws) for kind, ws in _LITERALS.items()} | {
    kind: frozenset(ids) for kind, ids in _KEYWORD_IDS.items()
}


def _found(low: bytes) -> list[tuple[int, int, int]]:
    """(literal id, start, end) of every literal in a folded text (byte offsets)."""
    return _FIND.find_matches_as_indexes(low, overlapping=True)


def _chars(low: bytes, offsets: list[int]) -> list[int]:
    """Sorted byte offsets of ``low`` (each at a character's first byte) as character offsets."""
    out: list[int] = []
    byte = char = 0
    for b in offsets:
        char += len(low[byte:b].decode("utf-8", "surrogatepass"))
        byte = b
        out.append(char)
    return out


# The generic assignments (`password`, `secret`) are the costly patterns: they can start at almost
# any character, so a plain search tries every one. Every match holds a keyword, and the keyword
# one of the rule's literals (``_KEYWORDS``) at most ``len("private_")`` characters in (`key` of
# `private_key`); so the literal is at most ``_KEY_REACH`` characters after the match's start
# (`--`, then the name characters of ``_assigned``, then the keyword's own), and every character
# from the start to it is a name character. The search tries only the starts in the run of name
# characters just before each literal followed as its keyword would be (in the folded text, the
# ASCII class is exactly the pattern's case-insensitive class, and the separator's first
# characters the same), in order, as ``sub`` would find them. Every other rule is cheap once its
# literal is present, but `://` is in most texts: a URL's userinfo must also be there (what the
# rule's two forms have in common).
_KEY_REACH = 2 + _NAME_CHARS + len("private_")
_NAME = frozenset(b"abcdefghijklmnopqrstuvwxyz0123456789_.-")
_JOINERS = frozenset(b"_.-")
_USERINFO = re.compile(r"://[^\s/?#@]+@").search


def _anchored_sub(pattern: re.Pattern, starts: list[tuple[int, int]], repl, text: str, low: bytes) -> str:
    """``pattern.sub(repl, text)`` for a generic assignment whose literals stand at ``starts``
    ((character offset in ``text``, byte offset in ``low``) pairs)."""
    out: list[str] = []
    done = pos = 0  # text[:done] is in out; no match starts before pos
    match = pattern.match
    for q, qb in starts:
        if q < pos:
            continue
        # Back to the start of the name run, in the bytes: name characters are ASCII, one byte each.
        sb, lo = qb, qb - (q - max(pos, q - _KEY_REACH))
        while sb > lo and low[sb - 1] in _NAME:
            sb -= 1
        first = sb
        while sb <= qb:
            # A match starts after no letter or digit (both forms' lookbehind; a fold character
            # is one, folded): within the run, only after `_`, `.` or `-`.
            if sb == first or low[sb - 1] in _JOINERS:
                m = match(text, q - (qb - sb))
                if m is not None:
                    out.append(text[done : m.start()])
                    out.append(repl(m))
                    done = pos = m.end()
                    break
            sb += 1
        else:
            pos = q + 1
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


_GUARDED = tuple((kind, pattern, _replace(kind)) for kind, pattern in _COMPILED)
# literal id -> the rules (indexes in _GUARDED) it may let match: a text's rules are looked up
# from what it holds, not tested one by one (most texts hold a literal, most only `key`)
_LITERAL_ID = itemgetter(0)  # of a match of _found
_RULES_OF = tuple(
    tuple(k for k, (kind, _, _) in enumerate(_GUARDED) if kind in _LITERAL_IDS and i in _LITERAL_IDS[kind])
    for i in range(len(_ALL))
)


def _rules(found: list[tuple[int, int, int]], after: int = -1) -> list[int]:
    """The rules after ``after`` that one of the ``found`` literals may let match, in order."""
    rules = sorted(set().union(*[_RULES_OF[i] for i in set(map(_LITERAL_ID, found))]))
    return rules if after < 0 else [k for k in rules if k > after]


def mask(text: str | None) -> str | None:
    """``text`` with every secret-shaped token replaced by ``[REDACTED:<kind>]`` (None stays None)."""
    if not text:
        return text
    low = _folded(text)
    found = _found(low)
    rules = _rules(found)
    n = 0
    while n < len(rules):  # no literal: no rule can match
        k = rules[n]
        n += 1
        kind, pattern, repl = _GUARDED[k]
        keywords = _KEYWORD_IDS.get(kind)
        if keywords is not None:
            at = sorted({start for i, start, end in found if i in keywords and keywords[i](low, end)})
            if not at:
                continue
            # Byte offsets are character offsets unless the text has a character of several bytes.
            starts = list(zip(at if len(low) == len(text) else _chars(low, at), at, strict=True))
            new = _anchored_sub(pattern, starts, repl, text, low)
        elif any(w in text for w in _LITERALS[kind]) and (kind != "url_credentials" or _USERINFO(text)):
            new = pattern.sub(repl, text)
        else:
            continue
        if new != text:
            # The next rules look at the text as this one left it, as the plain loop does (a
            # replacement can bring a literal in or take one away).
            text = new
            low = _folded(text)
            found = _found(low)
            rules, n = _rules(found, k), 0
    return text


def mask_plain(text: str | None) -> str | None:
    """The reference for ``mask``: every rule run on every hinted text (tests check they agree)."""
    if not text or not _HINT.search(text):
        return text
    for kind, pattern in _COMPILED:
        text = pattern.sub(_replace(kind), text)
    return text
