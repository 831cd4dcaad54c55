"""The conflict hypergraph of a state and its exact minimum weighted vertex cover, updated move by move.

Vertices are tiles.  A pair of tiles whose table adds 2w moves over their Manhattan distances is an edge of
weight w (w = 1 almost always); a triple that adds 2w moves, more than its three pairs force, is a
hyperedge of weight w.  A *cover* gives every tile a whole number y_t >= 0 of extra move pairs such that
every (hyper)edge e is covered: the sum of y_t over its tiles is at least w_e.  The heuristic is Manhattan
plus twice the least total cover (docs/design.md says why it is admissible).  With a ``-region`` set a
group's weight also depends on the blank's region among the group's tiles (the blank's cell is
``g[POS, 0]``); only a move of one of the group's tiles changes that region, so a move still changes the
moved tile's edges only.

The modules, bottom up:

* :mod:`.layout`: the named rows of the graph's arrays, all views of one ``work`` array;
* :mod:`.exact_cover`: the least cover of one set of constraints (reductions, then a branch and bound);
* :mod:`.components`: connected components, their covers, and the memo of the covers of reduced cores;
* :mod:`.lookups`: the dynamic tables packed for a state's set-up and for a move's update;
* :mod:`.graph`: a state's graph from scratch, and :class:`ConflictGraph`, which allocates the arrays;
* :mod:`.moves`: the incremental update the search calls (:func:`try_move`, :func:`keep_move`,
  :func:`undo_move`).

The least cover is NP-hard in general, but conflict graphs are small and sparse: it is the sum over the
connected components, each solved exactly.  Incremental update: a move changes one tile t, so only t's edges
change.  Every vertex keeps the mask and the cover of its component.  With A the component of t before the
move and B after it, A | B is a union of whole components in both graphs, so h changes by (covers of the new
components inside A | B) - (covers of the old ones).  Working that out changes nothing in the graph: t's
new edges wait, and only a move that the search enters puts them in, saving what they replace in a row per
depth, which backtracking puts back.

Loops that keep some of a list's items (the packing bound, the reductions' compaction, the branch and
bound's children, the listing and splitting of constraints) are branch-free: every item is written and the
index advances by the test's outcome (each output row is at least as long as the list it is drawn from, so
a write past the last kept item stays inside it), and a choice is a mask of all ones or zeros: which items
are kept depends on the data, so a branch on it is hard to predict.  The look-ups of a move index with
unsigned integers (``np.uint64``): Numba wraps a negative index around, and for a signed index that LLVM
cannot prove non-negative it adds a test and an add on a chain of dependent loads.

The functions of the search are compiled without Numba's reference counting (``_nrt=False``): they allocate
nothing, and the atomic increments and decrements of their array arguments at every call are a large share
of a ddb search's CPU.  Masks of tiles are int64 bit sets, up to 64 tiles (bit 63 is the sign bit: masks are only
ever tested, combined and shifted right, never compared by size).
"""

from __future__ import annotations

from .components import new_memo
from .graph import ConflictGraph
from .layout import CMASK
from .lookups import is_wide, pack_all
from .moves import EXACT, keep_move, try_move, try_move_wide, undo_move

__all__ = ["CMASK", "EXACT", "ConflictGraph", "is_wide", "keep_move", "new_memo", "pack_all", "try_move",
           "try_move_wide", "undo_move"]
