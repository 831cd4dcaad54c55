"""The table builders: layered, parallel backward breadth-first search from the goal placement.

* :mod:`.driver` -- :func:`build_table`, the public entry point: one parallel step a layer, then the checks;
* :mod:`.ignored_bfs` -- the step of the blank-ignored rule (the byte table is the open list);
* :mod:`.minimized_bfs` -- the step of the blank-minimized rule (two bits per placement and blank cell);
* :mod:`.two_bit_states` -- the two-bit state array those steps share;
* :mod:`.moves` -- incremental unranking, the moves of the pattern tiles, the flood of a blank region;
* :mod:`.scheduling` -- blocks of ranks handed to the workers, chunk flags, the parallel fill;
* :mod:`.checks` -- the Manhattan-excess check of a built table;
* :mod:`.record` -- the build record, from which a stopped or killed build resumes.
"""

from __future__ import annotations

from .driver import (BLANK_RULES, UNSEEN, BuildResult, BuildStopped, bits_bytes, build_table, check_memory,
                     estimate_peak_bytes, record_shapes)
from .record import BuildRecorder

__all__ = ["BLANK_RULES", "UNSEEN", "BuildRecorder", "BuildResult", "BuildStopped", "bits_bytes", "build_table",
           "check_memory", "estimate_peak_bytes", "record_shapes"]
