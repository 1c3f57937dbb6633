"""The ``toolaudit`` command: a thin layer over the library's audit functions.

The subcommands come from the one registry of audits (``toolaudit.audits.AUDITS``): an
audit whose registry line names a ``command`` is added by ``register(subparsers)`` of the
module ``toolaudit.cli._<command>``; one without gets the generic ``toolaudit NAME --out
DIR`` (``toolaudit.cli._audit``). The tools that are not audits (``models``, ``demo``)
are listed in ``TOOL_COMMANDS``; :func:`commands` is the whole dispatch. The common
options (``-v``, ``-q``, ``--log-level``, ``--config``) are accepted before or after any
subcommand. Bad options and errors that toolaudit raises on purpose are printed as one
line (no traceback) with exit code 2; anything else is a bug, printed as one line with
exit code 1 (``-v`` logs the traceback). See ``toolaudit.cli._common`` for every exit
code.
"""

from __future__ import annotations

import argparse
import importlib
import json
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from toolaudit import __version__
from toolaudit.audits import audit_commands
from toolaudit.cli._common import (
    EXIT_BAD_INPUT,
    EXIT_BROKEN_PIPE,
    EXIT_CODES_HELP,
    EXIT_INTERRUPTED,
    EXIT_UNEXPECTED,
    HelpFormatter,
    configure,
    read_config,
)
from toolaudit.cli._validate import comma_separated, resolved_path
from toolaudit.errors import ConfigError, ToolAuditError
from toolaudit.report import visible

logger = logging.getLogger("toolaudit.cli")

# Subcommands that are not audits (each has its module toolaudit.cli._<name>) -> the
# command it is listed after in --help (None: last), keeping the order users know.
TOOL_COMMANDS: dict[str, str | None] = {"redact-seeds": "redact", "models": "redact", "demo": None}
_MODULE_PREFIX = "toolaudit.cli._"


def commands() -> dict[str, str]:
    """Every subcommand -> the module that adds it, in --help order: the registered
    audits' subcommands (registry order, each once), with the tools of ``TOOL_COMMANDS``
    placed after theirs. Generic audit subcommands map to ``toolaudit.cli._audit``.

    >>> list(commands())
    ['traces', 'datasets', 'leakage', 'redact', 'redact-seeds', 'models', 'probe', 'faults', 'demo']
    """
    out: dict[str, str] = {}
    for command, generic in audit_commands().items():
        out[command] = _MODULE_PREFIX + ("audit" if generic else command)
        out |= {t: _MODULE_PREFIX + t.replace("-", "_")
                for t, after in TOOL_COMMANDS.items() if after == command}  # fmt: skip
    for tool in TOOL_COMMANDS:  # after None, or after a command no longer registered
        out.setdefault(tool, _MODULE_PREFIX + tool.replace("-", "_"))
    return out


# Every command group's --help ends with an example (groups that set none get this one).
GROUP_EXAMPLES: dict[str, str] = {
    "traces": "toolaudit traces inspect ../shared/data/tau2/simulations/"
    "retail__gpt-4.1__user-gpt-4.1__test40x1.json --json",
    "probe": "toolaudit probe compare ../shared/data/tau2/simulations/"
    "retail__gpt-4.1__user-gpt-4.1__test40x1.json ../shared/data/tau2/simulations/"
    "retail__ft-gpt-4.1-sft__user-gpt-4.1__test40x1.json --fail-on different",
    "models": "toolaudit models score embedded --context 'The capital of France is' "
    "--continuation ' Paris' --json",
    "faults": "toolaudit faults run --out faults-out --tasks 20",
    "datasets": "toolaudit datasets make tcr-shortcut --out tcr --scale 0.05 --seed 0",
}

LOG_LEVELS = ("debug", "info", "warning", "error")
CONFIG_METAVAR = "RESULTS.json"


