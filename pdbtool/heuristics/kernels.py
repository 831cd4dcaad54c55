"""IDA* kernels: explicit stacks, resumable in chunks of nodes, one kernel per heuristic family.

Every kernel searches from the state in ``tiles`` (the tile in each cell) and keeps all of its progress in
arrays owned by the caller, so that a call returns after about ``budget`` generated nodes and the next call
carries on exactly where it stopped.  Python enforces time limits and prints progress between calls.

Conventions shared by the kernels
---------------------------------
* Moves of the blank in the order up, left, right, down (``m`` = 0..3); the inverse of ``m`` is ``3 - m``,
  and the move that undoes the previous one is never generated.
* A node is *generated* when it is created as the child of a node being expanded (the start node is not
  counted); a node is *expanded* when its children are generated (the start node counts once per
  iteration).  A child whose f = g + h exceeds the bound is generated but not expanded.  The search stops
  at the first generated child that is the goal within the bound (its later siblings are not generated).
  Korf's 1985 counts, which include the start node, equal ``generated + 1`` under these rules.
* ``reg`` holds the registers: depth (-1 = start a new iteration), bound, next bound, generated,
  expanded, blank cell, iterations.  Level ``d`` of the stack is the node at depth d on the current path;
  ``next_move[d]`` is the next move to try there, ``prev_move[d]`` the move that led to it (at the root:
  ``reg[R_ROOT_PREV]``, -1 for the start state, the move into it for a subtree of a parallel search).
* Return value: ``RUNNING`` (budget used up; call again), ``FOUND`` (the path is on the stack, depth =
  ``reg[R_DEPTH]``), ``EXHAUSTED`` (no solution: nothing left under any bound), ``GROW`` (the next bound
  needs a deeper stack: reallocate and call again; the kernel is between iterations), ``ITERATION_DONE``
  (only with ``reg[R_ONE_ITERATION]`` set: the iteration of bound ``reg[R_BOUND]`` is over, its next bound
  in ``reg[R_NEXT]``; :mod:`pdbtool.search.parallel` searches subtrees this way).
* The kernels release the GIL (``nogil``), so that threads can search subtrees of one iteration at once.
"""

from __future__ import annotations

import numba
import numpy as np
from numba import njit

from .._native.intrinsics import load_u8, popcount

R_DEPTH, R_BOUND, R_NEXT, R_GEN, R_EXP, R_BLANK, R_ITER, R_ROOT_PREV, R_ONE_ITERATION = range(9)
N_REGS = 10

RUNNING, FOUND, EXHAUSTED, GROW, ITERATION_DONE = 0, 1, 2, 3, 4

INF = 1 << 40


@njit(cache=True, inline="always")
def _is_goal(tiles, goal_tiles):
    for c in range(tiles.shape[0]):
        if tiles[c] != goal_tiles[c]:
            return False
    return True


@njit(cache=True, inline="always")
def _rank_row(cells, p, k, n):
    """Rank of the placement in row ``p`` of ``cells`` (first ``k`` entries), as ``pattern.rank_cells``."""
    used = numba.uint64(0)
    r = 0
    for i in range(k):
        c = cells[p, i]
        below = (numba.uint64(1) << numba.uint64(c)) - numba.uint64(1)
        r = r * (n - i) + (c - popcount(used & below))
        used |= numba.uint64(1) << numba.uint64(c)
    return r


@njit(cache=True, inline="always")
def _mapped(cellmap, row, c, mapped):
    """The cell at which table row ``row`` sees cell c (c itself when no table is shared)."""
    return cellmap[row, c] if mapped else c


@njit(cache=True, inline="always")
def _any_mapped(cellmap, npat, n):
    """Whether some pattern is looked up through a board symmetry (then the direct lookups are mapped)."""
    for p in range(npat):
        for c in range(n):
            if cellmap[p, c] != c:
                return True
    return False


