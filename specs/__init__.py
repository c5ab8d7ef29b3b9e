"""The project's data, installed as the package ``cs_harness_specs`` (pyproject.toml maps this folder to it).

Nothing here is code: ``harness.core.project_data`` finds the folders beside this file (expectations,
scenarios, coverage, matrices, pins) through ``importlib.resources``, so a wheel and a checkout read the
same files.
"""