def _common_options(parser: argparse.ArgumentParser, *, top: bool) -> None:
    # Below the top level the defaults are SUPPRESS, so `toolaudit -v leakage ...` is not
    # undone by the subcommand's own (absent) -v.
    default: Any = None if top else argparse.SUPPRESS
    group = parser.add_argument_group("common options (before or after the subcommand)")
    taken = set(parser._option_string_actions)

    def add(*flags: str, **kwargs: Any) -> None:
        # A subcommand that defines one of these itself keeps its own (no clash at merge).
        free = [f for f in flags if f not in taken]
        if free and len(free) == len(flags):
            group.add_argument(*free, **kwargs)

    add(
        "-v",
        "--verbose",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="log debug messages (and show tracebacks of unexpected errors)",
    )
    add(
        "-q",
        "--quiet",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="errors only: no warnings, no progress",
    )
    add(
        "--log-level",
        choices=LOG_LEVELS,
        default=default,
        help="log level (default: warning; -v = debug, -q = error)",
    )
    add(
        "--config",
        type=Path,
        default=default,
        metavar=CONFIG_METAVAR,
        help="replay the options recorded in a results file's meta.config (options "
        "given on the command line win)",
    )


def _walk(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    """Every parser below ``parser`` as ``(path, parser)``, e.g. ``("probe compare", p)``."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                path = f"{parser.prog.split(' ', 1)[1]} {name}" if " " in parser.prog else name
                out.append((path, child))
                out.extend(_walk(child))
    return out


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line on stderr (exit 2), like
    every other bad input; subcommand parsers inherit the class."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {visible(message)} (see --help)\n")


class _VisibleFormatter(logging.Formatter):
    """Log lines with control characters made visible: a warning may quote a trace."""

    def format(self, record: logging.LogRecord) -> str:
        return visible(super().format(record), keep="\n")


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every available subcommand."""
    parser = _Parser(
        prog="toolaudit",
        description="Audit evaluations of tool-using LLM systems.",
        epilog=f"Example: toolaudit demo --out demo-out\n{EXIT_CODES_HELP}",
    )
    parser.add_argument("--version", action="version", version=f"toolaudit {__version__}")
    _common_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    generic = audit_commands()
    for command, module_name in commands().items():
        try:
            module = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name == module_name:  # subcommand not part of this build: say so
                logging.getLogger(__name__).warning("subcommand module %s is missing", module_name)
                continue
            raise
        audit = generic.get(command)
        if audit is not None:
            module.register_audit(sub, audit)
        else:
            module.register(sub)
    for path, child in _walk(parser):
        _common_options(child, top=False)
        if path in GROUP_EXAMPLES and not child.epilog:
            child.epilog = f"Example:\n  {GROUP_EXAMPLES[path]}"
        child.formatter_class = HelpFormatter
    return parser


def _target(parser: argparse.ArgumentParser, argv: Sequence[str]) -> tuple[str, Any]:
    """The (sub)command that ``argv`` selects and its parser, found by following the
    subcommand names (no full parse, so ``--config`` can set its defaults first)."""
    path, current = "", parser
    for token in argv:
        subs = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
        if subs and token in subs[0].choices:
            current = subs[0].choices[token]
            path = f"{path} {token}".strip()
    return path, current


def _config_path(argv: Sequence[str]) -> Path | None:
    for i, token in enumerate(argv):
        if token == "--config" and i + 1 < len(argv):
            return Path(argv[i + 1])
        if token.startswith("--config="):
            return Path(token.split("=", 1)[1])
    return None


def _is_switch(action: argparse.Action) -> bool:
    return isinstance(
        action,
        argparse.BooleanOptionalAction | argparse._StoreTrueAction | argparse._StoreFalseAction,
    )


def _replay(value: Any, action: argparse.Action, key: str, path: Path) -> Any:
    """A recorded value checked and converted exactly as the option's command-line text
    would be (its ``type``), so a bad record is one line naming the file and the key."""
    # Lists of records such as leakage's feature sets are replayed by their names.
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        value = [v.get("name") for v in value]
    many = action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction)
    where = f"{path}, field 'meta.config.{key}'"
    if (
        action.type is comma_separated
        and isinstance(value, list)
        and all(isinstance(v, str | int) and not isinstance(v, bool) for v in value)
    ):
        value = ",".join(str(v) for v in value)  # --policies careful,inert
    if isinstance(value, list) and not many:
        option = action.option_strings[0] if action.option_strings else key
        raise ConfigError(f"{where}: a list, but {option} takes one value")
    if isinstance(value, bool) and not _is_switch(action):
        # bool is an int subclass: true would replay as 1 (n_boot=1, margin=1.0)
        option = action.option_strings[0] if action.option_strings else key
        raise ConfigError(
            f"{where}: {str(value).lower()}, but {option} takes a value, not a switch"
        )
    convert = action.type if callable(action.type) else None
    if convert is None or isinstance(value, bool):
        return value

    def one(v: Any) -> Any:
        if isinstance(v, dict | list):
            raise ConfigError(f"{where}: invalid value {v!r} (a {type(v).__name__})")
        try:
            return convert(v if isinstance(v, str) else json.dumps(v))
        except (ValueError, TypeError, argparse.ArgumentTypeError) as exc:
            raise ConfigError(f"{where}: {exc}") from None

    return [one(v) for v in value] if isinstance(value, list) else one(value)


