"""Fault injection: server fail points (native or emulated at the wire), network faults, campaigns.

Every fault the harness injects goes through this package, which remembers
what it armed and removes all of it at teardown, whatever happened.
"""
