"""Every exported conversation renders through ``transformers``' ``apply_chat_template``: the
machinery people train with. The tokenizer is built here from an in-memory vocabulary (nothing is
downloaded); the chat templates are written here from the rules widely used open-model templates
enforce, and raise on a violation:

- a ``system`` message only first;
- the first other message is ``user``; ``user`` and ``assistant`` alternate, the tool results of an
  assistant turn between them (after tool results the assistant may go on, or the user speaks);
- a ``tool`` message only after the assistant message that made its call (same ``tool_call_id``);
- tool calls in the OpenAI shape ``{id, type: "function", function: {name, arguments}}``,
  ``arguments`` a JSON string.

The samples (ingested under ``--privacy full``), ``../shared/corpus`` and ``../shared/real-families``
(each skipped when absent) are
exported, loaded back with ``datasets`` as a trainer would, and rendered under each template."""

from __future__ import annotations

from pathlib import Path

import pytest

from sessiongraph.dataset.trajectories import export_trajectories
from sessiongraph.pipeline import ingest
from tests.conftest import SAMPLES

SHARED = Path(__file__).resolve().parents[1].parent / "shared"

# The rules, shared by both templates: `check(messages)` raises or sets nothing.
RULES = """
{%- macro check(messages) -%}
{%- set ns = namespace(prev='start', calls=[]) -%}
{%- for m in messages -%}
  {%- set where = 'message ' ~ loop.index0 ~ ' (' ~ m.role ~ ')' -%}
  {%- if m.role == 'system' -%}
    {%- if not loop.first -%}{{ raise_exception(where ~ ': a system message may only come first') }}{%- endif -%}
    {%- if m.content is not string -%}{{ raise_exception(where ~ ': system content must be text') }}{%- endif -%}
  {%- elif m.role == 'user' -%}
    {%- if ns.prev == 'user' -%}{{ raise_exception(where ~ ': two user messages in a row') }}{%- endif -%}
    {%- if m.content is not string -%}{{ raise_exception(where ~ ': user content must be text') }}{%- endif -%}
    {%- set ns.calls = [] -%}
  {%- elif m.role == 'assistant' -%}
    {%- if ns.prev in ('start', 'system') -%}
      {{ raise_exception(where ~ ': the conversation must start with a user message') }}
    {%- endif -%}
    {%- if ns.prev == 'assistant' -%}{{ raise_exception(where ~ ': two assistant messages in a row') }}{%- endif -%}
    {%- set ns.calls = [] -%}
    {%- for tc in m.tool_calls or [] -%}
      {%- if tc.type != 'function' or tc.id is not string or not tc.id or tc.function is not mapping -%}
        {{ raise_exception(where ~ ': a tool call must be {id, type: function, function: {name, arguments}}') }}
      {%- endif -%}
      {%- if tc.function.name is not string or not tc.function.name -%}
        {{ raise_exception(where ~ ': a tool call without a function name') }}
      {%- endif -%}
      {%- if tc.function.arguments is not string -%}
        {{ raise_exception(where ~ ': tool call arguments must be a JSON string') }}
      {%- endif -%}
      {%- set ns.calls = ns.calls + [tc.id] -%}
    {%- endfor -%}
  {%- elif m.role == 'tool' -%}
    {%- if ns.prev not in ('assistant', 'tool') -%}
      {{ raise_exception(where ~ ': a tool message must follow the assistant turn that called it') }}
    {%- endif -%}
    {%- if m.tool_call_id not in ns.calls -%}
      {{ raise_exception(where ~ ': tool_call_id ' ~ m.tool_call_id ~ ' names no call of the assistant turn before it') }}
    {%- endif -%}
  {%- else -%}
    {{ raise_exception(where ~ ': unknown role') }}
  {%- endif -%}
  {%- set ns.prev = m.role -%}
{%- endfor -%}
{%- if ns.prev == 'start' -%}{{ raise_exception('an empty conversation') }}{%- endif -%}
{%- endmacro -%}
{{- check(messages) -}}
"""

# ChatML-like: every role its own block, tool calls as one JSON line each.
TAGGED = (
    RULES
    + """
{%- for m in messages -%}
<|{{ m.role }}|>
{%- if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif -%}
{%- if m.content %}{{ m.content }}{% endif -%}
{%- for tc in m.tool_calls or [] %}
<call id="{{ tc.id }}" name="{{ tc.function.name }}">{{ tc.function.arguments }}</call>
{%- endfor -%}
{%- if m.role == 'tool' %} [for {{ m.tool_call_id }}]{% endif %}<|end|>
{% endfor -%}
{%- if add_generation_prompt %}<|assistant|>{% endif -%}
"""
)

