"""Opening input files without the file system's traps: a symbolic link loop, a name too
long for it, a FIFO (whose ``open`` waits for a writer forever) or a device (``/dev/zero``
reads until memory runs out) is refused, naming the path, before a byte is read.

Every trace reader opens its files through :func:`open_regular`, and format detection
starts with :func:`input_kind`, so a hostile layout ends in one located error.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import BinaryIO, Literal

from toolaudit.errors import TraceFormatError

#: The longest file name (one path component) in bytes that Linux and macOS accept.
NAME_MAX = 255

_OS_PROBLEMS = {
    errno.ELOOP: "a symbolic link loop (or too many links to follow)",
    errno.ENOENT: "no such file",
    errno.ENAMETOOLONG: f"a name too long for the file system (over {NAME_MAX} bytes)",
    errno.EACCES: "permission denied",
    errno.ENOTDIR: "no such file (a part of the path is not a folder)",
}


def _special(mode: int) -> str:
    """What a non-regular file is, as an error message says it."""
    for check, name in (
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a folder"),
    ):
        if check(mode):
            return name
    return "not a regular file"


def os_problem(exc: OSError) -> str:
    """An OSError as the problem part of a one-line error."""
    if exc.errno in _OS_PROBLEMS:
        return _OS_PROBLEMS[exc.errno]
    return exc.strerror or type(exc).__name__


def _stat(path: Path) -> os.stat_result:
    try:
        return os.stat(path)  # follows links: a loop is ELOOP here
    except OSError as exc:
        raise TraceFormatError(path, None, None, os_problem(exc)) from None
    except ValueError:  # os.stat refuses a NUL byte in a path
        raise TraceFormatError(path, None, None, "a NUL byte in the file name") from None


def input_kind(path: str | Path) -> Literal["file", "dir"]:
    """``"dir"`` for a folder, ``"file"`` for a regular file (links followed); anything
    else (missing, a link loop, a FIFO, a device, a socket) is a TraceFormatError."""
    path = Path(path)
    mode = _stat(path).st_mode
    if stat.S_ISDIR(mode):
        return "dir"
    if not stat.S_ISREG(mode):
        raise TraceFormatError(path, None, None, f"{_special(mode)}, not a regular file")
    return "file"


def open_regular(path: str | Path) -> BinaryIO:
    """Open a regular file for binary reading; anything else is refused before opening.

    The file is checked with ``stat`` first and opened without blocking, then checked
    again on the open descriptor, so a file swapped for a FIFO in between still never
    blocks the reader.

    Example:
        >>> with open_regular("results.json") as fh:  # doctest: +SKIP
        ...     head = fh.read(256)
    """
    path = Path(path)
    if input_kind(path) == "dir":
        raise TraceFormatError(path, None, None, "a folder, not a file")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise TraceFormatError(path, None, None, os_problem(exc)) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise TraceFormatError(path, None, None, f"{_special(mode)}, not a regular file")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "rb")


def read_regular(path: str | Path) -> bytes:
    """The bytes of a regular file (see :func:`open_regular`)."""
    with open_regular(path) as fh:
        return fh.read()
