"""Duplicate-path pruning: a finite-state machine over the blank's moves (Taylor & Korf 1993).

IDA* on a sliding-tile board reaches most states by many paths.  The driver's parent rule (never undo the
last move) removes the paths with an immediate reversal; this automaton removes every path that contains a
*duplicate*: a move sequence ``s``, made from blank cell ``p``, for which another sequence ``s'`` legal from
``p`` reaches the same arrangement and comes first in the order (length, then moves in the driver's order
up, left, right, down).  Replacing ``s`` by ``s'`` in a path gives a path to the same state that is shorter,
or as long and smaller; so the smallest path to every state (a shortest one) contains no duplicate and is
never pruned, and IDA* stays optimal.  Among equivalent sequences exactly one (the smallest) survives.

Building (:func:`build_automaton`).  For each blank cell ``p`` a breadth-first enumeration of the move
sequences from ``p`` up to ``depth`` moves, on the arrangement of cells (so it holds for any tiles): the
sequences of one length are taken in the move order, and a sequence whose arrangement was already reached
(at this length by a smaller sequence, or by one two moves shorter) is a duplicate; only first arrivals,
the canonical sequences, are extended.  The duplicates of cell ``p`` form a trie whose inner nodes are
canonical sequences; the tries of all cells are joined into one Aho–Corasick automaton whose input is a
move and whose every state knows the blank's cell (one root per cell; a failure link goes to the longest
proper suffix of the path that is in a trie, starting at the cell where that suffix starts).  Where a
duplicate of one cell would need a move that is off the board from another, the other cell simply has no
such duplicate: that is why the enumeration runs per cell.

The driver (:mod:`pdbtool.search.driver`) keeps the automaton's state per stack level; a transition of
``PRUNED`` means the child ends a duplicate and is not generated.  A search that starts below the root (a
unit of work) recomputes the state from the path to its root (:meth:`MoveAutomaton.run`), so it prunes
exactly as the serial search does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .. import registry
from .._native import numba_cache  # noqa: F401  (the package-wide cache stamp)
from ..errors import PdbtoolError
from ..puzzle.board import Board

PRUNED = -1
PRUNING_RULES = registry.PRUNING_RULES
MAX_DEPTH = 24


class PruningError(PdbtoolError):
    pass


@dataclass(frozen=True)
class MoveAutomaton:
    """``table[s, m]``: the state after move ``m`` from state ``s``, ``PRUNED`` when the move ends a
    duplicate (and for moves off the board, which the driver never makes); ``starts[c]``: the start state of
    a search whose blank is in cell ``c``.  ``duplicates``: how many duplicate sequences the enumeration
    found (each is a trie leaf)."""

    board: Board
    depth: int
    table: np.ndarray
    starts: np.ndarray
    duplicates: int

    @property
    def states(self) -> int:
        return int(self.table.shape[0])

    def start(self, blank: int) -> int:
        return int(self.starts[int(blank)])

    def run(self, blank: int, moves) -> int:
        """The state after the blank's ``moves`` from cell ``blank``; PruningError if a move is pruned."""
        s = self.start(blank)
        for m in moves:
            nxt = int(self.table[s, int(m)])
            if nxt == PRUNED:
                raise PruningError(f"the path {list(moves)} contains a duplicate the automaton prunes")
            s = nxt
        return s


# Zobrist keys of (cell, label): an arrangement's key is the XOR over its cells, so a move updates it with
# four of them; a key only finds candidates, which the rows themselves then confirm
_ZOBRIST_SEED = 0x5EED_F5A1


def _zobrist(cells: int) -> np.ndarray:
    return np.random.default_rng(_ZOBRIST_SEED).integers(0, 2**63, size=(cells, cells), dtype=np.int64)


