"""`make bench-report`: docs/performance*.md, with PNG plots in docs/img/, from bench/results/*.json.

One page per domain: the tile puzzles (docs/performance.md), planning and prediction, the Towers of Hanoi,
vertex cover and sequence alignment.  Every section reads its result files and says "not measured yet" when
they are missing; every committed file of bench/results/ is read by a section (tests/test_report.py checks
it).  A figure measured at a load average at or above the core count is marked as such.  The published
figures beside the measured ones are read from docs/literature.md, which cites their sources.  The plots need
matplotlib (``pip install '.[bench]'``); without it the pages are written with their tables only.

    python bench/report.py [--results DIR] [--docs DIR] [--no-plots]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import report_hanoi  # noqa: E402
import report_msa  # noqa: E402
import report_plan  # noqa: E402
import report_runs  # noqa: E402
import report_tiles  # noqa: E402
import report_vcover  # noqa: E402
from _report import IMG, ROOT, Plots, busy_note, not_measured, page_header, section, table  # noqa: E402
from _report import LOADED  # noqa: E402, F401  (the result files the renders read)

SECTIONS_TILES = [report_tiles.build_section, report_tiles.solve_section, report_tiles.threads_section,
                  report_tiles.encodings_section, report_tiles.verify_section, report_tiles.puzzle24_section,
                  report_tiles.frontier_target_section, report_tiles.frontier_section,
                  report_tiles.dynamic_cost_section, report_tiles.dynamic_definitions_section,
                  report_tiles.pruning_section, report_tiles.p35_section, report_runs.kernels_section,
                  report_runs.startup_section, report_runs.load_checks_section, report_runs.checkpoint_section,
                  report_runs.resume_section, report_runs.stop_section, report_runs.ray_section,
                  report_runs.scaling_section]


@section(report_msa.TITLE, report_msa.NAMES, report_msa.COMMAND)
def msa_section(plots: Plots, side, balibase, synthetic, longest=None) -> str:
    return report_msa.render(side, balibase, synthetic, table, busy_note, not_measured, longest)


# file -> (the link's name, the page's title, its sections in order)
PAGES = {
    "performance.md": ("tile puzzles", "Performance: the tile puzzles", SECTIONS_TILES),
    "performance-plan.md": ("planning and prediction", "Performance: planning and prediction",
                            [report_plan.predict_section, report_plan.predict_instances_section,
                             report_plan.plan_35_section, report_plan.plan_15_section]),
    "performance-hanoi.md": ("Towers of Hanoi", "Performance: the four-peg Towers of Hanoi",
                             [report_hanoi.hanoi_section, report_hanoi.hanoi_encodings_section]),
    "performance-vcover.md": ("vertex cover", "Performance: vertex cover",
                              [report_vcover.vcover_table_section, report_vcover.vcover_side_section,
                               report_vcover.vcover_pace_section]),
    "performance-msa.md": ("sequence alignment", "Performance: multiple sequence alignment", [msa_section]),
}
SECTIONS = [s for _, _, sections in PAGES.values() for s in sections]


def render(results: Path, out: Path, draw: bool = True) -> str:
    """The page named like ``out`` (docs/performance.md when the name is not a page's); with ``draw=False``
    no plot is drawn, and the existing PNGs are linked."""
    name = out.name if out.name in PAGES else "performance.md"
    _, title, sections = PAGES[name]
    plots = Plots(out.parent / IMG, draw)
    links = {file: link for file, (link, _, _) in PAGES.items()}
    parts = [page_header(title, links, name)] + [s(results, plots) for s in sections]
    return "\n".join(p.rstrip("\n") + "\n" for p in parts)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--results", default=str(ROOT / "bench" / "results"))
    ap.add_argument("--docs", default=str(ROOT / "docs"), help="the folder the pages are written to")
    ap.add_argument("--no-plots", action="store_true", help="draw no plot; link the PNGs already there")
    args = ap.parse_args(argv)
    docs = Path(args.docs)
    docs.mkdir(parents=True, exist_ok=True)
    for name in PAGES:
        out = docs / name
        out.write_text(render(Path(args.results), out, draw=not args.no_plots))
        print(f"written {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
