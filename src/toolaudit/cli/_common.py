"""Helpers shared by the subcommands: JSON output, progress, exit codes, ``--fail-on``
gates, ``--config`` replay and the data root.

Exit codes (every command):

====  ===========================================================================
0     success
1     unexpected error (a bug): one line on stderr; ``-v`` shows the traceback
2     bad input or option: one line naming the file, line and field (or option)
3     a ``--fail-on`` gate matched: the named finding is present in the results
130   interrupted (Ctrl-C); finished work is kept and a rerun resumes
====  ===========================================================================
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from toolaudit.errors import ConfigError
from toolaudit.progress import Progress as ProgressCallback
from toolaudit.report import clean_json as _clean

logger = logging.getLogger(__name__)

ProgressMode = Literal["auto", "rich", "plain", "off"]

EXIT_OK = 0
EXIT_UNEXPECTED = 1
EXIT_BAD_INPUT = 2
EXIT_FINDING = 3
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what POSIX tools give when the reader goes away
EXIT_CODES_HELP = (
    "exit codes: 0 success, 1 unexpected error (rerun with -v for the traceback), "
    "2 bad input or option, 3 a --fail-on finding is present, 130 interrupted, "
    "141 the output pipe was closed (e.g. | head)"
)


@dataclass(slots=True)
class _Settings:
    """Process-wide CLI settings that ``main`` fills in from the common options."""

    quiet: bool = False
    progress: ProgressMode = "auto"
    every: float = 10.0


SETTINGS = _Settings()


def configure(*, quiet: bool = False, progress: str | None = None) -> None:
    """Set the CLI-wide progress behaviour (called by ``main`` once per invocation).

    ``progress`` falls back to ``$TOOLAUDIT_PROGRESS`` (``rich``/``1``, ``plain``,
    ``off``/``0``, default ``auto``); the plain-line interval is
    ``$TOOLAUDIT_PROGRESS_EVERY`` seconds (default 10).
    """
    env = os.environ.get("TOOLAUDIT_PROGRESS", "auto").strip().lower()
    mode = progress or {"1": "rich", "0": "off", "": "auto"}.get(env, env)
    if mode not in ("auto", "rich", "plain", "off"):
        raise ConfigError.invalid("TOOLAUDIT_PROGRESS", ("auto", "rich", "plain", "off"), env)
    every_text = os.environ.get("TOOLAUDIT_PROGRESS_EVERY", "10")
    try:
        every = float(every_text)
    except ValueError:
        every = -1.0
    if not every >= 0:  # also rejects NaN
        raise ConfigError.invalid(
            "TOOLAUDIT_PROGRESS_EVERY", "a number of seconds >= 0", every_text
        )
    SETTINGS.quiet = quiet
    SETTINGS.progress = mode  # type: ignore[assignment]
    SETTINGS.every = every


def print_json(obj: Any) -> None:
    """Print a result as JSON on stdout (NaN written as null)."""
    sys.stdout.write(json.dumps(_clean(obj), indent=2, sort_keys=True) + "\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions as written, and every option's default shown: ``(default: X)`` is
    appended unless the help already states it, or there is no value to show (a flag,
    ``None``, an empty list)."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            "default" in text.lower()
            or default is None
            or default is False  # a flag (0 is a value and is shown)
            or default is argparse.SUPPRESS
            or (isinstance(default, list | tuple) and not default)
            or isinstance(action, argparse._HelpAction | argparse._VersionAction)
            or not action.option_strings
        ):
            return text
        return text + " (default: %(default)s)"


def add_parser(
    sub: Any, name: str, *, help: str, example: str, description: str | None = None
) -> argparse.ArgumentParser:
    """Add a subcommand whose --help ends with a worked example."""
    return sub.add_parser(
        name,
        help=help,
        description=description or help,
        epilog=f"Example:\n  {example}",
        formatter_class=HelpFormatter,
    )


def _duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class PlainProgress:
    """Progress as plain lines (for logs, nohup and CI): one line at most every
    ``every`` seconds, and one when the work is complete, each with an ETA.

    >>> import io
    >>> out = io.StringIO()
    >>> p = PlainProgress("demo", every=0, stream=out, clock=iter([0, 0, 2, 4]).__next__)
    >>> p(1, 4, "task a"); p(2, 4, "task b"); p(4, 4, "done")
    >>> print(out.getvalue().strip())
    demo: 1/4 (25%) task a; elapsed 0s
    demo: 2/4 (50%) task b; elapsed 2s, ETA 4s
    demo: 4/4 (100%) done; elapsed 4s

    The rate is measured from the first report on, never from zero: a resumed run whose
    first report already counts 90 units (from a cache, in 1 s) and which then takes 10 s
    a unit is not mistaken for a fast one; after that the ETA follows the last ``window``
    seconds.

    >>> out = io.StringIO()
    >>> p = PlainProgress("r", every=0, window=30, stream=out,
    ...                   clock=iter([0, 1, 11, 21, 31, 41]).__next__)
    >>> for done in (90, 91, 92, 93, 94): p(done, 100, "")
    >>> print(out.getvalue().strip())
    r: 90/100 (90%); elapsed 1s
    r: 91/100 (91%); elapsed 11s, ETA 1m30s
    r: 92/100 (92%); elapsed 21s, ETA 1m20s
    r: 93/100 (93%); elapsed 31s, ETA 1m10s
    r: 94/100 (94%); elapsed 41s, ETA 1m00s
    """

    def __init__(
        self,
        description: str,
        *,
        every: float = 10.0,
        window: float = 300.0,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.description = description
        self.every = every
        self.window = window
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.last: float | None = None
        # A long run reports several stages, each counting to its own total; the ETA is
        # the current stage's rate over its last ``window`` seconds, so that units served
        # from a cache at the start of a resumed run do not make the rest look fast.
        self.stage_total = 0
        self.points: deque[tuple[float, int]] = deque([(self.start, 0)])  # (time, done)
        self.previous = 0

    def __call__(self, done: int, total: int, label: str) -> None:
        now = self.clock()
        if total != self.stage_total or done < self.previous:
            if not (self.stage_total == 0 and self.previous == 0):  # a new stage
                self.points.clear()
            self.stage_total = total
        if len(self.points) == 1 and self.points[0] == (self.start, 0) and done > 0:
            # The first report already counts finished units (a resumed run, or a first
            # unit of unknown cost): measure the rate from here, not from zero.
            self.points.clear()
        self.previous = done
        self.points.append((now, done))
        while len(self.points) > 2 and now - self.points[1][0] >= self.window:
            self.points.popleft()  # the oldest point kept is the last one outside the window
        finished = total > 0 and done >= total
        if not finished and self.last is not None and now - self.last < self.every:
            return
        if not finished and self.last is None and now - self.start < self.every:
            return
        self.last = now
        elapsed = now - self.start
        head = f"{self.description}: {done}/{total}" if total else f"{self.description}: {done}"
        if total:
            head += f" ({100 * done / total:.0f}%)"
        if label:
            shown = safe_text(label)
            head += f" {shown[:77] + '...' if len(shown) > 80 else shown}"
        tail = f"elapsed {_duration(elapsed)}"
        since, done0 = self.points[0]
        if not finished and total and done > done0:
            rate = (now - since) / (done - done0)
            tail += f", ETA {_duration(rate * (total - done))}"
        stream = self.stream or sys.stderr
        stream.write(f"{head}; {tail}\n")
        stream.flush()


@contextmanager
def progress(description: str, *, enabled: bool = True) -> Iterator[ProgressCallback]:
    """A progress callback ``cb(done, total, label)`` on stderr: a rich bar on a
    terminal, plain lines with an ETA otherwise (see ``PlainProgress``); nothing with
    ``-q``, ``enabled=False`` or ``TOOLAUDIT_PROGRESS=off``."""
    mode = SETTINGS.progress
    if mode == "auto":
        mode = "rich" if sys.stderr.isatty() else "plain"
    if not enabled or SETTINGS.quiet or mode == "off":
        yield lambda done, total, label: None
        return
    if mode == "plain":
        yield PlainProgress(description, every=SETTINGS.every)
        return
    from rich.markup import escape
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),  # "3/?" until the total is known, never "3/None"
        TimeElapsedColumn(),
        transient=True,
    ) as bar:
        task = bar.add_task(escape(description), total=None)

        def cb(done: int, total: int, label: str) -> None:
            # a label comes from the data (tool names): shown as text, never as markup
            text = escape(f"{description} {safe_text(label)}")
            bar.update(task, completed=done, total=total or None, description=text)

        yield cb


# --- --fail-on gates ------------------------------------------------------------------


def add_fail_on(parser: argparse.ArgumentParser, findings: Mapping[str, str]) -> None:
    """The ``--fail-on FINDING[,FINDING]`` option, the same grammar on every command
    (comma-separated, repeatable): exit code 3 when a named finding is present in the
    results. ``findings`` maps each name to what it means (for --help)."""
    # argparse %-formats help texts: a literal % (as in "90% interval") is written %%
    explained = "; ".join(f"{k}: {v}" for k, v in findings.items()).replace("%", "%%")
    allowed = tuple(findings)

    def names(text: str) -> list[str]:
        got = [t.strip() for t in str(text).split(",") if t.strip()]
        bad = [t for t in got if t not in allowed]
        if bad or not got:
            raise argparse.ArgumentTypeError(
                f"invalid value {bad[0] if bad else text!r}; allowed: {', '.join(allowed)}"
            )
        return got

    parser.add_argument(
        "--fail-on",
        action="append",
        type=names,
        default=None,
        metavar="FINDING[,FINDING]",
        help=f"exit with code {EXIT_FINDING} when one of these findings is present "
        f"(comma-separated, repeatable; {explained})",
    )


def fail_on(args: argparse.Namespace) -> list[str]:
    """The ``--fail-on`` findings asked for, flattened and de-duplicated in order."""
    out: list[str] = []
    for item in getattr(args, "fail_on", None) or []:
        for name in item if isinstance(item, list) else [item]:
            if name not in out:
                out.append(name)
    return out


def gate_exit(args: argparse.Namespace, present: Iterable[str]) -> int:
    """The exit code of a finished run: ``EXIT_FINDING`` when one of ``--fail-on`` is
    among ``present`` (the run's findings), else 0. The gate that matched is named on
    stderr in one line, also under ``-q``: a CI log must say why it failed."""
    wanted = fail_on(args)
    hit = [f for f in wanted if f in set(present)]
    if hit:
        sys.stderr.write(
            f"toolaudit: --fail-on {', '.join(hit)}: finding present (exit {EXIT_FINDING})\n"
        )
        return EXIT_FINDING
    return EXIT_OK


# --- --config replay ------------------------------------------------------------------


def read_config(path: str | Path) -> tuple[str | None, dict[str, Any]]:
    """``(meta.command, meta.config + meta.seed)`` of a toolaudit results file.

    Raises TraceFormatError naming the file and field when it has no ``meta.config``.
    """
    from toolaudit.errors import TraceFormatError
    from toolaudit.traces import read_json_document

    path = Path(path)
    if not path.is_file():
        raise TraceFormatError(path, None, None, "no such results file (--config)")
    doc = read_json_document(path)
    meta = doc.get("meta") if isinstance(doc, dict) else None
    if not isinstance(meta, dict) or not isinstance(meta.get("config"), dict):
        raise TraceFormatError(
            path, None, "meta.config", "not a toolaudit results file (no meta.config object)"
        )
    config = dict(meta["config"])
    if meta.get("seed") is not None:
        config.setdefault("seed", meta["seed"])
    inputs = meta.get("inputs")
    for key, entry in (inputs if isinstance(inputs, dict) else {}).items():
        if key in config and isinstance(entry, dict) and isinstance(entry.get("path"), str):
            config[key] = _recorded_input(path, key, entry)
    command = meta.get("command")
    return (command if isinstance(command, str) else None), config


def _recorded_input(results: Path, key: str, entry: dict[str, Any]) -> str:
    """An input recorded in ``meta.inputs`` (relative to the results file's folder), as a
    path from here; a warning when the file's size or SHA-256 changed since the run."""
    from toolaudit.report import file_digest

    where = Path(os.path.normpath(results.resolve().parent / entry["path"]))
    if where.is_file() and "sha256" in entry:
        size = where.stat().st_size
        if size != entry.get("bytes") or file_digest(where) != entry["sha256"]:
            logger.warning(
                "--config: input %s (%s) changed since the run recorded in %s (%s bytes now, "
                "%s then; SHA-256 differs): the replay reads the file as it is now",
                key, where, results, size, entry.get("bytes"),
            )  # fmt: skip
    elif not where.exists():
        logger.warning("--config: input %s recorded as %s is gone", key, where)
    return str(where)


def default_data_root() -> Path | None:
    """Where the public tau2-bench / tau-bench files are: ``$TAU2_DATA_DIR``, else a
    ``shared/data`` folder beside the current directory or beside this checkout."""
    env = os.environ.get("TAU2_DATA_DIR")
    if env:
        return Path(env)
    candidates = [
        Path.cwd() / ".." / "shared" / "data",
        Path(__file__).resolve().parents[4] / "shared" / "data",
    ]
    for cand in candidates:
        if (cand / "tau2").is_dir() or (cand / "tau-bench").is_dir():
            return cand.resolve()
    return None


def add_data_root(parser: argparse.ArgumentParser) -> None:
    """The ``--data-root`` option (tau2-bench's data/ layout)."""
    parser.add_argument(
        "--data-root",
        type=Path,
        default=None,
        help="folder laid out like tau2-bench's data/ (tau2/domains, tau2/simulations, "
        "tau-bench/); default $TAU2_DATA_DIR, else ../shared/data when it exists",
    )


# --- trace input options shared by traces, leakage and redact --------------------------


def add_mapping_option(parser: argparse.ArgumentParser) -> None:
    """The ``--mapping FILE|NAME`` option: JMESPath field mapping for foreign JSONL."""
    parser.add_argument(
        "--mapping",
        default=None,
        metavar="FILE|NAME",
        help="field mapping (JSON file of JMESPath expressions, or a shipped one: "
        "openai-chat, langfuse-trace) for JSONL in another layout; see docs/traces.md",
    )


def load_mapping(args: argparse.Namespace) -> Any:
    """The ``FieldMapping`` named by ``--mapping`` (None when the option is absent)."""
    name = getattr(args, "mapping", None)
    if not name:
        return None
    from toolaudit.traces import FieldMapping

    return FieldMapping.from_file(name)


def safe_text(value: object) -> str:
    """Trace content made safe for a terminal: control characters (ESC, BEL, CR, ...)
    shown as visible escapes such as ``\\x1b``; print the result as rich ``Text``,
    never as markup."""
    from toolaudit.report import visible

    return visible(str(value))
