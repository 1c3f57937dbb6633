"""Any Inspect task whose solver offers tools to the model, as a probe harness domain.

The task is loaded once, as ``inspect_ai.eval`` would load it (``path/to/file.py@name``,
``path/to/file.py`` with one task, or a registry name such as ``inspect_evals/NAME``).
One run is a copy of it with one sample and one epoch whose solver steps receive a wrapped
``generate``: before each call of the real ``generate`` the tools the solver put in
``state.tools`` are replaced by their mutated versions (``ToolDef(tool, name=shown)``,
the same function, description and parameter schema; under ``reformat`` the function's
return re-presented), a forced ``tool_choice`` is renamed with them, and the whole-word tool
names in the system and user messages are substituted as tau2's policy text is. The model
sees, calls and the log records the shown names while Inspect executes the same functions.

The mutation is built from the tool names the first ``generate`` call offers (the tools
come from the solver, so they are known only once it runs). A run in which no ``generate``
call saw tools is refused after the fact, and never recorded: either the solver never
called ``generate`` (an agent such as ``react`` that calls the model itself, where the
mutation cannot reach the tools) or it offered no tools at all.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolaudit.errors import ConfigError
from toolaudit.probes._mutations import ToolMutation, tool_mutation
from toolaudit.probes.harnesses.inspect._private import load_tasks, registry_lookup, unroll
from toolaudit.probes.harnesses.inspect._records import log_stem
from toolaudit.probes.harnesses.inspect._tools import shown_tools

#: policies a generic task runs (the scripted careful/overfit need tau2's reference actions)
GENERIC_POLICIES = ("llm", "inert")
NEVER_GENERATED = (
    "its solver never called generate() (an agent such as react() that calls the model "
    "itself), so the mutated tools never reached the model"
)
NO_TOOLS = "offers no tools to the model"


def _spec_file(task: str) -> Path | None:
    """The file of a file spec (``FILE.py@NAME`` or ``FILE.py``), else None."""
    head, _, _ = task.rpartition("@") if "@" in task else (task, "", "")
    return Path(head) if head.endswith(".py") or Path(head).is_file() else None


def generic_task_problem(task: str) -> str | None:
    """Why ``task`` cannot be a generic Inspect task, without loading it (None if it may
    be): a file spec whose file is missing, or a name Inspect's registry does not know."""
    file = _spec_file(task)
    if file is not None:
        return None if file.is_file() else f"file {str(file)!r} not found"
    if registry_lookup("task", task) is not None:
        return None
    return "neither a FILE.py[@NAME] that exists nor a task name Inspect's registry knows"


def load_task(task: str) -> Any:
    """The one Inspect ``Task`` that ``task`` names (a one-line ConfigError otherwise)."""
    problem = generic_task_problem(task)
    if problem is not None:
        raise ConfigError(f"--task {task!r}: {problem}")
    file = _spec_file(task)
    if file is not None:
        _check_source(task, file)
    try:
        tasks = load_tasks([task])
    except Exception as exc:  # any failure of the task's own code: one line naming it
        if file is not None:
            _check_import(task, file)  # Inspect says "not found" for a file that raised
        first = (str(exc).strip().splitlines() or [""])[0]
        raise ConfigError(
            f"--task {task!r}: Inspect cannot load it ({type(exc).__name__}: {first})"
        ) from None
    if len(tasks) != 1:
        names = ", ".join(t.name for t in tasks) or "none"
        raise ConfigError(
            f"--task {task!r}: names {len(tasks)} tasks ({names}); give one as FILE.py@NAME"
        )
    return tasks[0]


def _check_source(task: str, file: Path) -> None:
    """A task file that is not Python is refused naming its file, line and error (Inspect
    reports it as a task it cannot find)."""
    try:
        compile(file.read_bytes(), str(file), "exec")
    except SyntaxError as exc:
        raise ConfigError(
            f"--task {task!r}: {file}, line {exc.lineno}: {type(exc).__name__}: {exc.msg}"
        ) from None
    except (OSError, ValueError) as exc:  # unreadable, or a NUL byte
        raise ConfigError(f"--task {task!r}: {file}: cannot read it as Python ({exc})") from None


