"""Passwords in connection strings, hidden wherever text leaves the harness (results, logs, messages).

Pure text: every layer may use it, the engine's messages included (a target given as ``uri=...`` names its
connection string in them). :func:`harness.targets.connection_strings.redact` hides the password of one
connection string it can parse; :func:`redact_text` hides the password of every connection string inside any
text, parsed or not.
"""

from __future__ import annotations

import re

#: ``mongodb://user:password@`` or ``mongodb+srv://user:password@`` anywhere in a text.
_CREDENTIALS_IN_TEXT = re.compile(r"(mongodb(?:\+srv)?://)([^:/?#@\s]+):([^/?#\s]*)@")


def redact_text(text: str) -> str:
    """``text`` (a log line, a command line, an error) with the password of every connection string in it hidden."""
    return _CREDENTIALS_IN_TEXT.sub(lambda found: f"{found.group(1)}{found.group(2)}:***@", str(text))
