"""Text from a file or a server, made safe to print on a terminal: its control characters shown, not obeyed.

A test's description comes from a spec file and a failure message from a server, and a terminal obeys what
they hold: ``ESC ] 0 ; ... BEL`` retitles the window, ``ESC [ 2K`` or a carriage return erases a ``FAIL``
line, a right-to-left override reorders what follows. :func:`printable` shows each such character as an
escape a reader can see (``\\x1b``, ``\\r``, ``\\u202e``) and leaves every other character as it is. Only
what is printed changes: result records keep the raw text (JSON escapes it there anyway).

Pure text: every layer may use it.
"""

from __future__ import annotations

#: C0 controls (ESC, BEL, CR...), DEL and the C1 controls (0x80-0x9F: CSI, OSC, NEL... as single characters).
_CONTROLS = [*range(0x20), 0x7F, *range(0x80, 0xA0)]
#: The bidirectional embeddings, overrides and isolates: they reorder how the rest of the line is shown.
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]

#: What each neutralised character becomes: ``\xNN`` for the one-byte ones, ``\uNNNN`` for the others, and the
#: usual short names for the three everyone knows.
_SHOWN = {code: f"\\x{code:02x}" for code in _CONTROLS} | {code: f"\\u{code:04x}" for code in _BIDI}
_SHOWN |= {ord("\n"): "\\n", ord("\t"): "\\t", ord("\r"): "\\r"}

#: For one line: every control character shown, a newline and a tab included (a newline in a test id would
#: start a line that looks like the harness's own).
_ONE_LINE = str.maketrans(_SHOWN)
#: For a block of lines (a failure message): newlines and tabs keep their layout.
_BLOCK = str.maketrans({code: shown for code, shown in _SHOWN.items() if chr(code) not in "\n\t"})


def printable(text: str, *, block: bool = False) -> str:
    """``text`` with every control character and bidirectional override shown as a visible escape.

    ``block``: the text is a block of lines (a failure message), whose newlines and tabs are kept; otherwise
    they are shown too. Backslashes are left alone, so text already shown this way comes back unchanged.
    """
    return text.translate(_BLOCK if block else _ONE_LINE)
