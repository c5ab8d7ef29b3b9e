"""What more than one plug-in family builds on: the layer between the plug-ins and the engine.

The plug-in families (``harness.drivers``, ``harness.targets``, ``faults``, ``prose_tests``) do not import each
other (the layers contract in pyproject.toml lists them with ``|``); what two of them share lives here instead:
the target base and its admin client (:mod:`harness.shared.target_base`), the one parser of connection strings
(:mod:`harness.shared.connection_strings`), the fail-point backends (:mod:`harness.shared.failpoint_backends`)
and the wire proxy with its emulations (:mod:`harness.shared.wire`). Unlike the engine, this layer may use
pymongo: the harness's own admin client and URI parser are pymongo's (docs/architecture.md).
"""
