"""The one version order: a pre-release before its release, for servers (``8.0.0-rc1``) and PEP 440 drivers alike;
``runOnRequirements`` bounds compare release numbers, so a release candidate runs its release's tests."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from packaging.version import Version

from harness.core.model import Requirement
from harness.core.requirements import unmet
from harness.record.versions import compare_releases, compare_versions, ordered_versions, release, version_key


@pytest.mark.parametrize(
    "a, b, expected",
    [
        ("7.0", "7.0.0", 0),
        ("8.0.0-rc1", "8.0.0", -1),  # a pre-release ranks before its release (it did not, in harness.core)
        ("8.0.0-rc1", "8.0.0-rc2", -1),
        ("8.0.0", "8.0.0-rc1", 1),
        ("8.2.11", "8.10", -1),
        ("6.0.99", "6.0.5", 1),
        ("0.7.0b3", "0.7.0", -1),
        ("unknown", "99.0", 1),  # no version: after every version
    ],
)
def test_versions_compare_in_the_one_order(a, b, expected):
    assert compare_versions(a, b) == expected


def test_the_order_is_pep_440_s_for_the_versions_pip_installs():
    """The matrix validates and compares driver releases with ``packaging``: the two orders are one."""
    versions = ["4.9", "4.10.0", "4.9.1", "1.0.dev1", "1.0a1", "1.0b2", "1.0rc1", "1.0", "1.0.post1", "0.7.0b3"]
    versions += ["0.7.0", "0.7.0b12", "2.0.0rc2", "2.0"]
    assert sorted(versions, key=version_key) == sorted(versions, key=Version)
    assert [compare_versions(v, "4.9.0") for v in ("4.9", "4.9.0")] == [0, 0]


def test_ranks_are_dense_and_equal_spellings_share_one():
    assert ordered_versions(["8.0.0", "8.0.0-rc1", "8.0", "7.0.12"]) == [
        ("7.0.12", 1),
        ("8.0.0-rc1", 2),
        ("8.0", 3),
        ("8.0.0", 3),
    ]


def test_release_numbers_leave_the_pre_release_out():
    assert release("4.2.0-rc1") == (4, 2, 0)
    assert release("unknown") == ()
    assert compare_releases("8.0.0-rc1", "8.0") == 0 and compare_releases("8.0.1", "8.0") == 1


def _target(version: str) -> SimpleNamespace:
    return SimpleNamespace(info=SimpleNamespace(version=version, topology="replicaset", details={}))


@pytest.mark.parametrize(
    "version, minimum, maximum, skipped",
    [
        ("8.0.0-rc1", "8.0", None, False),  # a release candidate of 8.0 has 8.0's features
        ("8.0.0-rc1", None, "7.0.99", True),
        ("7.0.12", "8.0", None, True),
        ("8.0.0-rc1", None, "8.0", False),
    ],
)
def test_run_on_requirements_compare_release_numbers(version, minimum, maximum, skipped):
    requirement = Requirement(min_server_version=minimum, max_server_version=maximum)
    assert (unmet(requirement, _target(version)) is not None) == skipped
