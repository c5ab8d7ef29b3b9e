"""The engine: running tests, whatever they are and wherever they run.

It names no concrete driver, target or fault backend; those reach it through
the tables it owns (the test-runner operation table here) and the ports of
:mod:`harness.core`.
"""
