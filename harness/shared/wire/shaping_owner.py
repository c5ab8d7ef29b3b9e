"""Reply shaping, with one owner per wire proxy, turned off and checked after every test.

Reply shaping (:mod:`harness.shared.wire.shaping`) changes what a driver is told, so a
shaping left armed would quietly change every later test. Like fail points
(:class:`~harness.engine.failpoint_manager.FailPointManager`), it is armed only
through a :class:`ReplyShapingOwner`, which records what it armed and, in
:meth:`ReplyShapingOwner.clear_all`, turns it off and asks the proxy
whether anything is still in effect. The run's teardown check
(:func:`clear_after_test`, registered by :mod:`faults.failpoints.plugin`) calls it after
every test; a prose check that starts a proxy of its own clears it when it
closes.

Owners are found by the target whose proxy they own (:func:`owner_for`):
the ``emulated`` fail-point mode registers one for the run's proxy, and a
prose check registers its own for the length of the check.
"""

from __future__ import annotations

import threading
from typing import Any

#: What every record of a shaped test says, so nobody mistakes it for a real older server.
EMULATION_NOTE = (
    "reply shaping: the wire proxy rewrote this modern target's replies to emulate an older "
    "server's; this is not a run against a real older server"
)

#: Owners by ``id(target)``; an owner holds its target, so the id is not reused while it is registered.
_OWNERS: dict[int, ReplyShapingOwner] = {}
_OWNERS_LOCK = threading.Lock()


class ReplyShapingOwner:
    """The one owner of one wire proxy's reply shaping."""

    def __init__(self, proxy: Any, target: Any) -> None:
        self.proxy = proxy
        self.target = target
        self._lock = threading.Lock()
        #: What was armed since the last clean-up, each as recorded in the result (``describe()``).
        self.history: list[dict[str, Any]] = []
        #: The running test's record details: given the final report just before clean-up.
        self._details: list[dict[str, Any]] = []

    def attach(self, details: dict[str, Any]) -> None:
        """Keep ``details["reply_shaping"]`` up to date until the test is cleaned up.

        The counts of changed replies are only known at the end of the test,
        after the operation that armed the shaping has returned, so the same
        dict is updated in place by :meth:`clear_all` (a verdict copies the
        details shallowly, and so sees the update).
        """
        shown = details.setdefault("reply_shaping", {})
        shown.update(self.report())
        with self._lock:
            if all(d is not shown for d in self._details):
                self._details.append(shown)

    def arm(self, config: Any) -> dict[str, Any]:
        """Arm a shaping (a document or a ShapingConfig); returns what the record says about it."""
        parsed = self.proxy.shape_replies(config)
        shown = parsed.describe()
        with self._lock:
            self.history.append(shown)
        return shown

    def clear(self) -> None:
        """Turn shaping off mid-test; documents already held back are still served."""
        self.proxy.clear_shaping(forget_held=False)

    def report(self) -> dict[str, Any]:
        """The record's ``details.reply_shaping``: what was armed, how many replies were changed."""
        with self._lock:
            armed = list(self.history)
        return {"armed": armed, "applied": dict(self.proxy.shaping.applied), "note": EMULATION_NOTE}

    def clear_all(self) -> list[str]:
        """Turn everything off; returns problems (empty when the proxy confirms nothing is in effect)."""
        final = self.report()
        with self._lock:
            self.history, attached, self._details = [], self._details, []
        for shown in attached:
            shown.update(final)
        problems = []
        try:
            self.proxy.clear_shaping(forget_held=True)
            left = self.proxy.shaping.armed()
        except Exception as exc:
            return [f"could not turn reply shaping off: {type(exc).__name__}: {exc}"]
        if left:
            problems.append(f"reply shaping still in effect after clean-up: {left}")
        return problems


def register(owner: ReplyShapingOwner) -> ReplyShapingOwner:
    """Make ``owner`` the one owner of shaping for its target (replacing a stopped one)."""
    with _OWNERS_LOCK:
        _OWNERS[id(owner.target)] = owner
    return owner


def unregister(owner: ReplyShapingOwner) -> None:
    with _OWNERS_LOCK:
        if _OWNERS.get(id(owner.target)) is owner:
            del _OWNERS[id(owner.target)]


def owner_for(target: Any) -> ReplyShapingOwner | None:
    with _OWNERS_LOCK:
        owner = _OWNERS.get(id(target))
    return owner if owner is not None and owner.target is target else None


def clear_after_test(target: Any) -> list[str]:
    """The teardown check: the target's shaping off and confirmed off (no owner: nothing to do)."""
    owner = owner_for(target)
    return owner.clear_all() if owner is not None else []
