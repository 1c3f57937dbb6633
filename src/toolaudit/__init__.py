"""toolaudit: audits evaluations of tool-using LLM systems.

Three audits, each specified by a paper: leakage + redaction (label shortcuts in
serialized tool results), probe (is a score change the agent's or the evaluation's?),
and faults (what a model's log-probabilities say about a bad tool return).
"""

from toolaudit.errors import ConfigError, DataError, ToolAuditError, TraceFormatError

__version__ = "0.1.0"

__all__ = ["ConfigError", "DataError", "ToolAuditError", "TraceFormatError", "__version__"]
