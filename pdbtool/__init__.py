"""pdbtool: additive pattern databases for the sliding-tile puzzles, and an IDA* solver that uses them."""

__version__ = "0.1.0"

from .board import Board  # noqa: E402
from .cache import TableCache  # noqa: E402
from .partitions import load_partition  # noqa: E402
from .pattern import TilePattern  # noqa: E402
from .table import PatternTable  # noqa: E402

__all__ = ["Board", "TilePattern", "PatternTable", "TableCache", "load_partition", "__version__"]
