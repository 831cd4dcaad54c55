#!/bin/sh
# Solve Korf's 100 with each heuristic and write one CSV (a row per instance and heuristic).
#
#   examples/korf100_heuristics.sh [OUT.csv] [TIME_LIMIT_SECONDS]
#
# The pattern databases are built into the cache on first use (15-7-8 takes many minutes once).
# Manhattan needs about 36 billion nodes for all 100 (minutes at tens of millions of nodes a second) and
# linear conflicts about a tenth of that: the time limit (default 120 s per instance) turns the worst
# instances into "unsolved" rows instead.  Set PDBTOOL to the command to run (default: pdbtool).
set -eu
out=${1:-korf100_heuristics.csv}
limit=${2:-120}
here=$(dirname "$0")
pdbtool=${PDBTOOL:-pdbtool}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
first=1
for args in "--partition 15-7-8" "--partition 15-7-8 --no-reflect" "--partition 15-6-6-3" \
            "--partition 15-5-5-5" "--partition 15-6-6-3 --pruning fsm" \
            "--partition 15-6-6-3 --blank zero-aware --pruning fsm" \
            "--partition $here/15-cat-3.txt --blank zero-aware --pruning fsm" \
            "--heuristic max --dynamic pairs+triples-region --partition $here/15-cat-3.txt --blank zero-aware --pruning fsm" \
            "--heuristic linear-conflict" "--heuristic manhattan"; do
    echo "solving with $args" >&2
    # shellcheck disable=SC2086
    $pdbtool solve "$here/korf100.txt" $args --time-limit "$limit" --format csv > "$tmp" || true
    if [ $first -eq 1 ]; then
        cat "$tmp" > "$out"
        first=0
    else
        tail -n +2 "$tmp" >> "$out"
    fi
done
echo "written $out" >&2
