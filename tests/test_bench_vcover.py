"""bench/bench_vcover.py and its peers' helpers: the graph reader that checks every solver's cover, the
limits on a peer's process, and the counts the vertex-cover pages are generated from."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
_spec = importlib.util.spec_from_file_location("bench_vcover", ROOT / "bench" / "bench_vcover.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)
peers = bench.peers


def test_reader_takes_pace_and_dimacs_merging_repeated_edges(tmp_path):
    pace = tmp_path / "a.gr"
    pace.write_text("c a triangle and a tail\np td 4 5\n1 2\n2 3\n3 1\n3 4\n2 1\n")
    dimacs = tmp_path / "b.dimacs"
    dimacs.write_text("c the same\np edge 4 4\ne 1 2\ne 2 3\ne 1 3\ne 4 3\n")
    a, b = peers.read_graph(pace), peers.read_graph(dimacs)
    assert (a.name, a.vertices, a.edges) == ("a", 4, [(0, 1), (0, 2), (1, 2), (2, 3)])
    assert (b.vertices, b.edges) == (a.vertices, a.edges)


@pytest.mark.parametrize("text", ["p td 3 1\n1 1\n", "p td 3 1\n1 4\n", "1 2\n"])
def test_reader_refuses_loops_out_of_range_and_headless_files(tmp_path, text):
    path = tmp_path / "bad.gr"
    path.write_text(text)
    with pytest.raises(ValueError):
        peers.read_graph(path)


def test_cover_check(tmp_path):
    path = tmp_path / "t.gr"
    path.write_text("p td 4 4\n1 2\n2 3\n1 3\n3 4\n")
    g = peers.read_graph(path)
    assert peers.cover_problem(g, [1, 3], 2) is None
    assert "not covered" in peers.cover_problem(g, [1, 2], 2)
    assert "says 3" in peers.cover_problem(g, [1, 3], 3)
    assert "repeated" in peers.cover_problem(g, [1, 3, 3])
    assert "out of range" in peers.cover_problem(g, [1, 3, 5])


def test_a_process_past_its_limit_is_killed_with_its_children(tmp_path):
    done = peers.run_limited(["sh", "-c", "sleep 30 & wait"], 0.3, scratch=tmp_path)
    assert done.timed_out and done.wall_seconds < 10
    done = peers.run_limited([sys.executable, "-c", "while True: pass"], 60, scratch=tmp_path, cpu_limit=0.5)
    assert done.timed_out and 0.5 <= done.cpu_seconds < 5
    done = peers.run_limited([sys.executable, "-c", "print('hi')"], 30, scratch=tmp_path)
    assert (done.returncode, done.stdout, done.timed_out) == (0, "hi\n", False)


def test_pdbtool_records_in_either_json_shape():
    one = {"id": "a", "solved": True, "cover": [1, 2]}
    assert peers.parse_records(json.dumps(one)) == [one]
    assert peers.parse_records(json.dumps([one, one])) == [one, one]
    assert peers.parse_records(json.dumps(one) + "\n" + json.dumps(one) + "\n") == [one, one]
    assert peers.cover_size({"cover": [1, 2, 5]}) == 3 and peers.cover_size({"size": 4, "cover": [1]}) == 4


def test_pace_counts_a_graph_solved_within_a_shorter_limit_for_the_longer(tmp_path):
    runs = tmp_path / "vcover_pace.runs.jsonl"
    recs = [("peaty", "g1", 60, True, 10), ("peaty", "g2", 60, False, None), ("peaty", "g2", 600, True, 7),
            ("cp-sat", "g1", 60, True, 11), ("cp-sat", "g2", 60, False, 8)]
    lines = [json.dumps({"solver": s, "id": g, "limit": lim, "solved": ok, "size": size, "clock": "cpu",
                         "agrees": None if size is None or not ok else size != 11, "load_before": [1.0, 0, 0]}
                        | ({"lower_bound": 6} if size == 8 else {}))
             for s, g, lim, ok, size in recs]
    lines.append(json.dumps({"solver": "peaty", "id": "g4", "limit": 60, "solved": True, "clock": "wall"}))
    runs.write_text("\n".join(lines) + '\n{"solver": "peaty", "id": "g3", "lim')     # a line cut short by a kill
    out = tmp_path / "vcover_pace.json"
    bench.write_pace_summary(runs, out, [60.0, 600.0], "cmd", {"g1": (10, 1.5), "g2": (7, 300.0)})
    data = json.loads(out.read_text())
    s = data["summary"]
    assert s["peaty"]["60"] == {"attempted": 2, "solved": 1, "wrong": [], "unsolved": ["g2"], "bounds": {}}
    assert s["peaty"]["600"] == {"attempted": 2, "solved": 2, "wrong": [], "unsolved": [], "bounds": {}}
    assert s["cp-sat"]["60"] == {"attempted": 2, "solved": 1, "wrong": ["g1"], "unsolved": ["g2"],
                                 "bounds": {"g2": [6, 8]}}    # stopped by its own limit: its bound and cover
    assert s["cp-sat"]["600"]["attempted"] == 1          # g2 not yet run at 600 s: not counted
    assert data["organisers_ilp_solved"] == {"60": 1, "600": 2}


def test_table_ratio_is_a_lower_bound_where_none_was_stopped():
    data = {"rows": {
        "none": {"records": [{"id": "a", "solved": True, "nodes": 1000, "agrees_with_peaty": True},
                             {"id": "b", "solved": False, "nodes": 3000, "agrees_with_peaty": None}]},
        "dynamic:2": {"records": [{"id": "a", "solved": True, "nodes": 10, "agrees_with_peaty": True},
                                  {"id": "b", "solved": True, "nodes": 30, "agrees_with_peaty": True}]}}}
    s = bench.table_summary(data)
    assert s["dynamic:2"]["ratio_none_over_row"] == 100 and s["dynamic:2"]["ratio_is_lower_bound"]
    assert s["none"]["solved"] == 1 and s["dynamic:2"]["agree_with_peaty"] == 2


def test_side_summary_medians_and_wrong_sizes():
    recs = {"pdbtool": [{"id": "a", "solved": True, "size": 5, "cpu_seconds": 3.0},
                        {"id": "b", "solved": True, "size": 7, "cpu_seconds": 1.0}],
            "peaty": [{"id": "a", "solved": True, "size": 5, "cpu_seconds": 1.0},
                      {"id": "b", "solved": True, "size": 6, "cpu_seconds": 1.0}],
            "cp-sat": [{"id": "a", "solved": False, "size": 6, "cpu_seconds": 9.0, "workers": 2},
                       {"id": "b", "solved": True, "size": 6, "cpu_seconds": 4.0, "workers": 2}]}
    s = bench.side_summary(recs)
    assert s["pdbtool"]["cpu_seconds_median"] == 2.0 and s["pdbtool"]["wrong"] == 1
    assert s["pdbtool_over_peaty"] == 2.0 and not s["pdbtool_over_peaty_is_lower_bound"]
    assert s["cp-sat"]["solved"] == 1 and s["cp-sat"]["workers"] == [2]
