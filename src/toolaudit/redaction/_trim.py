"""Shorter prompts for slow models: keep some tool sections, cut the others.

A 2,048-token forward pass of the embedded Gemma 3 270M takes about 15 s on 2 CPU cores,
and a controlled-benchmark prompt is about 4,800 tokens, so zero-shot runs on a CPU use
shortened rows. Shortening is applied to the original rows *before* any redaction, so
every variant sees the same shortened rows; it edits every prompt-bearing copy of a tool
section (the section itself, ``prompt``, each message and every string under ``meta``)
by replacing the section's text with its shortened text.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolaudit.errors import ConfigError
from toolaudit.redaction._apply import map_prompt_strings
from toolaudit.traces import Example


def _shorten(content: str, max_lines: int | None) -> str:
    if max_lines is None:
        return content
    return "\n".join(content.splitlines()[:max_lines])


def trim_example(
    example: Example, *, keep_tools: Sequence[str] | None = None, max_lines: int | None = None
) -> Example:
    """A copy of ``example`` whose tool sections not in ``keep_tools`` are emptied and
    whose kept sections are cut to their first ``max_lines`` lines, in every
    prompt-bearing field. ``None`` keeps every tool / every line."""
    if max_lines is not None and max_lines < 1:
        raise ConfigError.invalid("max_lines", "an integer >= 1", max_lines)
    edits: list[tuple[str, str]] = []
    for t in example.tools:
        keep = keep_tools is None or t.name in keep_tools
        new = _shorten(t.content, max_lines) if keep else ""
        if new != t.content and t.content:
            edits.append((t.content, new))
    if not edits:
        return example
    # Longest first, so a section that contains another is replaced whole.
    edits.sort(key=lambda e: -len(e[0]))

    def fn(_path: str, text: str) -> str:
        for old, new in edits:
            text = text.replace(old, new)
        return text

    return Example.model_validate(map_prompt_strings(example.model_dump(), fn))


def trim_examples(
    examples: Sequence[Example],
    *,
    keep_tools: Sequence[str] | None = None,
    max_lines: int | None = None,
) -> list[Example]:
    """:func:`trim_example` applied to every row (unknown tool names are an error)."""
    if keep_tools is not None:
        known = {t.name for ex in examples for t in ex.tools}
        unknown = sorted(set(keep_tools) - known)
        if unknown:
            raise ConfigError.invalid("keep_tools", sorted(known), ",".join(unknown))
    return [trim_example(ex, keep_tools=keep_tools, max_lines=max_lines) for ex in examples]
