"""TRACE on any Inspect task whose solver offers tools to the model: a small weather task
written here (three JSON tools, ``use_tools`` + ``generate()``), run by the inert agent and
by a scripted agent that picks tools by description (``tests/probes/_generic_agent.py``,
an ``llm`` through toolaudit's model provider), under every condition."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from toolaudit.cli.main import main
from toolaudit.errors import ConfigError
from toolaudit.probes import HarnessStudyConfig
from toolaudit.probes.harnesses.inspect._records import INSPECT_READER

AGENT = "py:tests.probes._generic_agent:agent"
CONDITIONS = "original,tool_rename,reformat,misleading_names,repeat"
BIN = Path(sys.executable).parent

TASK_FILE = '''
import json

from inspect_ai import Task, task
from inspect_ai.agent import react
from inspect_ai.dataset import Sample
from inspect_ai.scorer import CORRECT, INCORRECT, Score, accuracy, scorer
from inspect_ai.model import get_model
from inspect_ai.solver import generate, solver, use_tools
from inspect_ai.tool import tool

CITIES = {"Paris": {"id": "c-1", "country": "France"}, "Oslo": {"id": "c-2", "country": "Norway"}}
WEATHER = {"c-1": {"temperature_c": 21, "sky": "clear"}, "c-2": {"temperature_c": 4, "sky": "cloudy"}}


@tool
def find_city():
    async def execute(name: str) -> str:
        """Look up a city's record by its name (JSON with its id and country).

        Args:
            name: the city's name.
        """
        return json.dumps(CITIES.get(name, {"error": "unknown city"}))

    return execute


@tool
def get_weather():
    async def execute(city_id: str) -> str:
        """Get the current weather of a city by its id (JSON with sky and temperature).

        Args:
            city_id: the city's id.
        """
        return json.dumps(WEATHER.get(city_id, {"error": "unknown id"}))

    return execute


@tool
def get_time():
    async def execute(city_id: str) -> str:
        """Tell the local time of a city by its id (JSON with the time and zone).

        Args:
            city_id: the city's id.
        """
        return json.dumps({"time": "12:00", "zone": "UTC+1"})

    return execute


def dataset():
    return [
        Sample(id="paris", input="What is the sky like in Paris right now?", target="clear"),
        Sample(id="oslo", input="What is the sky like in Oslo right now?", target="cloudy"),
    ]


def tools():
    return [find_city(), get_weather(), get_time()]


@scorer(metrics=[accuracy()])
def answer():
    async def score(state, target):
        return Score(value=CORRECT if target.text in state.output.completion else INCORRECT)

    return score


@scorer(metrics=[accuracy()])
def called_get_weather():
    """Reads the tool's name: credits a call named get_weather, whatever it executed."""

    async def score(state, target):
        names = [c.function for m in state.messages if m.role == "assistant"
                 for c in (m.tool_calls or [])]
        return Score(value=CORRECT if "get_weather" in names else INCORRECT)

    return score


@task
def weather():
    return Task(dataset=dataset(), solver=[use_tools(tools()), generate()], scorer=answer())


@task
def weather_names():
    return Task(dataset=dataset(), solver=[use_tools(tools()), generate()],
                scorer=called_get_weather())


@task
def weather_react():
    return Task(dataset=dataset(), solver=react(tools=tools()), scorer=answer(), message_limit=4)


@solver
def peek_then_generate():
    """Calls the model itself with the task's own tools first, then generate()."""

    async def solve(state, generate):
        await get_model().generate(state.messages, tools=tools())
        return await generate(state)

    return solve


@task
def weather_mixed():
    return Task(dataset=dataset(), solver=[use_tools(tools()), peek_then_generate()],
                scorer=answer())


@task
def weather_no_tools():
    return Task(dataset=dataset(), solver=generate(), scorer=answer())
