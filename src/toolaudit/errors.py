"""The exception hierarchy: one base class, each subclass also a matching builtin."""

from __future__ import annotations

from collections.abc import Sequence


class ToolAuditError(Exception):
    """Base class of every error toolaudit raises on purpose."""


class TraceFormatError(ToolAuditError, ValueError):
    """A data file is malformed. The message names the file, the line and the field."""

    def __init__(self, path: object, line: int | None, field: str | None, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.field = field
        self.problem = problem
        where = self.path
        if line is not None:
            where += f", line {line}"
        if field:
            where += f", field '{field}'"
        super().__init__(f"{where}: {problem}")


class DataError(ToolAuditError, ValueError):
    """Data that is well-formed but cannot support the requested analysis."""


class ConfigError(ToolAuditError, ValueError):
    """An option has a value outside its allowed set."""

    @classmethod
    def invalid(cls, name: str, allowed: Sequence[object] | str, got: object) -> ConfigError:
        """Build the uniform message: parameter, allowed values, value received."""
        allowed_text = allowed if isinstance(allowed, str) else ", ".join(map(repr, allowed))
        return cls(f"invalid {name}={got!r}; allowed: {allowed_text}")


class ModelError(ToolAuditError, RuntimeError):
    """A model backend failed (server unreachable, bad response, ...)."""


class MissingDependencyError(ToolAuditError, ImportError):
    """An optional dependency is not installed; the message has the pip line."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"this feature needs '{package}'; install it with: pip install 'toolaudit[{extra}]'"
        )


# --- the checks every config runs on construction -------------------------------------


def check_min(name: str, value: float, low: float, allowed: str | None = None) -> None:
    """ConfigError unless ``value >= low`` (NaN fails).

    >>> check_min("n_boot", 0, 1)
    Traceback (most recent call last):
    ...
    toolaudit.errors.ConfigError: invalid n_boot=0; allowed: an integer >= 1
    """
    if not value >= low:
        raise ConfigError.invalid(name, allowed or f"an integer >= {low}", value)


def check_between(name: str, value: float, low: float, high: float, allowed: str) -> None:
    """ConfigError unless ``low < value < high`` (NaN and infinities fail)."""
    if not low < value < high:
        raise ConfigError.invalid(name, allowed, value)


def check_choice(name: str, value: object, choices: Sequence[object]) -> None:
    """ConfigError unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ConfigError.invalid(name, choices, value)