@njit(cache=True)
def _next_level(nb, p, states, blank, last, key, before, before_key, zobrist):
    """The children of one level of the canonical tree of cell ``p`` (``states``: the arrangements of its
    canonical sequences, as cell labels; ``before``: those of the level before it).  Children are taken
    parent by parent in the move order; a child whose arrangement is in ``before`` or was already reached at
    this level is a duplicate, the others are the next level.  Returns the next level (arrangements, blank
    cells, keys), the (parent, move) of its canonical sequences (a move is also the sequence's last) and
    the (parent, move) of the duplicates."""
    n, cells = states.shape
    nb_before = before.shape[0]
    cap = 4 * n
    size = 1
    while size < 2 * (nb_before + cap):
        size *= 2
    slots = np.full(size, -1, dtype=np.int64)  # entries (positions in keys and rows)
    total = nb_before + cap
    rows = np.empty((total, cells), dtype=np.uint8)
    keys = np.empty(total, dtype=np.int64)
    rows[:nb_before] = before
    keys[:nb_before] = before_key
    mask = size - 1
    for e in range(nb_before):
        slot = keys[e] & mask
        while slots[slot] >= 0:
            slot = (slot + 1) & mask
        slots[slot] = e
    count = 0
    can_parent = np.empty(cap, dtype=np.int64)
    can_move = np.empty(cap, dtype=np.int64)
    dup_parent = np.empty(cap, dtype=np.int64)
    dup_move = np.empty(cap, dtype=np.int64)
    new_blank = np.empty(cap, dtype=np.int64)
    ndup = 0
    child = np.empty(cells, dtype=np.uint8)
    for i in range(n):
        b = blank[i]
        for m in range(4):
            q = nb[b, m]
            if q < 0 or last[i] == 3 - m:
                continue
            t = states[i, q]
            k = key[i] ^ zobrist[b, p] ^ zobrist[q, t] ^ zobrist[b, t] ^ zobrist[q, p]
            for c in range(cells):
                child[c] = states[i, c]
            child[b] = t
            child[q] = p
            slot = k & mask
            found = False
            while True:
                e = slots[slot]
                if e < 0:
                    break
                if keys[e] == k:
                    same = True
                    for c in range(cells):
                        if rows[e, c] != child[c]:
                            same = False
                            break
                    if same:
                        found = True
                        break
                slot = (slot + 1) & mask
            if found:
                dup_parent[ndup] = i
                dup_move[ndup] = m
                ndup += 1
                continue
            e = nb_before + count
            rows[e] = child
            keys[e] = k
            slots[slot] = e
            can_parent[count] = i
            can_move[count] = m
            new_blank[count] = q
            count += 1
    out = rows[nb_before:nb_before + count].copy()
    return (out, new_blank[:count].copy(), keys[nb_before:nb_before + count].copy(), can_parent[:count].copy(),
            can_move[:count].copy(), dup_parent[:ndup].copy(), dup_move[:ndup].copy())


def _enumerate_cell(nb: np.ndarray, p: int, depth: int, zobrist: np.ndarray, what: str):
    """The canonical tree of cell ``p``: per level the (parent, move) of its canonical sequences, and the
    (parent, move) of the duplicates found at each level (their parent is a canonical sequence one shorter)."""
    cells = nb.shape[0]
    states = np.arange(cells, dtype=np.uint8)[None, :].copy()
    blank = np.array([p], dtype=np.int64)
    last = np.array([-1], dtype=np.int64)
    key = np.array([np.bitwise_xor.reduce(zobrist[np.arange(cells), np.arange(cells)])], dtype=np.int64)
    before = states[:0].copy()
    before_key = key[:0].copy()
    levels = [(np.zeros(1, dtype=np.int64), np.full(1, -1, dtype=np.int64))]
    dups = [(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64))]
    for k in range(depth):
        # the level's arrays: rows and keys of two levels, the open-addressing slots, the children's columns
        entries = before.shape[0] + 4 * states.shape[0]
        _check_room(entries * (cells + 8 + 32) + 4 * states.shape[0] * 56, what, f"{k + 1} moves from cell {p}")
        nxt, nblank, nkey, cp, cm, dp, dm = _next_level(nb, p, states, blank, last, key, before, before_key, zobrist)
        levels.append((cp, cm))
        dups.append((dp, dm))
        before, before_key = states, key
        states, blank, last, key = nxt, nblank, cm, nkey  # a canonical sequence's last move is its move
        if states.shape[0] == 0:
            break
    return levels, dups


def _check_room(need: int, what: str, where: str) -> None:
    """Refuse to allocate ``need`` bytes more than this process may use: a one-line error (a deeper
    automaton than the memory allows), not a process killed by the system."""
    from ..tables.resources import available_memory

    have = available_memory()
    if have is not None and need > have:
        raise PruningError(f"the move automaton {what} needs more memory than is available (about "
                           f"{need / 2**30:.1f} GiB more at {where}, {have / 2**30:.1f} GiB free): choose a "
                           f"smaller --fsm-depth")


