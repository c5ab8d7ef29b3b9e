"""The app layer: the front ends (CLI, pytest plugin, prose tests' conftest) and what they share."""
