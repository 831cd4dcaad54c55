"""The tile domain's commands (the sliding-tile puzzles): ``pdbtool/cli/<command>.py``, each imported when
its command is used.  The default domain of :mod:`pdbtool.domains`."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

import click

NAME = "tile"
HELP = "sliding-tile puzzles (the default)"
# the header kinds of its files: pattern tables, the dynamic sets' pair/triple and region files, move automata
TABLE_KINDS = ("pattern", "dynamic", "dynamic-regions", "move-automaton")
INSTANCE_SUFFIXES: tuple[str, ...] = ()  # its instance files are plain text of any name (the default domain)

_NAMES = ("build", "convert", "inspect", "plan", "predict", "random", "sample", "solve", "verify")


class _LazyCommands(Mapping):
    """The commands by name, each module imported on first look-up (so that ``--help`` stays light)."""

    def __getitem__(self, name: str) -> click.Command:
        if name not in _NAMES:
            raise KeyError(name)
        return importlib.import_module(f"pdbtool.cli.{name}").command

    def __iter__(self) -> Iterator[str]:
        return iter(_NAMES)

    def __len__(self) -> int:
        return len(_NAMES)


COMMANDS: Mapping[str, click.Command] = _LazyCommands()
