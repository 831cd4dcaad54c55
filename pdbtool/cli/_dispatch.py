"""``--domain``: each shared command name hands its arguments to the command of one domain
(:mod:`pdbtool.domains`).

The domain is the one ``--domain`` names; else the one whose table kind a FILE's header holds or whose
instance suffix a FILE has; else the default (tile).  That domain's command parses the arguments, so
``pdbtool CMD --domain X --help`` shows domain X's own options.  Every domain's command gains the same
``--domain`` option, listing every registered domain.
"""

from __future__ import annotations

import os

import click

from .. import domains
from ._common import BadValue


class DomainChoice(click.Choice):
    """The registered domains, read when asked (a domain a test registers appears in them)."""

    def __init__(self) -> None:
        super().__init__(domains.names())

    @property
    def choices(self):
        return tuple(domains.names())

    @choices.setter
    def choices(self, value) -> None:  # Choice.__init__ sets it; the registry is the source
        pass


class DomainOption(click.Option):
    """``--domain``: its help lists each domain's one line, read from the registry when help is shown."""

    def get_help_record(self, ctx):
        self.help = "; ".join(f"{name}: {domains.load(name).HELP}" for name in domains.names()) + \
            " (see --domain NAME --help for that domain's options)."
        return super().get_help_record(ctx)


def domain_option(default: str) -> click.Option:
    return DomainOption(["--domain"], type=DomainChoice(), default=default, show_default=True, expose_value=False)


def explicit_domain(args: list[str]) -> str | None:
    """The value of ``--domain`` among ``args`` (None when not given)."""
    for i, a in enumerate(args):
        if a == "--":
            return None
        if a == "--domain" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--domain="):
            return a.split("=", 1)[1]
    return None


def domain_of_table(path: str) -> str | None:
    """The domain whose table kind the header of the file ``path`` holds (None: not a table, or no kind
    a domain claims).  Reads the header only: no table is loaded and no kernel compiled."""
    from ..tables import fileformat

    try:
        header, _ = fileformat.read_header(path)
    except fileformat.TableFileError:
        return None
    return domains.domain_of_kind(header.get("kind"))


def domains_of_files(args: list[str]) -> list[str]:
    """The domains that the arguments' files select: instance files by suffix, table files by the kind in
    their header."""
    found: list[str] = []
    for a in args:
        if a == "--":
            break
        if a.startswith("-"):
            continue
        d = domains.domain_of_instances(a)
        if d is None and os.path.isfile(a):
            d = domain_of_table(a)
        if d is not None and d not in found:
            found.append(d)
    return found


def select_domain(args: list[str]) -> str:
    """The domain the arguments select: ``--domain``, else their files', else the default."""
    name = explicit_domain(args)
    if name is not None:
        if name not in domains.names():
            raise BadValue(f"--domain {name}: unknown domain (domains: {', '.join(domains.names())})")
        return name
    found = domains_of_files(args)
    if len(found) > 1:
        raise BadValue(f"the files belong to several domains ({', '.join(found)}): give one domain's files "
                       f"at a time")
    return found[0] if found else domains.DEFAULT


def domain_command(domain: str, name: str) -> click.Command:
    """Domain ``domain``'s command ``name``, with ``--domain`` among its options."""
    try:
        command = domains.command(domain, name)
    except domains.DomainError as exc:
        raise BadValue(str(exc)) from None
    if not any(p.name == "domain" for p in command.params):
        command.params.append(domain_option(domain))
    return command


class DomainDispatch(click.Command):
    """A shared command: the arguments select the domain, whose command then parses them."""

    def __init__(self, name: str, help_line: str):
        super().__init__(name, help=help_line, short_help=help_line, add_help_option=False)

    def make_context(self, info_name, args, parent=None, **extra):
        command = domain_command(select_domain(list(args)), self.name or "")
        return command.make_context(info_name, args, parent=parent, **extra)