def build_automaton(board: Board, depth: int) -> MoveAutomaton:
    """The automaton of ``board`` for the duplicates of at most ``depth`` moves (see the module docstring)."""
    depth = check_depth(depth)
    if board.n > 255:
        raise PruningError(f"a board of {board.n} cells is too large for the automaton")
    nb = board.neighbours()
    cells = board.n
    zobrist = _zobrist(cells)
    what = f"of {board.dims} for duplicates of up to {depth} moves"
    # trie nodes: the roots (one per cell) first; then per cell and level the canonical sequences that are
    # prefixes of a duplicate, and the duplicates (terminal)
    node_parent = [np.full(cells, -1, dtype=np.int64)]
    node_move = [np.full(cells, -1, dtype=np.int64)]
    node_depth = [np.zeros(cells, dtype=np.int64)]
    node_terminal = [np.zeros(cells, dtype=bool)]
    count = cells
    duplicates = 0
    for p in range(cells):
        levels, dups = _enumerate_cell(nb, p, depth, zobrist, what)
        # which canonical sequences lead to a duplicate (walk up from the duplicates' parents)
        needed = [np.zeros(lp.size, dtype=bool) for lp, _ in levels]
        for k in range(len(levels) - 1, -1, -1):
            if k + 1 < len(dups) and dups[k + 1][0].size:
                needed[k][dups[k + 1][0]] = True
            if k + 1 < len(levels) and needed[k + 1].any():
                needed[k][levels[k + 1][0][needed[k + 1]]] = True
        ids = [np.full(lp.size, -1, dtype=np.int64) for lp, _ in levels]
        ids[0][0] = p
        for k in range(1, len(levels)):
            keep = np.flatnonzero(needed[k])
            ids[k][keep] = count + np.arange(keep.size)
            count += keep.size
            node_parent.append(ids[k - 1][levels[k][0][keep]])
            node_move.append(levels[k][1][keep])
            node_depth.append(np.full(keep.size, k, dtype=np.int64))
            node_terminal.append(np.zeros(keep.size, dtype=bool))
        for k in range(1, len(dups)):
            dp, dm = dups[k]
            if not dp.size:
                continue
            node_parent.append(ids[k - 1][dp])
            node_move.append(dm)
            node_depth.append(np.full(dp.size, k, dtype=np.int64))
            node_terminal.append(np.ones(dp.size, dtype=bool))
            count += dp.size
            duplicates += dp.size
    # the trie's columns and the Aho–Corasick tables below, then the minimization's
    _check_room(count * 8 * 22, what, "the trie of the duplicates")
    parent = np.concatenate(node_parent)
    move = np.concatenate(node_move)
    ndepth = np.concatenate(node_depth)
    terminal = np.concatenate(node_terminal)
    n = parent.size
    # the blank's cell at each node, and the children
    cell = np.empty(n, dtype=np.int64)
    cell[:cells] = np.arange(cells)
    child = np.full((n, 4), -1, dtype=np.int64)
    by_depth = np.argsort(ndepth, kind="stable")
    bounds = np.searchsorted(ndepth[by_depth], np.arange(depth + 2))
    for k in range(1, depth + 1):
        v = by_depth[bounds[k]:bounds[k + 1]]
        cell[v] = nb[cell[parent[v]], move[v]]
        child[parent[v], move[v]] = v
    # Aho–Corasick, level by level: fail(v) = delta(fail(parent), move); delta(v, m) = child, else delta(fail(v), m)
    fail = np.zeros(n, dtype=np.int64)
    out = terminal.copy()
    delta = np.full((n, 4), PRUNED, dtype=np.int64)
    roots = np.arange(cells)
    legal = nb >= 0
    delta[:cells] = np.where(child[:cells] >= 0, child[:cells], np.where(legal, nb, PRUNED))
    fail[:cells] = roots
    for k in range(1, depth + 1):
        v = by_depth[bounds[k]:bounds[k + 1]]
        if not v.size:
            continue
        pf = fail[parent[v]]
        f = np.where(parent[v] < cells, nb[cell[parent[v]], move[v]], delta[pf, move[v]])
        fail[v] = f
        out[v] |= out[f]
        delta[v] = np.where(child[v] >= 0, child[v], delta[f])
        delta[v] = np.where(legal[cell[v]], delta[v], PRUNED)
    # the states that are entered: neither a duplicate's end nor a path through one
    live = ~out
    number = np.full(n, PRUNED, dtype=np.int64)
    number[live] = np.arange(int(live.sum()))
    table = delta[live]
    table = np.where(table >= 0, number[np.maximum(table, 0)], PRUNED)
    table, starts = _minimized(table, np.arange(cells))
    table, starts = _breadth_first(table, starts)
    return MoveAutomaton(board, depth, np.ascontiguousarray(table, dtype=np.int32), starts, int(duplicates))


