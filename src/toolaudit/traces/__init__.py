"""Trace records (Example, Episode), JSONL I/O and loaders for public agent-result formats.

Entry points: ``detect_format``, ``load_episodes``, ``load_examples``, ``load_domain``,
``inspect_path`` and ``episodes_to_examples``. Supported formats are listed in
``FORMATS`` (tau2-bench results files and results folders, tau-bench trajectory lists,
Inspect AI logs, tau2 domain folders, Episode / Example JSONL, and any JSONL read through
a ``FieldMapping`` of JMESPath expressions into Examples or Episodes).
"""

from toolaudit.traces._contract import TRACES_AUDIT
from toolaudit.traces._convert import (
    DEFAULT_THRESHOLD,
    ConversionCounts,
    episode_id,
    episodes_to_examples,
)
from toolaudit.traces._domain import Domain, DomainTask, ReferenceAction, load_domain
from toolaudit.traces._files import read_regular
from toolaudit.traces._formats import (
    FORMAT_NAMES,
    FORMATS,
    TraceFormat,
    detect_format,
    load_episodes,
    load_examples,
)
from toolaudit.traces._inspect_ai import sample_episode
from toolaudit.traces._jsonl import iter_json_objects, read_jsonl, validate_record, write_jsonl
from toolaudit.traces._mapping import FieldMapping
from toolaudit.traces._numbers import check_reward_scores, check_score
from toolaudit.traces._schema import (
    ChatMessage,
    Episode,
    Example,
    Message,
    ToolCall,
    ToolSection,
)
from toolaudit.traces._source import kind_of, read_json_document
from toolaudit.traces._summary import TraceSummary, inspect_path, summary_rows
from toolaudit.traces._tau2 import sim_episode
from toolaudit.traces._view import view_command, view_commands

__all__ = [
    "check_reward_scores",
    "check_score",
    "read_regular",
    "iter_json_objects",
    "kind_of",
    "validate_record",
    "sample_episode",
    "sim_episode",
    "view_command",
    "view_commands",
    "read_json_document",
    "summary_rows",
    "TRACES_AUDIT",
    "DEFAULT_THRESHOLD",
    "FORMATS",
    "FORMAT_NAMES",
    "ChatMessage",
    "ConversionCounts",
    "Domain",
    "DomainTask",
    "Episode",
    "Example",
    "FieldMapping",
    "Message",
    "ReferenceAction",
    "ToolCall",
    "ToolSection",
    "TraceFormat",
    "TraceSummary",
    "detect_format",
    "episode_id",
    "episodes_to_examples",
    "inspect_path",
    "load_domain",
    "load_episodes",
    "load_examples",
    "read_jsonl",
    "write_jsonl",
]
