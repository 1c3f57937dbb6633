"""How Inspect records are read back, and the file names of a sample's logs.

Imports only the shared mutations (:mod:`toolaudit.probes._mutations`): the analysis reads
an Inspect study's records without the ``[inspect]`` extra.
"""

from __future__ import annotations

import hashlib

from toolaudit.probes._mutations import RecordedReader


class InspectReader(RecordedReader):
    """Inspect records as the analysis reads them: the trajectory mapped back through
    the record's own mutation, and the reward the task's own scorer gave the mapped-back
    log (``source.rescored_reward``, computed when the run was recorded)."""

    name = "inspect"


INSPECT_READER = InspectReader()


#: Sample ids longer than this are cut in log file names, with a digest of the whole id.
MAX_ID_CHARS = 80


def log_stem(sample_id: str) -> str:
    """The file-name stem of a sample's logs: the id with characters other than letters,
    digits, ``-``, ``_`` and ``.`` as ``_``; an id over :data:`MAX_ID_CHARS` characters is
    cut and ends in 12 hex digits of its SHA-256 (so long ids fit a file name and stay
    apart). Two ids with one stem are refused when the task loads.

    >>> log_stem("a/b"), log_stem("x" * 100)[-14:]
    ('a_b', 'x-09ecb6ebc8bc')
    """
    safe = "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in sample_id)
    if len(safe) <= MAX_ID_CHARS:
        return safe
    digest = hashlib.sha256(sample_id.encode()).hexdigest()[:12]
    return f"{safe[:MAX_ID_CHARS]}-{digest}"