def _check_import(task: str, file: Path) -> None:
    """Import the task file once more, alone, to name what its own code raised (file,
    line, error); Inspect's loader reports such a file as a task it cannot find. Nothing
    is raised here when the file imports."""
    import importlib.util
    import sys
    import traceback

    path = file.resolve()
    spec = importlib.util.spec_from_file_location(f"_toolaudit_check_{file.stem}", path)
    if spec is None or spec.loader is None:
        return
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, str(path.parent))
    try:
        spec.loader.exec_module(module)
    except (Exception, SystemExit) as exc:
        frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == str(path)]
        line = f", line {frames[-1].lineno}" if frames else ""
        what = (f"calls sys.exit({exc.code!r}) when imported" if isinstance(exc, SystemExit)
                else f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0]}")  # fmt: skip
        raise ConfigError(f"--task {task!r}: {file}{line}: {what}") from None
    finally:
        sys.path.remove(str(path.parent))


class GenerateRecorder:
    """The mutation of one run, applied at every ``generate`` call (see the module
    docstring), and what map-back needs afterwards.

    Args:
        condition: the run's condition.
        memo: collects reformatted -> canonical text of every reformatted return.
    """

    def __init__(self, condition: str, memo: dict[str, str]) -> None:
        self.condition = condition
        self.memo = memo
        self.generate_calls = 0
        self.calls_with_tools = 0
        self.problem: str | None = None
        self._names: list[str] = []
        self._mutation: ToolMutation | None = None
        self._original_of: dict[int, tuple[Any, Any]] = {}  # id(shown tool) -> (shown, tool)
        self._substituted: set[str] = set()
        self._choice: Any = None
        self._shown_pairs: set[tuple[str, str]] = set()

    def mutation(self, sample: Any = None) -> ToolMutation:
        """The mutation the run was made under; a ConfigError when it never applied, or
        when a model call of the recorded ``sample`` offered tools under names or
        descriptions no ``generate`` call showed (the solver also calls the model itself)."""
        if self.problem is not None:
            raise ConfigError(self.problem)
        if self.generate_calls == 0:
            raise ConfigError(NEVER_GENERATED)
        if self._mutation is None:
            raise ConfigError(NO_TOOLS)
        for event in (sample.events or []) if sample is not None else []:
            if getattr(event, "event", None) != "model" or event.role is not None:
                continue
            offered = {(t.name, t.description) for t in event.tools}
            if not offered <= self._shown_pairs:
                unshown = sorted(n for n, _ in offered - self._shown_pairs)
                raise ConfigError(
                    f"a model call outside generate() offered the tools {unshown} as the "
                    "task defines them (its solver also calls the model itself), so the "
                    "mutation did not reach every call"
                )
        return self._mutation

    def wrap(self, generate: Any) -> Any:
        """``generate`` applying the mutation to ``state.tools`` before each call."""

        async def mutated(state: Any, tool_calls: Any = "loop", **kwargs: Any) -> Any:
            self.generate_calls += 1
            if state.tools:
                self._apply(state)
            return await generate(state, tool_calls, **kwargs)

        return mutated

    def _apply(self, state: Any) -> None:
        from inspect_ai.tool import ToolDef

        from toolaudit.probes.harnesses.inspect._tau2 import tool_names

        # tools shown in an earlier call are still in state.tools: start from their originals
        tools = [self._original_of.get(id(t), (None, t))[1] for t in state.tools]
        names = tool_names(tools)
        mutation = self._extend(names)
        shown = shown_tools(tools, mutation, self.memo)
        for s, t in zip(shown, tools, strict=True):
            self._original_of[id(s)] = (s, t)  # keeps s alive, so its id stays unique
            d = ToolDef(s)
            self._shown_pairs.add((d.name, d.description))
        self.calls_with_tools += 1
        state.tools = shown
        if state.tool_choice is not self._choice:  # not the one shown at an earlier call
            self._choice = _shown_choice(state.tool_choice, mutation)
            state.tool_choice = self._choice
        for m in state.messages:
            if m.role in ("system", "user") and m.id not in self._substituted:
                _substitute(m, mutation)
                if m.id is not None:
                    self._substituted.add(m.id)

    def _extend(self, names: Sequence[str]) -> ToolMutation:
        new = [n for n in names if n not in self._names]
        if new or self._mutation is None:
            before = self._mutation.shown_of() if self._mutation else {}
            self._names.extend(new)
            try:
                mutation = tool_mutation(self.condition, self._names)
            except ConfigError as exc:
                self.problem = str(exc)
                raise
            after = mutation.shown_of()
            if any(after[n] != shown for n, shown in before.items()):
                self.problem = (
                    f"{self.condition}: the solver offered new tools {new} after the first "
                    "generate() call, which changes the names already shown"
                )
                raise ConfigError(self.problem)
            self._mutation = mutation
        return self._mutation


