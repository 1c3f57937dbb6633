"""Gemma's turn format as a chat template: the one place that writes Gemma's turn markers.

The embedded Gemma 3 270M is a *base* model whose GGUF carries no chat template. This
module supplies one (a Jinja template, installed on the tokenizer at load time), so
:meth:`HFModel.render` goes through ``apply_chat_template`` for every model. Layout::

    <start_of_turn>user
    {system text}

    # Tools
    {one JSON function schema per line}

    # Format
    {how to call a tool}

    {first user text}<end_of_turn>
    <start_of_turn>model
    {text}<tool_call>
    {"name": "NAME", "arguments": {...}}
    </tool_call><end_of_turn>
    <start_of_turn>user
    <tool_response>
    {tool result}
    </tool_response><end_of_turn>
    <start_of_turn>model

Gemma has no system role: the system text (and the tools) open the first user turn.
Tool results come back as user turns. ``<bos>`` is left to the tokenizer.
"""

from __future__ import annotations

from typing import Any

TURN_END = "<end_of_turn>"

FORMAT_NOTE = (
    "# Format\nTo call a tool, answer with exactly one block "
    '<tool_call>\\n{\\"name\\": \\"TOOL\\", \\"arguments\\": {...}}\\n</tool_call> and nothing '
    "else; its result comes back in a <tool_response> block. To reply, answer with plain "
    "text."
)

GEMMA_CHAT_TEMPLATE = (
    "{%- set ns = namespace(head='') -%}"
    "{%- if messages and messages[0]['role'] == 'system' -%}"
    "{%- set ns.head = messages[0]['content'] -%}"
    "{%- set rest = messages[1:] -%}"
    "{%- else -%}{%- set rest = messages -%}{%- endif -%}"
    "{%- if tools -%}"
    "{%- set ns.head = (ns.head ~ '\\n\\n' if ns.head else '') ~ '# Tools\\n' ~ "
    "(tools | map('tojson') | join('\\n')) ~ '\\n\\n" + FORMAT_NOTE + "' -%}"
    "{%- endif -%}"
    "{%- set ns.pending = ns.head -%}"
    "{%- for m in rest -%}"
    "{%- if m['role'] == 'assistant' -%}"
    "{{ '<start_of_turn>model\\n' }}{{ m['content'] or '' }}"
    "{%- for tc in (m['tool_calls'] or []) -%}"
    "{%- set f = tc['function'] if 'function' in tc else tc -%}"
    "{%- set a = f['arguments'] -%}"
    "{{ '<tool_call>\\n{\"name\": ' ~ (f['name'] | tojson) ~ ', \"arguments\": ' ~ "
    "(a if a is string else (a | tojson)) ~ '}\\n</tool_call>' }}"
    "{%- endfor -%}"
    "{{ '<end_of_turn>\\n' }}"
    "{%- else -%}"
    "{%- if m['role'] == 'tool' -%}"
    "{%- set body = '<tool_response>\\n' ~ m['content'] ~ '\\n</tool_response>' -%}"
    "{%- else -%}{%- set body = m['content'] -%}{%- endif -%}"
    "{%- if ns.pending -%}"
    "{%- set body = ns.pending ~ '\\n\\n' ~ body -%}{%- set ns.pending = '' -%}"
    "{%- endif -%}"
    "{{ '<start_of_turn>user\\n' ~ body ~ '<end_of_turn>\\n' }}"
    "{%- endif -%}"
    "{%- endfor -%}"
    "{%- if ns.pending -%}{{ '<start_of_turn>user\\n' ~ ns.pending ~ '<end_of_turn>\\n' }}"
    "{%- endif -%}"
    "{%- if add_generation_prompt -%}{{ '<start_of_turn>model\\n' }}{%- endif -%}"
)


def install_gemma_template(tokenizer: Any) -> bool:
    """Give a template-less Gemma tokenizer the turn format above; True if installed.

    Only tokenizers that know ``<start_of_turn>`` as one token get it, so another
    template-less model is never silently given Gemma's format.
    """
    if getattr(tokenizer, "chat_template", None):
        return False
    ids = tokenizer.convert_tokens_to_ids(["<start_of_turn>", TURN_END])
    if any(i is None or i == tokenizer.unk_token_id for i in ids):
        return False
    tokenizer.chat_template = GEMMA_CHAT_TEMPLATE
    return True


def turn_end_ids(tokenizer: Any) -> list[int]:
    """Token ids that end a model turn in this template (for stopping generation)."""
    i = tokenizer.convert_tokens_to_ids(TURN_END)
    return [i] if isinstance(i, int) and i != tokenizer.unk_token_id else []
