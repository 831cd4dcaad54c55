"""docs/performance-plan.md: predicted search sizes, of random starts and of one instance."""

from __future__ import annotations

from pathlib import Path

from _report import (Plots, fmt, provenance, section, table)


@section("Plans of the 35-puzzle at the talk's memory", ["plan_35"],
         "python bench/bench_plan.py --plans partitions/35-5-5-5-5-5-5-5.txt examples/35-max-fives.txt:nibble"
         " --seed 36")
def plan_35_section(plots: Plots, data) -> str:
    talk = data.get("talk", {})
    out = [f"`pdbtool plan` on 6x6 within the memory of seven 5-tile byte tables, against the built-in fives "
           f"([plan.md](plan.md)): {fmt(data.get('samples'))} random solvable states (seed {data.get('seed')}), "
           f"with the diagonal reflection; predicted nodes of a random start's iteration (Korf, Reid & Edelkamp) "
           f"relative to Manhattan's on the same states, times Manhattan's over dynamic pairs + triples' "
           f"({fmt(data.get('manhattan_over_pairs_triples'), 1)}, bench/results/p35.json).  The talk's fives: "
           f"mean h {talk.get('mean_h')}, {talk.get('relative_to_pairs_triples')} times pairs + triples' "
           f"nodes.\n\n"]
    rows = [[f"`{Path(str(r.get('file'))).name}`", r.get("structure"), fmt(r.get("mean_h"), 3), r.get("least_h"),
             fmt(r.get("relative_to_pairs_triples"), 1), r.get("tables"), fmt(r.get("memory_bytes"))]
            for r in data.get("rows", [])]
    f = data.get("builtin_fives")
    if f:
        rows.append([f"`{f.get('plan')}` ({fmt(f.get('states'))} states, {f.get('from')})", "7 fives byte",
                     fmt(f.get("mean_h"), 3), "", fmt(f.get("relative_to_pairs_triples"), 1), 7,
                     fmt(f.get("memory_bytes"))])
    out.append(table(["plan", "structure", "mean h", "least h", "nodes / pairs + triples'", "tables", "bytes"],
                     rows))
    out.append("\n" + provenance(data) + "\n")
    return "".join(out)


@section("Plans of the 15-puzzle measured against search", ["plan_15", "plan_15_stratified", "plan_15_577MB"],
         "python bench/bench_plan_15.py --plans 15-7-8 15-6-6-3 PLAN_FILE")
def plan_15_section(plots: Plots, data, stratified=None, planned=None) -> str:
    data = data or {}
    low, high = data.get("agreement", [0.67, 1.5])
    out = []
    if planned:
        p = planned.get("plan", {})
        b = p.get("best_builtin") or {}
        out.append(f"`pdbtool plan` within {fmt(p.get('memory_budget'))} bytes (15-7-8's tables): "
                   f"{planned.get('summary')}; {p.get('kind')}, {fmt(p.get('scored'))} candidates scored "
                   f"({p.get('strategy')}, {'finished' if p.get('finished') else 'stopped by the planning time'}), "
                   f"predicted nodes {fmt(p.get('relative_nodes'), 5)} times Manhattan's on its check sample "
                   f"(the best built-in, {b.get('name')}: {fmt(b.get('relative_nodes'), 5)}).\n\n"
                   + provenance(planned) + "\n\n")
    out += [f"Partitions of the 15-puzzle scored as `pdbtool plan` scores them ({fmt(data.get('samples'))} random "
           f"states, seed {data.get('seed')}, with the reflection) and searched in the same run on "
           f"{data.get('instances')}, each with its reflection, `--pruning {data.get('pruning')}`, single-threaded "
           f"([plan.md](plan.md)).  Ratios are to {data.get('reference')}'s; the prediction holds where predicted "
           f"over measured is between {low} and {high}.\n\n"]
    rows = [[f"`{r.get('file')}`", r.get("structure"), fmt(r.get("memory_bytes")), fmt(r.get("mean_h0"), 2),
             fmt(r.get("nodes_generated")), fmt(r.get("cpu_seconds"), 2), fmt(r.get("predicted_ratio"), 3),
             fmt(r.get("measured_ratio"), 3), fmt(r.get("predicted_over_measured"), 2),
             "yes" if r.get("agrees") else "no"] for r in data.get("rows", [])]
    out.append(table(["plan", "structure", "bytes", "mean h(start)", "nodes", "CPU s", "predicted ratio",
                      "measured ratio", "predicted / measured", "holds"], rows))
    out.append("\n" + provenance(data) + "\n")
    if stratified:
        out.append(f"\nThe same ratios predicted instance by instance instead ({stratified.get('method')}), against "
                   f"the searches above ({stratified.get('measured_from')}):\n\n")
        out.append(table(["plan", "predicted nodes", "measured nodes", "predicted / measured (sums)",
                          "median per instance", "within 2x", "predicted ratio", "measured ratio",
                          "predicted / measured", "holds"],
                         [[f"`{r.get('plan')}`", fmt(r.get("predicted")), fmt(r.get("measured")),
                           fmt(r.get("ratio_of_sums"), 2), fmt(r.get("ratio_median"), 2), r.get("within_factor_2"),
                           fmt(r.get("predicted_ratio"), 3), fmt(r.get("measured_ratio"), 3),
                           fmt(r.get("predicted_over_measured"), 2), "yes" if r.get("agrees") else "no"]
                          for r in stratified.get("rows", [])]))
        out.append("\n" + provenance(stratified) + "\n")
    return "".join(out)


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


