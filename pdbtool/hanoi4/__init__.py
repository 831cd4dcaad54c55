"""The four-peg Towers of Hanoi: disk-set pattern databases (static, dynamic, infinite peg) and an optimal
breadth-first heuristic search, sharing pdbtool's table file, cache and commands (``--domain hanoi4``)."""

from .heuristics import compile_plan, parse_spec
from .instance import Instance, apply_moves, load_instances, standard
from .search import Solution, frame_stewart, solve
from .encodings import HANOI_ENCODINGS
from .tables import DiskTable, convert_file, get_table, verify_file

__all__ = ["DiskTable", "HANOI_ENCODINGS", "Instance", "Solution", "apply_moves", "compile_plan", "convert_file",
           "frame_stewart", "get_table", "load_instances", "parse_spec", "solve", "standard", "verify_file"]