def apply_config(parser: argparse.ArgumentParser, argv: Sequence[str]) -> dict[str, Any]:
    """Make the ``meta.config`` of ``--config FILE`` the defaults of the selected
    subcommand (positional arguments included, so they may be left out). Returns what
    was replayed; keys that match no option are logged and skipped."""
    path = _config_path(argv)
    if path is None:
        return {}
    name, target = _target(parser, argv)
    own = target._option_string_actions.get("--config")
    if own is not None and own.metavar != CONFIG_METAVAR:
        return {}  # the subcommand's own --config option, not a results file to replay
    if not name:
        raise ConfigError.invalid("--config", "a results file given to a subcommand", str(path))
    command, config = read_config(path)
    # where the replay writes is the command line's choice (or its default), never the
    # recorded run's: a results file must not pick a folder to write in
    for key in _NEVER_REPLAYED:
        config.pop(key, None)
    recorded = (command or "").removeprefix("toolaudit ").strip()
    if recorded and recorded.split(" ")[0] != name.split(" ")[0]:
        from toolaudit.errors import TraceFormatError

        raise TraceFormatError(
            path, None, "meta.command", f"results of 'toolaudit {recorded}', not of '{name}'"
        )
    hook = target.get_default("config_replay")
    if callable(hook):  # the subcommand turns records of its own into options
        config = hook(config, path)
    actions = {
        a.dest: a for a in target._actions if a.dest not in ("help", "config", "config_replay")
    }
    replayed: dict[str, Any] = {}
    pending = list(config.items())
    while pending:
        key, value = pending.pop(0)
        action = actions.get(key.replace("-", "_"))
        switch = action is not None and _is_switch(action)
        if isinstance(value, dict):
            # A sub-configuration (e.g. leakage's dilution): its keys may be options of
            # their own (carrier), and a switch of the same name is on.
            # (never over a key the record has at the top level, such as leakage's features)
            pending += [
                (k, v)
                for k, v in value.items()
                if k.replace("-", "_") in actions and k not in config
            ]
            pending += [
                (f"{key}_{k}", v)
                for k, v in value.items()
                if k.replace("-", "_") not in actions and f"{key}_{k}" in actions
            ]
            if not switch:
                logger.info("--config: %s is a group of settings; its options replayed", key)
                continue
            value = True
        if action is None:
            logger.info("--config: %s=%r is not an option of %s; not replayed", key, value, name)
            continue
        if value is None:
            if not switch:
                logger.info("--config: %s was null; its default is kept", key)
                continue
            value = False  # a sub-configuration recorded as null was switched off
        value = _replay(value, action, key, path)
        if action.choices is not None and not isinstance(value, list):
            if value not in action.choices:
                raise ConfigError.invalid(f"{key} (from {path})", list(action.choices), value)
        if not action.option_strings:  # positional: optional now, defaulting to the record
            action.nargs = "*" if action.nargs in ("+", "*") else "?"
        action.required = False  # a required option (redact --model) given by the record
        action.default = value
        replayed[action.dest] = value
    logger.info("--config %s replays %s", path, ", ".join(sorted(replayed)) or "nothing")
    return replayed


#: Recorded options a ``--config`` replay never takes: where to write.
_NEVER_REPLAYED = ("out",)

#: Parsed options that name outputs, caches or the replayed file, never inputs.
_NOT_INPUTS = frozenset({"out", "dir", "cache", "study", "report", "config"})


def _absolute_inputs(args: argparse.Namespace) -> None:
    """Input paths (``Path`` options and positionals) made absolute, so the recorded
    configuration names the same files from any working folder, and a ``--config``
    replay, which reads them back as absolute paths, records the same bytes."""
    for key, value in vars(args).items():
        if key in _NOT_INPUTS:
            continue
        if isinstance(value, Path):
            setattr(args, key, resolved_path(value, _flag(key)))
        elif isinstance(value, list) and value and all(isinstance(v, Path) for v in value):
            setattr(args, key, [resolved_path(v, _flag(key)) for v in value])


