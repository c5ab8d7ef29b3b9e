"""``--target uri=env:NAME`` reads the connection string from the environment, so a secret in it is on no
command line; an unset or empty variable refuses the target naming the variable, never guessing."""

from __future__ import annotations

import pytest

from harness.core.ports import TargetUnavailable
from harness.engine.plugins import load_plugins


def test_the_connection_string_comes_from_the_named_variable(monkeypatch):
    monkeypatch.setenv("CS_TEST_URI", "mongodb://u:SECRET@127.0.0.1:27999/?proxyPassword=SECRETPROXY")
    target = load_plugins().make_target("uri=env:CS_TEST_URI")
    assert target.uri == "mongodb://u:SECRET@127.0.0.1:27999/?proxyPassword=SECRETPROXY"  # what drivers connect with


@pytest.mark.parametrize("value", [None, ""])
def test_an_unset_or_empty_variable_refuses_the_target(monkeypatch, value):
    monkeypatch.delenv("CS_TEST_URI", raising=False)
    if value is not None:
        monkeypatch.setenv("CS_TEST_URI", value)
    with pytest.raises(TargetUnavailable, match="'CS_TEST_URI' is not set or empty"):
        load_plugins().make_target("uri=env:CS_TEST_URI")