def _shown_choice(choice: Any, mutation: ToolMutation) -> Any:
    from inspect_ai.tool import ToolFunction

    if isinstance(choice, ToolFunction):
        shown = mutation.shown_of()
        if choice.name in shown:
            return ToolFunction(name=shown[choice.name])
    return choice


def _substitute(message: Any, mutation: ToolMutation) -> None:
    if isinstance(message.content, str):
        message.content = mutation.substitute(message.content)
        return
    for part in message.content:
        if getattr(part, "type", None) == "text":
            part.text = mutation.substitute(part.text)


def _mutating_plan(solver: Any, recorder: GenerateRecorder) -> Any:
    """The task's solver steps as a ``Plan`` that hands them ``recorder``'s generate (the
    steps keep their registry identity, so the log's plan names the task's own)."""
    from inspect_ai.solver import Plan

    class MutatingPlan(Plan):
        async def __call__(self, state: Any, generate: Any) -> Any:
            return await super().__call__(state, recorder.wrap(generate))

    if isinstance(solver, Plan):
        return MutatingPlan(
            list(solver.steps), solver.finish, solver.cleanup, solver._name, internal=True
        )
    return MutatingPlan(unroll(solver), internal=True)


class GenericDomain:
    """One Inspect task's pieces for the probe harness: its samples, its scorer, and a
    one-sample copy of it under a mutation (see the module docstring).

    Args:
        task: what ``inspect_ai.eval`` accepts as a task name.
    """

    instance = None  # the agent's conversation is the sample's own messages

    def __init__(self, task: str) -> None:
        self.task = task
        self._task: Any = None
        self._samples: dict[str, Any] | None = None

    def __getstate__(self) -> dict[str, Any]:
        # a parallel worker loads the task itself (a loaded task need not pickle)
        return {"task": self.task, "_task": None, "_samples": None}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)

    def loaded(self) -> Any:
        """The loaded Inspect ``Task`` (loaded on first use, once)."""
        if self._task is None:
            self._task = load_task(self.task)
        return self._task

    @property
    def name(self) -> str:
        """The task's own name (as its logs record it)."""
        return str(self.loaded().name)

    def samples(self) -> dict[str, Any]:
        """Sample id -> ``Sample`` of the task's dataset, in its order (a sample without an
        id gets Inspect's own: its 1-based position)."""
        if self._samples is None:
            out: dict[str, Any] = {}
            stems: dict[str, str] = {}
            for i, s in enumerate(self.loaded().dataset):
                sid = s.id if s.id is not None else i + 1
                key, stem = str(sid), log_stem(str(sid))
                if key in out or stem in stems:
                    other = out[key].id if key in out else stems[stem]
                    why = "the same id" if key in out else "the same log file name"
                    raise ConfigError(
                        f"task {self.task!r}: samples {other!r} and {sid!r} have {why} "
                        f"(sample {i + 1} of its dataset); give every sample its own id"
                    )
                out[key] = s if s.id is not None else s.model_copy(update={"id": sid})
                stems[stem] = key
            self._samples = out
        return self._samples

    def scorer(self) -> Any:
        """The task's own scorers."""
        return self.loaded().scorer

    def build_task(self, sample_id: str, recorder: GenerateRecorder) -> Any:
        """The task with one sample and one epoch whose solver's ``generate`` applies
        ``recorder``'s mutation."""
        from inspect_ai import task_with

        base = self.loaded()
        one = copy.copy(base)  # task_with changes the task it is given
        return task_with(
            one,
            dataset=[self.samples()[sample_id]],
            solver=_mutating_plan(base.solver, recorder),
            epochs=1,
        )
