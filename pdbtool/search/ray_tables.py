"""The tables on the nodes of a Ray cluster: each node's own cache, filled from the driver when needed.

A search needs its table files in a cache directory of the node it runs on.  Before any work starts, the
driver names every file its solver memory-maps (:class:`TableFileInfo`: name, size, the file's stored
xxhash64) and asks each node, in a task pinned to it, which of them its cache lacks: a file is taken as
present only if its size and stored digest match and the checksum of the whole file holds (the check that
:func:`pdbtool.tables.fileformat.checksum_ok` makes).  A file some node lacks is put into Ray's object
store once (from a memory map of the driver's file, so the driver holds no copy of its own); each node
lacking it fetches the object and writes it into its cache the way the cache writes a built table: under
the table's lock (:meth:`pdbtool.tables.cache.TableCache.lock`), into ``NAME.tmp-PID``, synced, renamed
over ``NAME``, the directory synced; the checksum is checked again after the rename.

The workers of a node then load the tables through the cache, which memory-maps them: they share one copy
in the node's page cache, and no worker holds a private one.  A node that joins after the start finds no
copy and builds the table itself (the cache's get-or-build), which costs the build time once per node.
The bytes are shipped rather than built on each node because a large table takes minutes of CPU to
build and seconds to cross a network.

Every wait for the nodes has a deadline (``timeout``); a node that does not answer in time, or a task that
fails, is a one-line :class:`ClusterError`.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..tables.cache import TableCache
from ..tables.fileformat import checksum_ok
from .ray_search import WAIT_SECONDS, ClusterError, one_line, wait

_DIGEST = struct.Struct("<Q")  # the file's last 8 bytes: xxhash64 of every byte before them
STAGE_SECONDS = 900.0  # longest wait for the nodes' checks of their caches, then for their copies


@dataclass(frozen=True)
class TableFileInfo:
    """What identifies one table file across machines: its name in the cache, its size and stored digest."""

    name: str
    size: int
    digest: int


def describe(path: str | os.PathLike) -> TableFileInfo:
    """The :class:`TableFileInfo` of a (checked) table file."""
    path = Path(path)
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        f.seek(size - _DIGEST.size)
        digest = _DIGEST.unpack(f.read(_DIGEST.size))[0]
    return TableFileInfo(path.name, size, digest)


def holds(cache_dir: str | os.PathLike | None, info: TableFileInfo) -> bool:
    """Whether the cache at ``cache_dir`` (None: this machine's default) holds a sound copy of ``info``."""
    path = TableCache(cache_dir).dir / info.name
    try:
        if path.stat().st_size != info.size or describe(path).digest != info.digest:
            return False
        return checksum_ok(path)
    except OSError:
        return False


def missing_tables(cache_dir: str | None, infos: list[TableFileInfo]) -> tuple[str, list[str]]:
    """(this node's Ray id, the names of ``infos`` its cache lacks); run on the node."""
    import ray

    return ray.get_runtime_context().get_node_id(), [i.name for i in infos if not holds(cache_dir, i)]


def receive_table(cache_dir: str | None, info: TableFileInfo, holder: list) -> bool:
    """Write the table whose bytes are the object ``holder[0]`` into this node's cache; run on the node.

    Returns False if a sound copy appeared meanwhile (another driver shipped it), True once written."""
    import ray

    cache = TableCache(cache_dir)
    path = cache.dir / info.name
    with cache.lock(path):
        if holds(cache_dir, info):
            return False
        payload = ray.get(holder[0])   # a read-only view of the node's object store
        tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
        try:
            with open(tmp, "wb") as f:
                f.write(memoryview(payload))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        fd = os.open(cache.dir, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    if not holds(cache_dir, info):
        raise OSError(f"{path}: the shipped table fails its checksum")
    return True


@dataclass
class StageReport:
    """What staging the tables did: nodes asked, files each lacked, bytes put into the object store."""

    nodes: int = 0
    files: int = 0
    shipped: dict[str, list[str]] = field(default_factory=dict)  # node id -> names written there
    bytes_put: int = 0
    seconds: float = 0.0
    here: bool = False  # the driver's node was not asked: its cache holds the very files the driver checked

    def describe(self) -> str:
        copies = sum(len(v) for v in self.shipped.values())
        if not self.files:
            return f"tables: none needed on the {self.nodes} node(s)"
        if not copies:
            checked = "this node's checked when loaded here, " if self.here else ""
            return (f"tables: {self.files} file(s) already in the cache of each of {self.nodes} node(s) "
                    f"({checked}{self.seconds:.1f} s to check)")
        return (f"tables: {copies} copy(ies) shipped to {len(self.shipped)} of {self.nodes} node(s), "
                f"{self.bytes_put / 2**20:.1f} MiB put into the object store ({self.seconds:.1f} s)")


def cluster_nodes(ray) -> list[str]:
    """The ids of the live nodes that offer CPUs."""
    return [n["NodeID"] for n in ray.nodes() if n.get("Alive") and n.get("Resources", {}).get("CPU", 0) > 0]


def _put_file(ray, path: Path):
    """A reference to the bytes of ``path`` in the object store (copied there from a memory map)."""
    with open(path, "rb") as f:
        mapped = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            view = np.frombuffer(mapped, dtype=np.uint8)
            ref = ray.put(view)
            del view  # the map cannot close while a view of it exists
        finally:
            mapped.close()
    return ref


def _gather(ray, refs: list, nodes: list[str], what: str, timeout: float) -> list:
    """The results of the tasks ``refs`` (one on each of ``nodes``), waited for ``timeout`` seconds at
    most; a node that does not answer in time, or a task that fails, is a one-line ClusterError."""
    from ray.exceptions import RayError

    late, end = list(refs), time.monotonic() + timeout
    while late:  # in short waits, so that Ctrl-C is seen
        _, late = wait(ray, late, max(0.0, min(WAIT_SECONDS, end - time.monotonic())), num_returns=len(late))
        if time.monotonic() >= end:
            break
    if late:
        names = ", ".join(nodes[refs.index(r)][:12] for r in late[:3]) + (", ..." if len(late) > 3 else "")
        raise ClusterError(f"staging the tables: {len(late)} of {len(refs)} node(s) did not {what} within "
                           f"{timeout:.0f} s (node {names})")
    try:
        return ray.get(refs, timeout=timeout)
    except RayError as exc:
        raise ClusterError(f"staging the tables: {one_line(exc)}") from None


def stage_tables(ray, paths: list[Path], cache_dir: str | None, checked_here: bool = False,
                 timeout: float = STAGE_SECONDS) -> StageReport:
    """Make every live node's cache at ``cache_dir`` (None: each node's default) hold the files ``paths``.

    ``checked_here``: this process loaded ``paths`` through its cache, checksums checked; when they are the
    files of ``cache_dir`` on this machine, the driver's node is not asked again (a local instance then
    starts its search without a task reading every table).  ``timeout``: the deadline of each stage (the
    nodes' checks, then their copies).  Ray's errors (a full object store, a node gone) are one-line
    ClusterErrors."""
    from ray.exceptions import RayError

    try:
        return _stage(ray, paths, cache_dir, checked_here, timeout)
    except RayError as exc:
        raise ClusterError(f"staging the tables: {one_line(exc)}") from None


def _stage(ray, paths: list[Path], cache_dir: str | None, checked_here: bool, timeout: float) -> StageReport:
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    start = time.perf_counter()
    unique = list(dict.fromkeys(Path(p) for p in paths))
    infos = {info.name: (p, info) for p, info in ((p, describe(p)) for p in unique)}
    report = StageReport(files=len(infos))
    nodes = cluster_nodes(ray)
    report.nodes = len(nodes)
    here = ray.get_runtime_context().get_node_id()
    if checked_here and here in nodes and all(p.parent.resolve() == TableCache(cache_dir).dir.resolve()
                                              for p, _ in infos.values()):
        nodes.remove(here)
        report.here = True
    if not infos or not nodes:
        report.seconds = time.perf_counter() - start
        return report

    def on(node):
        return NodeAffinitySchedulingStrategy(node, soft=False)

    check = ray.remote(num_cpus=0)(missing_tables)
    answers = _gather(ray, [check.options(scheduling_strategy=on(n)).remote(cache_dir, [i for _, i in infos.values()])
                            for n in nodes], nodes, "check their caches", timeout)
    objects, writes = {}, []
    receive = ray.remote(num_cpus=0)(receive_table)
    for node, missing in answers:
        for name in missing:
            path, info = infos[name]
            if name not in objects:  # put once, whatever the number of nodes lacking it
                objects[name] = _put_file(ray, path)
                report.bytes_put += info.size
            writes.append((node, name, receive.options(scheduling_strategy=on(node)).remote(
                cache_dir, info, [objects[name]])))
    written = _gather(ray, [ref for _, _, ref in writes], [node for node, _, _ in writes], "write the tables",
                      timeout)
    for (node, name, _), wrote in zip(writes, written):
        if wrote:
            report.shipped.setdefault(node, []).append(name)
    report.seconds = time.perf_counter() - start
    return report


__all__ = ["TableFileInfo", "StageReport", "describe", "holds", "stage_tables", "cluster_nodes", "STAGE_SECONDS"]
