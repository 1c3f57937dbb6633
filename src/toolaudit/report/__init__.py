"""Report scaffolding shared by every audit: results JSON, Markdown, one-file HTML."""

from toolaudit.report._cards import (
    CONCLUSION_CHANGING,
    Card,
    fallback_counts,
    verdict_card,
    with_fallbacks,
)
from toolaudit.report._document import (
    Figure,
    Headline,
    Section,
    Table,
    fmt,
    new_figure,
    text_colour,
    visible,
    write_report,
)
from toolaudit.report._findings import (
    RESULTS_SCHEMA_VERSION,
    Fallback,
    Finding,
    ResultMeta,
    headline_sentence,
    interval_bounded,
    record_fallback,
)
from toolaudit.report._meta import (
    clean_json,
    file_digest,
    machine,
    run_metadata,
    write_results,
)

__all__ = [
    "machine",
    "CONCLUSION_CHANGING",
    "Card",
    "fallback_counts",
    "verdict_card",
    "with_fallbacks",
    "visible",
    "RESULTS_SCHEMA_VERSION",
    "Fallback",
    "Finding",
    "ResultMeta",
    "record_fallback",
    "Figure",
    "text_colour",
    "clean_json",
    "file_digest",
    "Headline",
    "headline_sentence",
    "interval_bounded",
    "Section",
    "Table",
    "new_figure",
    "fmt",
    "run_metadata",
    "write_report",
    "write_results",
]
