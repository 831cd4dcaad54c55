"""The domains of the command line: one line per domain, its ``--domain`` name and the module of its commands.

A domain's commands module (``pdbtool/<package>/commands.py``, of the CLI layer) defines:

* ``NAME``: the value of ``--domain``; ``HELP``: one line shown in ``--domain``'s help;
* ``COMMANDS``: its Click commands by shared name (``build``, ``inspect``, ``verify``, ``convert``, ``solve``,
  ``random``, ``sample``, ``predict``), with the shared options spelled as in :mod:`pdbtool.cli._common`;
* ``TABLE_KINDS``: the ``kind`` values of the table-file headers it owns (``inspect``, ``verify`` and
  ``convert`` of such a file select the domain);
* ``INSTANCE_SUFFIXES``: the file endings that name its instances (``solve`` of such a file selects it).

A module is imported only when its domain is used (or listed in ``--help``), and importing it must not
import NumPy or Numba: ``pdbtool CMD --help`` reads every domain's ``NAME`` and ``HELP``.  Nothing here
imports a domain's library either, so the command line's dispatch stays light.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from types import ModuleType

from .errors import PdbtoolError

# --domain name -> module of its commands (the first is the default, when nothing selects another)
DOMAINS: dict[str, str] = {
    "tile": "pdbtool.cli.tile",
    "hanoi4": "pdbtool.hanoi4.commands",
    "vertex-cover": "pdbtool.vcover.commands",
    "msa": "pdbtool.msa.commands",
}
DEFAULT = "tile"

# what a commands module must define, with the type each has
PROTOCOL = {"NAME": str, "HELP": str, "COMMANDS": Mapping, "TABLE_KINDS": tuple, "INSTANCE_SUFFIXES": tuple}


class DomainError(PdbtoolError):
    """An unknown domain, a command a domain lacks, or a commands module that breaks the protocol."""


def names() -> list[str]:
    """The registered domains, the default first."""
    return list(DOMAINS)


def load(name: str) -> ModuleType:
    """The commands module of domain ``name``, imported now and checked against the protocol."""
    if name not in DOMAINS:
        raise DomainError(f"unknown domain {name!r} (domains: {', '.join(names())})")
    module = importlib.import_module(DOMAINS[name])
    for attribute, kind in PROTOCOL.items():
        if not isinstance(getattr(module, attribute, None), kind):
            raise DomainError(f"the commands module of domain {name} ({DOMAINS[name]}) lacks "
                              f"{attribute} ({kind.__name__})")
    if module.NAME != name:
        raise DomainError(f"the commands module {DOMAINS[name]} calls itself {module.NAME!r}, "
                          f"registered as {name!r}")
    return module


def command_names(name: str) -> list[str]:
    """The commands that domain ``name`` has."""
    return list(load(name).COMMANDS)


def command(name: str, command_name: str):
    """Domain ``name``'s Click command ``command_name``; a :class:`DomainError` naming the commands it
    has when it lacks this one."""
    commands = load(name).COMMANDS
    if command_name not in commands:
        raise DomainError(f"the {name} domain has no {command_name} command (its commands: "
                          f"{', '.join(sorted(commands))}; domains with {command_name}: "
                          f"{', '.join(d for d in names() if command_name in load(d).COMMANDS) or 'none'})")
    return commands[command_name]


def domain_of_kind(kind: object) -> str | None:
    """The domain whose tables have header ``kind`` (None when no registered domain claims it)."""
    if not isinstance(kind, str):
        return None
    return next((d for d in names() if kind in load(d).TABLE_KINDS), None)


def domain_of_instances(path: str) -> str | None:
    """The domain whose instance files end as ``path`` does (None when no registered domain claims it)."""
    lowered = path.lower()
    return next((d for d in names() if any(lowered.endswith(s.lower()) for s in load(d).INSTANCE_SUFFIXES)),
                None)


@contextmanager
def registered(name: str, module: str) -> Iterator[None]:
    """Domain ``name`` with commands ``module`` registered for the duration of a ``with`` block (tests)."""
    if name in DOMAINS:
        raise DomainError(f"domain {name!r} is registered already")
    DOMAINS[name] = module
    try:
        yield
    finally:
        del DOMAINS[name]


__all__ = ["DEFAULT", "DOMAINS", "DomainError", "command", "command_names", "domain_of_instances",
           "domain_of_kind", "load", "names", "registered"]
