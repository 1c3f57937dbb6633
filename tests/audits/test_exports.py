"""Each package's ``__all__`` holds what another package or a user needs (issue 28):
every exported name is used by another package, by the documentation, or by the tests
(which use the package as a user does), or is a type in the signature of another
exported name (a user annotating a call needs it)."""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "toolaudit"
PACKAGES = sorted(p.parent.name for p in SRC.glob("*/__init__.py"))


def _texts(package: str) -> list[str]:
    """Everything outside ``package`` that could use its names."""
    out = [p.read_text(encoding="utf-8") for p in SRC.rglob("*.py")
           if p.relative_to(SRC).parts[0] != package]  # fmt: skip
    out += [p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py")]
    out += [p.read_text(encoding="utf-8") for p in (ROOT / "docs").glob("*.md")]
    out.append((ROOT / "README.md").read_text(encoding="utf-8"))
    return out


def _annotations(obj: object) -> str:
    """The annotation text of a callable's parameters and return, a dataclass's fields
    or a pydantic model's fields."""
    parts: list[str] = []
    if dataclasses.is_dataclass(obj):
        parts += [str(f.type) for f in dataclasses.fields(obj)]
    fields = getattr(obj, "model_fields", None)
    if isinstance(fields, dict):
        parts += [str(f.annotation) for f in fields.values()]
    target = obj.__init__ if inspect.isclass(obj) else obj  # type: ignore[misc]
    if callable(target):
        try:
            sig = inspect.signature(target)
        except (TypeError, ValueError):
            return " ".join(parts)
        parts += [str(p.annotation) for p in sig.parameters.values()]
        parts.append(str(sig.return_annotation))
    return " ".join(parts)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_exported_name_is_needed(package: str) -> None:
    module = importlib.import_module(f"toolaudit.{package}")
    names = list(getattr(module, "__all__", []))
    texts = _texts(package)
    signatures = {n: _annotations(getattr(module, n)) for n in names}
    unused = []
    for name in names:
        word = re.compile(rf"\b{re.escape(name)}\b")
        if any(word.search(t) for t in texts):
            continue
        if any(word.search(sig) for other, sig in signatures.items() if other != name):
            continue
        unused.append(name)
    assert unused == [], f"toolaudit.{package} exports names nothing outside it needs: {unused}"
