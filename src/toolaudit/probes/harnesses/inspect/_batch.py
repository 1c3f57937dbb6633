"""Many samples in one Inspect eval: the scripted agents' runs of one (policy, condition,
epoch), in one log, their samples run concurrently (Inspect's ``max_samples``).

One eval per run spends most of a scripted run's seconds starting the eval and writing its
log; one eval per (policy, condition, epoch) pays that once, and the log is the one a user
opens in ``inspect view``. Each sample's record is what its own eval would have written:
the scripted models keep one conversation per sample (found by the sample id a first
solver step marks), the mutation and the memo of reformatted returns are the condition's,
each sample is mapped back and rescored by the task's own scorer, and a sample that failed
or was cut off is an ``error`` outcome. Only ``source.log`` differs: it names the batch's
log (``<policy>/<condition>/e<epoch>.eval``, ``e<epoch>-2.eval`` for a resumed batch).
Model-driven runs stay one eval each: each keeps its own sampling seed.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolaudit.errors import ConfigError
from toolaudit.probes._mutations import tool_mutation
from toolaudit.probes.harnesses.inspect._samples import (
    cut_off,
    name_scorers_for_inspect,
    reformatted_returns,
    rescore_samples,
    scores_by_name,
)
from toolaudit.traces import Episode

if TYPE_CHECKING:
    from toolaudit.probes.harnesses.inspect._harness import InspectHarness, InspectRunSpec


def batchable(harness: InspectHarness, spec: InspectRunSpec) -> bool:
    """Whether ``spec`` can share an eval: a scripted agent on a tau2 task."""
    from toolaudit.probes.harnesses.inspect._scripted import SCRIPTED

    return not harness.generic and spec.policy in SCRIPTED and not spec.agent


def batch_key(spec: InspectRunSpec) -> tuple[str, str, int]:
    """The runs that share one eval: one policy, condition and epoch."""
    return (spec.policy, spec.condition, spec.seed_label)


def _free(folder: Path, epoch: int) -> Path:
    """``e<epoch>.eval``, or the first ``e<epoch>-<k>.eval`` not yet written (a resumed
    batch writes a log of its own beside the first)."""
    path = folder / f"e{epoch}.eval"
    k = 2
    while path.exists():
        path = folder / f"e{epoch}-{k}.eval"
        k += 1
    return path


def run_batch(
    harness: InspectHarness, specs: Sequence[InspectRunSpec], *, max_samples: int | None = None
) -> list[Episode]:
    """The records of ``specs`` (one policy, condition and epoch; scripted, tau2), from
    one eval of their samples; model-driven or generic runs go one eval each."""
    from toolaudit.probes.harnesses.inspect._harness import episode_of, eval_sample
    from toolaudit.probes.harnesses.inspect._scripted import batch_scripted_models
    from toolaudit.probes.harnesses.inspect._tau2 import tool_descriptions, tool_names

    if not specs:
        return []
    if not all(batchable(harness, s) for s in specs) or len({batch_key(s) for s in specs}) > 1:
        return [harness.run(s) for s in specs]
    policy, condition, epoch = batch_key(specs[0])
    domain = harness.domain
    memo: dict[str, str] = {}
    tools = domain.agent_tools()
    mutation = tool_mutation(condition, tool_names(tools))
    ids = [s.sample_id for s in specs]
    references = {i: domain.reference(i) for i in ids}
    agent, user = batch_scripted_models(policy, references, tool_descriptions(tools))
    task = domain.build_task(ids, mutation, memo)
    folder = harness.log_dir / policy / condition
    folder.mkdir(parents=True, exist_ok=True)
    target = _free(folder, epoch)
    log, seconds = eval_sample(task, agent, {"user": user}, target, harness.time_limit, None,
                               max_samples=max_samples)  # fmt: skip
    name_scorers_for_inspect(target, harness.task)
    samples = {str(s.id): s for s in log.samples or []}
    missing = [i for i in ids if i not in samples]
    if missing:
        raise ConfigError(f"{target}: the eval recorded no sample {missing[0]!r} ({log.status})")
    cuts = {i: cut_off(samples[i], harness.time_limit, None) for i in ids}
    ok = [s for i, s in samples.items() if s.error is None and cuts[i] is None]
    rescored = (
        rescore_samples(log.model_copy(update={"samples": ok}), mutation, memo, domain.scorer())
        if ok
        else {}
    )
    out = []
    with (harness.log_dir.parent / "timings.jsonl").open("a", encoding="utf-8") as fh:
        for spec in specs:
            sample = samples[spec.sample_id]
            value, by_scorer = rescored.get(spec.sample_id, (None, {}))
            took = float(getattr(sample, "total_time", None) or seconds / len(specs))
            fh.write(json.dumps({"config_hash": spec.config_hash(), "seconds": round(took, 3),
                                 "batch": target.name}) + "\n")  # fmt: skip
            ep = episode_of(spec, sample, target, mutation, value, took,
                            reformatted_returns(sample, memo), cuts[spec.sample_id],
                            instance=domain.instance, model=harness.model)  # fmt: skip
            if len(by_scorer) > 1:  # a task of several scorers: each one's verdict, both ways
                ep.source["scorers"] = {"native": scores_by_name(sample), "rescored": by_scorer}
            out.append(ep)
    return out
