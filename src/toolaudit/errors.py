"""The exception hierarchy: one base class, each subclass also a matching builtin."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


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

    #: the parameter a message built by :meth:`invalid` names, and what it says after it
    name: str | None = None
    _rest: str = ""

    @classmethod
    def invalid(cls, name: str, allowed: Sequence[object] | str, got: object) -> ConfigError:
        """Build the uniform message: parameter, allowed values, value received."""
        allowed_text = allowed if isinstance(allowed, str) else ", ".join(map(repr, allowed))
        return cls._named(name, f"={got!r}; allowed: {allowed_text}")

    def for_option(self, flags: Mapping[str, str] | None = None) -> ConfigError:
        """The same error naming the command-line option instead of the config field.

        ``flags`` maps a field to its option where the two differ; otherwise the field's
        underscores become dashes.

        >>> ConfigError.invalid("n_boot", "an integer >= 1", 0).for_option()
        ConfigError('invalid n-boot=0; allowed: an integer >= 1')
        """
        if self.name is None:
            return self
        option = (flags or {}).get(self.name, self.name.replace("_", "-"))
        return ConfigError._named(option, self._rest)

    @classmethod
    def _named(cls, name: str, rest: str) -> ConfigError:
        error = cls(f"invalid {name}{rest}")
        error.name, error._rest = name, rest
        return error


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
