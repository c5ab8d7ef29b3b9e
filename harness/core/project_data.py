"""Where the project's own data lives: expectations, scenarios, rule catalogues, matrices, pins.

The repository keeps this data in ``specs/`` at its top level; pyproject.toml installs that folder as
the package ``cs_harness_specs``, and :func:`project_data` finds it through :mod:`importlib.resources`.
So a wheel (the folder unpacked in site-packages) and an editable install (the checkout's own folder)
find the same files, from any working directory. Every lookup of the data goes through here; nothing
else in the harness may compute a path to ``specs/`` from ``__file__`` or the working directory.

:func:`checkout_root` answers the one other question: is this installation a checkout (an editable
install), and where? Only a developer's conveniences about the checkout itself ask it (the team's
shared spec folder beside it, the tools ``scripts/`` install into ``.tools/``, the source tree
``harness matrix`` installs into its cells); an installed wheel has no checkout and looks nowhere.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from pathlib import Path

#: The package the ``specs/`` folder is installed as (``[tool.setuptools.package-dir]`` in pyproject.toml).
DATA_PACKAGE = "cs_harness_specs"

#: The project's data folders, by the names callers use (relative to the ``specs/`` folder).
DATA_FOLDERS = ("expectations", "scenarios", "coverage", "matrices", "pins")


class ProjectDataMissing(RuntimeError):
    """The installation has no readable data package; the message says how to repair it."""


def project_data(*parts: str) -> Path:
    """The path of ``specs/<parts...>`` as this installation holds it (it may not exist)."""
    return data_root().joinpath(*parts)


@lru_cache(maxsize=1)
def data_root() -> Path:
    """The installed ``specs/`` folder: site-packages' ``cs_harness_specs``, or the checkout's ``specs``."""
    try:
        root = resources.files(DATA_PACKAGE)
    except ModuleNotFoundError:
        raise ProjectDataMissing(
            f"the harness's data package {DATA_PACKAGE} is not installed: reinstall the "
            "harness (pip install cs-conformance-harness, or pip install -e . in a "
            "checkout whose install predates the package)"
        ) from None
    if not isinstance(root, Path):  # an archive on sys.path (zipimport): a folder has no path to give
        raise ProjectDataMissing(
            f"the harness's data package {DATA_PACKAGE} is inside an archive ({root}); "
            "install the harness with pip, which unpacks it"
        )
    return root


@lru_cache(maxsize=1)
def checkout_root() -> Path | None:
    """The repository checkout this installation runs from (an editable install), or None (a wheel)."""
    root = data_root()  # a wheel installs the folder as cs_harness_specs; only a checkout has it as specs/
    is_checkout = root.name == "specs" and (root.parent / "pyproject.toml").is_file()
    return root.parent if is_checkout else None


def shared_specs() -> Path | None:
    """A checkout's convenience: the team's shared spec folder beside it (``../shared/specs``). A wheel has none."""
    checkout = checkout_root()
    return None if checkout is None else checkout.parent / "shared" / "specs"
