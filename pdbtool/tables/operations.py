"""What the commands do to the tables of a partition, as library calls: build them, convert them, find
their files, load them for a search.

Every function takes a :class:`pdbtool.tables.sharing.TablePlan` (:func:`plan_tables`), so all of them agree
on which patterns have a table of their own and which are read through a board symmetry.
"""

from __future__ import annotations

import resource
import time
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Iterator

from ..errors import PdbtoolError
from .cache import TableCache, table_loader
from .partitions import Catalogue, Partition
from .ranking import TilePattern
from .sharing import SharedTable, TablePlan, plan_tables
from .table import PatternTable

# per pattern: a context that yields the builder's per-layer callback (depth, states), e.g. a progress bar
LayerProgress = Callable[[TilePattern], AbstractContextManager]


@dataclass
class Outcome:
    """What became of one pattern's table: ``record`` is what ``--json`` prints; ``shared`` is set when the
    pattern has no table of its own (it is looked up in another pattern's table)."""

    pattern: TilePattern
    shared: SharedTable | None
    record: dict


def partition_plan(partition: Partition | Catalogue, blank: str) -> TablePlan:
    """The tables of a partition's patterns (of a catalogue's: each distinct pattern of its partitions once)."""
    return plan_tables(partition.patterns, blank)


def _shared_record(p: TilePattern, via: SharedTable, blank: str) -> dict:
    return {"tiles": list(p.tiles), "board": p.board.dims, "blank": blank, "entries": p.entries, "built": False,
            "shared_with": list(via.source.tiles), "symmetry": via.symmetry.name}


def build_tables(cache: TableCache, plan: TablePlan, encoding: str = "byte", params: dict | None = None,
                 threads: int | None = None, force: bool = False,
                 progress: LayerProgress | None = None) -> Iterator[Outcome]:
    """Build (or find cached) the table of each pattern that has one of its own, one at a time (so that a
    partition's peak memory is its largest build); yield an outcome per pattern, shared ones included."""
    from .encodings import normalize_params

    blank = plan.blank
    params = normalize_params(encoding, params)
    for p, via in plan:
        if via is not None:
            yield Outcome(p, via, _shared_record(p, via, blank))
            continue
        start = time.perf_counter()
        usage = resource.getrusage(resource.RUSAGE_SELF)
        built: list = []
        converted: list[dict] = []
        with (progress(p) if progress else nullcontext()) as update:
            # the callbacks run within this call, so the loop's lists are the right ones
            table = cache.get(p, blank, threads=threads, force=force, progress=update, encoding=encoding,
                              params=params,
                              on_build=lambda t, r: built.append(r.seconds),  # noqa: B023
                              on_convert=lambda t, info: converted.append(info))  # noqa: B023
        stats = table.stats()
        seconds = built[0] if built else time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = after.ru_utime + after.ru_stime - usage.ru_utime - usage.ru_stime
        record = {"tiles": list(p.tiles), "board": p.board.dims, "blank": blank, "entries": table.entries,
                  "built": bool(built), "seconds": round(seconds, 3), "cpu_seconds": round(cpu, 3),
                  "peak_rss_bytes": after.ru_maxrss * 1024,  # the process's peak so far (Linux: KiB)
                  "max": stats["max"], "mean": round(stats["mean"], 4), "file": str(table.path),
                  "encoding": encoding, "encoding_params": params, "converted": bool(converted),
                  "bits_per_entry": round(stats["bits_per_entry"], 4)}
        if "saturated" in stats:
            record["saturated"] = stats["saturated"]
        del table  # one table mapped at a time
        yield Outcome(p, None, record)


def _check_compact(encoding: str) -> None:
    if encoding == "byte":
        raise PdbtoolError("convert makes compact tables from byte tables: choose --encoding other than byte")


