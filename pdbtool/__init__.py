"""pdbtool: additive pattern databases for the sliding-tile puzzles, and an IDA* solver that uses them."""

__version__ = "0.1.0"
