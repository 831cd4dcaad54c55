"""bench/report.py: the pages docs/performance*.md follow bench/results/*.json, missing results are said to
be missing, and every published figure they show is read from docs/literature.md."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_report", ROOT / "bench" / "report.py")
report = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(report)


tiles = report.report_tiles


def test_performance_pages_are_generated_from_the_committed_results():
    for name in report.PAGES:
        page = ROOT / "docs" / name
        expected = report.render(ROOT / "bench" / "results", page, draw=False)
        assert page.read_text() == expected, f"docs/{name} is stale: run `make bench-report`"


def test_every_page_links_every_other_and_keeps_to_the_size_of_a_doc():
    for name in report.PAGES:
        text = (ROOT / "docs" / name).read_text()
        assert all(f"]({other})" in text for other in report.PAGES if other != name), name
        assert len(text.encode()) <= 40_000, f"docs/{name}: move superseded results to bench/results/history/"


def test_every_committed_result_file_is_rendered(tmp_path):
    report.LOADED.clear()
    for name in report.PAGES:
        report.render(ROOT / "bench" / "results", tmp_path / name, draw=False)
    committed = {p.stem for p in (ROOT / "bench" / "results").glob("*.json")}
    assert committed - report.LOADED == set(), "result files no section of bench/report.py renders"


def test_no_result_on_the_page_compares_the_code_with_an_older_tree():
    """A before/after run (``--compare``, ``--baseline``, ``--before``) describes a change, not the code: it
    belongs in bench/results/history/, which the page does not render."""
    for path in sorted((ROOT / "bench" / "results").glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, dict):  # a list of runs, each of the code it ran
            continue
        assert (data.get("commits") or {}).get("other") is None and "other" not in (data.get("trees") or {}), path
        assert all(row.get("builder", "current") == "current" for row in data.get("rows", [])
                   if isinstance(row, dict)), path
        assert "before" not in data, path


def test_figures_measured_under_load_are_marked(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    meta = {"date": "2026-01-02T03:04:05Z", "commit": "0123456789abcdef", "command": "python bench/bench_verify.py",
            "machine": {"cores": 2}, "load_average_before": [1.0, 0, 0], "load_average_after": [1.5, 0, 0]}
    data = {"rows": [], "meta": meta}
    (results / "verify.json").write_text(json.dumps(data))
    idle = report.render(results, tmp_path / "performance.md", draw=False).split("## Verifying")[1].split("\n## ")[0]
    meta["load_average_after"] = [2.0, 0, 0]  # at the core count
    (results / "verify.json").write_text(json.dumps(data))
    busy = report.render(results, tmp_path / "performance.md", draw=False).split("## Verifying")[1].split("\n## ")[0]
    assert "Measured under load" not in idle and "Measured under load" in busy


def test_every_section_says_not_measured_without_results(tmp_path):
    text = "".join(report.render(tmp_path / "none", tmp_path / name, draw=False) for name in report.PAGES)
    assert text.count("Not measured yet") == len(report.SECTIONS)
    assert "| ---" not in text


def test_published_figures_come_from_the_literature_page():
    published = tiles.published_15()
    literature = (ROOT / "docs" / "literature.md").read_text()
    assert published["15-7-8+reflect"][:2] == (45.6, 36_700)
    assert published["ddb-pairs+triples"][:2] == (42.79, 707_476)
    for _h, nodes, _ in published.values():
        assert f"{nodes:,.0f}" in literature


def test_a_result_file_appears_with_its_metadata(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    rows = [{"threads": 1, "nodes_generated": 100, "wall_seconds": 2.0, "cpu_seconds": 2.0,
             "nodes_per_wall_second": 50, "speedup": 1.0},
            {"threads": 2, "nodes_generated": 104, "wall_seconds": 1.0, "cpu_seconds": 2.1,
             "nodes_per_wall_second": 104, "speedup": 2.0}]
    meta = {"date": "2026-01-02T03:04:05Z", "commit": "0123456789abcdef", "command": "python bench/bench_threads.py",
            "machine": {"cores": 8, "cpu": "Test CPU"}, "load_average_before": [0.5, 0, 0],
            "load_average_after": [1.5, 0, 0], "wall_seconds": 3.0}
    (results / "threads.json").write_text(json.dumps({"heuristic": "manhattan", "ids": ["4"], "rows": rows,
                                                      "meta": meta}))
    text = report.render(results, tmp_path / "performance.md", draw=False)
    threads = text.split("## Threads")[1].split("\n## ")[0]
    assert "| 2 | 104 | 1.00 | 2.10 | 0.00 | 2.00 |" in threads
    assert "commit `0123456789ab`" in threads and "8 cores (Test CPU)" in threads and "0.5 to 1.5" in threads
    assert "Not measured yet" not in threads


def test_bench_runner_adds_metadata_to_a_file_of_runs_and_to_a_single_result(tmp_path):
    """``make bench`` (bench/run.py) records its metadata with a result written as one object, and with the
    run just appended to a file that keeps a list of runs (bench_dynamic_cost.py), leaving earlier runs alone."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    script = tmp_path / "bench_probe.py"
    script.write_text("import json, sys\n"
                      "out = sys.argv[sys.argv.index('--out') + 1]\n"
                      "shape = sys.argv[sys.argv.index('--shape') + 1]\n"
                      "if shape == 'list':\n"
                      "    runs = json.load(open(out))\n"
                      "    runs.append({'result': len(runs)})\n"
                      "    json.dump(runs, open(out, 'w'))\n"
                      "else:\n"
                      "    json.dump({'result': 1}, open(out, 'w'))\n")
    runs = tmp_path / "runs.json"
    runs.write_text(json.dumps([{"result": 0}]))
    assert runner.run_one(script, ["--out", str(runs), "--shape", "list"])
    data = json.loads(runs.read_text())
    assert data[0] == {"result": 0} and data[1]["result"] == 1
    assert "--shape list" in data[1]["meta"]["command"]
    single = tmp_path / "single.json"
    assert runner.run_one(script, ["--out", str(single), "--shape", "dict"])
    data = json.loads(single.read_text())
    assert data["result"] == 1 and "--shape dict" in data["meta"]["command"]


