"""The shared tau2 runs rewritten in other layouts, the way their tools write them:
tau2's directory layout (``Results.save(format="dir")``), OpenAI chat JSONL and Langfuse
trace exports. Used by the tests and by ``examples/format_examples.py``."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any


def save_dir(src: Path, dest: Path, *, index: bool = True) -> Path:
    """Write ``src`` as tau2's ``Results.save(dest, format="dir")`` does."""
    doc = json.loads(src.read_text(encoding="utf-8"))
    sims = doc.pop("simulations")
    if index:
        doc["simulation_index"] = [
            {
                "id": s["id"],
                "task_id": s["task_id"],
                "trial": s["trial"],
                "reward": (s.get("reward_info") or {}).get("reward"),
                "termination_reason": s.get("termination_reason"),
                "agent_cost": s.get("agent_cost"),
                "duration": s.get("duration"),
            }
            for s in sims
        ]
    (dest / "simulations").mkdir(parents=True)
    (dest / "results.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    for s in sims:
        (dest / "simulations" / f"{s['id']}.json").write_text(json.dumps(s, indent=2))
    return dest


def _openai_message(m: dict[str, Any]) -> dict[str, Any]:
    if m["role"] == "tool":
        return {"role": "tool", "tool_call_id": m["id"], "content": m["content"]}
    out: dict[str, Any] = {"role": m["role"], "content": m.get("content")}
    if m.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])},
            }
            for c in m["tool_calls"]
        ]
    return out


def openai_chat_jsonl(src: Path, dest: Path) -> Path:
    """tau2 simulations written as OpenAI chat JSONL (one conversation a line)."""
    sims = json.loads(src.read_text())["simulations"]
    with dest.open("w") as fh:
        for s in sims:
            rec = {
                "messages": [_openai_message(m) for m in s["messages"]],
                "metadata": {
                    "task_id": s["task_id"],
                    "trial": s["trial"],
                    "reward": s["reward_info"]["reward"],
                },
            }
            fh.write(json.dumps(rec) + "\n")
    return dest


def langfuse_jsonl(src: Path, dest: Path) -> Path:
    """tau2 simulations written as Langfuse trace exports: one GENERATION observation per
    assistant turn (input = the conversation so far, output = the turn), in shuffled
    order with a SPAN in between, and the reward as a score named 'reward'."""
    rng = random.Random(0)
    sims = json.loads(src.read_text())["simulations"]
    with dest.open("w") as fh:
        for s in sims:
            msgs = [_openai_message(m) for m in s["messages"]]
            obs: list[dict[str, Any]] = [{"type": "SPAN", "name": "env", "startTime": "0"}]
            for i, m in enumerate(msgs):
                if m["role"] == "assistant":
                    obs.append(
                        {
                            "type": "GENERATION",
                            "startTime": f"2025-01-01T00:{i // 60:02d}:{i % 60:02d}Z",
                            "input": msgs[:i],
                            "output": m,
                        }
                    )
            rng.shuffle(obs)
            tail = msgs[max(i for i, m in enumerate(msgs) if m["role"] == "assistant") + 1 :]
            assert all(m["role"] == "user" for m in tail)  # dropped: after the last generation
            rec = {
                "id": s["id"],
                "name": f"retail-{s['task_id']}",
                "metadata": {"task_id": s["task_id"]},
                "observations": obs,
                "scores": [
                    {"name": "other", "value": 7},
                    {"name": "reward", "value": s["reward_info"]["reward"]},
                ],
            }
            fh.write(json.dumps(rec) + "\n")
    return dest
