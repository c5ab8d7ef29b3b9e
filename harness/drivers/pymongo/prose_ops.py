"""Operations the prose tests need that no spec file uses.

The change-stream prose tests ask the driver for things the unified format
has no operation for, chiefly the cached resume token the spec calls
``getResumeToken``. Keeping them here, registered into the same
:data:`~harness.drivers.pymongo.operations.OPERATIONS` table, lets the prose
checks talk to any driver through the same seam as the spec runner; another
adapter certifies itself for the prose suite by implementing these names.
"""

from __future__ import annotations

from typing import Any

from harness.core.ports import UnsupportedOperation
from harness.drivers.pymongo.api_shims import CHANGE_STREAMS
from harness.drivers.pymongo.operations import operation, options


@operation("getResumeToken")
def get_resume_token(scope: Any, target: Any, arguments: dict[str, Any]) -> Any:
    """The resume token the change stream would resume with now (``None`` when it has none)."""
    options(scope, arguments)
    if not isinstance(target, CHANGE_STREAMS):
        raise UnsupportedOperation(f"getResumeToken needs a change stream entity, got {type(target).__name__}")
    return target.resume_token
