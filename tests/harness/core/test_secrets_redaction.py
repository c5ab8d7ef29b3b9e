"""Secrets in connection strings never leave the process: the password, and the sensitive URI options' values.

One connection string holds every kind of secret the URI options name (``SECRET*`` values); each place such a
string reaches text (the one redaction over any text, the connection-string front, refusal and start-up messages,
the record's ``target.uri``, an executor's messages) must show none of them. An end-to-end run against a SecantusDB
server started here (loopback only) greps everything the harness wrote.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.credentials import SENSITIVE_URI_OPTIONS, redact_text
from harness.core.ports import TargetUnavailable
from harness.core.records import RunProvenance, make_record
from harness.shared import connection_strings
from harness.targets.safety import DestructiveTargetRefused, check_destructive
from harness.targets.uri_target import UriTarget
from tests.helpers import LEGACY_HEADER, PASSING

SECRETS = (
    "authMechanismProperties=AWS_SESSION_TOKEN:SECRETTOKEN&tlsCertificateKeyFilePassword=SECRETPW"
    "&proxyPassword=SECRETPROXY&sslClientCertificateKeyPassword=SECRETSSL&proxyUsername=SECRETUSER"
)
EVERY_SECRET = f"mongodb://u:SECRETPASS@127.0.0.1:1/?authMechanism=MONGODB-AWS&{SECRETS}"
LEAK = re.compile(r"SECRET\w*")


def leaks(text: str) -> list[str]:
    return LEAK.findall(text)


# -- the one redaction --------------------------------------------------------------------------------------


def test_every_sensitive_part_of_a_connection_string_is_hidden():
    shown = redact_text(EVERY_SECRET)
    assert leaks(shown) == []
    assert shown.startswith("mongodb://u:***@127.0.0.1:1/?authMechanism=MONGODB-AWS&authMechanismProperties=***&")
    assert connection_strings.redact(EVERY_SECRET) == shown  # the parsed-URI front is the same rules


@pytest.mark.parametrize(
    "text",
    [
        f"could not connect to {EVERY_SECRET} (timeout)",
        f"--target 'uri={EVERY_SECRET}' -q",
        f'{{"uri": "{EVERY_SECRET}"}}',
        EVERY_SECRET.replace("proxyPassword", "PROXYPASSWORD").replace("authMechanism", "AUTHmechanism"),
        "mongodb://h/?w=1;proxyPassword=SECRETSEMI;tlsCertificateKeyFilePassword=SECRETSEMI2",
        "authMechanismProperties=SERVICE_NAME:x,AWS_SESSION_TOKEN:SECRETAFTERCOMMA",
        "MongoClient(host=['h'], authmechanismproperties={'SERVICE_NAME': 'SECRETDICT'}, proxypassword='SECRETQ')",
        "{'proxyPassword': 'SECRETKEYED', \"tlsCertificateKeyFilePassword\": \"SECRETJSON\"}",
    ],
    ids=["message", "command-line", "json", "any-case", "semicolons", "comma-list", "repr", "mapping"],
)
def test_redact_text_hides_secrets_anywhere_in_any_text(text):
    assert leaks(redact_text(text)) == []


def test_what_is_not_secret_stays_readable():
    text = "mongodb://reader@127.0.0.1:1/db?replicaSet=rs&authSource=admin&myproxyPassword=kept"
    assert redact_text(text) == text


def test_pymongo_names_no_sensitive_option_missing_from_the_project_list():
    """The core cannot import pymongo, so the list is the project's; this keeps it a superset of the driver's."""
    from pymongo import common

    assert {name.lower() for name in common.SENSITIVE_OPTIONS_FOR_REPR} <= SENSITIVE_URI_OPTIONS


# -- messages and records -----------------------------------------------------------------------------------


def test_refusals_and_bad_connection_strings_show_no_secret():
    remote = EVERY_SECRET.replace("127.0.0.1:1", "db.example.invalid")
    with pytest.raises(DestructiveTargetRefused) as refused:
        check_destructive(remote, allowed=False)
    assert "db.example.invalid" in str(refused.value) and leaks(str(refused.value)) == []
    with pytest.raises(connection_strings.ConnectionStringError) as bad:
        connection_strings.parse(EVERY_SECRET.replace("127.0.0.1:1", "127.0.0.1:notaport"))
    assert leaks(str(bad.value)) == []
    with pytest.raises(TargetUnavailable) as wrong_scheme:
        UriTarget(EVERY_SECRET.replace("mongodb://", "http://"))
    assert leaks(str(wrong_scheme.value)) == []


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_an_unreachable_target_says_so_without_its_secrets():
    down = f"mongodb://u:SECRETPASS@127.0.0.1:{_free_port()}/?serverSelectionTimeoutMS=300&{SECRETS}"
    with pytest.raises(TargetUnavailable) as unavailable:
        UriTarget(down).start()
    message = str(unavailable.value)
    assert "did not answer" in message and "u:***@127.0.0.1" in message and leaks(message) == []


def test_the_record_target_uri_is_redacted_whoever_built_the_provenance():
    provenance = RunProvenance(run_id="r", target={"kind": "uri", "name": "uri", "uri": EVERY_SECRET}, driver={})
    record = make_record(
        provenance, format="legacy", file="f", test="t", test_id="f::t", outcome="passed", message="",
        started_at="now", duration_s=0.0,
    )  # fmt: skip
    assert record["target"]["uri"].startswith("mongodb://u:***@127.0.0.1:1/") and leaks(json.dumps(record)) == []
    assert provenance.target["uri"] == EVERY_SECRET  # the run's own copy is left as it was


def test_an_executor_never_echoes_a_secret_into_the_harness_messages():
    from harness.drivers.executor.adapter import _port_error

    for kind in ("driverError", "notImplemented", "noChange", "invalidRequest", "internal", "strange"):
        error = _port_error("openScope", {"kind": kind, "message": f"cannot use {EVERY_SECRET}"})
        assert leaks(str(error)) == [], kind


# -- end to end ---------------------------------------------------------------------------------------------


def _harness(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harness.app.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=180
    )


def _spec(tmp_path: Path) -> Path:
    path = tmp_path / "secrets.yml"
    path.write_text(LEGACY_HEADER + PASSING)
    return path


def test_a_run_with_every_secret_in_its_target_writes_none_of_them(tmp_path):
    """pymongo accepts these options without TLS or a proxy (it ignores the proxy ones with a warning), so the run
    goes through: verdict, record, summary and label all carry the connection string, none its secrets."""
    from secantus import SecantusDBServer

    accepted = SECRETS.replace("&tlsCertificateKeyFilePassword=SECRETPW", "")  # that one turns TLS on
    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    try:
        uri = f"mongodb://127.0.0.1:{server.port}/?{accepted}"
        results = tmp_path / "out.jsonl"
        done = _harness(
            "run", "--specs", str(_spec(tmp_path)), "--target", f"uri={uri}", "--results", str(results),
            "--label", f"where={uri}", cwd=tmp_path,
        )  # fmt: skip
    finally:
        server.stop()
    assert done.returncode == 0, done.stdout + done.stderr
    [record] = [json.loads(line) for line in results.read_text().splitlines()]
    assert record["outcome"] == "passed" and "proxyPassword=***" in record["target"]["uri"]
    everything = done.stdout + done.stderr + results.read_text()
    assert leaks(everything) == [], [line for line in everything.splitlines() if LEAK.search(line)]


def test_a_run_that_cannot_reach_its_target_writes_none_of_the_secrets(tmp_path):
    """The key-file password turns TLS on, which the server does not speak: the start fails, and says so safely."""
    from secantus import SecantusDBServer

    server = SecantusDBServer(port=0, storage_path=":memory:")
    server.start()
    try:
        uri = f"mongodb://u:SECRETPASS@127.0.0.1:{server.port}/?serverSelectionTimeoutMS=500&{SECRETS}"
        results = tmp_path / "out.jsonl"
        done = _harness(
            "run", "--specs", str(_spec(tmp_path)), "--target", f"uri={uri}", "--results", str(results), cwd=tmp_path
        )
    finally:
        server.stop()
    assert done.returncode == 2, done.stdout + done.stderr
    assert "did not answer" in done.stderr and "u:***@127.0.0.1" in done.stderr
    everything = done.stdout + done.stderr + (results.read_text() if results.exists() else "")
    assert leaks(everything) == [], [line for line in everything.splitlines() if LEAK.search(line)]
