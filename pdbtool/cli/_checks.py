"""What ``pdbtool verify`` of either domain shares: the options of the value checks and the exit status
of a run with failures."""

from __future__ import annotations

from pathlib import Path

import click

from ._common import Disagreement, UserError, seed_option


def check_options(f):
    """--samples, --full, --rebuild and --seed (the value checks of verify)."""
    for option in reversed([
            click.option("--samples", type=click.IntRange(0), default=10_000, show_default=True,
                         help="Random placements for the consistency check."),
            click.option("--full", is_flag=True, help="Check the consistency of every placement (in parallel)."),
            click.option("--rebuild", is_flag=True, help="Also build each table afresh and compare byte for byte."),
            seed_option(None, "Seed of the sampled placements (default: random).")]):
        f = option(f)
    return f


def raise_on_failures(reports) -> None:
    """Exit 3 when a table that is there fails (it disagrees with itself), 1 when none could be read."""
    failed = [r for r in reports if not r.ok]
    if failed:
        error = Disagreement if any(Path(r.file).is_file() for r in failed) else UserError
        raise error(f"{len(failed)} of {len(reports)} tables failed verification; "
                    f"the first: {failed[0].summary()[len('FAIL '):]}")