def _breadth_first(table: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The states renumbered in breadth-first order from the start states: the search spends most of its
    moves in the states a few moves from a start, which then share cache lines."""
    n = table.shape[0]
    number = np.full(n, -1, dtype=np.int64)
    frontier = np.unique(starts)
    number[frontier] = np.arange(frontier.size)
    count = frontier.size
    while frontier.size:
        nxt = table[frontier].ravel()
        nxt = nxt[nxt >= 0]
        _, first = np.unique(nxt, return_index=True)
        nxt = nxt[np.sort(first)]  # in order of discovery
        nxt = nxt[number[nxt] < 0]
        number[nxt] = count + np.arange(nxt.size)
        count += nxt.size
        frontier = nxt
    reached = number >= 0
    out = np.full((count, 4), PRUNED, dtype=np.int64)
    rows = table[reached]
    out[number[reached]] = np.where(rows >= 0, number[np.maximum(rows, 0)], PRUNED)
    return out, number[starts]


@njit(cache=True)
def _refined(table, cls):
    """One round of Moore's partition refinement: states get the same new class when they have the same
    class and their moves lead to the same classes (``PRUNED`` a class of its own).  Returns the new classes
    and their count."""
    n = table.shape[0]
    size = 1
    while size < 2 * n:
        size *= 2
    mask = size - 1
    slots = np.full(size, -1, dtype=np.int64)  # a representative state per signature seen
    new = np.empty(n, dtype=np.int64)
    count = 0
    sig = np.empty(5, dtype=np.int64)
    for s in range(n):
        sig[0] = cls[s]
        h = cls[s] * 0x9E3779B97F4A7C15
        for m in range(4):
            t = table[s, m]
            sig[m + 1] = cls[t] if t >= 0 else -1
            h = (h ^ (sig[m + 1] + 1)) * 0xBF58476D1CE4E5B9
        slot = (h ^ (h >> 31)) & mask
        while True:
            r = slots[slot]
            if r < 0:
                slots[slot] = s
                new[s] = count
                count += 1
                break
            same = cls[r] == sig[0]
            for m in range(4):
                if not same:
                    break
                t = table[r, m]
                same = (cls[t] if t >= 0 else -1) == sig[m + 1]
            if same:
                new[s] = new[r]
                break
            slot = (slot + 1) & mask
    return new, count


def _minimized(table: np.ndarray, starts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The minimal automaton of the same language (Moore's partition refinement: states stay together while
    their transitions lead to the same classes); a smaller table is one the search keeps in cache."""
    n = table.shape[0]
    cls = np.zeros(n, dtype=np.int64)
    count = 1
    while True:
        cls, new_count = _refined(table, cls)
        if new_count == count:
            break
        count = new_count
    # one representative per class, numbered in order of first appearance (the start states first)
    order = np.concatenate([starts, np.arange(n)])
    _, first = np.unique(cls[order], return_index=True)
    reps = order[np.sort(first)]
    renumber = np.empty(count, dtype=np.int64)
    renumber[cls[reps]] = np.arange(count)
    out = table[reps]
    out = np.where(out >= 0, renumber[cls[np.maximum(out, 0)]], PRUNED)
    return out, renumber[cls[starts]]


def default_depth(board: Board) -> int:
    """The duplicates' length the automaton is built for by default on ``board``
    (:func:`pdbtool.registry.default_fsm_depth`, chosen by measurement: docs/pruning.md)."""
    return registry.default_fsm_depth(board.dims)


def check_depth(depth) -> int:
    """``depth`` as an int, refused unless it is a depth the automaton can be built for."""
    if isinstance(depth, bool) or not isinstance(depth, (int, np.integer)) or not 2 <= depth <= MAX_DEPTH:
        raise PruningError(f"the automaton's depth must be a whole number from 2 to {MAX_DEPTH}, not {depth!r}")
    return int(depth)


def check_pruning(pruning: str) -> str:
    if pruning not in PRUNING_RULES:
        raise PruningError(f"pruning {pruning!r}: choose {' or '.join(PRUNING_RULES)}")
    return pruning


__all__ = ["MoveAutomaton", "PruningError", "PRUNED", "PRUNING_RULES", "MAX_DEPTH", "build_automaton",
           "default_depth", "check_depth", "check_pruning"]
