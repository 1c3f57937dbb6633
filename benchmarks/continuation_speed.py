"""Continuations of one context scored as a token trie in one forward pass (tree
attention) against the batch path (continuations in batches of 8 on copies of the
context's cache), on a real faults decision point of the embedded Qwen.

The decision: the shipped mini domain's first task, rendered with the 16 retail tool
schemas up to the site return (about 2,650 tokens); the 51 continuations the action
channel scores there (3 openers, and each opener followed by each tool name). The
context runs once first (both paths then start from its stored cache), so the ratio is
the continuations' cost alone. Prints both wall and CPU times, the ratio, the largest
difference between the two paths' log-probabilities and the action distribution's
leading action and unrecognised mass. The last line is
``ratio=<batch/tree wall time> max_abs_diff=<largest log-probability difference>``.

``--smoke`` checks in seconds that the script still runs: the same decision and
continuations on a tiny random model with the embedded Qwen's tokenizer (``_tiny.py``)
instead of ``--model``; both paths must still agree, but its ratio means nothing.

    python benchmarks/continuation_speed.py [--model embedded:qwen]
    python benchmarks/continuation_speed.py --smoke
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _tiny import tiny_qwen  # noqa: E402


def main() -> None:
    from toolaudit.faults import first_call_site, mini_domain, replay
    from toolaudit.faults._actions import distribution_from_scores, requests_for
    from toolaudit.faults._chat import event_messages, tool_specs
    from toolaudit.faults._schemas import TOOL_SCHEMAS
    from toolaudit.models import load_model

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="embedded:qwen")
    ap.add_argument("--smoke", action="store_true", help="a tiny model instead (see above)")
    args = ap.parse_args()
    lm = tiny_qwen() if args.smoke else load_model(args.model, device="cpu")
    domain = mini_domain()
    traj = replay(domain.tasks[0], domain.db)
    site = first_call_site()(traj)
    msgs = [{"role": "system", "content": domain.policy}]
    for i, ev in enumerate(traj.events[: site.event + 1]):
        msgs += event_messages(ev, i)
    text = lm.render(msgs, tool_specs(), add_generation_prompt=True)
    tools = list(TOOL_SCHEMAS)
    reqs = requests_for(text, tools)
    t0, c0 = time.perf_counter(), time.process_time()
    lm.loglikelihood([(text, " ")])
    print(f"context: {len(lm.encode_context(text))} tokens, "
          f"{time.perf_counter() - t0:.1f} s wall, {time.process_time() - c0:.1f} s cpu")  # fmt: skip
    results = {}
    for path in ("batch", "tree"):
        if path == "batch":
            lm.scorer._tree_ok = lambda: False
        else:
            del lm.scorer._tree_ok  # the class's own test again
        ran = lm.scorer.tokens_run
        t0, c0 = time.perf_counter(), time.process_time()
        scores = lm.loglikelihood(reqs)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        pi = distribution_from_scores(scores, tools)
        results[path] = (scores, wall)
        print(f"{path:5s}: {len(reqs)} continuations, {wall:.2f} s wall, {cpu:.2f} s cpu, "
              f"{lm.scorer.tokens_run - ran} positions run; leading {pi.leading} "
              f"{pi.probs[pi.leading]:.3f}, p_unrecognised {pi.p_unrecognised:.4f}")  # fmt: skip
    diff = max(
        abs(a - b)
        for x, y in zip(results["tree"][0], results["batch"][0], strict=True)
        for a, b in zip(x, y, strict=True)
    )
    print(f"ratio={results['batch'][1] / results['tree'][1]:.2f} max_abs_diff={diff:.2e}")


if __name__ == "__main__":
    main()
