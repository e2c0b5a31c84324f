"""Masking of credentials in log text: ``mask(text)`` replaces anything shaped like a secret with
``[REDACTED:<kind>]``.

It runs wherever log text may be kept (``ingest.privacy`` before the store, and the ``full``
exports), so a key pasted into a shell command never reaches a store or a dataset, whatever the
profile. The patterns favour recall for well-known key formats and stay narrow for generic ones:
git SHAs, uuids, hashes and ordinary words must pass through untouched. Masking is idempotent.
"""

from __future__ import annotations

import re

# (kind, pattern): the whole match is the secret, unless the pattern has groups named ``secret...``
# (then only the one that matched is replaced: `password=[REDACTED:password]` keeps the key readable).
# Prefixes are the vendors' documented token formats (2025-26): OpenAI `sk-`/`sk-proj-`,
# Anthropic `sk-ant-`, GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_`/`github_pat_`, AWS access key ids
# `AKIA`/`ASIA`, Slack `xoxa/b/p/r/s-`, Google API keys `AIza`, Stripe `sk_live_`, Hugging Face
# `hf_`, npm `npm_`.
_EDGE = r"(?<![A-Za-z0-9_-])"  # a token starts at a boundary: `task-...` is not `sk-...`
_VALUE = r"[^\s\"'`,;&|<>(){}\[\]$]"  # a literal value: not `$VAR`, `${{ secrets.X }}`, quotes


def _assigned(keywords: str, min_len: int, digit: bool) -> str:
    """``key=value``, ``key: "value"``, ``KEY_TOKEN=value``, ``--key value``: the value is the
    secret (all of it when quoted). A value followed by ``(`` is a call (``token = get_token()``)."""
    # The name before the keyword is bounded: unbounded, a long word of `-`/`_`-joined characters
    # (base64url data) makes every start rescan the word, quadratic in its length.
    key = rf"[A-Za-z0-9_.-]{{0,40}}(?:{keywords})"
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
    ("anthropic", _EDGE + r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai", _EDGE + r"sk-(?=[A-Za-z0-9_-]*\d)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("github", _EDGE + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    ("aws", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    ("slack", _EDGE + r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    ("google", _EDGE + r"AIza[0-9A-Za-z_-]{35,}"),
    ("stripe", _EDGE + r"[rs]k_(?:live|test)_[0-9A-Za-z]{16,}"),
    ("huggingface", _EDGE + r"hf_[A-Za-z0-9]{30,}"),
    ("npm", _EDGE + r"npm_[A-Za-z0-9]{36}"),
    ("jwt", _EDGE + r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    # The userinfo of a URL (`https://user:pass@host`, `https://x-access-token:ghp_...@host`): a
    # password, or a user name long enough to be a token; `ssh://git@host` keeps its user.
    (
        "url_credentials",
        r"(?i)\b[a-z][a-z0-9+.-]*://(?!\[REDACTED:)"
        r"(?P<secret>[^\s/?#@:\[\]]*:[^\s/?#@]+|[A-Za-z0-9_.~-]{16,})@",
    ),
    ("bearer", r"\bBearer\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    ("basic", r"\bAuthorization:\s*Basic\s+(?P<secret>[A-Za-z0-9+/=]{8,})"),
    # Generic assignments: a password may be any 6+ characters; a token, secret or key value
    # needs 8+ and a digit (or 16+ characters), so `token: required` in prose survives.
    ("password", _assigned("password|passwd|passphrase", 6, digit=False)),
    (
        "secret",
        _assigned(r"secret|token|api[_-]?key|access[_-]?key|auth[_-]?key|private[_-]?key|credentials?", 8, digit=True),
    ),
)
_COMPILED = tuple((kind, re.compile(pattern, re.S)) for kind, pattern in RULES)
# A cheap pre-check: most text has none of these, and then no pattern needs to run.
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


# What each rule's match must contain, searched with the rule's own case sensitivity (a `(?i)` hint
# folds case as the rule does: `ſecret` and the Kelvin sign match too). A rule whose hint is absent
# cannot match, so skipping it changes nothing; most text holds one hint (`key`, `token`) and then
# two of the sixteen patterns run, not all. `mask_plain` is the reference `mask` must equal.
_RULE_HINTS: dict[str, str] = {
    "private_key": "-----BEGIN",
    "anthropic": "sk-ant-",
    "openai": "sk-",
    "github": "gh[pousr]_|github_pat_",
    "aws": "AKIA|ASIA",
    "slack": "xox",
    "google": "AIza",
    "stripe": "k_live_|k_test_",
    "huggingface": "hf_",
    "npm": "npm_",
    "jwt": "eyJ",
    "url_credentials": "://",
    "bearer": "Bearer",
    "basic": "Authorization:",
    "password": "(?i)pass",
    "secret": "(?i)secret|token|key|credential",
}
_GUARDED = tuple(
    (kind, re.compile(_RULE_HINTS[kind]).search, pattern.sub, _replace(kind)) for kind, pattern in _COMPILED
)


def mask(text: str | None) -> str | None:
    """``text`` with every secret-shaped token replaced by ``[REDACTED:<kind>]`` (None stays None)."""
    if not text or not _HINT.search(text):
        return text
    for _kind, hinted, sub, repl in _GUARDED:
        # The hint is searched in the text as the rules before left it, as the plain loop sees it.
        if hinted(text):
            text = sub(repl, text)
    return text


def mask_plain(text: str | None) -> str | None:
    """The reference for ``mask``: every rule run on every hinted text (tests check they agree)."""
    if not text or not _HINT.search(text):
        return text
    for kind, pattern in _COMPILED:
        text = pattern.sub(_replace(kind), text)
    return text