'''


@pytest.fixture(scope="module")
def task_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("generic") / "weather_tasks.py"
    path.write_text(TASK_FILE, encoding="utf-8")
    return path


def _records(study: Path) -> list[dict]:
    return [json.loads(x) for x in (study / "records.jsonl").read_text().splitlines()]


def _record(records: list[dict], policy: str, condition: str, sample: str = "paris") -> dict:
    return next(
        r
        for r in records
        if r["source"]["policy"] == policy
        and r["condition"] == condition
        and r["task_id"].endswith(f":{sample}")
    )


def _calls(record: dict) -> list[str]:
    return [c["name"] for m in record["messages"] for c in m.get("tool_calls") or []]


def _cell(doc: dict, policy: str, condition: str) -> dict:
    return next(c for c in doc["cells"] if c["policy"] == policy and c["condition"] == condition)


@pytest.fixture(scope="module")
def weather_study(task_file: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("weather_study")
    code = main([
        "probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
        "--policies", "llm,inert", "--model", AGENT, "--conditions", CONDITIONS,
        "--n-boot", "50", "--out", str(out), "--json",
    ])  # fmt: skip
    assert code == 0
    return out


def test_generic_study_runs_every_condition_and_the_agent_follows_renames(
    weather_study: Path, task_file: Path
) -> None:
    records = _records(weather_study)
    assert len(records) == 2 * 2 * 5  # samples x policies x conditions
    llm = [r for r in records if r["source"]["policy"] == "llm"]
    assert {r["reward"] for r in llm} == {1.0} and {
        r["source"]["rescored_reward"] for r in llm
    } == {1.0}
    assert {r["reward"] for r in records if r["source"]["policy"] == "inert"} == {0.0}
    assert _calls(_record(records, "inert", "tool_rename")) == []
    assert _calls(_record(records, "llm", "original")) == ["find_city", "get_weather"]
    assert _calls(_record(records, "llm", "tool_rename")) == ["lookup_city", "fetch_weather"]
    # the derangement: get_weather's operation is shown as find_city, find_city's as get_time
    misled = _record(records, "llm", "misleading_names")
    assert _calls(misled) == ["get_time", "find_city"]
    back = INSPECT_READER.canonical(_episode(misled))
    assert [c.name for m in back.messages for c in m.tool_calls or []] == [
        "find_city",
        "get_weather",
    ]
    config = json.loads((weather_study / "run_config.json").read_text())
    # recorded relative to the study folder, as every path in a committed run_config.json
    task = os.path.normpath(weather_study / config["task"])
    assert task == f"{task_file}@weather" and config["user_model"] is None
    doc = json.loads((weather_study / "probe.json").read_text())
    assert _cell(doc, "llm", "tool_rename")["behavior_changed_rate"] == 0.0


def _episode(record: dict):
    from toolaudit.traces import Episode

    return Episode.model_validate(record)


def test_generic_reformat_keeps_values(weather_study: Path) -> None:
    records = _records(weather_study)
    original = _record(records, "llm", "original")
    reformat = _record(records, "llm", "reformat")
    assert reformat["source"]["agent_info"]["reformatted_returns"] == 2
    shown = [m["content"] for m in reformat["messages"] if m["role"] == "tool"]
    canonical = [m["content"] for m in original["messages"] if m["role"] == "tool"]
    assert all(s.startswith('{\n  "result": {') for s in shown)
    assert [json.loads(s)["result"] for s in shown] == [json.loads(c) for c in canonical]
    back = INSPECT_READER.canonical(_episode(reformat))
    assert [json.loads(m.content) for m in back.messages if m.role == "tool"] == [
        json.loads(c) for c in canonical
    ]


def test_generic_logs_hold_the_shown_names_and_traces_reads_them(weather_study: Path) -> None:
    from inspect_ai.log import read_eval_log

    log = weather_study / "logs" / "llm" / "tool_rename" / "paris_e0.eval"
    sample = read_eval_log(str(log)).samples[0]
    called = [c.function for m in sample.messages for c in getattr(m, "tool_calls", None) or []]
    assert called == ["lookup_city", "fetch_weather"]
    assert [m.function for m in sample.messages if m.role == "tool"] == called
    out = subprocess.run(
        [str(BIN / "toolaudit"), "traces", "inspect", str(log), "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    counts = json.loads(out.stdout)
    assert (counts["tool_calls"], counts["tool_results"], counts["mean_reward"]) == (2, 2, 1.0)


def test_generic_rescoring_exposes_a_name_reading_scorer(task_file: Path, tmp_path: Path) -> None:
    """The same agent and trajectories: the answer-checking scorer's live and rescored
    rewards agree under every condition (test above), while the scorer that reads the tool
    name fails the renamed run live and passes the same run mapped back."""
    code = main([
        "probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather_names",
        "--policies", "llm", "--model", AGENT, "--conditions", "original,tool_rename",
        "--task-ids", "paris", "--n-boot", "50", "--out", str(tmp_path), "--json",
    ])  # fmt: skip
    assert code == 0
    records = _records(tmp_path)
    renamed = _record(records, "llm", "tool_rename")
    assert (renamed["reward"], renamed["source"]["rescored_reward"]) == (0.0, 1.0)
    original = _record(records, "llm", "original")
    assert (original["reward"], original["source"]["rescored_reward"]) == (1.0, 1.0)
    cell = _cell(json.loads((tmp_path / "probe.json").read_text()), "llm", "tool_rename")
    assert (cell["vrg"], cell["vrg_rescored"], cell["behavior_changed_rate"]) == (1.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("name", "reason"),
    [("weather_react", "never called generate()"), ("weather_no_tools", "offers no tools")],
)
def test_generic_run_whose_mutation_cannot_happen_is_refused_unrecorded(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, reason: str
) -> None:
    code = main([
        "probe", "run", "--harness", "inspect", "--task", f"{task_file}@{name}",
        "--policies", "inert", "--conditions", "original,tool_rename", "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert reason in err and name in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (tmp_path / "records.jsonl").exists()
    assert not (tmp_path / "run_config.json").exists()
    assert list(tmp_path.rglob("*.eval")) == []


def test_generic_model_call_outside_generate_is_refused_under_rename(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A solver that also calls the model with the task's own tools: the original run is
    fine (nothing to mutate); the renamed run is refused, since one model call saw the
    canonical names, and not recorded."""
    code = main([
        "probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather_mixed",
        "--policies", "inert", "--conditions", "original,tool_rename", "--task-ids", "paris",
        "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 2
    err = capsys.readouterr().err
    assert "a model call outside generate() offered the tools ['find_city', 'get_time'" in err
    assert [r["condition"] for r in _records(tmp_path)] == ["original"]
    assert list((tmp_path / "logs" / "inert" / "tool_rename").glob("*.eval")) == []


def test_generic_config_refuses_tau2_only_policies_and_options(task_file: Path) -> None:
    task = f"{task_file}@weather"
    with pytest.raises(ConfigError, match="policy 'careful' needs the reference actions"):
        HarnessStudyConfig(task=task, policies=("careful", "inert"))
    with pytest.raises(ConfigError, match="no user simulator"):
        HarnessStudyConfig(task=task, model=AGENT, user_model=AGENT)
    with pytest.raises(ConfigError, match="no user simulator"):
        HarnessStudyConfig(task=task, max_turns=3)
    assert HarnessStudyConfig(task=task, policies=("inert",)).run_policies() == ("inert",)
    assert HarnessStudyConfig(task=task, model=AGENT).options()["user_model"] is None


def test_generic_task_that_cannot_load_is_refused_before_the_folder_is_touched(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text(
        "from inspect_ai import task\n\n@task\ndef oops():\n    raise RuntimeError('no data')\n"
    )
    cases = [
        (str(tmp_path / "missing.py@x"), "not found"),
        ("no_such_registry/task_name", "registry"),
        (f"{broken}@oops", "Inspect cannot load it (RuntimeError: no data)"),
        (f"{task_file}@no_such_task", "Inspect cannot load it"),
    ]
    for i, (task, message) in enumerate(cases):
        out = tmp_path / f"out{i}"
        assert main(["probe", "run", "--harness", "inspect", "--task", task,
                     "--policies", "inert", "--out", str(out)]) == 2  # fmt: skip
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
        assert len(err.strip().splitlines()) == 1
        assert not out.exists() or list(out.iterdir()) == []


def test_generic_cli_end_to_end_run_then_analyze(task_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "study"
    run = subprocess.run(
        [str(BIN / "toolaudit"), "probe", "run", "--harness", "inspect", "--task",
         f"{task_file}@weather", "--policies", "inert", "--conditions", "original,tool_rename",
         "--out", str(out), "--n-boot", "50"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert len(_records(out)) == 4
    analyze = subprocess.run(
        [str(BIN / "toolaudit"), "probe", "analyze", str(out), "--n-boot", "50", "--json"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert analyze.returncode == 0, analyze.stderr
    doc = json.loads((out / "probe.json").read_text())
    assert doc["harness"] == "inspect" and doc["records"] == 4
    assert _cell(doc, "inert", "tool_rename")["vrg"] == 0.0
    assert doc["noop_baseline"]["run"]


def _state_with_tools() -> tuple[object, list]:
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser, ModelName
    from inspect_ai.solver import TaskState
    from inspect_ai.tool import ToolFunction, tool

    @tool
    def find_city():
        async def execute(name: str) -> str:
            """Look up a city by name.

            Args:
                name: the city's name.
            """
            return '{"id": "c-1"}'

        return execute

    @tool
    def get_weather():
        async def execute(city_id: str) -> str:
            """Get the weather of a city.

            Args:
                city_id: the city's id.
            """
            return '{"sky": "clear"}'

        return execute

    tools = [find_city(), get_weather()]
    messages = [
        ChatMessageSystem(content="Answer with get_weather after find_city."),
        ChatMessageUser(content="Use get_weather for Paris."),
    ]
    state = TaskState(ModelName("mockllm/model"), "s", 1, "q", messages)
    state.tools = tools
    state.tool_choice = ToolFunction(name="get_weather")
    return state, tools


def test_generate_recorder_shows_mutated_tools_once_and_leaves_the_task_tools_alone() -> None:
    """Two generate calls under the derangement: the model is offered the shown names both
    times, messages are substituted once (a second pass would chain the derangement), and
    the task's own tools keep their names."""
    import anyio
    from inspect_ai.tool import ToolDef

    from toolaudit.probes.harnesses.inspect._generic import GenerateRecorder

    state, tools = _state_with_tools()
    offered: list[list[tuple[str, str]]] = []

    async def generate(state, tool_calls="loop", **kwargs):
        offered.append([(ToolDef(t).name, ToolDef(t).description) for t in state.tools])
        return state

    recorder = GenerateRecorder("misleading_names", {})
    wrapped = recorder.wrap(generate)

    async def twice() -> None:
        await wrapped(state)
        await wrapped(state)

    anyio.run(twice)
    shown = [
        ("get_weather", "Look up a city by name."),
        ("find_city", "Get the weather of a city."),
    ]
    assert offered == [shown, shown]
    assert state.tool_choice.name == "find_city"  # get_weather's operation, shown name
    assert [m.text for m in state.messages] == [
        "Answer with find_city after get_weather.",
        "Use find_city for Paris.",
    ]
    assert [ToolDef(t).name for t in tools] == ["find_city", "get_weather"]
    assert recorder.mutation().operation_of() == {
        "get_weather": "find_city",
        "find_city": "get_weather",
    }
    assert recorder.calls_with_tools == 2


def test_generic_registry_name_resolves_like_inspect_eval(task_file: Path, tmp_path: Path) -> None:
    """A name in Inspect's task registry (here registered by loading the file, as an
    installed package's entry point registers its tasks) is a task as ``inspect eval``
    takes it."""
    from toolaudit.probes.harnesses.inspect._generic import GenericDomain
    from toolaudit.probes.harnesses.inspect._harness import InspectHarness, InspectRunSpec

    GenericDomain(f"{task_file}@weather").loaded()
    assert HarnessStudyConfig(task="weather_names", policies=("inert",)).run_policies() == (
        "inert",
    )
    harness = InspectHarness("weather_names", log_dir=tmp_path)
    assert list(harness.task_ids()) == ["paris", "oslo"]
    ep = harness.run(InspectRunSpec("weather_names", "oslo", "inert", "tool_rename", 0))
    assert ep.task_id == "weather_names:oslo" and ep.reward == 0.0
    assert ep.source["mutation"]["names"][0] == ["find_city", "lookup_city"]


def test_an_agent_that_raises_is_an_error_outcome_not_a_fail(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model that raises on every call: the run failed (Inspect's sample error), so it
    has no score and no rescored score; the analysis leaves it out and says so."""
    code = main([
        "probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
        "--policies", "llm,inert", "--model", "py:tests.probes._tau2_agents:raising",
        "--conditions", "original,tool_rename", "--n-boot", "50", "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    llm = [r for r in _records(tmp_path) if r["source"]["policy"] == "llm"]
    assert len(llm) == 4
    for r in llm:
        assert r["reward"] is None and r["source"]["rescored_reward"] is None
        assert "the agent's server is down" in r["source"]["error"]
    doc = json.loads((tmp_path / "probe.json").read_text())
    assert doc["cells_not_scored"] == [{"policy": "llm", "condition": "tool_rename", "n_runs": 2}]
    assert _cell(doc, "llm", "original")["n_not_scored"] == 2
    assert "warning: 4 runs errored or could not be scored" in capsys.readouterr().err


def test_a_task_file_edited_between_runs_is_refused_on_resume(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """run_config.json records the task file's SHA-256: a resume after the file changed
    is refused in one line and the folder is left as it was."""
    task = tmp_path / "tasks.py"
    task.write_text(task_file.read_text(encoding="utf-8"), encoding="utf-8")
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@weather",
            "--policies", "inert", "--conditions", "original", "--task-ids", "paris",
            "--no-analyze", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    config = json.loads((out / "run_config.json").read_text())
    assert len(config["task_sha256"]) == 64
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    task.write_text(task.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert main(argv) == 2
    assert "SHA-256" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


def test_a_missing_run_config_gets_its_own_message(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Not "--seeds=1 vs --seeds=null" (an option the user never gave): the folder's
    options are unknown, and it says so."""
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
            "--policies", "inert", "--conditions", "original", "--task-ids", "paris",
            "--no-analyze", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    (out / "run_config.json").unlink()
    before = {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "holds records.jsonl but no run_config.json" in err and "--seeds" not in err
    assert {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()} == before


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [("--policies", "inert,inert", "given twice"), ("--task-ids", ",", "no sample id"),
     ("--seeds", "2", "--seeds applies to the ResearchOps suite; with --harness inspect use "
      "--epochs"),
     ("--max-steps", "5", "--max-steps applies to the ResearchOps suite; with --harness "
      "inspect use --max-turns")],
)  # fmt: skip
def test_bad_options_are_refused_before_the_folder_is_touched(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    option: str, value: str, message: str,
) -> None:  # fmt: skip
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
            "--conditions", "original", option, value, "--out", str(out)]  # fmt: skip
    if option != "--policies":
        argv += ["--policies", "inert"]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("flag", ["--model", "--user-model"])
def test_a_model_server_that_does_not_answer_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """A dead URL used to hang the study with no output (issue 57); now it is refused
    before the folder exists (a TCP connect with a 5 s limit)."""
    out = tmp_path / "study"
    dead = "openai:x@http://127.0.0.1:9"
    argv = ["probe", "run", "--harness", "inspect", "--task", "inspect_evals/tau2_retail",
            "--policies", "llm", "--limit", "1", "--model", dead, "--out", str(out)]  # fmt: skip
    if flag == "--user-model":
        argv[argv.index("--model") + 1] = "py:tests.probes._tau2_agents:finder"
        argv += ["--user-model", dead]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        "toolaudit: error: openai:x@http://127.0.0.1:9: no server answers at 127.0.0.1:9 "
        "(connection refused); start it or correct the URL"
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("ids", "message"),
    [
        ('"x", "x"', "samples 'x' and 'x' have the same id"),
        ('1, "1"', "samples 1 and '1' have the same id"),
        ('"a/b", "a_b"', "samples 'a/b' and 'a_b' have the same log file name"),
    ],
)
def test_colliding_sample_ids_are_refused_before_the_folder_is_touched(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], ids: str, message: str
) -> None:
    first, second = (x.strip() for x in ids.split(","))
    task = tmp_path / "tasks.py"
    task.write_text(task_file.read_text(encoding="utf-8").replace(
        'Sample(id="paris"', f"Sample(id={first}").replace('Sample(id="oslo"', f"Sample(id={second}"),
        encoding="utf-8")  # fmt: skip
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@weather",
            "--policies", "inert", "--conditions", "original", "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "give every sample its own id" in err
    assert not out.exists()


def test_a_long_sample_id_runs_with_a_hashed_log_name(task_file: Path, tmp_path: Path) -> None:
    long_id = "paris-" + "x" * 294
    task = tmp_path / "tasks.py"
    task.write_text(task_file.read_text(encoding="utf-8").replace(
        'Sample(id="paris"', f'Sample(id="{long_id}"'), encoding="utf-8")  # fmt: skip
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@weather", "--policies",
            "inert", "--conditions", "original", "--task-ids", long_id, "--no-analyze",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    (record,) = _records(out)
    assert record["task_id"].endswith(long_id)
    logs = [p.name for p in (out / "logs").rglob("*.eval")]
    assert len(logs) == 1 and len(logs[0]) < 120


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("def f(:\n    pass\n", ".py, line 1: SyntaxError: invalid syntax"),
        ("import json\nimport no_such_module_xyz\n",
         ".py, line 2: ModuleNotFoundError: No module named 'no_such_module_xyz'"),
        ("import sys\nsys.exit(0)\n", ".py, line 2: calls sys.exit(0) when imported"),
    ],
)  # fmt: skip
def test_a_task_file_that_cannot_import_names_its_file_line_and_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, message: str
) -> None:
    """Inspect reports each of these as "Task named 'nowhere' not found". (The task name
    is one no other test registers: Inspect's registry keeps, for the process, every task
    a loaded file defined, and finds it by name when the file fails.)"""
    task = tmp_path / "broken.py"
    task.write_text(source, encoding="utf-8")
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@nowhere",
            "--policies", "inert", "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(message) and "\n" not in err and "not found" not in err
    assert not out.exists()


def test_sys_exit_in_user_code_is_one_line_naming_the_module(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    shared_data: Path,
) -> None:  # fmt: skip
    """A judge (or agent) that calls sys.exit(0) made toolaudit exit 0 with no output."""
    (tmp_path / "quitter.py").write_text(
        "import sys\n\ndef judge(prompts):\n    return ['PASS']\n\n"
        "def _chat(messages, tools=None):\n    sys.exit(0)\n\njudge.chat = _chat\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    sims = shared_data / "tau2" / "simulations" / "retail__gpt-4.1__user-gpt-4.1__test40x1.json"
    argv = ["probe", "judge-audit", str(sims), "--judge-model", "py:quitter:judge",
            "--records", "1", "--repeats", "1", "--views", "original",
            "--out", str(tmp_path / "ja")]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("toolaudit: error: module quitter (") and "line 7) called " in err
    assert "sys.exit(0); the command stopped there" in err


@pytest.mark.parametrize(
    ("returned", "problem"),
    [("None", "no scorer gave a score"),
     ("Score(value={'a': 1, 'b': 0})", "scorer 'answer' returned a dict of 2, not one number")],
)  # fmt: skip
def test_a_scorer_without_a_number_is_unscorable_not_a_fail(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], returned: str,
    problem: str,
) -> None:  # fmt: skip
    """A scorer that returns None or a dict was reported as 'passes no task'."""
    task = tmp_path / "tasks.py"
    task.write_text(task_file.read_text(encoding="utf-8").replace(
        "return Score(value=CORRECT if target.text in state.output.completion else INCORRECT)",
        f"return {returned}"), encoding="utf-8")  # fmt: skip
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@weather", "--policies",
            "inert", "--conditions", "original", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    captured = capsys.readouterr()
    assert "2 runs errored or could not be scored" in captured.err
    records = _records(out)
    assert [r["reward"] for r in records] == [None, None]
    assert {r["source"]["native_unscorable"] for r in records} == {problem}
    result = json.loads((out / "probe.json").read_text())
    assert result["noop_baseline"]["n_not_scored"] == 2  # ran, and none could be scored


LONG_DESCRIPTION = (
    "Look up a city's record by its name (JSON with its id and country). The record comes "
    "from the atlas service, which is refreshed daily; names are matched exactly, "
    "case-sensitively, in English, so give the name as the user wrote it. A city the atlas "
    "does not know returns an error record instead, naming it."
)


@pytest.mark.parametrize("extra_tool", [None, "python", "bash"])
def test_tools_with_long_descriptions_run_under_every_condition(
    task_file: Path, tmp_path: Path, extra_tool: str | None
) -> None:
    """Inspect stores strings over 100 characters as attachments; read unresolved, a
    300-character description (or Inspect's own python() / bash() tool's) did not match
    and the run was refused as a model call outside generate() (issue 56)."""
    assert len(LONG_DESCRIPTION) >= 300
    source = task_file.read_text(encoding="utf-8").replace(
        "Look up a city's record by its name (JSON with its id and country).", LONG_DESCRIPTION
    )
    if extra_tool is not None:
        source = source.replace(
            "from inspect_ai.tool import tool", f"from inspect_ai.tool import tool, {extra_tool}"
        )
        source = source.replace(
            "return [find_city(), get_weather(), get_time()]",
            f"return [find_city(), get_weather(), get_time(), {extra_tool}()]",
        )
    task = tmp_path / "tasks.py"
    task.write_text(source, encoding="utf-8")
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@weather", "--policies",
            "inert", "--task-ids", "paris", "--no-analyze", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    records = _records(out)
    assert sorted(r["condition"] for r in records) == sorted(
        ["original", "tool_rename", "reformat", "misleading_names", "repeat"]
    )


def test_a_generic_task_without_an_agent_is_refused_with_how_to_give_one(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to run only the no-op agent and exit 0 with an all-zero table."""
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "only the no-op agent would run" in err
    assert "--model (openai:MODEL@URL" in err and "py:module:function" in err
    assert not out.exists()


def test_an_agent_that_never_stops_is_cut_off_as_an_error(task_file: Path, tmp_path: Path) -> None:
    """A generic task that sets no message limit gets toolaudit's (100 messages) for a
    model-driven run; the cut-off run is an error outcome, never the agent's 0."""
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
            "--policies", "llm", "--model", "py:tests.probes._generic_agent:looping",
            "--conditions", "original", "--task-ids", "paris", "--no-analyze",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    (record,) = _records(out)
    assert record["reward"] is None and record["source"]["rescored_reward"] is None
    assert record["source"]["error"].startswith("limit: the run reached 100 messages")


def test_the_same_task_file_named_from_another_folder_resumes(
    task_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative --task was recorded as typed, so the same file named by its absolute
    path was refused as another task (and its runs drew other seeds)."""
    out = tmp_path / "study"
    common = ["--policies", "inert", "--conditions", "original", "--task-ids", "paris",
              "--no-analyze", "--out", str(out)]  # fmt: skip
    monkeypatch.chdir(task_file.parent)
    assert main(["probe", "run", "--harness", "inspect", "--task",
                 f"{task_file.name}@weather", *common]) == 0  # fmt: skip
    config = json.loads((out / "run_config.json").read_text())
    assert config["task"] == f"{os.path.relpath(task_file, out)}@weather"
    before = (out / "records.jsonl").read_bytes()
    monkeypatch.chdir(tmp_path)
    assert main(["probe", "run", "--harness", "inspect", "--task",
                 f"{task_file}@weather", *common]) == 0  # fmt: skip
    assert (out / "records.jsonl").read_bytes() == before


def test_a_py_agent_without_chat_is_refused_before_anything_runs(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
            "--policies", "llm", "--model", "py:tests.probes._seed_judges:reformatted",
            "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "cannot generate a chat reply: the function has no 'chat' attribute" in err
    assert not out.exists()


def test_every_scorer_of_a_task_rescores_and_the_report_names_each(
    task_file: Path, tmp_path: Path
) -> None:
    """Only the first scorer used to rescore. With two (the answer and a scorer that
    reads the tool's name), each is recorded both ways and the report shows both."""
    task = tmp_path / "tasks.py"
    task.write_text(task_file.read_text(encoding="utf-8").replace(
        "solver=[use_tools(tools()), generate()], scorer=answer())",
        "solver=[use_tools(tools()), generate()], scorer=[answer(), called_get_weather()])",
        1), encoding="utf-8")  # fmt: skip
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@weather",
            "--policies", "llm", "--model", AGENT, "--conditions", "original,tool_rename",
            "--task-ids", "paris", "--report", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    renamed = _record(_records(out), "llm", "tool_rename")
    both = renamed["source"]["scorers"]
    assert both["native"] == {"answer": 1.0, "called_get_weather": 0.0}
    assert both["rescored"] == {"answer": 1.0, "called_get_weather": 1.0}
    rows = json.loads((out / "probe.json").read_text())["scorers"]
    assert {(r["condition"], r["scorer"], r["native"], r["rescored"]) for r in rows} >= {
        ("tool_rename", "called_get_weather", 0.0, 1.0),
        ("original", "answer", 1.0, 1.0),
    }
    report = (out / "report.md").read_text()
    assert "Every scorer of the task, by name" in report and "called_get_weather" in report
    assert "Not mutated: tools the solver hands to a forked sub-agent" in report


@pytest.mark.parametrize(
    ("edit", "message"),
    [(("solver=[use_tools(tools()), generate()], scorer=answer())",
       "solver=[generate()], scorer=answer())"), "offers no tools to the model"),
     (("    return [\n        Sample(id=\"paris\"", "    return []\n    return [\n        Sample(id=\"paris\""),
      "The specified dataset is empty")],
)  # fmt: skip
def test_a_task_without_tools_or_samples_leaves_nothing_behind(
    task_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
    edit: tuple[str, str], message: str,
) -> None:  # fmt: skip
    """A task that offers no tools was refused only after its first run, leaving a logs/
    folder and a lock behind (issue 56)."""
    source = task_file.read_text(encoding="utf-8")
    assert edit[0] in source
    task = tmp_path / "tasks.py"
    task.write_text(source.replace(edit[0], edit[1], 1), encoding="utf-8")
    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task}@weather",
            "--policies", "inert", "--out", str(out)]  # fmt: skip
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_the_harness_report_fits_a_1280_px_page_and_shows_only_what_ran(
    task_file: Path, tmp_path: Path
) -> None:
    """Opened in headless Chromium as the demo's report is: no part runs off the page,
    every figure decodes, and there is no judge alarm, token line or panel for what did
    not run (issue 56)."""
    from tests.report.browser import layout

    out = tmp_path / "study"
    argv = ["probe", "run", "--harness", "inspect", "--task", f"{task_file}@weather",
            "--policies", "llm,inert", "--model", AGENT, "--conditions",
            "original,tool_rename,misleading_names", "--report", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    report = (out / "report.md").read_text()
    assert "probe.judge" not in report and "skipped_part" not in report
    assert "tokens per conversation" not in report  # a py: agent reports no tokens
    page = layout(out / "report.html", tmp_path)
    assert page.scroll_width == page.client_width, f"page overflows: {page}"
    assert page.images > 0 and page.broken_images == 0, page
