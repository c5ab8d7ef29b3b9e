"""Does a test apply to this target? ``runOnRequirements``, ``topology``, versions, ``skipReason``.

Returns the reason a test is skipped (shown to the user and recorded), or
``None`` when it runs. Version bounds compare release numbers only: a release
candidate meets its release's bounds (:mod:`harness.record.versions`). Each
group of requirements (file level, test level) must be met by at least one of
its entries.
"""

from __future__ import annotations

from typing import Any

from harness.core.model import Requirement, SpecTest
from harness.record.versions import compare_releases


def unmet(requirement: Requirement, target: Any) -> str | None:
    """Why one requirement does not hold on ``target`` (None: it holds)."""
    info = target.info
    if requirement.min_server_version and compare_releases(info.version, requirement.min_server_version) < 0:
        return f"server {info.version} < minServerVersion {requirement.min_server_version}"
    if requirement.max_server_version and compare_releases(info.version, requirement.max_server_version) > 0:
        return f"server {info.version} > maxServerVersion {requirement.max_server_version}"
    if requirement.topologies is not None:
        allowed = set(requirement.topologies)
        if "sharded-replicaset" in allowed:
            allowed.add("sharded")
        if info.topology not in allowed:
            return f"topology {info.topology} not in {list(requirement.topologies)}"
    serverless = bool(info.details.get("serverless", False))
    if requirement.serverless == "require" and not serverless:
        return "requires a serverless deployment"
    if requirement.serverless == "forbid" and serverless:
        return "forbidden on serverless deployments"
    auth = bool(info.details.get("auth", False))
    if requirement.auth is not None and requirement.auth != auth:
        return "requires authentication" if requirement.auth else "requires authentication to be off"
    if requirement.csfle:
        return "requires client-side field level encryption, which this harness does not provide"
    for name, wanted in (requirement.server_parameters or {}).items():
        actual = target.server_parameter(name)
        if actual != wanted:
            return f"server parameter {name}={actual!r}, test needs {wanted!r}"
    return None


def skip_reason(test: SpecTest, target: Any) -> str | None:
    if test.skip_reason:
        return f"skipReason: {test.skip_reason}"
    for group in test.requirements:
        if not group:
            continue
        reasons = [unmet(requirement, target) for requirement in group]
        if all(reasons):
            return "; or ".join(r for r in reasons if r)
    return None
