"""Handshake rewrites: keep the driver talking through the proxy.

A driver runs SDAM on the hello replies it gets. If they named the real
server, the driver would connect to it directly and the proxy (and its fail
points) would be bypassed after the first heartbeat. So every hello reply
names the proxy instead, and compression is negotiated off so every command
stays readable to the fail points.
"""

from __future__ import annotations

from typing import Any

_HOST_LISTS = ("hosts", "passives", "arbiters")


def handshake_request(command: dict[str, Any]) -> tuple[dict[str, Any] | None, str | None]:
    """(the command without ``compression`` or ``None`` if unchanged, the client's ``application.name``)."""
    client = command.get("client")
    app_name = None
    if isinstance(client, dict) and isinstance(client.get("application"), dict):
        app_name = client["application"].get("name")
    if "compression" not in command:
        return None, app_name
    return {k: v for k, v in command.items() if k != "compression"}, app_name


def handshake_reply(reply: dict[str, Any], target: set[str], proxy: str) -> dict[str, Any]:
    """``reply`` naming ``proxy`` wherever it named the target; other members removed.

    ``target`` is every name the proxied member goes by (the address the proxy
    dialled; its own ``me`` is added here). One proxy fronts one member, so
    other members are dropped from the lists: a driver that learnt of them
    would reach them without the proxy.
    """
    names = set(target)
    if isinstance(reply.get("me"), str):
        names.add(reply["me"])
    rewritten = dict(reply)
    rewritten.pop("compression", None)
    if "me" in rewritten:
        rewritten["me"] = proxy
    for key in _HOST_LISTS:
        if isinstance(reply.get(key), list):
            rewritten[key] = [proxy] if any(h in names for h in reply[key]) else []
    if reply.get("primary") in names:
        rewritten["primary"] = proxy
    return rewritten
