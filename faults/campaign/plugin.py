"""Plug-in: fault campaigns, as the ``harness campaign`` command and as ``harness run --suite campaign``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def add_arguments(campaign: argparse.ArgumentParser) -> None:
    from faults.campaign.schedule import KINDS
    from harness.engine.plugins import load_plugins

    campaign.add_argument("--events", type=int, default=10_000, help="documents the writer inserts (default 10000)")
    campaign.add_argument("--faults", type=int, default=50, help="faults in the schedule (default 50)")
    campaign.add_argument("--seed", type=int, default=42, help="the schedule's seed; the same seed replays it")
    campaign.add_argument("--kinds", default=",".join(KINDS),
                          help=f"comma-separated fault kinds (default all: {','.join(KINDS)})")
    plugins = load_plugins()
    campaign.add_argument("--driver", default="pymongo", choices=sorted(plugins.drivers),
                          help="driver under test")
    campaign.add_argument("--target", default=None,
                          help="target (as for harness run); default: an on-disk embedded SecantusDB in a scratch "
                               "directory, which restart faults need")
    campaign.add_argument("--failpoints", default="auto", choices=list(plugins.failpoint_modes),
                          help="how the nemesis arms fail points (default auto: native where the target accepts them)")
    campaign.add_argument("--results", type=Path, help="append the campaign's JSON record to this file")
    campaign.add_argument("-q", "--quiet", action="store_true", help="no per-fault lines, only the summary")


def command(args: argparse.Namespace) -> int:
    from faults.campaign.campaign import CampaignOptions, run_campaign
    from faults.campaign.report import print_summary
    from harness.core.ports import TargetUnavailable

    options = CampaignOptions(events=args.events, faults=args.faults, seed=args.seed,
                              kinds=tuple(k.strip() for k in args.kinds.split(",") if k.strip()),
                              driver=args.driver, target=args.target, failpoints=args.failpoints,
                              results=args.results, labels=dict(args.labels),
                              progress=(lambda line: None) if args.quiet else (lambda line: print(line, flush=True)))
    try:
        result = run_campaign(options)
    except (TargetUnavailable, ValueError) as exc:
        print(f"harness campaign: {exc}", file=sys.stderr)
        return 2
    print_summary(result)
    return 0 if result.outcome == "passed" else 1


def _collect(specs: list[Any]) -> list[Any]:
    """One campaign with the default options, on the run's own target (``harness run --suite campaign``)."""
    from faults.campaign.campaign import CampaignOptions, campaign_check

    check, _ = campaign_check(CampaignOptions(progress=lambda line: print(line, flush=True)))
    return [check]


def install(registry: Any) -> None:
    from harness.engine.plugins import Command, Suite

    registry.add_command(Command("campaign", "a seeded fault campaign: exactly-once delivery under faults",
                                 add_arguments, command))
    registry.add_suite(Suite("campaign", "one seeded fault campaign (seed 42) on the run's target; kinds the "
                                         "target cannot take are skipped, said and recorded", _collect,
                             order=30, in_all=False))
