"""`pdbtool solve --ray`: a local Ray cluster (2 CPUs, no dashboard, a 100 MB object store, a temporary
directory) started once for the module; its results compared with the serial search's."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from pdbtool.cli.main import cli
from pdbtool.puzzle.board import Board
from pdbtool.puzzle.instances import load_instances
from pdbtool.search.solver import SolveOptions, solve_batch

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
KORF100 = EXAMPLES / "korf100.txt"
TIMINGS = ("seconds", "cpu_seconds", "wall_seconds", "total_seconds", "nodes_per_second")

try:
    import ray
except ImportError:
    ray = None
needs_ray = pytest.mark.skipif(ray is None, reason="Ray is not installed (pip install 'pdbtool[ray]'; "
                                                    "make test installs it)")


def run(*args):
    return CliRunner().invoke(cli, ["solve", *map(str, args)])


def test_ray_missing_is_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    result = run(EXAMPLES / "8puzzle.txt", "--heuristic", "manhattan", "--ray")
    assert result.exit_code == 1
    assert result.stderr.strip().splitlines() == \
        ["pdbtool: --ray needs Ray, which is not installed: pip install 'pdbtool[ray]'"]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    if ray is None:
        pytest.skip("Ray is not installed")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(num_cpus=2, include_dashboard=False, object_store_memory=100 * 2**20,
             _temp_dir=str(tmp_path_factory.mktemp("ray")), logging_level="warning")
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ray-cache")


@pytest.fixture(scope="module")
def korf10(tmp_path_factory):
    path = tmp_path_factory.mktemp("korf") / "korf10.txt"
    lines = [ln for ln in KORF100.read_text().splitlines() if ln.strip() and not ln.startswith("#")]
    path.write_text("\n".join(lines[:10]) + "\n")
    return path


def without_timings(rows):
    return [{k: v for k, v in row.items() if k not in TIMINGS} for row in rows]


@needs_ray
@pytest.mark.parametrize("fmt", ["json", "csv", "text"])
def test_batch_output_equals_one_job(cluster, cache_dir, korf10, fmt):
    args = [korf10, "--partition", "15-5-5-5", "--cache-dir", cache_dir, "--format", fmt]
    serial = run(*args, "--jobs", "1")
    assert serial.exit_code == 0, serial.output
    on_ray = run(*args, "--ray")
    assert on_ray.exit_code == 0, on_ray.output
    if fmt == "json":
        rows = [json.loads(line) for line in on_ray.stdout.splitlines()]
        assert [r.get("id") for r in rows] == [str(i) for i in range(1, 11)] + [None]
        assert without_timings(rows) == without_timings([json.loads(ln) for ln in serial.stdout.splitlines()])
    elif fmt == "csv":
        def table(text):
            head, *rows = [ln.split(",") for ln in text.splitlines()]
            keep = [i for i, k in enumerate(head) if k not in TIMINGS]
            return [[row[i] for i in keep] for row in rows]

        assert table(on_ray.stdout) == table(serial.stdout)
    else:
        def lines(text):  # the instance lines without their seconds, the summary without its timings
            out = []
            for ln in text.splitlines():
                ln = re.sub(r" +[0-9.]+ s  moves:", " moves:", ln)
                if ln.startswith("search "):
                    continue
                out.append(ln)
            return out

        assert lines(on_ray.stdout) == lines(serial.stdout)
        assert len(lines(on_ray.stdout)) == 13  # ten instances and three lines of summary
        assert "expanded        86,538 moves: 12 11 6" in lines(on_ray.stdout)[0]


@needs_ray
def test_batch_reports_bad_lines_in_place(cluster, cache_dir, tmp_path):
    src = tmp_path / "mixed.txt"
    src.write_text("a 1 2 3 4 0 5 6 7 8\nb 1 2 3 4 5\nc 1 2 3 4 5 6 0 7 8\n")
    items = load_instances(str(src), Board(3, 3))
    options = SolveOptions(heuristic="manhattan", cache_dir=str(cache_dir))
    from pdbtool.search import ray_backend

    got = list(ray_backend.solve_batch(items, options))
    want = list(solve_batch(items, options))
    assert [(r.id, r.length, r.error, r.nodes_generated) for r in got] == \
        [(r.id, r.length, r.error, r.nodes_generated) for r in want]
    assert got[1].error is not None and got[0].solved and got[2].solved


@needs_ray
def test_tables_are_shipped_once_and_checked(cluster, cache_dir, tmp_path):
    """A node whose cache lacks the tables gets them through the object store; a sound copy is kept;
    a damaged copy is replaced."""
    from pdbtool.search.ray_backend import driver_solver
    from pdbtool.search.ray_tables import describe, holds, stage_tables

    _, files = driver_solver(Board(4, 4), SolveOptions(partition="15-5-5-5", cache_dir=str(cache_dir)))
    assert len(files) == 3  # 5-5-5 with reflection: three files
    node_dir = tmp_path / "node-cache"
    first = stage_tables(cluster, files, str(node_dir))
    assert first.nodes == 1 and sum(len(v) for v in first.shipped.values()) == 3
    assert first.bytes_put == sum(f.stat().st_size for f in files)
    for f in files:
        assert (node_dir / f.name).read_bytes() == f.read_bytes()
        assert holds(str(node_dir), describe(f))
    again = stage_tables(cluster, files, str(node_dir))
    assert again.shipped == {} and again.bytes_put == 0
    damaged = node_dir / files[0].name
    data = bytearray(damaged.read_bytes())
    data[len(data) // 2] ^= 0xFF
    damaged.write_bytes(bytes(data))
    assert not holds(str(node_dir), describe(files[0]))
    third = stage_tables(cluster, files, str(node_dir))
    assert sum(len(v) for v in third.shipped.values()) == 1 and third.bytes_put == files[0].stat().st_size
    assert damaged.read_bytes() == files[0].read_bytes()
    assert not list(node_dir.glob("*.tmp-*")) and not list(node_dir.glob("*.lock"))
