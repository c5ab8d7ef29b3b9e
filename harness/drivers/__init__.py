"""Drivers under test, each a plug-in (``harness/drivers/<name>/plugin.py``) behind the driver port.

The port is :class:`harness.core.ports.DriverAdapter`; the names ``--driver``
takes are whatever installed plug-ins register (:mod:`harness.engine.plugins`).
"""