@njit(cache=True, inline="always")
def _rank_moved(cells, row, s, k, to_cell, from_cell, n):
    """The rank of row ``row``'s placement with slot s in ``to_cell`` instead of ``from_cell`` (cells as
    the table sees them); the row is left as it was."""
    cells[row, s] = to_cell
    r = _rank_row(cells, row, k, n)
    cells[row, s] = from_cell
    return r


@njit(cache=True, inline="always")
def _value_moved(cells, row, s, k, to_cell, from_cell, addr, n):
    """The byte-table value of that moved placement (:func:`_rank_moved`)."""
    return load_u8(addr + _rank_moved(cells, row, s, k, to_cell, from_cell, n))


# --- Manhattan distance ---------------------------------------------------------------------------------

@njit(cache=True, nogil=True)
def ida_manhattan(tiles, nb, goal_tiles, reg, budget, next_move, prev_move, hlev, md):
    """IDA* with Manhattan distance; ``md[t, c]`` = distance of tile t in cell c; ``hlev[d]`` = h at level d."""
    depth = reg[R_DEPTH]
    bound = reg[R_BOUND]
    next_bound = reg[R_NEXT]
    generated = reg[R_GEN]
    expanded = reg[R_EXP]
    blank = reg[R_BLANK]
    stop = generated + budget
    capacity = next_move.shape[0]
    status = RUNNING
    while True:
        if depth < 0:
            if next_bound >= INF:
                status = EXHAUSTED
                break
            if next_bound + 2 > capacity:
                status = GROW
                break
            bound = next_bound
            next_bound = INF
            reg[R_ITER] += 1
            depth = 0
            next_move[0] = 0
            prev_move[0] = reg[R_ROOT_PREV]
            expanded += 1
            continue
        m = next_move[depth]
        if m == 4:
            if depth == 0:
                depth = -1
                if reg[R_ONE_ITERATION]:
                    status = ITERATION_DONE
                    break
                continue
            # undo the move that led here: the tile that moved sits in the parent's blank cell
            pb = nb[blank, 3 - prev_move[depth]]
            tiles[blank] = tiles[pb]
            tiles[pb] = 0
            blank = pb
            depth -= 1
            continue
        next_move[depth] = m + 1
        q = nb[blank, m]
        if q < 0 or m + prev_move[depth] == 3:
            continue
        generated += 1
        t = tiles[q]
        h = hlev[depth] + md[t, blank] - md[t, q]
        f = depth + 1 + h
        if f > bound:
            if f < next_bound:
                next_bound = f
            continue
        tiles[blank] = t
        tiles[q] = 0
        blank = q
        depth += 1
        hlev[depth] = h
        next_move[depth] = 0
        prev_move[depth] = m
        if h == 0 and _is_goal(tiles, goal_tiles):
            status = FOUND
            break
        expanded += 1
        if generated >= stop:
            break
    reg[R_DEPTH] = depth
    reg[R_BOUND] = bound
    reg[R_NEXT] = next_bound
    reg[R_GEN] = generated
    reg[R_EXP] = expanded
    reg[R_BLANK] = blank
    return status


# --- Manhattan distance plus linear conflicts ---------------------------------------------------------------

