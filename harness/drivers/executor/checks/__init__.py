"""``harness executor-check``'s checks of an executor, one module per check group (docs/executor-protocol.md).

``session`` holds what every check shares; ``handshake``, ``errors``, ``operations``, ``events``, ``streams``,
``modes`` and ``command_log`` each check one part of the protocol; ``runner`` sequences them against one process.
The command itself (choosing the executor and the server, printing) is :mod:`harness.app.executor_check`.
"""
