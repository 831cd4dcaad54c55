"""The ``pdbtool`` command line: one module per command, each parsing options, calling the library and
printing.  :mod:`.main` holds the group; commands are imported only when invoked."""

from .main import main

__all__ = ["main"]