@njit(cache=True, nogil=True)
def ida_linear_conflict(tiles, nb, goal_tiles, reg, budget, next_move, prev_move, hlev, md,
                        row_of, col_of, row_code, col_code, row_contrib, col_contrib, row_lc, col_lc):
    """IDA* with Manhattan distance plus linear conflicts (Hansson, Mayer & Yung 1992).

    ``row_code[r]`` encodes the goal columns of the tiles of row r that belong to row r (see
    ``heuristic.LinearConflict``); ``row_contrib[t, c]`` is what tile t in cell c adds to its row's code;
    ``row_lc[code]`` is twice the least number of those tiles to remove so that the rest are in order.
    A vertical move can change the conflicts of two rows, a horizontal move those of two columns; the
    code of the tile's own column (row) changes too, but not its conflicts.
    """
    depth = reg[R_DEPTH]
    bound = reg[R_BOUND]
    next_bound = reg[R_NEXT]
    generated = reg[R_GEN]
    expanded = reg[R_EXP]
    blank = reg[R_BLANK]
    stop = generated + budget
    capacity = next_move.shape[0]
    status = RUNNING
    while True:
        if depth < 0:
            if next_bound >= INF:
                status = EXHAUSTED
                break
            if next_bound + 2 > capacity:
                status = GROW
                break
            bound = next_bound
            next_bound = INF
            reg[R_ITER] += 1
            depth = 0
            next_move[0] = 0
            prev_move[0] = reg[R_ROOT_PREV]
            expanded += 1
            continue
        m = next_move[depth]
        if m == 4:
            if depth == 0:
                depth = -1
                if reg[R_ONE_ITERATION]:
                    status = ITERATION_DONE
                    break
                continue
            pm = prev_move[depth]
            pb = nb[blank, 3 - pm]
            t = tiles[pb]
            # tile t goes back from pb to blank
            ra = row_of[pb]
            rb = row_of[blank]
            row_code[ra] -= row_contrib[t, pb]
            row_code[rb] += row_contrib[t, blank]
            ca = col_of[pb]
            cb = col_of[blank]
            col_code[ca] -= col_contrib[t, pb]
            col_code[cb] += col_contrib[t, blank]
            tiles[blank] = t
            tiles[pb] = 0
            blank = pb
            depth -= 1
            continue
        next_move[depth] = m + 1
        q = nb[blank, m]
        if q < 0 or m + prev_move[depth] == 3:
            continue
        generated += 1
        t = tiles[q]
        # tile t moves from q into blank
        if m == 0 or m == 3:
            ra = row_of[q]
            rb = row_of[blank]
            a_old = row_code[ra]
            b_old = row_code[rb]
            a_new = a_old - row_contrib[t, q]
            b_new = b_old + row_contrib[t, blank]
            dlc = row_lc[a_new] + row_lc[b_new] - row_lc[a_old] - row_lc[b_old]
        else:
            ra = col_of[q]
            rb = col_of[blank]
            a_old = col_code[ra]
            b_old = col_code[rb]
            a_new = a_old - col_contrib[t, q]
            b_new = b_old + col_contrib[t, blank]
            dlc = col_lc[a_new] + col_lc[b_new] - col_lc[a_old] - col_lc[b_old]
        h = hlev[depth] + md[t, blank] - md[t, q] + dlc
        f = depth + 1 + h
        if f > bound:
            if f < next_bound:
                next_bound = f
            continue
        # both codes of the tile's lines change (within its own line only the digit's position moves,
        # which keeps the order and so the conflicts)
        row_code[row_of[q]] -= row_contrib[t, q]
        row_code[row_of[blank]] += row_contrib[t, blank]
        col_code[col_of[q]] -= col_contrib[t, q]
        col_code[col_of[blank]] += col_contrib[t, blank]
        tiles[blank] = t
        tiles[q] = 0
        blank = q
        depth += 1
        hlev[depth] = h
        next_move[depth] = 0
        prev_move[depth] = m
        if h == 0 and _is_goal(tiles, goal_tiles):
            status = FOUND
            break
        expanded += 1
        if generated >= stop:
            break
    reg[R_DEPTH] = depth
    reg[R_BOUND] = bound
    reg[R_NEXT] = next_bound
    reg[R_GEN] = generated
    reg[R_EXP] = expanded
    reg[R_BLANK] = blank
    return status


# --- additive pattern databases, optionally with the diagonal reflection ------------------------------------

