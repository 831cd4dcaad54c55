"""A toy domain for the batch runner's tests: the instance ``NAME=V`` is solved by squaring V.

Module-level, so that the runner's spawned workers can import the solver.  The name's prefix picks what
goes wrong: ``fail`` (a PdbtoolError), ``bug`` (any other exception), ``die`` (the worker kills itself),
``limit`` (stopped by the time limit), ``wrong`` (a result that disagrees with its input), ``slow`` (sleeps,
writing its pid to $BATCH_TOY_PIDS first)."""

from __future__ import annotations

import os
import signal
import sys
import time
from dataclasses import dataclass

import click

from pdbtool.batch import BatchOptions, batch_options, run_batch
from pdbtool.cli._common import user_errors
from pdbtool.errors import PdbtoolError


@dataclass(frozen=True)
class Item:
    id: str
    value: int
    error: str | None = None


def parse(text: str) -> Item:
    name, _, value = text.partition("=")
    try:
        return Item(name, int(value))
    except ValueError:
        return Item(name, 0, error=f"{text}: not NAME=INTEGER")


def solve_square(item: Item, time_limit: float | None) -> dict:
    kind = item.id.rstrip("0123456789")
    if kind == "fail":
        raise PdbtoolError("cannot square this one")
    if kind == "bug":
        raise ValueError("a bug")
    if kind == "die":
        os.kill(os.getpid(), signal.SIGKILL)
    if kind == "slow":
        with open(os.path.join(os.environ["BATCH_TOY_PIDS"], str(os.getpid())), "w"):
            pass
        time.sleep(60)
    if kind == "limit":
        return {"id": item.id, "solved": False, "bound": item.value}
    record = {"id": item.id, "solved": True, "square": item.value ** 2, "time_limit": time_limit}
    if kind == "wrong":
        record["disagreement"] = "the input says otherwise"
    return record


def check_square(item: Item, record: dict) -> str | None:
    return None if record.get("square") == item.value ** 2 else "the square is not the value's square"


@click.command("solve")
@click.argument("instances", nargs=-1)
@batch_options
@user_errors
def command(instances, batch: BatchOptions):
    status = run_batch([parse(t) for t in instances], solve_square, batch, check_held=check_square,
                       text_line=lambda r: f"{r['id']}: {r.get('square', r['error'])}",
                       csv_columns=["id", "solved", "square", "error", "disagreement"], what="numbers")
    sys.exit(status)


if __name__ == "__main__":
    command()
