"""Parse untrusted files in a child process with CPU and memory limits.

A PDF or .docx can hold far more work than its size suggests: a 92 KB PDF whose content stream
inflates to 60 MB kept pypdf busy for 8 s and 400 MB in the server process. Here the parser
runs in a process forked from a clean ``forkserver`` (with the parsers preloaded, a fork costs
milliseconds), under ``RLIMIT_CPU`` and ``RLIMIT_AS``, and the parent waits at most a little
longer than the CPU budget. The budget grows with the file's size, since honest work does
(:func:`budget_for`); a file that exceeds it is refused with a clear 422, and the server's own
memory never sees it. Linux and other POSIX systems only (``resource``), as is the service.
"""

from __future__ import annotations

import multiprocessing
import resource
import threading
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from foldwise.service.errors import InvalidInputError

_PRELOAD = ["foldwise.service.documents.extract", "pypdf", "docx", "bs4", "PIL.Image"]
T = TypeVar("T")
_context: Any = None
_context_mutex = threading.Lock()


@dataclass(frozen=True)
class Budget:
    """Limits of one parse: CPU seconds and address space in bytes."""

    cpu_seconds: int
    memory_bytes: int


def budget_for(size: int) -> Budget:
    """1 CPU second plus 1 per 100 KB of file (at most 60), and 512 MB plus 20 bytes per
    byte of file (at most 2 GB): generous for honest files, short for bombs."""
    cpu = min(60, 1 + size // 100_000)
    memory = min(2 << 30, (512 << 20) + 20 * size)
    return Budget(cpu_seconds=cpu, memory_bytes=memory)


def _forkserver() -> Any:
    global _context
    with _context_mutex:
        if _context is None:
            context = multiprocessing.get_context("forkserver")
            context.set_forkserver_preload(_PRELOAD)
            _context = context
        return _context


def _child(
    connection: Connection,
    parse: Callable[..., Any],
    data: bytes,
    filename: str,
    budget: Budget,
    extra: tuple[Any, ...],
) -> None:
    # Programs the parser starts (Tesseract) inherit these limits, each for itself.
    resource.setrlimit(resource.RLIMIT_CPU, (budget.cpu_seconds, budget.cpu_seconds + 1))
    resource.setrlimit(resource.RLIMIT_AS, (budget.memory_bytes, budget.memory_bytes))
    try:
        connection.send(("ok", parse(data, filename, *extra)))
    except InvalidInputError as exc:
        connection.send(("invalid", exc.message))
    except MemoryError:
        connection.send(("memory", None))
    except Exception as exc:  # a parser bug on a strange file: the file is unreadable to us
        connection.send(("invalid", f"{filename!r} could not be read: {type(exc).__name__}"))
    finally:
        connection.close()


def run_parser(
    parse: Callable[[bytes, str], tuple[str, str | None]], data: bytes, filename: str
) -> tuple[str, str | None]:
    """``parse(data, filename)`` in a limited child process; its (text, title).

    Raises ``InvalidInputError`` for what ``parse`` refuses and for a file over its budget.
    ``parse`` must be a module-level function (it is sent to the child by reference).
    """
    text, title = run_limited(parse, data, filename)
    return text, title


def run_limited(
    parse: Callable[..., T],
    data: bytes,
    filename: str,
    *extra: Any,
    budget: Budget | None = None,
) -> T:
    """``parse(data, filename, *extra)`` in a limited child process (``budget``, by default
    :func:`budget_for` the data); its picklable result. Refusals as :func:`run_parser`."""
    budget = budget or budget_for(len(data))
    context = _forkserver()
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(
        target=_child, args=(sender, parse, data, filename, budget, extra), daemon=True
    )
    process.start()
    sender.close()
    try:
        # CPU time runs slower than the wall clock on a loaded machine: leave room.
        if receiver.poll(2 * budget.cpu_seconds + 5):
            try:
                status, value = receiver.recv()
            except EOFError:  # died without answering: killed at its CPU limit
                status, value = "cpu", None
        else:
            status, value = "cpu", None
    finally:
        receiver.close()
        if process.is_alive():
            process.kill()
        process.join()
    if status == "ok":
        return value  # type: ignore[no-any-return]
    if status == "invalid":
        raise InvalidInputError(value)
    if status == "memory":
        raise InvalidInputError(
            f"{filename!r} needs more than {budget.memory_bytes >> 20} MB to read: refused"
        )
    raise InvalidInputError(
        f"{filename!r} needs more than {budget.cpu_seconds} s of work to read: refused"
    )