def _flag(dest: str) -> str:
    return dest.replace("_", "-")


def _log_level(args: argparse.Namespace) -> int:
    if getattr(args, "log_level", None):
        return int(getattr(logging, str(args.log_level).upper()))
    if getattr(args, "quiet", False):
        return logging.ERROR
    if getattr(args, "verbose", False):
        return logging.DEBUG
    return logging.WARNING


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    verbose = "-v" in argv or "--verbose" in argv
    try:
        parser = build_parser()
        apply_config(parser, argv)
        args = parser.parse_args(argv)
        _absolute_inputs(args)
        verbose = bool(getattr(args, "verbose", False))
        root = logging.getLogger()
        level = _log_level(args)
        logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s")
        # Python warnings (matplotlib's "Glyph missing" for a tool name...) go through the
        # same handler, so their text is shown with control characters made visible
        logging.captureWarnings(True)
        root.setLevel(level)
        # numba's compiler logs every pass at DEBUG; its warnings still show
        logging.getLogger("numba").setLevel(max(level, logging.INFO))
        for handler in root.handlers:
            if type(handler) is logging.StreamHandler:  # the console handler basicConfig made
                handler.setFormatter(_VisibleFormatter("%(levelname)s %(name)s: %(message)s"))
        configure(quiet=bool(getattr(args, "quiet", False)))
        if not getattr(args, "func", None):
            parser.print_help()
            return EXIT_BAD_INPUT
        try:
            return int(args.func(args) or 0)
        except SystemExit as exc:  # toolaudit's commands return; this is user code's exit
            print(f"toolaudit: error: {_user_exit(exc)}", file=sys.stderr)
            return EXIT_BAD_INPUT
    except ToolAuditError as exc:
        print(f"toolaudit: error: {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("toolaudit: interrupted; finished work is kept and a rerun resumes", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (| head): end quietly, as POSIX tools do
        _drop_stdout()
        return EXIT_BROKEN_PIPE
    except SystemExit as exc:  # --help, --version, or a one-line usage error (exit 2)
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_BAD_INPUT
    except Exception as exc:  # a bug: one line, and the traceback only with -v
        if verbose:
            logger.exception("unexpected error")
        print(
            f"toolaudit: unexpected error: {type(exc).__name__}: {_one_line(exc)}"
            + ("" if verbose else " (rerun with -v for the traceback)"),
            file=sys.stderr,
        )
        return EXIT_UNEXPECTED


def _drop_stdout() -> None:
    """Point stdout at /dev/null, so the interpreter's final flush of the closed pipe
    raises nothing."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    except (OSError, ValueError):  # stdout is no real file (a test's capture)
        pass


def _user_exit(exc: SystemExit) -> str:
    """One line for a ``sys.exit`` raised by user code a command ran (a ``py:`` agent or
    judge, an Inspect task file): where it was called, and that the command stopped."""
    tb = exc.__traceback__
    where = "user code"
    while tb is not None:
        frame = tb.tb_frame
        module = str(frame.f_globals.get("__name__", "?"))
        if not module.startswith(("toolaudit", "inspect_ai", "tau2", "asyncio", "concurrent")):
            where = f"module {module} ({frame.f_code.co_filename}, line {tb.tb_lineno})"
        tb = tb.tb_next
    return (
        f"{where} called sys.exit({exc.code!r}); the command stopped there (results "
        "written before it are kept and a rerun resumes)"
    )


# Rich console markup that Inspect's messages carry ("[bold][blue]..."): not for a terminal line.
_MARKUP = re.compile(
    r"\[/?(?:bold|italic|dim|underline|reverse|red|green|blue|yellow|magenta|cyan|white|"
    r"black|link(?:=[^\]]*)?)(?: (?:bold|italic|dim|underline|red|green|blue|yellow|magenta|"
    r"cyan|white|black))*\]"
)


def _one_line(exc: BaseException) -> str:
    """The message of ``exc`` on one line (newlines and control characters made visible,
    Rich markup such as Inspect's ``[bold][blue]`` removed).

    >>> _one_line(ValueError("[bold][blue]OPENAI_API_KEY[/blue][/bold] is not set"))
    'OPENAI_API_KEY is not set'
    """
    return visible(_MARKUP.sub("", str(exc)) or "(no message)")[:2000]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