@njit(cache=True, inline="always")
def _pdb_expand(d, blank, tiles, nb, prev_move, hv, hsum, child_h, child_v, surv, nsurv, vmask, n,
                npat, reflect, pat, slot, rpat, rslot, cellmap, mapped, kk, cells, addrs, bound, next_bound):
    """Generate the children of the node at level ``d``: their h, the list of those within the bound
    (``surv[d, :nsurv[d]]``, in move order) and the mask of all of them (``vmask[d]``).  Returns the new
    next bound and the number of children generated.

    Row ``p`` of ``cells`` is pattern p's placement in the state, row ``npat + p`` its placement in the
    reflected state; ``hv[d, j]`` the table values, ``hsum[d, 0/1]`` their two sums.  The direct lookups
    of all children come first, so that their loads overlap.  The reflected sum is looked up only where it
    can matter: for a child that the direct sum does not prune, or whose f by the direct sum would lower
    the next bound; elsewhere the child is pruned either way and its f cannot lower the next bound."""
    pm = prev_move[d]
    mask = 0
    for m in range(4):
        q = nb[blank, m]
        if q < 0 or m + pm == 3:
            continue
        mask |= 1 << m
        t = tiles[q]
        sn = hsum[d, 0]
        p = pat[t]
        v = 0
        if p >= 0:
            v = _value_moved(cells, p, slot[t], kk[p], _mapped(cellmap, p, blank, mapped),
                             _mapped(cellmap, p, q, mapped), addrs[p], n)
            sn += v - hv[d, p]
        child_v[d, m, 0] = v
        child_h[d, m] = sn
    if reflect:
        for m in range(4):
            if not (mask >> m) & 1:
                continue
            h = child_h[d, m]
            f = d + 1 + h
            if f > bound and f >= next_bound:
                continue
            q = nb[blank, m]
            t = tiles[q]
            sr = hsum[d, 1]
            p = rpat[t]
            v = 0
            if p >= 0:
                row = npat + p
                v = _value_moved(cells, row, rslot[t], kk[p], cellmap[row, blank], cellmap[row, q], addrs[p], n)
                sr += v - hv[d, row]
            child_v[d, m, 1] = v
            if sr > h:
                child_h[d, m] = sr
    count = 0
    kept = 0
    for m in range(4):
        if not (mask >> m) & 1:
            continue
        count += 1
        f = d + 1 + child_h[d, m]
        if f > bound:
            if f < next_bound:
                next_bound = f
        else:
            surv[d, kept] = m
            kept += 1
    nsurv[d] = kept
    vmask[d] = mask
    return next_bound, count


