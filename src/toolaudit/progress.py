"""The progress callback every long-running function takes, defined once.

``cb(done, total, label)``: ``done`` of ``total`` units finished (``total`` 0 when not
known yet), ``label`` a few words on what is running. The CLI turns it into a bar on a
terminal and plain lines with an ETA elsewhere (``toolaudit.cli``).
"""

from __future__ import annotations

from collections.abc import Callable

Progress = Callable[[int, int, str], None]

__all__ = ["Progress"]
