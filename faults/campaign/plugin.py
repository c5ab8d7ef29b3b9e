"""Plug-in: fault campaigns, as the ``harness campaign`` command and as ``harness run --suite campaign``."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from harness.engine.plugins import FrontEnd

#: The rows of the app's run-options table ``harness campaign`` takes (``harness run`` declares them all).
RUN_OPTIONS = ("driver", "target", "failpoints", "results", "allow_destructive")


def add_arguments(campaign: argparse.ArgumentParser) -> None:
    """The campaign's own options; ``--driver``, ``--target``, ``--failpoints`` and ``--results`` come from the app."""
    from faults.campaign.schedule import KINDS

    campaign.description = (
        "A seeded fault campaign. --target takes any target; SecantusDB targets run on disk in a scratch "
        "directory (embedded, embedded-no-test-commands; secantusdb-daemon gets its on-disk switch), and "
        "embedded-on-disk or secantusdb-daemon=on-disk are on disk already, so restart faults can restart "
        "them; a target that cannot restart has its restart faults skipped, with why. --results gets the "
        "campaign's one record."
    )
    campaign.add_argument("--events", type=int, default=10_000, help="documents the writer inserts (default 10000)")
    campaign.add_argument("--faults", type=int, default=50, help="faults in the schedule (default 50)")
    campaign.add_argument("--seed", type=int, default=42, help="the schedule's seed; the same seed replays it")
    campaign.add_argument(
        "--kinds", default=",".join(KINDS), help=f"comma-separated fault kinds (default all: {','.join(KINDS)})"
    )
    campaign.add_argument("-q", "--quiet", action="store_true", help="no per-fault lines, only the summary")


def command(args: argparse.Namespace, front_end: FrontEnd) -> int:
    """``harness campaign``: one campaign on the run the app composes (``front_end``: its options, ``new_run``)."""
    from faults.campaign.campaign import CampaignOptions, run_campaign
    from faults.campaign.report import print_summary
    from harness.core.ports import TargetUnavailable
    from harness.core.verdicts import PASSED

    options = CampaignOptions(
        events=args.events,
        faults=args.faults,
        seed=args.seed,
        kinds=tuple(k.strip() for k in args.kinds.split(",") if k.strip()),
        progress=(lambda line: None) if args.quiet else (lambda line: print(line, flush=True)),
    )
    try:
        result = run_campaign(options, front_end.options, front_end.new_run)
    except (TargetUnavailable, ValueError) as exc:
        print(f"harness campaign: {exc}", file=sys.stderr)
        return 2
    print_summary(result)
    return 0 if result.outcome == PASSED else 1


def _collect(specs: list[Any]) -> list[Any]:
    """One campaign with the default options, on the run's own target (``harness run --suite campaign``)."""
    from faults.campaign.campaign import CampaignOptions, campaign_check

    check, _ = campaign_check(CampaignOptions(progress=lambda line: print(line, flush=True)))
    return [check]


def _choices() -> dict[str, tuple[str, ...]]:
    """The values of ``--kinds`` (comma-separated), for front ends that pass them on (``harness matrix``)."""
    from faults.campaign.schedule import KINDS

    return {"kinds": tuple(KINDS)}


def install(registry: Any) -> None:
    from harness.engine.plugins import PluginCommand, Suite

    registry.add_command(
        PluginCommand(
            "campaign",
            "a seeded fault campaign: exactly-once delivery under faults",
            add_arguments,
            command,
            run_options=RUN_OPTIONS,
            starts_processes=True,
            choices=_choices,
        )
    )
    registry.add_suite(
        Suite(
            "campaign",
            "one seeded fault campaign (seed 42) on the run's target; kinds the "
            "target cannot take are skipped, said and recorded",
            _collect,
            order=30,
            in_all=False,
        )
    )
