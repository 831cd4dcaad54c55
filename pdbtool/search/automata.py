"""The move automata a search uses (:mod:`pdbtool.search.move_automaton` builds them): one per board shape
and depth in a process (:func:`automaton_for`), the deep ones kept in the table cache, and the heuristic
that carries one into the driver (:func:`with_pruning`).

The automaton of duplicates of up to L moves takes seconds to build from L = 14 on (a million states at
L = 16 on 5x5), and every process that searches needs it: a batch's workers, Ray's, each ``pdbtool
solve``.  So from :data:`CACHED_FROM_DEPTH` on it is kept in the table cache as a table file (the format
of :mod:`pdbtool.tables.fileformat`: magic, versioned header, xxhash64), made under the cache's lock by
the first process that needs it (the others wait, then read it), then read by all.

File: ``WxH-moves-L<L>.fsm``; header ``kind`` ``move-automaton`` with the board's width and height, the
depth, the number of states and of duplicates; payload (little-endian uint32) the transition table row by
row (``PRUNED`` stored as 0xFFFFFFFF), then the start state of each cell.  The minimal automaton and its
breadth-first numbering are unique, so a file is the same whichever pdbtool built it.

Loading checks the envelope and checksum, that the header is the automaton asked for, and that every
transition and start is a state of the table (the search kernel reads them without bounds checks); the
table is then copied into private memory (large pages where the system gives them, as for a built one).
``pdbtool verify`` rebuilds the automaton and compares (:func:`verify_automaton_file`).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

from ..puzzle.board import Board
from ..tables import fileformat
from ..tables.cache import CacheReadOnly, TableCache
from ..tables.fileformat import TableFileError
from .move_automaton import (MAX_DEPTH, PRUNED, MoveAutomaton, PruningError, build_automaton, check_depth,
                             check_pruning, default_depth)

KIND = "move-automaton"
SUFFIX = ".fsm"
CACHED_FROM_DEPTH = 14   # shallower automata build in about a second: cheaper than a file
_STORED_PRUNED = 0xFFFFFFFF


def file_name(board: Board, depth: int) -> str:
    return f"{board.width}x{board.height}-moves-L{int(depth)}{SUFFIX}"


def is_automaton_file(path: str | Path) -> bool:
    try:
        header, _ = fileformat.read_header(path)
    except (TableFileError, OSError):
        return False
    return header.get("kind") == KIND


def save_automaton(automaton: MoveAutomaton, path: str | Path, build_seconds: float | None = None) -> int:
    """Write ``automaton`` as a table file at ``path`` (not atomically: see :func:`stored_automaton`)."""
    words = np.concatenate([automaton.table.ravel().astype(np.int64), automaton.starts.astype(np.int64)])
    payload = np.where(words < 0, _STORED_PRUNED, words).astype("<u4")
    board = automaton.board
    fields: dict[str, Any] = dict(kind=KIND, board=board.dims, width=board.width, height=board.height,
                                  depth=automaton.depth, states=automaton.states, duplicates=automaton.duplicates,
                                  entries=int(payload.size))
    if build_seconds is not None:
        fields["build_seconds"] = round(float(build_seconds), 3)
    return fileformat.save(path, fileformat.make_header(**fields), payload)


def load_automaton(path: str | Path, board: Board | None = None, depth: int | None = None) -> MoveAutomaton:
    """The automaton of the file at ``path``; TableFileError when it is damaged, not an automaton, not of
    ``board``'s shape and ``depth`` (when given), or holds a transition that is not a state."""
    return _load(path, board, depth)[0]


def _load(path, board: Board | None, depth: int | None) -> tuple[MoveAutomaton, dict[str, Any]]:
    loaded = fileformat.load(path)  # the envelope, the checksum, and the header's fields by type and range
    header = loaded.header
    if header.get("kind") != KIND:
        raise TableFileError(f"{path}: a {fileformat.clip(header.get('kind', 'pattern'))} file, not a move automaton")
    width, height, file_depth, states = header["width"], header["height"], header["depth"], header["states"]
    # the automaton's own ranges, past what the file format checks
    if min(width, height) < 2 or width * height > 255 or file_depth > MAX_DEPTH or not 1 <= states < 1 << 31:
        raise TableFileError(f"{path}: damaged header (width, height, depth or states out of range)")
    if board is not None and (board.width, board.height) != (width, height) or \
            depth is not None and depth != file_depth:
        raise TableFileError(f"{path}: the automaton of {width}x{height} with duplicates of up to {file_depth} "
                             f"moves, not of {board.dims if board else f'{width}x{height}'} up to {depth}")
    cells = width * height
    if header.get("payload_dtype") != "<u4" or loaded.payload.size != 4 * states + cells:
        raise TableFileError(f"{path}: damaged header (the payload is not {states:,} rows of 4 moves and "
                             f"{cells} start states as uint32)")
    words = loaded.payload.view(np.int32)
    table = np.array(words[:4 * states].reshape(states, 4))   # private memory, not the mapped file
    starts = words[4 * states:].astype(np.int64)
    if int(table.min()) < PRUNED or int(table.max()) >= states or int(starts.min()) < 0 or \
            int(starts.max()) >= states:
        raise TableFileError(f"{path}: damaged table (a transition or start that is not one of its "
                             f"{states:,} states)")
    return MoveAutomaton(Board(width, height), file_depth, table, starts, header["duplicates"]), header