def _convert(cache: TableCache, source: PatternTable, encoding: str, params: dict, threads: int | None,
             output: Path | None) -> Outcome:
    """Re-encode one byte table into the cache (under its name's lock) or to ``output``."""
    from .table import convert_table

    if source.encoding != "byte":
        raise PdbtoolError(f"{source.path}: a {source.encoding} table; convert starts from a byte table")
    p = source.pattern
    made: dict = {}

    def write(tmp: Path) -> None:
        table, extra = convert_table(source, encoding, params, threads)
        table.save(tmp, extra)
        made.update(info=extra["conversion"], payload_bytes=int(table.values.nbytes))

    start = time.perf_counter()
    if output is not None:
        target = cache.write_atomically(output, write)
    else:
        target = cache.path_for(p, source.blank, encoding, params)
        cache.get_or_build(target, table_loader(p, source.blank, encoding, params), write, force=True)
    info = made["info"]
    record = {"tiles": list(p.tiles), "board": p.board.dims, "blank": source.blank, "encoding": encoding,
              "encoding_params": params, "entries": p.entries, "seconds": round(time.perf_counter() - start, 3),
              "payload_bytes": made["payload_bytes"], "bits_per_entry": info["bits_per_entry"],
              "file": str(target), "source": str(source.path)}
    for key in ("saturated", "nonzero", "mean_loss"):
        if key in info:
            record[key] = info[key]
    return Outcome(p, None, record)


def convert_file(cache: TableCache, path: str | Path, encoding: str, params: dict, threads: int | None = None,
                 output: str | Path | None = None) -> Outcome:
    """Re-encode the byte table file ``path`` into the cache, or to ``output``."""
    from .encodings import check_blank
    from .integrity import load_checked

    _check_compact(encoding)
    source = load_checked(path, record=False)
    check_blank(encoding, source.blank)
    output = Path(output) if output else None
    if output is not None and output.exists() and output.samefile(path):
        raise PdbtoolError(f"{output}: the table being converted: give --output another file")
    return _convert(cache, source, encoding, params, threads, output)


def convert_tables(cache: TableCache, plan: TablePlan, encoding: str, params: dict, threads: int | None = None,
                   build_command: str = "pdbtool build") -> Iterator[Outcome]:
    """Re-encode the cached byte table of each pattern that has one of its own (a shared pattern is read
    from its source's encoded table, so it needs none).  Every byte table must be cached: the error names
    ``build_command`` as the way to make it."""
    from .encodings import check_blank

    _check_compact(encoding)
    check_blank(encoding, plan.blank)
    sources: list = []
    for p, via in plan:
        if via is not None:
            sources.append((p, via, None))
            continue
        table = cache.load_valid(p, plan.blank)
        if table is None:
            raise PdbtoolError(f"byte table {{{p}}} ({plan.blank}) is not in the cache {cache.dir}: "
                               f"run '{build_command} --blank {plan.blank}' first")
        sources.append((p, None, table))
    for p, via, table in sources:
        if via is not None:
            record = _shared_record(p, via, plan.blank)
            del record["built"]
            record.update(encoding=encoding, converted=False)
            yield Outcome(p, via, record)
        else:
            yield _convert(cache, table, encoding, params, threads, None)


@dataclass
class CachedFile:
    """Where the cache keeps one pattern's table, and whether it is there."""

    pattern: TilePattern
    path: Path
    shared: SharedTable | None

    @property
    def present(self) -> bool:
        return self.path.exists()

    @property
    def not_made(self) -> bool:
        """A shared pattern's table, absent: ``build`` does not make it, and nothing needs it."""
        return self.shared is not None and not self.present


def cached_files(cache: TableCache, plan: TablePlan, encoding: str = "byte",
                 params: dict | None = None) -> list[CachedFile]:
    """The cache's file of each pattern's table (what ``inspect`` and ``verify`` of a partition read)."""
    return [CachedFile(p, cache.path_for(p, plan.blank, encoding, params), via) for p, via in plan]


def search_tables(cache: TableCache, plan: TablePlan, encoding: str = "byte", params: dict | None = None,
                  threads: int | None = None) -> list[PatternTable]:
    """Per pattern, the table it is looked up in (its source's, when shared), each loaded or built once."""
    loaded = {p: cache.get(p, plan.blank, threads=threads, encoding=encoding, params=params) for p in plan.stored}
    return [loaded[plan.source(p)] for p in plan.patterns]
