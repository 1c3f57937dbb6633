"""The first leakage run on a fresh install compiles the PT2D kernels for minutes: it
says so through its progress callback instead of staying silent."""

from __future__ import annotations

import pytest

from toolaudit.leakage import LeakageConfig, _kernels, run_leakage

from .conftest import adversarial_examples


@pytest.mark.parametrize("cached", [True, False])
def test_a_run_without_compiled_kernels_says_it_compiles(
    cached: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _kernels.compiled_before()  # this checkout has run the kernels (conftest, tests)
    monkeypatch.setattr(_kernels, "compiled_before", lambda: cached)
    labels: list[str] = []
    cfg = LeakageConfig(n_boot=50, dilution=None)
    run_leakage(adversarial_examples(), cfg, progress=lambda d, t, label: labels.append(label))
    said = [x for x in labels if x.startswith("compiling the PT2D kernels")]
    assert said == ([] if cached else [said[0]]) and (cached or "once per install" in said[0])
