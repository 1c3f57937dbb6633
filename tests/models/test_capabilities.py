"""A backend asked for a capability it lacks raises CapabilityError in one line that names
the model, what it cannot do and what to do instead; its ``capabilities`` leave it out.
(The transformers backend's case, a tokenizer without a chat template, is tested in
test_chat.py with the real Qwen tokenizer.)"""

from __future__ import annotations

import pytest

from toolaudit.models import CapabilityError, load_model
from toolaudit.models._sklearn import SklearnModel

CHAT = [{"role": "user", "content": "Where is my order?"}]


def _one_line(err: pytest.ExceptionInfo[CapabilityError], identity: str, what: str) -> str:
    msg = str(err.value)
    assert "\n" not in msg
    assert msg.startswith(f"{identity}: cannot {what}: ")
    return msg


@pytest.fixture(scope="module")
def classifier() -> SklearnModel:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline

    texts = ["refund please", "great service", "broken item refund", "thanks a lot"]
    pipe = make_pipeline(TfidfVectorizer(), LogisticRegression()).fit(texts, [1, 0, 1, 0])
    return SklearnModel.from_pipeline(pipe, identity="sklearn:tiny")


def test_openai_render_without_a_tokenizer_says_to_give_the_served_models_tokenizer():
    lm = load_model("openai:m@http://127.0.0.1:9/v1")
    assert "render" not in lm.capabilities
    with pytest.raises(CapabilityError) as err:
        lm.render(CHAT)
    msg = _one_line(err, "openai:m@http://127.0.0.1:9/v1", "render a chat")
    assert "applies its own chat template" in msg
    assert "openai:MODEL@URL,tokenizer=PATH_TO_MODEL_FOLDER" in msg and "embedded:qwen" in msg


def test_sklearn_render_and_generate_say_to_load_a_chat_model(classifier):
    assert classifier.capabilities == frozenset({"loglikelihood"})
    with pytest.raises(CapabilityError) as err:
        classifier.render(CHAT)
    assert "load a chat model" in _one_line(err, "sklearn:tiny", "render a chat")
    with pytest.raises(CapabilityError) as err:
        classifier.generate(CHAT, max_tokens=4)
    msg = _one_line(err, "sklearn:tiny", "generate a chat reply")
    assert "complete()" in msg and "load a chat model" in msg
    # What it can do still works: an answer option is scored, a completion is a tag.
    assert classifier.complete(["broken item"])[0].startswith("<answer>")


def test_sklearn_non_option_continuation_names_the_model(classifier):
    with pytest.raises(Exception, match=r"^sklearn:tiny: can score only answer options 1\.\.10"):
        classifier.loglikelihood([("ctx", " yes")])


def test_py_without_attributes_says_which_attribute_to_add():
    lm = load_model("py:tests.models.toy_backend:no_scoring")
    assert lm.capabilities == frozenset()
    name = "py:tests.models.toy_backend:no_scoring"
    with pytest.raises(CapabilityError) as err:
        lm.loglikelihood([("a", "b")])
    assert "'loglikelihood(requests)" in _one_line(err, name, "score")
    with pytest.raises(CapabilityError) as err:
        lm.generate(CHAT)
    assert "'chat(messages, tools)" in _one_line(err, name, "generate a chat reply")
    with pytest.raises(CapabilityError) as err:
        lm.render(CHAT)
    assert "hf:PATH" in _one_line(err, name, "render a chat")