@njit(cache=True, nogil=True)
def ida_pdb(tiles, nb, goal_tiles, reg, budget, next_move, prev_move, hv, hsum, child_h, child_v, surv,
            nsurv, vmask, npat, reflect, pat, slot, rpat, rslot, cellmap, kk, cells, addrs):
    """IDA* with the sum of disjoint pattern tables (and the max with the same sum on the reflected state).

    ``pat[t]``/``slot[t]``: the pattern of tile t (-1: none) and the index at which its table ranks t;
    ``rpat[t]``/``rslot[t]`` the same for the reflected twin R(t).  ``cellmap[p, c]`` is the cell at which
    pattern p's table sees a tile of p standing in cell c (the identity for a table built for p, a board
    symmetry for a table shared with an image of p, :mod:`pdbtool.tables.sharing`); row ``npat + p`` is the same
    for the reflected state (composed with the transpose).  When every pattern has its own table (rows
    0..npat-1 of ``cellmap`` the identity), the direct lookups skip the map.
    ``addrs[p]`` is the address of pattern p's byte table, indexed by the rank of its placement.
    ``hv[0]``, ``hsum[0]`` and ``cells`` must describe the start state before the first call.

    A node's children are all generated (and counted) when it is expanded; the loop then walks only those
    within the bound (``next_move[d]`` indexes ``surv[d]``).  When the goal is found, the children that a
    one-at-a-time generation would not have reached (the later siblings of each node on the path) are
    taken off the count, so the counts are those of the conventions above.
    """
    n = tiles.shape[0]
    depth = reg[R_DEPTH]
    bound = reg[R_BOUND]
    next_bound = reg[R_NEXT]
    generated = reg[R_GEN]
    expanded = reg[R_EXP]
    blank = reg[R_BLANK]
    stop = generated + budget
    capacity = next_move.shape[0]
    width = 2 * npat if reflect else npat
    # only when some table is shared are the direct lookups mapped (a branch taken the same way throughout)
    mapped = _any_mapped(cellmap, npat, n)
    status = RUNNING
    while True:
        if depth < 0:
            if next_bound >= INF:
                status = EXHAUSTED
                break
            if next_bound + 2 > capacity:
                status = GROW
                break
            bound = next_bound
            next_bound = INF
            reg[R_ITER] += 1
            depth = 0
            next_move[0] = 0
            prev_move[0] = reg[R_ROOT_PREV]
            expanded += 1
            next_bound, count = _pdb_expand(0, blank, tiles, nb, prev_move, hv, hsum, child_h, child_v,
                                            surv, nsurv, vmask, n, npat, reflect, pat, slot, rpat, rslot,
                                            cellmap, mapped, kk,
                                            cells, addrs, bound, next_bound)
            generated += count
            continue
        i = next_move[depth]
        if i == nsurv[depth]:
            if depth == 0:
                depth = -1
                if reg[R_ONE_ITERATION]:
                    status = ITERATION_DONE
                    break
                continue
            pb = nb[blank, 3 - prev_move[depth]]
            t = tiles[pb]
            p = pat[t]
            if p >= 0:
                cells[p, slot[t]] = cellmap[p, blank] if mapped else blank
            if reflect:
                p = rpat[t]
                if p >= 0:
                    cells[npat + p, rslot[t]] = cellmap[npat + p, blank]
            tiles[blank] = t
            tiles[pb] = 0
            blank = pb
            depth -= 1
            continue
        next_move[depth] = i + 1
        m = surv[depth, i]
        q = nb[blank, m]
        h = child_h[depth, m]
        # make the move: tile t slides from q into the blank's cell
        t = tiles[q]
        d1 = depth + 1
        for j in range(width):
            hv[d1, j] = hv[depth, j]
        hsum[d1, 0] = hsum[depth, 0]
        hsum[d1, 1] = hsum[depth, 1]
        p = pat[t]
        if p >= 0:
            cells[p, slot[t]] = cellmap[p, blank] if mapped else blank
            v = child_v[depth, m, 0]
            hsum[d1, 0] += v - hv[depth, p]
            hv[d1, p] = v
        if reflect:
            p = rpat[t]
            if p >= 0:
                row = npat + p
                cells[row, rslot[t]] = cellmap[row, blank]
                v = child_v[depth, m, 1]
                hsum[d1, 1] += v - hv[depth, row]
                hv[d1, row] = v
        tiles[blank] = t
        tiles[q] = 0
        blank = q
        depth = d1
        next_move[depth] = 0
        prev_move[depth] = m
        if h == 0 and _is_goal(tiles, goal_tiles):
            status = FOUND
            for a in range(depth):
                later = vmask[a] >> (prev_move[a + 1] + 1)
                while later:
                    generated -= later & 1
                    later >>= 1
            break
        expanded += 1
        next_bound, count = _pdb_expand(depth, blank, tiles, nb, prev_move, hv, hsum, child_h, child_v,
                                        surv, nsurv, vmask, n, npat, reflect, pat, slot, rpat, rslot,
                                        cellmap, mapped, kk,
                                        cells, addrs, bound, next_bound)
        generated += count
        if generated >= stop:
            break
    reg[R_DEPTH] = depth
    reg[R_BOUND] = bound
    reg[R_NEXT] = next_bound
    reg[R_GEN] = generated
    reg[R_EXP] = expanded
    reg[R_BLANK] = blank
    return status


def new_registers(h0: int, blank: int) -> np.ndarray:
    """Registers for a fresh search whose first bound is ``h0``."""
    reg = np.zeros(N_REGS, dtype=np.int64)
    reg[R_DEPTH] = -1
    reg[R_NEXT] = h0
    reg[R_BLANK] = blank
    reg[R_ROOT_PREV] = -1
    return reg
