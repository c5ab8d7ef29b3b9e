"""Secrets in connection strings, hidden wherever text leaves the harness: results, labels, logs, reports, messages.

The one redaction of the project. It is pure text, so every layer may use it: the engine's messages name a target
given as ``uri=...``, the app prints labels, the matrix writes command lines, reports show targets. Callers hand it
any text (one connection string, a command line, an error); :func:`harness.shared.connection_strings.redact` is
the same rules under the name the connection-string module has always offered.

What is a secret, and why each rule exists:

- the password of the user info (``mongodb://user:password@``, or of any other URL): the user name stays, since
  results are read by people who need to know who connected, and an X.509 subject is not a secret;
- the value of every URI option in :data:`SENSITIVE_URI_OPTIONS` (``authMechanismProperties`` carries an AWS
  session token, ``tlsCertificateKeyFilePassword`` a key's passphrase...), compared case-insensitively as drivers
  compare option names. Such a value is hidden wherever ``name=value`` appears, inside a connection string or
  not (a label, a keyword argument), and in the quoted-key form of a printed mapping (``'proxyPassword': 'x'``).

The option list lives here rather than being read from pymongo (``pymongo.common.SENSITIVE_OPTIONS_FOR_REPR``):
the core imports no driver (docs/architecture.md). tests/harness/core/test_secrets_redaction.py fails as soon as
pymongo names a sensitive option missing here, so the list cannot silently fall behind the driver.
"""

from __future__ import annotations

import re

#: What a hidden secret is replaced by.
MASK = "***"

#: URI options whose values are secrets, lower-cased (option names compare case-insensitively). The URI options
#: specification's sensitive options, pymongo's ``SENSITIVE_OPTIONS_FOR_REPR`` among them, and the legacy spelling
#: of the key-file passphrase. ``authMechanismProperties`` is hidden whole: one of its properties is a session token,
#: and which ones are safe differs between drivers.
SENSITIVE_URI_OPTIONS = frozenset(
    {
        "authmechanismproperties",
        "tlscertificatekeyfilepassword",
        "sslclientcertificatekeypassword",
        "proxyusername",
        "proxypassword",
    }
)

#: ``scheme://user:password@`` anywhere in a text: ``mongodb://`` and ``mongodb+srv://``, and any other URL (a
#: mistyped scheme, a package index with a token), since a password in one is no less a secret. The password runs to
#: the last ``@`` of the authority (an unescaped ``@`` in a password must not leave its tail shown).
_CREDENTIALS_IN_TEXT = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*://)([^:/?#@\s]+):([^/?#\s]*)@")

_NAMES = "|".join(sorted(SENSITIVE_URI_OPTIONS))
#: A value as it is written after a sensitive name: a printed mapping, a quoted string, or the text up to the next
#: option separator (``&`` or ``;``), space, quote or angle bracket. A comma does not end it: authMechanismProperties
#: separates its properties with commas, and each may be a secret.
_VALUE = r"""\{[^{}]*\}|'[^']*'|"[^"]*"|[^&;\s'"<>]*"""
#: ``name=value`` (a connection string's option, a label, a keyword argument).
_OPTION_ASSIGNED = re.compile(rf"(?<![A-Za-z0-9_])((?:{_NAMES})\s*=\s*)({_VALUE})", re.IGNORECASE)
#: ``'name': value`` or ``"name": value`` (a printed dict, JSON).
_OPTION_KEYED = re.compile(rf"""((['"])(?:{_NAMES})\2\s*:\s*)({_VALUE})""", re.IGNORECASE)


def _masked(value: str) -> str:
    """The mask in the value's own quoting, so that a printed mapping still reads as one."""
    if value[:1] in ("'", '"'):
        return f"{value[0]}{MASK}{value[0]}"
    return MASK


def redact_text(text: str) -> str:
    """``text`` (a connection string, a log line, a command line, an error) with every secret it holds hidden."""
    shown = _CREDENTIALS_IN_TEXT.sub(lambda found: f"{found.group(1)}{found.group(2)}:{MASK}@", str(text))
    shown = _OPTION_ASSIGNED.sub(lambda found: found.group(1) + _masked(found.group(2)), shown)
    return _OPTION_KEYED.sub(lambda found: found.group(1) + _masked(found.group(3)), shown)


def is_sensitive_option(name: str) -> bool:
    """Whether the URI option ``name`` (any case) holds a secret."""
    return name.lower() in SENSITIVE_URI_OPTIONS
