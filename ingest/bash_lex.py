"""A small bash-ish lexer for logged command lines: quotes, ``$(...)``, backticks, heredocs,
redirections and control operators. It never executes and never raises on odd input."""

from __future__ import annotations

import re

_OP = re.compile(r"(\d*)(<<<|<<-|<<|>>|>\||>&|<&|<>|&>>|&>|>|<)|&&|\|\||;;|\|&|[|&;()\n]")
_PLAIN = re.compile(r"[^\s;&|()<>'\"\\$`]+")
_DQ_PLAIN = re.compile(r'[^"\\$`]+')


class Tok:
    """A word (``text`` unquoted; ``dyn`` if it holds ``$``/backtick expansions; ``subs`` its
    command substitutions), a redirection ("r"; ``body`` for heredocs) or an operator ("op")."""

    __slots__ = ("kind", "text", "dyn", "subs", "body")

    def __init__(self, kind, text, dyn=False, subs=(), body=None):
        self.kind, self.text, self.dyn, self.subs, self.body = kind, text, dyn, subs, body


def close(s: str, i: int, pair: str = "()") -> int:
    """Index of the bracket closing the one at ``i`` (quotes respected); len(s) if unbalanced."""
    depth, n = 0, len(s)
    while i < n:
        c = s[i]
        if c in pair:
            depth += 1 if c == pair[0] else -1
            if depth == 0:
                return i
        elif c in "'\"`":
            j = s.find(c, i + 1)
            while c == '"' and j > 0 and s[j - 1] == "\\":
                j = s.find(c, j + 1)
            i = n if j < 0 else j
        elif c == "\\":
            i += 1
        i += 1
    return n


def word(s: str, i: int) -> tuple[int, Tok]:
    out, subs, dyn, dq, n = [], [], False, False, len(s)
    while i < n:
        c = s[i]
        if not dq and c in " \t\r\n;&|()<>":
            break
        if m := (_DQ_PLAIN if dq else _PLAIN).match(s, i):
            out.append(m.group())
            i = m.end()
        elif c == '"':
            dq, i = not dq, i + 1
        elif c == "'" or (s.startswith("$'", i) and not dq):  # '...' and $'...' are literal
            i += c == "$"
            j = s.find("'", i + 1)
            j = n if j < 0 else j
            out.append(s[i + 1 : j])
            i = j + 1
        elif c == "\\":
            if i + 1 < n and s[i + 1] != "\n":
                out.append(s[i + 1] if not dq or s[i + 1] in '"\\$`' else s[i : i + 2])
            i += 2
        elif c == "`" or s.startswith(("$(", "${"), i):
            j = s.find("`", i + 1) if c == "`" else close(s, i + 1, "()" if s[i + 1] == "(" else "{}")
            j = n if j < 0 else j
            if c == "`" or s[i + 1] == "(":
                subs.append(s[i + 1 + (c == "$") : j])
            out.append(s[i : j + 1])
            dyn, i = True, j + 1
        else:  # a lone `$`, or whitespace _PLAIN does not take
            dyn = dyn or c == "$"
            out.append(c)
            i += 1
    return i, Tok("w", "".join(out), dyn, subs)


def lex(s: str) -> list[Tok]:
    toks, i, n = [], 0, len(s)
    pending: list[tuple[Tok, str]] = []  # heredoc redirections and their delimiters
    while i < n:
        c = s[i]
        if c in " \t\r" or s.startswith("\\\n", i):
            i += 1 + (c == "\\")
        elif c == "#":
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif s.startswith(("((", "<(", ">("), i):  # arithmetic; process substitution
            j = close(s, i if c == "(" else i + 1)
            toks.append(Tok("w", s[i : j + 1], True, [] if c == "(" else [s[i + 2 : j]]))
            i = j + 1
        elif m := _OP.match(s, i):
            i, op = m.end(), m.group(2) or m.group()
            if op == "\n":
                toks.append(Tok("op", ";"))
                for tok, delim in pending:  # heredoc bodies start on the next line
                    end = re.compile(rf"^[ \t]*{re.escape(delim)}[ \t\r]*$", re.M).search(s, i)
                    tok.body = s[i : end.start() if end else n].removesuffix("\n")
                    i = min(end.end() + 1, n) if end else n
                pending.clear()
            elif m.group(2):
                toks.append(tok := Tok("r", op.replace("&>", ">").replace(">|", ">").rstrip("-")))
                if op in ("<<", "<<-"):  # the delimiter is read here, it is not a target
                    while i < n and s[i] in " \t":
                        i += 1
                    i, delim_tok = word(s, i)
                    pending.append((tok, delim_tok.text))
                    tok.body = ""
            else:
                toks.append(Tok("op", op))
        else:
            j, tok = word(s, i)
            toks.append(tok)
            i = max(j, i + 1)  # never stall
    return toks
