"""Hostile model files (issue 43): a ``tokenizer=`` folder whose ``tokenizer_config.json``
is a list or not UTF-8, whose ``chat_template.json`` is not JSON, whose template does not
parse or does what the Jinja sandbox refuses; a prepared model folder whose digest record
is a folder, whose weights are truncated behind a link, that is read-only when its record
must be refreshed, or that is reached through a link. Each is one line naming the file
and the fix (exit 2 from the CLI), or, for a read-only folder whose files check out, no
error at all. The folders are tiny fakes: no real model is loaded."""

from __future__ import annotations

import json
import os
import pathlib
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.errors import ModelError

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")

from toolaudit.models._embedded import (  # noqa: E402
    DIGESTS,
    _prepared_files,
    _write_digests,
    current_digest,
    is_prepared,
    verify_prepared,
)
from toolaudit.models._template import load_served_tokenizer  # noqa: E402

TEMPLATE = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
CHAT = [{"role": "user", "content": "hi"}]


def _tokenizer_folder(folder: Path, *, config: object = None) -> Path:
    """A word-level tokenizer.json and a tokenizer_config.json holding ``config``."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    folder.mkdir(parents=True, exist_ok=True)
    tok = Tokenizer(models.WordLevel({"[UNK]": 0, "hi": 1}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.save(str(folder / "tokenizer.json"))
    cfg = {"chat_template": TEMPLATE, "eos_token": "hi"} if config is None else config
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg))
    return folder


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    rc = main(argv)
    err = capsys.readouterr().err.strip()
    assert rc == 2, err
    assert err.startswith("toolaudit: error: ") and "\n" not in err
    return err


def test_tokenizer_folder_valid_renders(tmp_path: Path) -> None:
    served = load_served_tokenizer(str(_tokenizer_folder(tmp_path / "tok")))
    assert served.render(CHAT, add_generation_prompt=False) == "<user>hi"


def test_tokenizer_config_that_is_a_list_is_refused(tmp_path: Path) -> None:
    folder = _tokenizer_folder(tmp_path / "tok", config=[1, 2])
    with pytest.raises(
        ModelError, match=r"tokenizer_config.json: expected a JSON object, got list"
    ):
        load_served_tokenizer(str(folder))


def test_tokenizer_config_not_utf8_is_refused(tmp_path: Path) -> None:
    folder = _tokenizer_folder(tmp_path / "tok")
    (folder / "tokenizer_config.json").write_bytes(b'{"eos_token": "\xff\xfe"}')
    with pytest.raises(ModelError, match=r"tokenizer_config.json: not UTF-8 text \(byte 15\)"):
        load_served_tokenizer(str(folder))


@pytest.mark.parametrize(
    ("text", "says"),
    [("{not json", "chat_template.json: not JSON"),
     ('["a"]', "chat_template.json: expected a JSON object, got list"),
     ('{"chat_template": 3}', "chat_template.json, field 'chat_template': expected a string")],
    ids=["not-json", "list", "number"],
)  # fmt: skip
def test_chat_template_json_that_is_not_a_template_is_refused(
    tmp_path: Path, text: str, says: str
) -> None:
    folder = _tokenizer_folder(tmp_path / "tok", config={})
    (folder / "chat_template.json").write_text(text)
    with pytest.raises(ModelError, match=says):
        load_served_tokenizer(str(folder))


def test_chat_template_that_does_not_parse_is_refused_when_loaded(tmp_path: Path) -> None:
    folder = _tokenizer_folder(tmp_path / "tok", config={})
    (folder / "chat_template.jinja").write_text("line one\n{% for m in messages %}{{ m }")
    with pytest.raises(ModelError, match=r"tok, chat template line 2: does not parse"):
        load_served_tokenizer(str(folder))


def test_chat_template_the_sandbox_refuses_is_one_line_at_render(tmp_path: Path) -> None:
    folder = _tokenizer_folder(tmp_path / "tok", config={})
    (folder / "chat_template.jinja").write_text("{{ messages.append(1) }}")
    served = load_served_tokenizer(str(folder))
    with pytest.raises(ModelError, match="does what the Jinja sandbox refuses"):
        served.render(CHAT)


def test_cli_tokenizer_folder_bad_config_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _tokenizer_folder(tmp_path / "tok", config=["not", "an", "object"])
    msgs = tmp_path / "m.json"
    msgs.write_text(json.dumps(CHAT))
    spec = f"openai:m@http://127.0.0.1:9/v1,tokenizer={folder}"
    err = _run(["models", "score", spec, "--messages", str(msgs)], capsys)
    assert "tokenizer_config.json: expected a JSON object, got list" in err


# --- prepared model folders -----------------------------------------------------------


def _prepared(folder: Path) -> Path:
    """A fake prepared folder (a config.json transformers reads, random 'weights') with
    its digest record, as `toolaudit models prepare` writes one."""
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"model_type": "qwen2"}))
    (folder / "model.safetensors").write_bytes(os.urandom(4096))
    _write_digests(folder, {n: current_digest(folder / n) for n in _prepared_files(folder)})
    return folder


def test_prepared_digest_record_that_is_a_folder_is_refused(tmp_path: Path) -> None:
    folder = _prepared(tmp_path / "models" / "m")
    (folder / DIGESTS).unlink()
    (folder / DIGESTS).mkdir()
    with pytest.raises(ModelError, match=f"{DIGESTS}: a folder or special file, not a digest"):
        verify_prepared(folder)


def test_prepared_weights_truncated_behind_a_link_are_refused(tmp_path: Path) -> None:
    folder = _prepared(tmp_path / "models" / "m")
    elsewhere = tmp_path / "weights.bin"
    elsewhere.write_bytes((folder / "model.safetensors").read_bytes()[:1000])
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").symlink_to(elsewhere)
    with pytest.raises(ModelError, match=r"damaged \(model.safetensors: SHA-256"):
        verify_prepared(folder)
    (folder / "model.safetensors").unlink()
    (folder / "model.safetensors").symlink_to(tmp_path / "gone.bin")  # dangling
    with pytest.raises(ModelError, match=r"damaged \(model.safetensors is missing\)"):
        verify_prepared(folder)


def _make_read_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on, writing the digest record fails as in a read-only folder (chmod does
    not stop root, who runs these tests in some containers)."""
    real = pathlib.Path.write_text

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        if self.name.startswith(f".{DIGESTS}"):
            raise PermissionError(13, "Permission denied", str(self))
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pathlib.Path, "write_text", refuse)


