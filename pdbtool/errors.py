"""The one exception family the CLI turns into a one-line message and a non-zero exit."""


class PdbtoolError(Exception):
    """An error meant for the user: its message is one line, and the CLI prints it without a traceback."""


LONG_RUN = 100      # a run of text without spaces longer than this is the user's input echoed: shortened
LONG_MESSAGE = 1000


def shortened(message: str) -> str:
    """``message`` with each run of more than ``LONG_RUN`` non-space characters cut to its first 60 and
    last 20 (a 5000-character file name or a binary file's contents quoted in an error), and the whole
    cut in the middle past ``LONG_MESSAGE`` characters; what the message says about them is kept."""
    import re

    out = re.sub(rf"\S{{{LONG_RUN + 1},}}", lambda m: f"{m[0][:60]}...{m[0][-20:]}", message)
    if len(out) > LONG_MESSAGE:
        out = f"{out[:LONG_MESSAGE - 300]} ... {out[-280:]}"
    return out
