"""Targets: deployments under test, behind the target port (:class:`harness.core.ports.Target`).

:mod:`harness.shared.target_base` is what the concrete targets share (detection,
the admin client); :mod:`harness.targets.plugin` registers them by the names
``--target`` takes.
"""
