"""docs/performance-plan.md: predicted search sizes, of random starts and of one instance."""

from __future__ import annotations


from _report import (Plots, fmt, provenance, section, table)


@section("Predicting one instance: stratified sampling of its own tree", ["predict_instances"],
         "python bench/bench_predict_instances.py --probes 1000")
def predict_instances_section(plots: Plots, data) -> str:
    s = data.get("summary", {})
    out = [f"`predict --stratified {s.get('probes', '?')}` ({s.get('config', '?')}) on Korf's 100, against the "
           f"nodes Korf's searches generated ({s.get('measured_from', '?')}); [prediction.md](prediction.md):\n\n"]
    out.append(table(["instances", "predicted in all", "measured in all", "ratio of the sums", "median ratio",
                      "within 2x", "within 10x", "CPU s"],
                     [[fmt(s.get("instances")), fmt(s.get("predicted_total")), fmt(s.get("measured_total")),
                       fmt(s.get("ratio_of_sums"), 2), fmt(s.get("ratio_median"), 2), fmt(s.get("within_factor_2")),
                       fmt(s.get("within_factor_10")), fmt(s.get("cpu_seconds"), 1)]]))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


@section("Predicted search sizes", ["predict"], "python bench/run.py --only predict")
def predict_section(plots: Plots, data) -> str:
    out = ["`pdbtool predict` against measured whole searches (`bench/bench_predict.py`; "
           "[prediction.md](prediction.md)): predicted over measured nodes per instance:\n\n"]
    rows = [[f"`{w.get('config')}`", w.get("instances"), fmt(w.get("ratio_median"), 2),
             fmt(w.get("ratio_geometric_mean"), 2), w.get("within_factor_2"), w.get("within_factor_10")]
            for w in data.get("whole_searches", [])]
    out.append(table(["configuration", "instances", "median ratio", "geometric mean", "within 2x", "within 10x"],
                     rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


