"""The protocol's documents <-> the port's values (docs/executor-protocol.md, sections 6.6 and 7).

Both sides use it: the executor adapter decodes what an executor reports, the reference executor
encodes what pymongo observed, so the two can only disagree about the driver, never about the shape.
"""

from __future__ import annotations

from typing import Any

from harness.core.model import EntitySpec, Operation
from harness.core.observations import ErrorInfo, ObservedEvent

#: ObservedEvent field -> the protocol's event field (``durationMS`` is converted separately).
_EVENT_FIELDS = {
    "command_name": "commandName",
    "database_name": "databaseName",
    "command": "command",
    "reply": "reply",
    "failure": "failure",
    "request_id": "requestId",
    "operation_id": "operationId",
    "server_connection_id": "serverConnectionId",
    "service_id": "serviceId",
    "reason": "reason",
    "previous_description": "previousDescription",
    "new_description": "newDescription",
    "awaited": "awaited",
}


def event_document(event: ObservedEvent) -> dict[str, Any]:
    document: dict[str, Any] = {"kind": event.kind}
    for attribute, key in _EVENT_FIELDS.items():
        value = getattr(event, attribute)
        if value is not None and not (attribute == "command_name" and value == ""):
            document[key] = value if not isinstance(value, BaseException) else str(value)
    if event.duration_s is not None:
        document["durationMS"] = event.duration_s * 1000.0
    return document


def observed_event(document: dict[str, Any]) -> ObservedEvent:
    if not isinstance(document, dict) or not isinstance(document.get("kind"), str):
        raise ValueError(f"an event must be a document with a string 'kind', got {document!r}")
    fields = {attribute: document.get(key) for attribute, key in _EVENT_FIELDS.items()}
    fields["command_name"] = fields["command_name"] or ""
    duration = document.get("durationMS")
    return ObservedEvent(
        kind=document["kind"], duration_s=None if duration is None else float(duration) / 1000.0, **fields
    )


def error_document(info: ErrorInfo, *, is_network_error: bool = False) -> dict[str, Any]:
    document: dict[str, Any] = {
        "kind": "driverError",
        "message": info.message,
        "type": info.type,
        "code": info.code,
        "codeName": info.code_name,
        "errorLabels": list(info.labels),
        "isClientError": info.is_client_error,
        "isNetworkError": is_network_error,
        "isTimeoutError": info.is_timeout_error,
    }
    if info.details is not None:
        document["errorResponse"] = info.details
    if info.result is not None:
        document["result"] = info.result
    return document


def error_info(document: dict[str, Any]) -> ErrorInfo:
    code = document.get("code")
    return ErrorInfo(
        message=str(document.get("message", "")),
        type=str(document.get("type") or "DriverError"),
        code=None if code is None else int(code),
        code_name=document.get("codeName"),
        labels=tuple(document.get("errorLabels") or ()),
        is_client_error=bool(document.get("isClientError", False)),
        is_timeout_error=bool(document.get("isTimeoutError", False)),
        details=document.get("errorResponse"),
        result=document.get("result"),
    )


def entity_description(spec: EntitySpec) -> dict[str, Any]:
    """The unified format's ``createEntities`` entry for ``spec``."""
    return {spec.kind: {**spec.options, "id": spec.id}}


def entity_spec(description: dict[str, Any]) -> EntitySpec:
    if not isinstance(description, dict) or len(description) != 1:
        raise ValueError(f"an entity description has exactly one key (its type), got {description!r}")
    ((kind, options),) = description.items()
    return EntitySpec(kind, options["id"], dict(options))


def operation_document(operation: Operation, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
    document: dict[str, Any] = {
        "name": operation.name,
        "object": operation.object,
        "arguments": operation.arguments if arguments is None else arguments,
    }
    if operation.save_result_as_entity:
        document["saveResultAsEntity"] = operation.save_result_as_entity
    return document


def operation_value(document: dict[str, Any]) -> Operation:
    return Operation(
        name=document["name"],
        object=document["object"],
        arguments=dict(document.get("arguments") or {}),
        save_result_as_entity=document.get("saveResultAsEntity"),
    )