def test_prepared_read_only_folder_whose_record_is_refreshed_still_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _prepared(tmp_path / "models" / "m")
    _make_read_only(monkeypatch)
    record = (folder / DIGESTS).read_text()
    os.utime(folder / "model.safetensors", ns=(1, 1))  # touched: same bytes, new time
    verify_prepared(folder)  # the bytes are checked; the record simply stays as it was
    assert (folder / DIGESTS).read_text() == record


def test_prepared_read_only_folder_without_record_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _prepared(tmp_path / "models" / "m")
    _make_read_only(monkeypatch)
    (folder / DIGESTS).unlink()
    with pytest.raises(ModelError, match=f"{DIGESTS}: cannot record the SHA-256 .*Permission"):
        verify_prepared(folder)


def test_symlinked_prepared_folder_is_still_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLAUDIT_CACHE", str(tmp_path / "cache"))
    (tmp_path / "cache" / "models").mkdir(parents=True)
    real = _prepared(tmp_path / "elsewhere" / "m")
    in_cache = tmp_path / "cache" / "models" / "m"
    in_cache.symlink_to(real)  # the cache's folder is a link to one outside it
    link = tmp_path / "link"
    link.symlink_to(real)  # and a link to it from anywhere
    (real / DIGESTS).unlink()  # without its record, only the place says it is prepared
    assert is_prepared(in_cache)
    assert not is_prepared(tmp_path / "elsewhere" / "m")
    _write_digests(real, {n: current_digest(real / n) for n in _prepared_files(real)})
    assert is_prepared(link)
    with (real / "model.safetensors").open("r+b") as fh:
        fh.truncate(100)
    for path in (in_cache, link):
        err = _run(["models", "score", f"hf:{path}", "--context", "a", "--continuation", "b"],
                   capsys)  # fmt: skip
        assert f"{path}: the prepared model files are damaged (model.safetensors" in err
