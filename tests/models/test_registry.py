"""Spec parsing and the lazy backend registry."""

from __future__ import annotations

import subprocess
import sys

import pytest

from toolaudit.errors import ConfigError, ModelError
from toolaudit.models import load_model, parse_spec
from toolaudit.models._callable import CallableModel
from toolaudit.models._hf import HFModel
from toolaudit.models._openai import OpenAIModel
from toolaudit.models._registry import BACKENDS
from toolaudit.models._sklearn import SklearnModel


def test_parse_spec_splits_backend_and_target():
    spec = parse_spec("openai:gemma@http://host:8000/v1")
    assert (spec.backend, spec.target) == ("openai", "gemma@http://host:8000/v1")
    assert parse_spec("embedded").target == ""
    assert parse_spec("py:pkg.mod:fn").target == "pkg.mod:fn"


def test_parse_spec_unknown_backend_names_allowed_values():
    with pytest.raises(ConfigError) as err:
        parse_spec("vllm:foo")
    msg = str(err.value)
    assert "'vllm'" in msg
    for name in BACKENDS:
        assert repr(name) in msg


def test_load_model_unknown_option_is_config_error():
    with pytest.raises(ConfigError, match="batch_size"):
        load_model("openai:m@http://x/v1", batch_size=3)


def test_load_model_builds_each_backend_without_loading(tmp_path):
    assert isinstance(load_model("embedded", batch_size=2), HFModel)
    assert isinstance(load_model(f"hf:{tmp_path}", max_states=2), HFModel)
    assert isinstance(load_model("embedded:gemma", device="cpu"), HFModel)
    lm = load_model("openai:m@http://127.0.0.1:9/v1", concurrency=3)
    assert isinstance(lm, OpenAIModel)
    assert lm.identity == "openai:m@http://127.0.0.1:9/v1"
    assert isinstance(load_model(f"sklearn:{tmp_path / 'x.joblib'}"), SklearnModel)
    assert isinstance(load_model("py:tests.models.toy_backend:echo_upper"), CallableModel)


def test_load_model_bad_targets_raise_model_error():
    with pytest.raises(ModelError, match="hf:/no/such/folder: no such model folder"):
        load_model("hf:/no/such/folder")
    with pytest.raises(
        ConfigError, match="invalid embedded model='llama'; allowed: 'gemma', 'qwen'"
    ):
        load_model("embedded:llama")
    with pytest.raises(ModelError, match="py:module:function"):
        load_model("py:nomodule")
    with pytest.raises(ModelError, match="cannot import"):
        load_model("py:no_such_module_xyz:f")
    with pytest.raises(ModelError, match="model name"):
        load_model("openai:@http://x/v1")


def test_registry_imports_backends_lazily():
    code = (
        "import sys, toolaudit.models as m; m.load_model('openai:x@http://h/v1');"
        "print('torch' in sys.modules, 'transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


def test_score_agreement_rejects_different_tokenization():
    from toolaudit.errors import DataError
    from toolaudit.models._compare import score_agreement

    agree = score_agreement([[-1.0, -2.0], [-3.0]], [[-1.5, -2.0], [-2.0]])
    assert agree.tokens == 3 and agree.max_text_delta == 1.0
    assert agree.pooled_delta == pytest.approx(0.5 / 3)
    assert agree.max_token_delta == 1.0 and agree.mean_token_delta == pytest.approx(1.5 / 3)
    with pytest.raises(DataError, match="tokenization differs"):
        score_agreement([[-1.0]], [[-1.0, -2.0]])


def test_public_surface_is_documented():
    import toolaudit.models as models

    for name in models.__all__:
        obj = getattr(models, name)
        if callable(obj):
            assert (obj.__doc__ or "").strip(), name
