"""The one exception family the CLI turns into a one-line message and a non-zero exit."""


class PdbtoolError(Exception):
    """An error meant for the user: its message is one line, and the CLI prints it without a traceback."""
