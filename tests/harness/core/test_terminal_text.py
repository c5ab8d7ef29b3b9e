"""harness.core.terminal_text: what a spec file or a server says is shown on the terminal, never obeyed by it."""

from __future__ import annotations

import pytest

from harness.core.terminal_text import printable

#: Each character a terminal would act on, and how it is shown.
OBEYED = [
    ("\x1b", "\\x1b"),  # ESC: starts every escape sequence
    ("\x07", "\\x07"),  # BEL: ends a window-title sequence
    ("\r", "\\r"),  # back to the start of the line: the rest overwrites it
    ("\x08", "\\x08"),  # backspace
    ("\x00", "\\x00"),
    ("\x7f", "\\x7f"),  # DEL
    ("\x9b", "\\x9b"),  # CSI in one character (C1)
    ("\x9d", "\\x9d"),  # OSC in one character (C1)
    ("\x85", "\\x85"),  # NEL (C1)
    ("\u202e", "\\u202e"),  # right-to-left override
    ("\u202a", "\\u202a"),
    ("\u2066", "\\u2066"),  # left-to-right isolate
    ("\u2069", "\\u2069"),  # pop directional isolate
]


@pytest.mark.parametrize(("character", "shown"), OBEYED)
def test_each_character_a_terminal_obeys_is_shown_instead(character, shown):
    assert printable(f"a{character}b") == f"a{shown}b"
    assert printable(f"a{character}b", block=True) == f"a{shown}b"


def test_a_window_title_and_a_line_erase_become_visible_text():
    description = "resumes\x1b]0;pwned\x07 once\x1b[2K"
    assert printable(description) == "resumes\\x1b]0;pwned\\x07 once\\x1b[2K"


def test_one_line_shows_newlines_and_tabs_a_block_keeps_them():
    text = "first\n\tsecond"
    assert printable(text) == "first\\n\\tsecond"  # a newline in a test id would fake a line of the harness's own
    assert printable(text, block=True) == text


def test_everything_else_is_left_as_it_is():
    text = "naïve 中文 ✓ emoji 🙂 \\x1b already shown, quotes \"' and spaces"
    assert printable(text) == text
    assert printable(printable("\x1b[31m")) == printable("\x1b[31m")  # showing twice changes nothing