def stored_automaton(cache: TableCache, board: Board, depth: int) -> MoveAutomaton:
    """The automaton of ``board``'s shape and ``depth`` from the cache, built and stored there if absent
    (or damaged: moved aside and built again).  In a cache this user cannot write it is built here."""
    shape = Board(board.width, board.height)
    path = cache.dir / file_name(shape, depth)

    def write(tmp: Path) -> None:
        cache.notify(f"building the move automaton of {shape.dims} (duplicates of up to {depth} moves) into "
                     f"{cache.dir}")
        start = time.process_time()
        automaton = build_automaton(shape, depth)
        save_automaton(automaton, tmp, time.process_time() - start)

    try:
        return cache.get_or_build(path, lambda p: load_automaton(p, shape, depth), write)
    except CacheReadOnly:
        return build_automaton(shape, depth)


def automaton_for(board: Board, depth: int | None = None, cache=None) -> MoveAutomaton:
    """The automaton of ``board``'s shape (it does not depend on the goal) for duplicates of up to ``depth``
    moves (default :func:`default_depth`), once per process.  With a table cache (``cache``), a deep one is
    read from it, or built and stored there (:func:`stored_automaton`)."""
    depth = default_depth(board) if depth is None else check_depth(depth)
    key = (board.width, board.height, depth)
    with _MEMO_LOCK:
        found = _MEMO.get(key)
        if found is None:
            shape = Board(board.width, board.height)
            found = stored_automaton(cache, shape, depth) if cache is not None and depth >= CACHED_FROM_DEPTH \
                else build_automaton(shape, depth)
            if len(_MEMO) >= 8:
                _MEMO.pop(next(iter(_MEMO)))
            _MEMO[key] = found
    return found


_MEMO: dict[tuple[int, int, int], MoveAutomaton] = {}
_MEMO_LOCK = threading.Lock()


class PrunedHeuristic:
    """``heuristic`` with a move-pruning automaton that the driver applies (``automaton``); everything else
    is the heuristic's own."""

    def __init__(self, heuristic, automaton: MoveAutomaton):
        if (automaton.board.width, automaton.board.height) != (heuristic.board.width, heuristic.board.height):
            raise PruningError(f"an automaton of {automaton.board.dims} for a heuristic of {heuristic.board.dims}")
        self.heuristic = heuristic
        self.automaton = automaton

    def __getattr__(self, name):
        return getattr(self.heuristic, name)


def with_pruning(heuristic, pruning: str = "fsm", depth: int | None = None, cache=None):
    """``heuristic`` as the driver should search with it under the ``pruning`` rule: ``parent`` (never undo
    the last move: the heuristic itself) or ``fsm`` (also the duplicates of :func:`automaton_for`, from the
    table cache ``cache`` if given)."""
    if check_pruning(pruning) == "parent":
        return heuristic
    return PrunedHeuristic(heuristic, automaton_for(heuristic.board, depth, cache))


def describe_automaton(path: str | Path) -> dict[str, Any]:
    """What ``pdbtool inspect`` shows of an automaton file."""
    automaton, header = _load(path, None, None)
    return {"file": str(path), "kind": KIND, "board": automaton.board.dims, "depth": automaton.depth,
            "states": automaton.states, "duplicates": automaton.duplicates, "file_bytes": Path(path).stat().st_size,
            "build_seconds": header.get("build_seconds"), "pdbtool_version": header.get("pdbtool_version"),
            "checksum": "ok"}


def format_automaton(info: dict[str, Any]) -> str:
    built = f", built in {info['build_seconds']} CPU s" if info.get("build_seconds") is not None else ""
    return (f"{info['file']}\n  move automaton of {info['board']}: duplicates of up to {info['depth']} moves\n"
            f"  {info['states']:,} states, {info['duplicates']:,} duplicates, {info['file_bytes']:,} bytes{built}\n"
            f"  checksum: {info['checksum']}")


def verify_automaton_file(path: str | Path):
    """A verify report (:class:`pdbtool.tables.verify.Report`): the file's checks as it loads, then a
    rebuild compared state by state."""
    from ..tables.verify import FAIL, PASS, Report

    report = Report(str(path))
    try:
        automaton = load_automaton(path)
    except TableFileError as exc:
        report.add("format, checksum and states", FAIL, str(exc).removeprefix(f"{path}: "))
        return report
    report.table = f"move automaton of {automaton.board.dims}, L={automaton.depth}"
    report.add("format, checksum and states", PASS)
    fresh = build_automaton(automaton.board, automaton.depth)
    same = fresh.duplicates == automaton.duplicates and np.array_equal(fresh.table, automaton.table) and \
        np.array_equal(fresh.starts, automaton.starts)
    detail = "" if same else f"differs from a fresh build ({fresh.states:,} states, {automaton.states:,} in the file)"
    report.add("rebuild", PASS if same else FAIL, detail)
    return report


__all__ = ["KIND", "CACHED_FROM_DEPTH", "file_name", "is_automaton_file", "save_automaton", "load_automaton",
           "stored_automaton", "automaton_for", "PrunedHeuristic", "with_pruning", "describe_automaton",
           "format_automaton", "verify_automaton_file"]
