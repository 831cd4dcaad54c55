"""The pieces of bench/bench_msa.py that the figures of the MSA section rest on: the limited runner reports
what stopped a run and what it used, PA-Star's output and cost matrix are read correctly, a cost
disagreement is found and explained, and the report renders what the result files hold."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import _limited  # noqa: E402
import _msa_data  # noqa: E402
import bench_msa  # noqa: E402
from peers import pastar  # noqa: E402

_spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)

PASTAR_OUTPUT = """Starting pairwise alignments... done!
Phase 1 - init heuristic: 00:00.013 s
Performing search with Parallel A-Star (v1.1-downloaded)
Running PA-Star with: 2 threads, Full-Zorder hash, 12 shift.
Phase 2: PA-Star running time: 01:02.500 s
Final Score: (3 2 3)\tg - 201 (h - 0 f - 201)
Similarity: 25.00%

AC-G
A--G
ACCG
Phase 3 - backtrace: 00:00.000 s
Total nodes count:
tid 0\tOpenList: 10\tClosedList: 20\tReopen: 1\tTotal: 31\t(Total Processed: 100)
tid 1\tOpenList: 5\tClosedList: 7\tReopen: 0\tTotal: 12\t(Total Processed: 40)
Sum\tOpenList: 15\tClosedList: 27\tReopen: 1\tTotal: 43\t(Total Processed: 140)
"""


def test_pastar_output_is_parsed():
    got = pastar.parse(PASTAR_OUTPUT)
    assert got["cost"] == 201 and got["goal"] == [3, 2, 3]
    assert got["search_seconds"] == 62.5 and got["heuristic_seconds"] == 0.013
    assert (got["closed"], got["reopened"], got["generated"], got["open_left"]) == (27, 1, 140, 15)
    assert got["alignment"] == ["AC-G", "A--G", "ACCG"]
    assert pastar.parse("Running fatal error: std::bad_alloc\n") == {}


def test_pastar_matrix_is_read_from_its_source_and_scores_as_its_pair_cost(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    (src / "Cost.cpp").write_text(
        "Cost::Cost()\n{\n    set_cost_pam250();\n}\n\nvoid Cost::set_cost_pam250()\n{\n"
        "    cost_matrix[A][A] = 15;\n    cost_matrix[A][C] = cost_matrix[C][A] = 19;\n"
        "    cost_matrix[C][C] = 5;\n    GapCost = 30;\n    GapGap = 30;\n}\n\nvoid Cost::set_cost_nuc()\n{\n"
        "    cost_matrix[A][A] = 0;\n    GapCost = 2;\n}\n")
    matrix = pastar.cost_matrix(tmp_path)
    assert matrix[("A", "C")] == matrix[("C", "A")] == 19 and matrix[("A", "A")] == 15
    # columns: A/A 15, C/- 30, -/- 30 (PA-Star charges two gaps too), C/C 5
    assert pastar.alignment_cost(["AC-C", "A--C"], matrix) == 15 + 30 + 30 + 5


def test_a_cost_disagreement_is_found_and_scored_with_the_peer_matrix():
    matrix = {("A", "A"): 1, ("A", "C"): 4, ("C", "A"): 4, ("C", "C"): 1, ("GapCost", "GapCost"): 3,
              ("GapGap", "GapGap"): 3}
    records = [{"instance": "x", "solver": "pdbtool", "heuristic": "threeway", "threads": 1, "solved": True,
                "cost": 5, "alignment": ["AC", "AA"]},
               {"instance": "x", "solver": "msa_astar", "heuristic": None, "threads": 1, "solved": True, "cost": 6},
               {"instance": "y", "solver": "pdbtool", "heuristic": "threeway", "threads": 1, "solved": True, "cost": 7},
               {"instance": "y", "solver": "msa_astar", "heuristic": None, "threads": 1, "solved": False}]
    found = bench_msa.cost_check(records, matrix)
    assert [d["instance"] for d in found] == ["x"]
    assert found[0]["pastar_cost_of_pdbtool_alignment"] == 1 + 4


def test_the_limited_runner_tells_what_stopped_a_run():
    spin = [sys.executable, "-c", "while True: pass"]
    by_cpu = _limited.run(spin, time_limit=60, cpu_limit=1)
    assert by_cpu.timed_out and 0.5 <= by_cpu.cpu_seconds < 10
    grab = [sys.executable, "-c", "x = bytearray(400 << 20)"]
    refused = _limited.run(grab, memory_bytes=200 << 20)
    assert refused.returncode != 0 and "MemoryError" in refused.stderr and not refused.timed_out
    fine = _limited.run([sys.executable, "-c", "x = bytearray(64 << 20); x[::4096] = b'1' * len(x[::4096])"])
    assert fine.returncode == 0 and fine.peak_rss_bytes >= 64 << 20


def test_synthetic_families_are_the_same_for_a_seed(tmp_path):
    a, _ = _msa_data.synthetic(["4x30"], 3, tmp_path / "a")
    b, _ = _msa_data.synthetic(["4x30"], 3, tmp_path / "b")
    assert a[0].path.read_text() == b[0].path.read_text() and a[0].k == 4
    with pytest.raises(SystemExit):
        _msa_data.parse_family("1x30")


def test_the_report_renders_the_records_with_their_runs(tmp_path):
    meta = {"date": "2026-01-02T03:04:05Z", "commit": "0123456789abcdef", "command": "python bench/bench_msa.py",
            "machine": {"cores": 2, "memory_bytes": 24 << 30}, "load_average_before": [0.5, 0, 0],
            "load_average_after": [0.6, 0, 0], "wall_seconds": 3.0,
            "settings": {"time_limit_cpu_seconds": 120, "memory_bytes": 16 << 30}}
    base = {"group": "g", "k": 5, "lengths": [50, 60, 55, 52, 58], "limit_cpu_seconds": 120, "threads": 1,
            "load_before": [0.5, 0, 0]}
    records = [dict(base, instance="i1", solver="pdbtool", heuristic="threeway", solved=True, cost=100, expanded=10,
                    process_cpu_seconds=2.0, cpu_seconds=0.5, max_rss_bytes=150 << 20),
               dict(base, instance="i1", solver="pdbtool", heuristic="pairwise", solved=True, cost=100,
                    expanded=80, process_cpu_seconds=3.0, max_rss_bytes=150 << 20),
               dict(base, instance="i1", solver="msa_astar", heuristic=None, solved=True, cost=100,
                    cpu_seconds=9.0, peak_bytes=40 << 20)]
    data = {"settings": {"time_limit_cpu_seconds": 120, "memory_bytes": 16 << 30, "machine_memory_bytes": 24 << 30},
            "runs": [meta], "records": records, "cost_disagreements": []}
    import json

    results = tmp_path / "results"
    results.mkdir()
    (results / "msa_balibase.json").write_text(json.dumps(data))
    page = report.render(results, tmp_path / "performance-msa.md", draw=False)
    section = page.split("## Multiple sequence alignment")[1]
    assert "| 120 | 1 of 1 | 1 of 1 | 1 | 2.0 | 0.5 | 9.0 | 4.50 | 18.00 |" in section
    assert "80 against 10 expanded nodes, 8.0 times fewer" in section
    assert "`python bench/bench_msa.py`" in section and "Not measured yet" in section   # side, synthetic


def test_the_report_shows_the_longest_instances(tmp_path):
    import json

    meta = {"date": "2026-01-02T03:04:05Z", "commit": "0123456789abcdef",
            "command": "python bench/bench_msa_longest.py x.fasta", "machine": {"cores": 2, "memory_bytes": 24 << 30},
            "load_average_before": [0.5, 0, 0], "load_average_after": [0.6, 0, 0], "wall_seconds": 3.0,
            "settings": {"time_limit_cpu_seconds": 240, "memory_bytes": 15 << 30}}
    trail = [{"cpu_seconds": 30.0 + 10 * i, "f": 1000 + i, "expanded": 10 * i, "stored": 20 * i,
              "max_rss_bytes": 1 << 30} for i in range(5)]
    record = {"instance": "x", "k": 5, "lengths": [800, 828], "table_cpu_seconds": 26.7, "table_bytes": 3 << 29,
              "h_start": 990, "upper_bound": 1100, "solved": False, "stopped": "cpu", "lower_bound": 1004,
              "expanded": 40, "stored": 80, "cpu_seconds": 240.2, "max_rss_bytes": 2 << 30, "progress": trail,
              "load_before": [0.5, 0, 0], "load_after": [0.6, 0, 0]}
    results = tmp_path / "results"
    results.mkdir()
    (results / "msa_longest.json").write_text(json.dumps({"runs": [meta], "records": [record]}))
    page = report.render(results, tmp_path / "performance-msa.md", draw=False)
    assert ("| x | 5 x 828 | 26.7 | 1.50 | 990 | 1,100 | unsolved (cpu), bound 1,004 | 40 | 80 | 240.2 | 2.00 | "
            "1,000 at 30 s, 1,001 at 40 s, 1,002 at 50 s, 1,003 at 60 s, 1,004 at 70 s | 0.5 to 0.6 |") in page
    assert "limits 240 CPU s and 15 GiB a run" in page


def test_a_run_stopped_by_the_wall_clock_guard_gives_no_verdict_and_is_run_again(tmp_path):
    base = {"instance": "x", "solver": "pdbtool", "heuristic": "threeway", "threads": 1, "limit_cpu_seconds": 120.0}
    starved = {**base, "solved": False, "stopped_by": "time", "process_cpu_seconds": 72.5}
    at_limit = {**base, "solved": False, "stopped_by": "time", "process_cpu_seconds": 119.4}
    assert bench_msa.no_verdict(starved) and bench_msa.no_verdict({**base, "solved": False, "stopped_by": "wall"})
    assert not bench_msa.no_verdict(at_limit) and not bench_msa.no_verdict({**base, "solved": True})
    path = tmp_path / "msa_balibase.json"
    path.write_text(json.dumps({"runs": [], "records": [starved, {**at_limit, "instance": "y"}]}))
    results = bench_msa.Results(path, True, {"part": "balibase"}, ["bench_msa.py"])
    assert not results.has(**base) and results.has(**{**base, "instance": "y"})
    results.add({**base, "solved": True, "cost": 7})
    held = json.loads(path.read_text())["records"]
    assert [(r["instance"], r["solved"]) for r in held] == [("y", False), ("x", True)]