# Instruction style, without a system role: the system text goes into the first user turn, as in
# templates of models trained without one.
INST = (
    RULES
    + """
{%- set ns2 = namespace(sys='') -%}
{%- for m in messages -%}
{%- if m.role == 'system' -%}{%- set ns2.sys = m.content ~ '\n\n' -%}
{%- elif m.role == 'user' -%}[INST] {{ ns2.sys }}{{ m.content }} [/INST]{%- set ns2.sys = '' -%}
{%- elif m.role == 'assistant' -%}
{{ m.content or '' }}
{%- if m.tool_calls %}[TOOL_CALLS]{% for tc in m.tool_calls %}{{ tc.function.name }}{{ tc.function.arguments }};{% endfor %}{% endif -%}
</s>
{%- else -%}[TOOL_RESULTS {{ m.tool_call_id }}]{{ m.content }}[/TOOL_RESULTS]
{%- endif -%}
{%- endfor -%}
"""
)

TEMPLATES = {"tagged": TAGGED, "inst": INST}


@pytest.fixture(scope="module")
def tokenizer():
    pytest.importorskip("jinja2")
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"[UNK]": 0, "<|end|>": 1, "<|user|>": 2, "<|assistant|>": 3, "<|system|>": 4, "<|tool|>": 5}
    tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", eos_token="<|end|>")


def _conversations(src: Path, tmp: Path, monkeypatch) -> list[dict]:
    """The exported rows of ``src`` as ``datasets`` loads them (offline)."""
    db = tmp / "s.duckdb"
    ingest([str(src)], db=str(db), workers=1, privacy="full")
    export_trajectories(tmp / "out", db=str(db), split="train=1")
    from datasets import load_dataset

    ds = load_dataset("parquet", data_files={"train": str(tmp / "out" / "train.parquet")}, cache_dir=str(tmp / "c"))
    return list(ds["train"])


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # nothing from the hub: the tokenizer is built here
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))


def _render_all(rows: list[dict], tokenizer) -> dict[str, list[str]]:
    """Render every row under every template; the failures, per template."""
    from jinja2.exceptions import TemplateError

    failures: dict[str, list[str]] = {}
    for name, template in TEMPLATES.items():
        for row in rows:
            msgs = [_message(m) for m in row["messages"]]
            try:
                text = tokenizer.apply_chat_template(msgs, chat_template=template, tokenize=False)
            except TemplateError as exc:
                failures.setdefault(name, []).append(f"{row['session_id']}: {exc}")
                continue
            for m in msgs:  # every call survives the rendering
                for tc in m.get("tool_calls") or []:
                    assert tc["function"]["name"] in text and tc["function"]["arguments"] in text
    return failures


def _message(m: dict) -> dict:
    """A loaded message as a trainer passes it: the fields it has (datasets fills absent ones with None)."""
    return {k: v for k, v in m.items() if v is not None}


def test_the_templates_refuse_what_they_should(tokenizer):
    call = {"id": "c1", "type": "function", "function": {"name": "sh", "arguments": "{}"}}
    bad = [
        [{"role": "user", "content": "a"}, {"role": "system", "content": "late"}],
        [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}],
        [{"role": "system", "content": "s"}, {"role": "assistant", "content": "first"}],
        [{"role": "user", "content": "a"}, {"role": "tool", "content": "out", "tool_call_id": "c1"}],
        [
            {"role": "user", "content": "a"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "content": "out", "tool_call_id": "other"},
        ],
        [{"role": "user", "content": "a"}, {"role": "assistant", "tool_calls": [{"name": "sh", "arguments": "{}"}]}],
    ]
    from jinja2.exceptions import TemplateError

    for template in TEMPLATES.values():
        for msgs in bad:
            with pytest.raises(TemplateError):
                tokenizer.apply_chat_template(msgs, chat_template=template, tokenize=False)
        good = [
            {"role": "system", "content": "s"},
            {"role": "user", "content": "a"},
            {"role": "assistant", "tool_calls": [call]},
            {"role": "tool", "content": "out", "tool_call_id": "c1"},
            {"role": "assistant", "content": "done"},
        ]
        text = tokenizer.apply_chat_template(good, chat_template=template, tokenize=False)
        assert "sh" in text and "done" in text and text.index("sh") < text.index("out") < text.index("done")


def test_every_sample_conversation_renders(tokenizer, tmp_path, monkeypatch):
    rows = _conversations(SAMPLES, tmp_path, monkeypatch)
    assert len(rows) > 50 and sum(r["n_tool_calls"] for r in rows) > 100
    failures = _render_all(rows, tokenizer)
    assert not failures, {name: (len(f), f[:5]) for name, f in failures.items()}


@pytest.mark.parametrize("name", ["corpus", "real-families"])
def test_every_corpus_conversation_renders(name, tokenizer, tmp_path, monkeypatch):
    if not (SHARED / name).is_dir():
        pytest.skip(f"no {SHARED / name}")
    rows = _conversations(SHARED / name, tmp_path, monkeypatch)
    assert rows
    failures = _render_all(rows, tokenizer)
    assert not failures, {name: (len(f), f[:5]) for name, f in failures.items()}
