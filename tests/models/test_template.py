"""The served model's tokenizer and chat template loaded without transformers
(``tokenizer=`` of ``openai:``): the embedded Qwen read from its GGUF metadata and the
embedded Gemma from its converted folder must give the transformers tokenizer's exact
token ids and the exact rendered chat, on the faults audit's real decision contexts (the
policy, the 16 retail tool schemas and tool calls in the history)."""

from __future__ import annotations

import pytest

from toolaudit.errors import ConfigError, ModelError
from toolaudit.faults import first_call_site, mini_domain, replay
from toolaudit.faults._chat import event_messages, tool_specs
from toolaudit.models import load_model
from toolaudit.models._registry import split_options

TEXTS = [
    "Hello world",
    "  leading spaces\n\n\ttabs",
    "Ünïcödé ñ 東京 🙂 émoji",
    "12345678 3.14159 #W2378156",
    '<|im_start|>user\nhi<|im_end|>\n<tool_call>\n{"name": "x"}\n</tool_call>',
    "don't I'LL we've",
    "a\r\nb\r\n\r\n  c   ",
]


def _faults_chat() -> list[dict]:
    d = mini_domain()
    traj = replay(d.tasks[0], d.db)
    site = first_call_site()(traj)
    msgs = [{"role": "system", "content": d.policy}]
    for i, ev in enumerate(traj.events[: site.event + 1]):
        msgs += event_messages(ev, i)
    return msgs


@pytest.mark.model
@pytest.mark.parametrize("name", ["qwen", "gemma"])
def test_served_tokenizer_matches_transformers(name):
    from transformers import AutoTokenizer

    from toolaudit.models import embedded_model_dir
    from toolaudit.models._gemma import install_gemma_template
    from toolaudit.models._template import load_served_tokenizer

    served = load_served_tokenizer(f"embedded:{name}")
    hf = AutoTokenizer.from_pretrained(str(embedded_model_dir(name)))
    install_gemma_template(hf)
    msgs = _faults_chat()
    texts = list(TEXTS)
    for gen in (True, False):
        ours = served.render(msgs, tool_specs(), add_generation_prompt=gen)
        theirs = hf.apply_chat_template(
            msgs, tools=tool_specs(), tokenize=False, add_generation_prompt=gen
        )
        assert ours == theirs
        texts.append(ours)
    for text in texts:
        assert served.encode_context(text) == hf(text, add_special_tokens=True)["input_ids"]
        assert served.encode_continuation(text) == hf(text, add_special_tokens=False)["input_ids"]


def test_spec_options_are_split_and_typed():
    base, opts = split_options("openai:m@http://h:1/v1,tokenizer=embedded:qwen,concurrency=2")
    assert (base, opts) == (
        "openai:m@http://h:1/v1",
        {"tokenizer": "embedded:qwen", "concurrency": "2"},
    )
    lm = load_model("openai:m@http://127.0.0.1:9/v1,concurrency=3,check_template=false")
    assert lm.concurrency == 3 and lm.check_template is False
    with pytest.raises(ConfigError, match="concurrency='x' is not a int"):
        load_model("openai:m@http://127.0.0.1:9/v1,concurrency=x")
    with pytest.raises(ConfigError, match="openai option"):
        load_model("openai:m@http://127.0.0.1:9/v1,nosuch=1")
    with pytest.raises(ConfigError, match="given twice"):
        load_model("openai:m@http://127.0.0.1:9/v1,concurrency=1,concurrency=2")
    with pytest.raises(ConfigError, match="given in the spec and as an argument"):
        load_model("openai:m@http://127.0.0.1:9/v1,concurrency=1", concurrency=2)


def test_a_server_model_without_tokenizer_says_how_to_render():
    lm = load_model("openai:m@http://127.0.0.1:9/v1")
    assert "render" not in lm.capabilities
    with pytest.raises(ModelError, match="tokenizer=PATH_TO_MODEL_FOLDER"):
        lm.render([{"role": "user", "content": "hi"}])


def test_a_bad_tokenizer_path_is_one_line(tmp_path):
    lm = load_model(f"openai:m@http://127.0.0.1:9/v1,tokenizer={tmp_path / 'nope'}")
    with pytest.raises(ModelError, match="no such folder or file"):
        _ = lm.identity
    with pytest.raises(ModelError, match="has no tokenizer.json"):
        load_model(f"openai:m@http://127.0.0.1:9/v1,tokenizer={tmp_path}").render([])


def test_local_pieces_of_a_continuation_for_forced_scoring() -> None:
    """The pieces the forced-completion path sends (token text, offset) come from the
    local tokenizer, so no echo replaces the server's cached context; a token holding
    part of a UTF-8 character gives None (the server's echo tokenizes that text)."""
    from toolaudit.models._openai import _pieces
    from toolaudit.models._template import load_served_tokenizer

    served = load_served_tokenizer("embedded:qwen")
    text = ' {"order_id": "#W2378156", "status": "delivered"}'
    ids = served.encode_continuation(text)
    pieces = _pieces(served, ids, text)
    assert pieces is not None and len(pieces) == len(ids)
    assert "".join(p for p, _ in pieces) == text
    assert all(text[off:].startswith(p) for p, off in pieces)
    rare = " 𝔘𝔫𝔦"  # mathematical letters: byte-level BPE splits each across tokens
    assert _pieces(served, served.encode_continuation(rare), rare) is None
