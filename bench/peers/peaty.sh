#!/bin/sh
# Build Peaty (James Trimble's exact vertex-cover solver, PACE 2019; GPL-3, github.com/jamestrimble/peaty)
# from a source tarball into a scratch directory outside the repository, and print the binary's path.
# Peaty is a peer of the benchmarks only: its code and binary are never part of pdbtool.
#
#   bench/peers/peaty.sh [TARBALL] [DIR]
#
# TARBALL defaults to ../shared/peers/peaty-src.tar.gz beside the checkout (or beside its parent), DIR to $PDBTOOL_PEERS/peaty
# ($PDBTOOL_PEERS defaults to /work/peers).  Needs cmake and a C++14 compiler.  A build whose tarball
# checksum matches the one recorded beside it is reused.
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
tarball=${1:-}
if [ -z "$tarball" ]; then  # ../shared beside the checkout (or beside the folder of worktrees)
    tarball=$here/../shared/peers/peaty-src.tar.gz
    [ -f "$tarball" ] || tarball=$here/../../shared/peers/peaty-src.tar.gz
fi
dir=${2:-${PDBTOOL_PEERS:-/work/peers}/peaty}
[ -f "$tarball" ] || { echo "peaty.sh: no source tarball at $tarball" >&2; exit 2; }
case "$(cd "$(dirname "$dir")" 2>/dev/null && pwd)/" in
    "$here"/*) echo "peaty.sh: $dir is inside the repository; build peers outside it" >&2; exit 2;;
esac
sum=$(sha256sum "$tarball" | cut -d' ' -f1)
if [ -x "$dir/build/solve_vc" ] && [ "$(cat "$dir/source.sha256" 2>/dev/null)" = "$sum" ]; then
    echo "$dir/build/solve_vc"
    exit 0
fi
rm -rf "$dir"
mkdir -p "$dir/src" "$dir/build"
tar xzf "$tarball" -C "$dir/src"
src=$dir/src
[ -f "$src/CMakeLists.txt" ] || src=$(dirname "$(find "$dir/src" -name CMakeLists.txt | head -n 1)")
(cd "$dir/build" && cmake -DCMAKE_BUILD_TYPE=Release "$src" >cmake.log 2>&1 && make -j1 solve_vc >make.log 2>&1) || {
    echo "peaty.sh: the build failed; see $dir/build/cmake.log and make.log" >&2; exit 1; }
echo "$sum" > "$dir/source.sha256"
echo "$dir/build/solve_vc"
