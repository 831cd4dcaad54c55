"""Checkpoints of a long search: a killed search goes on from its last record instead of starting over.

:func:`checkpointed_search` runs IDA* as :mod:`pdbtool.search.parallel` does, each iteration cut into the
units of work of :mod:`pdbtool.search.units`, and tells a :class:`Recorder` what is done:

* ``recorder.load()`` -> a :class:`Progress` (or None for a fresh search): the iterations finished (bound,
  nodes), and of the current one the cut (``target``: units wanted) and the units done with their nodes;
* ``recorder.iteration_started(bound, target)`` before the units of an iteration are searched;
* ``recorder.unit_done(unit_id, result)`` as each unit ends (``unit_id``: its index in the iteration's
  units, which are numbered in depth-first order; thread-safe, any executor may call it);
* ``recorder.iteration_done(bound, generated, expanded, next_bound)`` when an iteration ends (counts
  cumulative over the search);
* ``recorder.flush()`` writes now (on the way out of an interrupted search), ``recorder.remove()`` once
  the instance is solved.

The recorder writes the file atomically (a temporary file, fsync, rename) at most every ``every`` seconds,
so a kill costs the units in progress and those done since the last record.  The file names what it was
written for: the board, goal and start state, the heuristic's label and options, and the identity of its
tables (their files' checksums); :meth:`Recorder.load` refuses a file written for anything else.

Node counts: on one thread the units of an iteration are searched in depth-first order, interleaved with
the search of the top of the tree above them (stopped at each unit's root), so that every count, the last
iteration's included, is that of the serial search of :class:`pdbtool.search.solver.Solver` without a
checkpoint; so is that of a resumed search, whose top is searched again and whose done units are not.  On
threads, every iteration but the last counts exactly as serially (as in :mod:`pdbtool.search.parallel`).
A checkpoint written on threads resumes on one and the other way round: the units of an iteration depend
on its bound and ``target`` only.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from collections.abc import Callable

import numpy as np

from ..errors import PdbtoolError
from ..tables import fileformat
from ..tables.cache import _fsync_dir
from .driver import CUT, FOUND, INF, ITERATION_DONE, Search, Tally
from .parallel import FRONTIER_PER_THREAD, SERIAL_BELOW, ParallelOutcome, _search_units, units_wanted
from .units import UNIT_CHUNK_NODES, UnitResult, WorkUnit, search_unit, split_iteration

FORMAT = "pdbtool-checkpoint"
VERSION = 1
UNIT_NODES = 1 << 24   # the nodes a unit averages, by an estimate of the iteration: what a kill may cost


class CheckpointError(PdbtoolError):
    pass


@dataclass
class Progress:
    """What a checkpoint holds: the iterations finished (their count, bound and cumulative nodes; ``last``
    and ``before``: the nodes of the last two, which size the next iteration's units), and of the
    iteration in progress its ``target`` and the units done (ids, their nodes and least next bound).
    ``seconds``: the search time of the earlier runs."""

    iterations: int = 0
    bound: int = 0
    generated: int = 0
    expanded: int = 0
    last: int = 0
    before: int = 0
    target: int | None = None
    done: set = field(default_factory=set)
    done_generated: int = 0
    done_expanded: int = 0
    done_next_bound: int = INF
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"iterations": self.iterations, "bound": self.bound, "generated": self.generated,
                "expanded": self.expanded, "last": self.last, "before": self.before,
                "current": None if self.target is None else {
                    "target": self.target, "done": _ranges(self.done), "generated": self.done_generated,
                    "expanded": self.done_expanded, "next_bound": self.done_next_bound},
                "seconds": round(self.seconds, 3)}

    @classmethod
    def from_json(cls, data: dict) -> Progress:
        """The progress a checkpoint's JSON holds; ValueError (naming the field) for a value that no search
        writes: a wrong type, a negative count, a bound at or past INF, units outside the iteration's cut."""
        if not isinstance(data, dict):
            raise ValueError("progress is not an object")
        out = cls()
        for name in ("iterations", "bound", "generated", "expanded", "last", "before"):
            setattr(out, name, _count(data, name, INF if name == "bound" else MAX_COUNT))
        seconds = data.get("seconds", 0.0)
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not 0 <= seconds < float("inf"):
            raise ValueError(f"seconds {fileformat.clip(seconds)}")
        out.seconds = float(seconds)
        current = data.get("current")
        if current is not None:
            if not isinstance(current, dict):
                raise ValueError("current is not an object")
            out.target = _count(current, "target", MAX_TARGET + 1)
            if out.target < 1:
                raise ValueError(f"target {out.target}")
            out.done = _unit_ids(current.get("done"), out.target * MAX_BRANCHING)
            out.done_generated = _count(current, "generated", MAX_COUNT)
            out.done_expanded = _count(current, "expanded", MAX_COUNT)
            out.done_next_bound = _count(current, "next_bound", INF + 1)
            if out.done_next_bound <= out.bound:  # a unit's next bound is above the bound it searched to
                raise ValueError(f"next_bound {out.done_next_bound} not above bound {out.bound}")
        return out


MAX_COUNT = 1 << 62          # beyond any node count a search reaches
MAX_CHECKPOINT_BYTES = 1 << 26  # far past the largest record (units as ranges, at most MAX_TARGET x 16 ids)
MAX_TARGET = 1 << 20         # beyond the units any thread count asks for an iteration
MAX_BRANCHING = 16           # beyond any domain's moves a state: a cut has fewer than target x this units


def _count(data: dict, name: str, limit: int) -> int:
    """``data[name]``: a whole number in [0, limit)."""
    value = data.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < limit:
        raise ValueError(f"{name} {fileformat.clip(value)}")
    return value


def _unit_ids(ranges, units: int) -> set[int]:
    """The unit ids of ``done``: disjoint half-open ranges [a, b) inside [0, units)."""
    if not isinstance(ranges, list):
        raise ValueError(f"done {fileformat.clip(ranges)}")
    ids: set[int] = set()
    for r in ranges:
        if (not isinstance(r, list) or len(r) != 2 or any(not isinstance(v, int) or isinstance(v, bool) for v in r)
                or not 0 <= r[0] < r[1] <= units or any(i in ids for i in range(r[0], r[1]))):
            raise ValueError(f"done range {fileformat.clip(r)} (units 0 to {units - 1} at most)")
        ids.update(range(r[0], r[1]))
    return ids


def _ranges(ids) -> list[list[int]]:
    """Unit ids as half-open ranges (the units of a serial search are done in order: one range)."""
    out: list[list[int]] = []
    for i in sorted(ids):
        if out and out[-1][1] == i:
            out[-1][1] = i + 1
        else:
            out.append([i, i + 1])
    return out


class Recorder:
    """The checkpoint file ``path`` of one search, written for ``identity`` (a JSON-able dict: what the
    search is of; see :func:`search_identity`) at most every ``every`` seconds.  See the module docstring
    for the calls a search makes."""

    def __init__(self, path, identity: dict, every: float = 60.0, legacy: Callable[[], dict] | None = None):
        self.path = Path(path)
        self.identity = identity
        self.legacy = legacy  # the identity as an older pdbtool wrote it (tables by their files' checksums)
        self.every = every
        self.progress = Progress()
        self._lock = threading.Lock()
        self._last_write = time.monotonic()
        self._start = time.perf_counter()
        self._seconds_before = 0.0
        self.resumed = False

    # --- reading -------------------------------------------------------------------------------------------
    def load(self) -> Progress | None:
        """The progress recorded in the file, or None if there is no file; refuses one written for another
        search (CheckpointError, one line)."""
        data = read_checkpoint(self.path)
        if data is None:
            check_writable(self.path)  # say so now, not at the first record
            return None
        if "checksum" not in data:  # no proof of what it claims: a raised bound would resume to a wrong optimum
            raise CheckpointError(f"{self.path}: a checkpoint without a checksum (of an older pdbtool, or edited): "
                                  f"its progress cannot be trusted: remove it to start this search anew")
        if data["checksum"] != _checksum(data):
            raise CheckpointError(f"{self.path}: damaged checkpoint (its checksum does not match its contents: "
                                  f"edited or corrupted): remove it to start this search anew")
        mismatch = _mismatch(data["identity"], self.identity)
        if mismatch and self.legacy is not None and _mismatch(data["identity"], self.legacy()) is None:
            mismatch = None  # a checkpoint that named its tables by their files' checksums, the same files
        if mismatch:
            depth = _other_depth(data["identity"], self.identity)
            if depth is not None:  # the same search with another automaton: the option resumes it
                raise CheckpointError(f"{self.path}: a checkpoint of the pruning automaton of {depth} moves: resume "
                                      f"it with --fsm-depth {depth}, or remove it to start this search anew")
            raise CheckpointError(f"{self.path}: a checkpoint of {mismatch}: remove it to start this search anew")
        try:
            progress = Progress.from_json(data["progress"])
        except (KeyError, TypeError, ValueError) as exc:
            raise CheckpointError(f"{self.path}: damaged checkpoint ({exc}): remove it to start this search "
                                  f"anew") from None
        self.progress = progress
        self._seconds_before = progress.seconds
        self.resumed = True
        return progress

    @property
    def seconds(self) -> float:
        """Search time of this run and the earlier ones."""
        return self._seconds_before + time.perf_counter() - self._start

    # --- recording -----------------------------------------------------------------------------------------
    def iteration_started(self, bound: int, target: int) -> None:
        with self._lock:
            p = self.progress
            if p.target is None or p.bound != bound:
                p.bound, p.target = bound, target
                p.done, p.done_generated, p.done_expanded, p.done_next_bound = set(), 0, 0, INF

    def unit_done(self, unit_id: int, result: UnitResult) -> None:
        """Unit ``unit_id`` of the current iteration ended (``result``: its nodes and next bound; a unit that
        found the goal is not recorded, the search ends with it)."""
        if result.solution is not None or result.stopped:
            return
        with self._lock:
            p = self.progress
            if unit_id in p.done:
                return
            p.done.add(unit_id)
            p.done_generated += result.generated
            p.done_expanded += result.expanded
            p.done_next_bound = min(p.done_next_bound, result.next_bound)
            self._write_if_due()

    def iteration_done(self, bound: int, generated: int, expanded: int, next_bound: int) -> None:
        """The iteration of ``bound`` ended; ``generated`` and ``expanded`` count every iteration so far."""
        with self._lock:
            p = self.progress
            p.last, p.before = generated - p.generated, p.last
            p.iterations += 1
            p.bound, p.generated, p.expanded = next_bound, generated, expanded
            p.target, p.done, p.done_generated, p.done_expanded, p.done_next_bound = None, set(), 0, 0, INF
            self._write_if_due()

    def flush(self) -> None:
        with self._lock:
            self._write()

    def remove(self) -> None:
        """The search ended with its goal: the checkpoint is not needed any more."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            pass

    def _write_if_due(self) -> None:
        if time.monotonic() - self._last_write >= self.every:
            self._write()

    def _write(self) -> None:
        self.progress.seconds = self.seconds
        data = {"format": FORMAT, "version": VERSION, "identity": self.identity, "progress": self.progress.to_json()}
        data["checksum"] = _checksum(data)
        try:
            write_atomically(self.path, json.dumps(data, indent=1) + "\n")
        except OSError as exc:
            raise CheckpointError(f"{self.path}: cannot write: {exc.strerror or exc}") from None
        self._last_write = time.monotonic()


def _checksum(data: dict) -> str:
    """The xxhash64 of a checkpoint's identity and progress (as sorted JSON, which a round trip keeps)."""
    import xxhash

    body = json.dumps([data.get("identity"), data.get("progress")], sort_keys=True)
    return xxhash.xxh64(body.encode()).hexdigest()


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text``: a kill at any moment leaves the old file or the new one."""
    directory = path.parent if str(path.parent) else Path(".")
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise
    _fsync_dir(directory)  # the rename itself survives a crash of the machine


def read_checkpoint(path: Path) -> dict | None:
    """The checkpoint's JSON (None if there is no file); CheckpointError if it is not one."""
    from ..files import FileKindError, read_regular

    try:  # a FIFO or a device is refused at once (it would block or never end), a file past the cap unread
        text = read_regular(path, MAX_CHECKPOINT_BYTES, "checkpoint").decode("utf-8")
    except FileNotFoundError:
        return None
    except FileKindError as exc:
        raise CheckpointError(str(exc)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CheckpointError(f"{path}: cannot read: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a checkpoint of pdbtool solve")
    if data.get("version") != VERSION:
        raise CheckpointError(f"{path}: a checkpoint of version {fileformat.clip(data.get('version'))}, this pdbtool "
                              f"reads {VERSION}")
    if not isinstance(data.get("identity"), dict) or not isinstance(data.get("progress"), dict):
        raise CheckpointError(f"{path}: damaged checkpoint")
    return data


def check_writable(path: Path) -> None:
    from ..files import FileKindError, check_regular

    try:  # a directory or a device under the name would take no record: said now, not at the first one
        check_regular(path)
    except FileKindError as exc:
        raise CheckpointError(str(exc)) from None
    directory = path.parent if str(path.parent) else Path(".")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise CheckpointError(f"{path}: cannot write a checkpoint in {directory}")


ID_FIELD = "{id}"


def per_instance(spec) -> bool:
    """Whether ``--checkpoint`` names one file per instance: a pattern with ``{id}``, or a directory (one
    that exists, or a name that ends with a slash)."""
    spec = str(spec)
    return ID_FIELD in spec or spec.endswith(("/", os.sep)) or os.path.isdir(spec)


def instance_checkpoint(spec, ident) -> Path:
    """The checkpoint file of the instance ``ident`` under ``spec`` (:func:`per_instance`; else ``spec``).
    An id is used as it is when it is a plain file name, else made one (and a hash of it added, so that two
    ids never share a file)."""
    spec = str(spec)
    if not per_instance(spec):
        return Path(spec)
    name = str(ident)
    safe = "".join(c if c.isascii() and (c.isalnum() or c in "._-") else "_" for c in name)[:100]
    if safe != name or safe.startswith("."):
        import xxhash

        safe = f"{safe}-{xxhash.xxh64(name.encode()).hexdigest()[:8]}"
    if ID_FIELD in spec:
        return Path(spec.replace(ID_FIELD, safe))
    return Path(spec) / f"{safe}.ckpt"


def check_batch(path, instances, time_limit: float | None = None) -> None:
    """Refuse, before a batch starts, a checkpoint that is not of its first instance to solve (which resumes
    it): a batch that began with another instance would overwrite the checkpoint of a long search.  Also
    refuse a checkpoint that could not be written.  With one checkpoint per instance (:func:`per_instance`)
    each is checked as its instance starts: here only the directory, made if it is missing."""
    if per_instance(path):
        directory = instance_checkpoint(path, "x").parent
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CheckpointError(f"{directory}: cannot make the checkpoints' directory: {exc.strerror or exc}") \
                from None
        if not directory.is_dir() or not os.access(directory, os.W_OK | os.X_OK):
            raise CheckpointError(f"{directory}: cannot write checkpoints there")
        return
    solvable = [inst for inst in instances if inst.error is None]
    if len(solvable) > 1 and time_limit is not None:
        raise CheckpointError(f"{path}: one checkpoint file follows one search, and --time-limit keeps the "
                              f"checkpoint of each instance it stops: give a directory (--checkpoint DIR/) or a "
                              f"name with {ID_FIELD} (--checkpoint 'ckpt/{ID_FIELD}.json') for a batch")
    data = read_checkpoint(Path(path))
    if data is None:
        check_writable(Path(path))
        return
    have = (data["identity"].get("board"), data["identity"].get("state"))
    if not solvable:
        return
    key = [(inst.board.dims, [int(t) for t in inst.tiles]) for inst in solvable]
    if have == key[0]:
        return
    if have in key:
        inst = solvable[key.index(have)]
        raise CheckpointError(f"{path}: a checkpoint of instance {inst.id} ({inst.where}), but the first instance "
                              f"to solve is {solvable[0].id}: solve {inst.id} first (--resume with --output skips "
                              f"those done), or remove {path}")
    raise CheckpointError(f"{path}: a checkpoint of an instance that the instances to solve do not hold: "
                          f"remove it to start anew")


_WHAT = (("board", "another board"), ("goal", "another goal"), ("state", "another instance"),
         ("heuristic", "another heuristic"), ("options", "other search options"),
         ("tables", "other tables (their checksums differ)"))


def _mismatch(have: dict, want: dict) -> str | None:
    for key, what in _WHAT:
        if have.get(key) != want.get(key):
            shown = have.get(key)
            if key in ("heuristic", "board"):
                what += f" ({shown}, not {want.get(key)})"
            elif key == "state" and isinstance(shown, list):
                what += f" ({' '.join(map(str, shown))})"
            return what
    return None


def _fsm_depth(identity: dict) -> tuple[str, int] | None:
    """(the label without its automaton, the automaton's depth) of a search with the pruning automaton."""
    label, options = identity.get("heuristic"), identity.get("options")
    if not isinstance(label, str) or not isinstance(options, dict) or options.get("pruning") != "fsm":
        return None
    depth = options.get("fsm_depth", LEGACY_FSM_DEPTH)
    if not isinstance(depth, int):
        return None
    base = label.removesuffix(" fsm" if depth == LEGACY_FSM_DEPTH else f" fsm{depth}")
    return base, depth


def _other_depth(have: dict, want: dict) -> int | None:
    """The depth of ``have``'s automaton when it is the search ``want`` asks for but for that depth."""
    a, b = _fsm_depth(have), _fsm_depth(want)
    if a is None or b is None or a[0] != b[0] or a[1] == b[1]:
        return None
    rest = ("board", "goal", "state", "tables")
    return a[1] if all(have.get(k) == want.get(k) for k in rest) else None


# the automaton's depth of the checkpoints that do not name one (written before the depth was an option)
LEGACY_FSM_DEPTH = 12


def search_identity(board, state, label: str, options: dict, tables: list) -> dict:
    """What a checkpoint is written for (JSON-able): the board, goal and start state, the heuristic's label
    and its options (anything that changes the node counts), and the tables' identities."""
    return {"board": board.dims, "goal": [int(t) for t in board.goal_tiles], "state": [int(t) for t in state],
            "heuristic": label, "options": options, "tables": tables}


def tables_identity(tables, heuristic, legacy: bool = False) -> list:
    """The identity of a search's tables: per pattern table (``tables``: ``PatternTable`` objects, or None),
    its tiles, blank rule, encoding and the checksum of its payload (what the search reads: a table rebuilt
    byte for byte has the same, whatever its header's build time); then one checksum of the arrays of a
    dynamic heuristic's look-ups (``heuristic.tables``), if any.  ``legacy``: as older versions named the
    tables of files, by the checksum stored in the file (which covers the header)."""
    out = []
    for table in tables or ():
        entry = {"tiles": [int(t) for t in table.pattern.tiles], "blank": table.blank, "encoding": table.encoding}
        if legacy:
            entry["checksum"] = (_file_checksum(table.path) if table.path is not None
                                 else _arrays_checksum([table.values]))
        else:
            entry["payload"] = _arrays_checksum([table.values])
        out.append(entry)
    lookups = getattr(heuristic, "tables", None)
    if not tables and isinstance(lookups, (list, tuple)):  # pattern tables given as arrays
        arrays = [np.asarray(a) for a in lookups if isinstance(a, np.ndarray)]
        if arrays:
            out.append({"arrays": len(arrays), "checksum": _arrays_checksum(arrays)})
    elif lookups is not None and not isinstance(lookups, (list, tuple)):
        arrays = [v for _, v in sorted(vars(lookups).items()) if isinstance(v, np.ndarray)]
        if arrays:
            out.append({"dynamic": getattr(lookups, "name", None) or type(lookups).__name__,
                        "checksum": _arrays_checksum(arrays)})
    return out


def _file_checksum(path) -> str:
    """The xxhash64 that a table file stores in its last 8 bytes (checked when the table was loaded)."""
    with open(path, "rb") as f:
        f.seek(-8, os.SEEK_END)
        return f.read(8)[::-1].hex()


def _arrays_checksum(arrays) -> str:
    import xxhash

    digest = xxhash.xxh64()
    for a in arrays:
        a = np.ascontiguousarray(a)
        digest.update(str((a.dtype.str, a.shape)).encode())
        digest.update(a.view(np.uint8).reshape(-1).data if a.size else b"")
    return digest.hexdigest()


def _later_siblings(nb, start_blank: int, path, root_prev: int = -1, fsm=None, fsm_state=None) -> int:
    """The children generated after each node on ``path`` from the start, which a search that generates a
    node's children at once counts and one that generates them one at a time does not reach when the goal
    lies below ``path`` (the driver's ``_later_siblings``, for the top above a unit).  ``fsm`` and
    ``fsm_state``: a move-pruning automaton's table and its state per level of the top's stack, if the
    search has one (a move it prunes is not generated)."""
    pruning = fsm is not None and len(fsm) > 0
    later = 0
    blank = start_blank
    prev = root_prev
    for level, m_in in enumerate(path):
        for m in range(m_in + 1, 4):
            if nb[blank, m] >= 0 and m + prev != 3 and not (pruning and fsm[fsm_state[level], m] < 0):
                later += 1
        blank, prev = int(nb[blank, m_in]), m_in
    return later


def _walks_at_once(search: Search) -> bool:
    import numba

    from ..heuristics import hooks

    return hooks.walks_at_once(numba.typeof(search.state))


def checkpointed_search(heuristic, state, h0: int, recorder: Recorder, threads: int = 1,
                        deadline: float | None = None, node_limit: int | None = None,
                        progress: Callable[[int, int, int], None] | None = None, chunk: int = UNIT_CHUNK_NODES,
                        unit_nodes: int = UNIT_NODES, serial_below: int = SERIAL_BELOW,
                        search_units: Callable | None = None, report_every: float = 0.5,
                        frontier_per_thread: int = FRONTIER_PER_THREAD) -> ParallelOutcome:
    """IDA* from ``state`` (not the goal) that records its progress with ``recorder`` and resumes from what
    ``recorder.load()`` returns; see the module docstring.  ``threads`` > 1: each iteration's units are
    searched by ``search_units`` (default: threads here; called as :func:`pdbtool.search.parallel._search_units`
    with ``on_result(index, result)``).  An iteration after one of fewer than ``serial_below`` nodes is one
    unit; a larger one is cut into ``frontier_per_thread`` units per thread, or into units of about
    ``unit_nodes`` nodes by an estimate when that makes more (:func:`units_wanted`).  The limits apply to
    this run.  ``progress(bound, generated, expanded)`` between chunks.  The outcome's counts are those of
    the whole search, earlier runs included."""
    state = tuple(int(t) for t in state)
    chunk = max(1, min(chunk, UNIT_CHUNK_NODES))
    saved = recorder.load() or Progress(bound=int(h0))
    if not recorder.resumed:
        recorder.progress.bound = int(h0)
    elif saved.bound < h0 + saved.iterations or (saved.iterations == 0 and saved.bound != h0):
        # the first bound is h(start) and each iteration raises it: any other is not this search's
        raise CheckpointError(f"{recorder.path}: damaged checkpoint (bound {saved.bound} after {saved.iterations} "
                              f"iterations from h(start) {h0}): remove it to start this search anew")
    out = ParallelOutcome(generated=saved.generated, expanded=saved.expanded, iterations=saved.iterations)
    bound = saved.bound
    last, before = saved.last, saved.before
    at_once = None
    run_nodes = 0
    try:
        while True:
            tally = Tally(None if node_limit is None else node_limit - run_nodes, deadline)
            if tally.expired():
                out.timed_out = True
                return out
            p = recorder.progress
            if p.target is not None and p.bound == bound:
                target = p.target  # resume the iteration with the same units
            elif last < serial_below:
                target = 1
            else:
                target = units_wanted(threads, frontier_per_thread if threads > 1 else 1, unit_nodes, last, before)
            recorder.iteration_started(bound, target)
            out.iterations = recorder.progress.iterations + 1
            out.bound = bound
            p = recorder.progress
            done, base_generated, base_expanded = set(p.done), p.done_generated, p.done_expanded
            report = None
            if progress is not None:
                def report(bound=bound, base_generated=base_generated, base_expanded=base_expanded, tally=tally):
                    progress(bound, out.generated + base_generated + tally.generated,
                             out.expanded + base_expanded + tally.expanded)
            if threads > 1:
                moves, next_bound, stopped = _iteration_on_threads(
                    heuristic, state, bound, target, done, recorder, threads, tally, chunk, report, report_every,
                    search_units or _search_units)
            else:
                if at_once is None:
                    at_once = _walks_at_once(Search(heuristic, state))
                moves, next_bound, stopped = _iteration_in_order(heuristic, state, bound, target, done, recorder,
                                                                 tally, chunk, report, at_once)
            run_nodes += tally.generated
            out.generated += base_generated + tally.generated
            out.expanded += base_expanded + tally.expanded
            if moves is not None:
                out.moves = list(moves)
                recorder.remove()
                return out
            if stopped:
                out.timed_out = True
                return out
            next_bound = min(next_bound, recorder.progress.done_next_bound)
            if next_bound >= INF:
                raise RuntimeError("the search space was exhausted without reaching the goal (a bug)")
            last, before = out.generated - recorder.progress.generated, last
            recorder.iteration_done(bound, out.generated, out.expanded, next_bound)
            out.finished.append((bound, out.generated, out.expanded))
            bound = next_bound
            if progress is not None:
                progress(bound, out.generated, out.expanded)
    finally:
        if out.moves is None:
            recorder.flush()


def _iteration_in_order(heuristic, state, bound, target, done, recorder, tally, chunk, report, at_once):
    """One iteration on this thread: the top cut at the depth of ``target`` units, each unit searched when
    the top reaches its root (those in ``done`` are skipped: their nodes are in the tally already).
    Returns (the moves of a solution or None, the next bound of the top and the units searched, stopped)."""
    if target <= 1:
        depth = 0
    else:
        units, top = split_iteration(heuristic, state, bound, target)
        depth = len(units[0].path) if units else 0
        if not units:  # the goal lies in the top, or the tree ends above the cut
            tally.add(top.generated, top.expanded)
            return top.solution, top.next_bound, False
    if depth == 0:
        if 0 in done:
            return None, INF, False
        result = search_unit(heuristic, state, WorkUnit((), bound), chunk, tally, report)
        if result is None:
            return None, INF, True
        recorder.unit_done(0, result)
        return result.solution, result.next_bound, False
    top = Search(heuristic, state, bound=bound, one_iteration=True, cut=depth)
    next_bound = INF
    index = 0
    counted = (0, 0)

    def count_top():
        nonlocal counted
        tally.add(top.generated - counted[0], top.expanded - counted[1])
        counted = (top.generated, top.expanded)

    while True:
        status = top.step(INF)
        count_top()
        if status == FOUND:
            return top.moves(), INF, False
        if status == ITERATION_DONE:
            return None, min(next_bound, top.next_bound), False
        if status != CUT:
            raise RuntimeError(f"the top of an iteration returned status {status} (a bug)")
        if index not in done:
            path = tuple(top.moves())
            result = search_unit(heuristic, state, WorkUnit(path, bound), chunk, tally, report)
            if result is None:
                return None, INF, True
            if result.solution is not None:
                if at_once:  # the top counted the later siblings of the nodes above the unit's root
                    blank = state.index(0)
                    later = _later_siblings(heuristic.board.neighbours(), blank, path, -1,
                                            getattr(top, "fsm", None), getattr(top, "fsm_state", None))
                    tally.add(-later, 0)
                return result.solution, INF, False
            next_bound = min(next_bound, result.next_bound)
            recorder.unit_done(index, result)
        index += 1


def _iteration_on_threads(heuristic, state, bound, target, done, recorder, threads, tally, chunk, report,
                          report_every, search_units):
    """One iteration's units (but those in ``done``) searched by ``search_units`` on ``threads``."""
    units, top = split_iteration(heuristic, state, bound, target) if target > 1 else \
        ([WorkUnit((), bound)], UnitResult(0, 0, INF, None))
    tally.add(top.generated, top.expanded)
    if top.solution is not None:
        return top.solution, INF, False
    ids = [i for i in range(len(units)) if i not in done]
    todo = [units[i] for i in ids]

    def on_result(index, result):
        recorder.unit_done(ids[index], result)

    results = search_units(heuristic, state, todo, threads, tally, chunk, report, report_every,
                           on_result=on_result) if todo else []
    found = sorted((i, r.solution) for i, r in results if r.solution is not None)
    if found:
        return found[0][1], INF, False
    if len(results) < len(todo):
        return None, INF, True
    return None, min([top.next_bound] + [r.next_bound for _, r in results]), False


__all__ = ["Recorder", "Progress", "CheckpointError", "checkpointed_search", "search_identity", "tables_identity",
           "check_batch", "read_checkpoint", "per_instance", "instance_checkpoint",
           "write_atomically", "UNIT_NODES"]
