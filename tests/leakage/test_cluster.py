"""Dask scale-out: a real LocalCluster with 2 workers gives the in-process results."""

from __future__ import annotations

import json

import pytest

from toolaudit.cli.main import main
from toolaudit.errors import ConfigError
from toolaudit.leakage import DilutionConfig, LeakageConfig, run_leakage
from toolaudit.leakage._cluster import check_backend, dask_client
from toolaudit.traces import write_jsonl

from .conftest import adversarial_examples


def _payload(result):
    return json.dumps(result.as_json(), sort_keys=True, default=str)


def test_dask_local_cluster_matches_in_process():
    pytest.importorskip("distributed")
    examples = adversarial_examples(n=120, seed=4)
    cfg = LeakageConfig(n_boot=100, dilution=DilutionConfig(k_values=(0, 1, 2), n_seeds=2))
    local = run_leakage(examples, cfg)
    before = _listeners()
    with dask_client("local", n_workers=2) as client:
        assert len(client.scheduler_info()["workers"]) == 2
        opened = _listeners() - before
    # the scheduler's and workers' HTTP servers listen on loopback only
    assert opened and all(addr in _LOOPBACK for addr, _ in opened), opened
    clustered = run_leakage(examples, LeakageConfig(**{**_fields(cfg), "scheduler": "local"}))
    assert _payload(clustered) == _payload(local)
    assert clustered.dilution["synthetic"]["points"]


_LOOPBACK = {"0100007F", "00000000000000000000000001000000"}  # 127.0.0.1 and ::1


def _listeners() -> set[tuple[str, str]]:
    """(local address hex, port hex) of every listening TCP socket (Linux /proc/net)."""
    out = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in open(table).read().splitlines()[1:]:
            cols = line.split()
            if cols[3] == "0A":  # LISTEN
                addr, port = cols[1].split(":")
                out.add((addr, port))
    return out


def _fields(cfg):
    return {name: getattr(cfg, name) for name in cfg.__dataclass_fields__}


def test_backend_rejects_cluster_names_and_forking_pools():
    for bad in ("ray", "dask", "multiprocessing"):
        with pytest.raises(ConfigError, match="invalid backend="):
            check_backend(bad)
    with pytest.raises(ConfigError, match="use loky"):
        check_backend("multiprocessing")
    check_backend("loky")


def test_cli_scheduler_without_extra_exits_2_with_pip_line(tmp_path, capsys, monkeypatch):
    import sys

    # None in sys.modules makes ``import distributed`` raise ImportError, as when the
    # extra is not installed
    monkeypatch.setitem(sys.modules, "distributed", None)
    data = tmp_path / "examples.jsonl"
    write_jsonl(data, adversarial_examples(n=30))
    code = main(["leakage", str(data), "--out", str(tmp_path / "o"), "--scheduler", "local"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1
    assert "pip install 'toolaudit[dask]'" in err[0]
    assert not (tmp_path / "o").exists()


def test_quiet_cluster_run_prints_no_cluster_chatter(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    pytest.importorskip("distributed")
    data = tmp_path / "examples.jsonl"
    write_jsonl(data, adversarial_examples(n=60, seed=2))
    toolaudit = Path(sys.executable).parent / "toolaudit"
    argv = [str(toolaudit), "-q", "leakage", str(data), "--out", str(tmp_path / "o"),
            "--scheduler", "local", "--n-boot", "50", "--no-dilution"]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == "", done.stderr[-2000:]  # no INFO lines from distributed
    assert (tmp_path / "o" / "leakage.json").is_file()
