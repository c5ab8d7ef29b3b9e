"""Deliberately broken executors: the reference executor's loop with one fault, written to a tmp_path script."""

from __future__ import annotations

import sys
from pathlib import Path

REFERENCE = [sys.executable, "-m", "harness.drivers.executor.pymongo_reference"]

#: A wrapper around the reference executor's loop. ``{unreadable}`` runs for a line that is no request (the
#: reference writes nothing), ``{before}`` before the request is answered, ``{fault}`` before the reply is
#: written; they see ``line``, ``request``, ``reply`` and ``pending`` (a dict to keep state in).
_WRAPPER = """
import os, sys, time
from harness.drivers.executor import pymongo_reference as ref
executor = ref.Executor()
count = 0
pending = {{}}
for line in sys.stdin:
    count += 1
    request = ref.read_request(line)
    if request is None:
{unreadable}
        continue
{before}
    reply = ref.answer(executor, request)
{fault}
    sys.stdout.write(ref.reply_line(request, reply)); sys.stdout.flush()
"""


def broken_executor(
    tmp_path: Path, fault: str = "    pass", *, before: str = "    pass", unreadable: str = "        pass"
) -> list[str]:
    """The command line of an executor whose loop runs ``fault`` (indented code) before each reply is written
    (``before``: before each request is answered; ``unreadable``: on a line that is not a request)."""
    script = tmp_path / "executor.py"
    script.write_text(_WRAPPER.format(fault=fault, before=before, unreadable=unreadable))
    return [sys.executable, str(script)]