def test_bench_runner_finds_the_files_a_benchmark_names_itself(tmp_path, monkeypatch):
    """A benchmark whose result file is not named after it (bench_load.py writes load_checks.json,
    bench_35.py p35.json) or that writes two gets the metadata in each; one that writes nothing fails; the
    comparisons with another checkout run by name only."""
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    runner = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(runner)
    results = tmp_path / "results"
    (results / "history").mkdir(parents=True)
    (results / "untouched.json").write_text("{}")
    monkeypatch.setattr(runner, "RESULTS", results)
    script = tmp_path / "bench_probe.py"
    script.write_text("import json, sys\n"
                      "for name in sys.argv[1:]:\n"
                      "    json.dump({'result': name}, open(name, 'w'))\n")
    assert runner.run_one(script, [str(results / "named.json"), str(results / "history" / "also.json")])
    for name in ("named.json", "history/also.json"):
        assert "meta" in json.loads((results / name).read_text())
    assert json.loads((results / "untouched.json").read_text()) == {}
    assert not runner.run_one(script, [])
    everything = [p.stem for p in runner.scripts(None)]
    assert "bench_lift" not in everything and "bench_build" in everything
    assert [p.stem for p in runner.scripts(["lift"])] == ["bench_lift"]


def test_a_result_just_written_does_not_make_the_commit_dirty(tmp_path):
    """bench/run.py records the commit after the benchmark has written its results: those files must not
    mark the run ``+dirty``, while a change to any other tracked file must."""
    spec = importlib.util.spec_from_file_location("bench_results", ROOT / "bench" / "_results.py")
    results = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(results)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    (tmp_path / "bench" / "results").mkdir(parents=True)
    (tmp_path / "bench" / "results" / "probe.json").write_text("[]\n")
    (tmp_path / "code.py").write_text("x = 1\n")
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "start"], check=True)
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / "bench" / "results" / "probe.json").write_text("[{}]\n")
    assert results.git_commit(tmp_path) == head
    (tmp_path / "code.py").write_text("x = 2\n")
    assert results.git_commit(tmp_path) == head + "+dirty"


def test_the_50_instance_projection_scales_each_configurations_cpu_by_korf_and_felners_counts():
    # bench_24's projection and the page's agree, and for a configuration that generates Korf & Felner's
    # counts (6-6-6-6 with the parent rule) it is its CPU per node times their count over the 50
    spec = importlib.util.spec_from_file_location("bench_24", ROOT / "bench" / "bench_24.py")
    bench_24 = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench_24)
    data = bench_24.load_korf24_50()
    total = sum(x["kf_nodes"] for x in data.values())
    assert total == tiles.kf_nodes_total()
    rows = [{"id": i, "kf_nodes": data[i]["kf_nodes"],
             "runs": {"parent": {"solved": True, "nodes_generated": data[i]["kf_nodes"], "cpu_seconds": cpu},
                      "other": {"solved": True, "nodes_generated": 1000, "cpu_seconds": cpu / 4}}}
            for i, cpu in ((38, 30.0), (40, 50.0))]
    rows.append({"id": 1, "kf_nodes": data[1]["kf_nodes"],
                 "runs": {"parent": {"solved": True, "nodes_generated": 1, "cpu_seconds": 9.0},
                          "other": {"solved": False, "nodes_generated": 5, "cpu_seconds": 1.0}}})
    proj = bench_24.project_50(data, rows, ["parent", "other"])
    measured = data[38]["kf_nodes"] + data[40]["kf_nodes"]
    assert proj["measured_on"] == [38, 40] and proj["kf_nodes_measured"] == measured
    assert proj["cpu_hours"]["parent"] == round(80.0 / measured * total / 3600, 1)
    assert proj["cpu_hours"]["other"] == round(20.0 / measured * total / 3600, 1)
    summary = {"on_instances_solved_by_all": {"kf_nodes": measured, "cpu_seconds": 20.0}}
    assert round(tiles.projected_hours(summary, total), 1) == proj["cpu_hours"]["other"]
    assert bench_24.project_50(data, rows[2:], ["parent", "other"]) is None
