"""The vertex cover domain: graphs in, bounds admissible, reductions sound, covers optimal (against brute
force), the clique table's file, and the command line's answers to good and bad input."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdbtool.vcover import kernels as K
from pdbtool.vcover.cliques import CliqueTable, cliques_of, find_cliques, get_table, verify_file
from pdbtool.vcover.commands import COMMANDS
from pdbtool.vcover.graph import Graph, GraphError, canonical_edges, csr_of, parse_text, random_graph, read_graph
from pdbtool.vcover.reductions import reduce_graph
from pdbtool.vcover.root_bound import iterated_clique_cover
from pdbtool.vcover.search import SearchError, check_cover, parse_heuristic, solve

HEURISTICS = ["none", "matching", "static:2", "static:3", "static:4", "dynamic:2", "dynamic:3", "dynamic:4",
              "cliques", "lp", "dynamic:4,lp,cliques"]
BOUND_FLAGS = {"matching": K.F_MATCH, "static": K.F_STATIC, "dynamic": K.F_DYNAMIC, "cliques": K.F_CLIQUES,
               "lp": K.F_LP}


def brute_force(n: int, edges) -> int:
    """The size of a minimum cover, over every subset of the vertices (numpy, n <= 16)."""
    edges = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    masks = np.arange(1 << n, dtype=np.int64)
    ok = np.ones(masks.shape[0], dtype=bool)
    for u, v in edges.tolist():
        ok &= ((masks >> u) & 1 | (masks >> v) & 1).astype(bool)
    sizes = np.array([bin(m).count("1") for m in range(1 << n)]) if n <= 10 else \
        np.unpackbits(masks.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1).sum(axis=1)
    return int(sizes[ok].min())


def oracle(n: int, edges) -> int:
    """A minimum cover's size by plain branching (a vertex of largest degree in, or its neighbours in), for
    graphs up to about 30 vertices."""
    adj = [set() for _ in range(n)]
    for u, v in np.asarray(edges).reshape(-1, 2).tolist():
        adj[u].add(v)
        adj[v].add(u)
    best = [n]

    def go(adj, g):
        if g >= best[0]:
            return
        v = max(range(n), key=lambda x: len(adj[x]))
        if not adj[v]:
            best[0] = g
            return
        if len(adj[v]) == 1:
            go(_without(adj, [next(iter(adj[v]))]), g + 1)
            return
        go(_without(adj, [v]), g + 1)
        go(_without(adj, list(adj[v])), g + len(adj[v]))

    go(adj, 0)
    return best[0]


def _without(adj, vs):
    out = [set(a) for a in adj]
    for v in vs:
        for u in out[v]:
            out[u].discard(v)
        out[v] = set()
    return out


def random_edges(rng, n, p):
    return np.array([(u, v) for u in range(n) for v in range(u + 1, n) if rng.random() < p],
                    dtype=np.int64).reshape(-1, 2)


def small_graphs():
    """Every graph on up to 5 vertices, and samples of 6 and 7 vertices."""
    out = []
    for n in range(1, 6):
        pairs = list(itertools.combinations(range(n), 2))
        for bits in range(1 << len(pairs)):
            out.append((n, np.array([pairs[i] for i in range(len(pairs)) if bits >> i & 1],
                                    dtype=np.int64).reshape(-1, 2)))
    rng = np.random.default_rng(6)
    for n, count in ((6, 250), (7, 150)):
        out.extend((n, random_edges(rng, n, rng.random())) for _ in range(count))
    return out


@pytest.fixture(scope="module")
def graphs_small():
    return [(n, e, brute_force(n, e)) for n, e in small_graphs()]


# --- bounds -------------------------------------------------------------------------------------------------

def _state(n, edges, rng):
    """A node of the search: random decisions from the root, the degree rules applied."""
    indptr, indices = csr_of(n, edges)
    status = np.zeros(n, dtype=np.int8)
    deg = np.zeros(n, dtype=np.int64)
    trail = np.zeros(n + 1, dtype=np.int64)
    queue = np.zeros(3 * n + 8, dtype=np.int64)
    sc = np.zeros(K.N_SCALARS, dtype=np.int64)
    K.init_state(status, deg, indptr, indices, trail, sc, queue)
    for _ in range(int(rng.integers(0, 3))):
        free = np.flatnonzero((status == K.FREE) & (deg > 0))
        if not free.size:
            break
        v = int(rng.choice(free))
        step = K._take if rng.random() < 0.5 else K._leave
        K._settle(status, deg, indptr, indices, trail, sc, queue,
                  step(v, status, deg, indptr, indices, trail, sc, queue, 0))
    return indptr, indices, status, deg, sc


def _bounds(n, edges, indptr, indices, status, deg, sc, k=4):
    """Each bound of BOUND_FLAGS at the node, with the bit matrix and with the lists: (name, h) pairs."""
    table = cliques_of(n, edges, budget_bytes=1 << 30)  # a budget: no probe of the machine's memory per graph
    rows, sizes = table.rows(k)
    packed_rows, packed_sizes = [], []
    used = np.zeros(n, dtype=bool)
    for r in range(rows.shape[0]):  # the root's packing (every vertex free at the root)
        vs = rows[r, :sizes[r]]
        if not used[vs].any():
            used[vs] = True
            packed_rows.append(rows[r])
            packed_sizes.append(sizes[r])
    packed = np.array(packed_rows, dtype=np.int64).reshape(-1, 4)
    psizes = np.array(packed_sizes, dtype=np.int64)
    words = (n + 63) // 64
    sc[K.S_STAMP] = 2
    bits = K.adjacency_bits(indptr, indices, words)
    mark = np.zeros(n, dtype=np.int64)
    out = []
    for name, flag in BOUND_FLAGS.items():
        for adj in (bits, np.zeros((0, words), dtype=np.uint64)):  # the bit matrix and the lists
            work = np.zeros(7 * n + 2 * words + 8, dtype=np.int64)
            out.append((name, int(K.lower_bound(status, deg, indptr, indices, adj, rows, sizes, rows.shape[0],
                                                packed, psizes, flag, sc, mark, work))))
    out.append(("iterated cliques", int(iterated_clique_cover(indptr, indices, status, deg, 8, 1))))
    return out


def test_every_bound_is_admissible_on_small_graphs(graphs_small):
    rng = np.random.default_rng(1)
    for n, edges, _ in graphs_small:
        indptr, indices, status, deg, sc = _state(n, edges, rng)
        free = [(u, v) for u, v in edges.tolist() if status[u] == K.FREE and status[v] == K.FREE]
        need = brute_force(n, free)
        for name, h in _bounds(n, edges, indptr, indices, status, deg, sc):
            assert h <= need, (name, n, edges.tolist(), status.tolist(), h, need)


def test_bounds_admissible_on_random_graphs_up_to_30():
    rng = np.random.default_rng(30)
    for trial in range(12):
        n = int(rng.integers(12, 31))
        edges = random_edges(rng, n, float(rng.uniform(0.1, 0.4)))
        indptr, indices, status, deg, sc = _state(n, edges, rng)
        free = np.array([(u, v) for u, v in edges.tolist() if status[u] == K.FREE and status[v] == K.FREE],
                        dtype=np.int64).reshape(-1, 2)
        need = oracle(n, free)
        for name, h in _bounds(n, edges, indptr, indices, status, deg, sc):
            assert h <= need, (name, trial, h, need)


# --- solving ------------------------------------------------------------------------------------------------

def test_every_heuristic_and_reduction_finds_the_optimum(graphs_small):
    rng = np.random.default_rng(2)
    picked = [graphs_small[i] for i in rng.choice(len(graphs_small), 60, replace=False)]
    for n, edges, opt in picked:
        g = Graph(n, edges)
        for heuristic in HEURISTICS:
            for reductions in ("none", "default"):
                for branching in (("auto", "binary") if heuristic == "cliques" else ("auto",)):
                    result = solve(g, heuristic, reductions, out_first=reductions == "none", branching=branching)
                    assert result.optimal and result.size == opt == result.lower_bound
                    check_cover(g, result.cover, opt)


def test_reductions_are_sound(graphs_small):
    rng = np.random.default_rng(3)
    picked = [graphs_small[i] for i in rng.choice(len(graphs_small), 300, replace=False)]
    picked += [(n, e, brute_force(n, e)) for n, e in
               ((int(n), random_edges(rng, int(n), 0.25)) for n in rng.integers(8, 15, size=30))]
    applied = {}
    for n, edges, opt in picked:
        for rule in ("degree1", "fold", "domination", "funnel", "lp", "degree1,fold,domination,funnel,lp"):
            red = reduce_graph(n, edges, rule.split(","))
            applied[rule] = applied.get(rule, 0) + sum(red.counts.values())
            left = red.vertices()
            index = {v: i for i, v in enumerate(left)}
            rest = [(index[v], index[u]) for v in left for u in red.adj[v] if index[v] < index[u]]
            sub = brute_force(len(left), rest) if left else 0
            assert sub + red.offset == opt, (rule, n, edges.tolist())
            cover = Graph(len(left), np.array(rest, dtype=np.int64).reshape(-1, 2))
            best = solve(cover, "cliques", "none").cover
            lifted = red.lift([left[i] for i in best])
            check_cover(Graph(n, edges), sorted(lifted), opt)
    assert all(applied.values()), applied


def test_larger_random_graphs_against_the_oracle():
    rng = np.random.default_rng(4)
    for _ in range(6):
        n = int(rng.integers(20, 31))
        g = Graph(n, random_edges(rng, n, float(rng.uniform(0.15, 0.35))))
        opt = oracle(n, g.edges)
        sizes = {solve(g, h).size for h in ("default", "static:3", "dynamic:3", "lp,matching")}
        assert sizes == {opt}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 11).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30))))
def test_default_solver_is_optimal_hypothesis(case):
    n, pairs = case
    pairs = [(u, v) for u, v in pairs if u != v]
    edges, _ = canonical_edges(n, np.array(pairs, dtype=np.int64).reshape(-1, 2), "h")
    result = solve(Graph(n, edges))
    assert result.size == brute_force(n, edges) and result.optimal


def test_time_limit_gives_a_cover_and_a_proven_bound():
    g = random_graph(150, 16, 2003, 0)
    for clock in ("wall", "cpu"):
        result = solve(g, "none", "none", time_limit=0.05, clock=clock)
        check_cover(g, result.cover, result.size)
        assert not result.optimal and result.lower_bound <= result.size


def test_check_cover_refuses_a_wrong_cover():
    g = Graph(3, np.array([[0, 1], [1, 2]]))
    check_cover(g, [1], 1)
    with pytest.raises(SearchError, match="uncovered"):
        check_cover(g, [0], 1)
    with pytest.raises(SearchError, match="not the 2"):
        check_cover(g, [1], 2)


def test_heuristic_names():
    assert parse_heuristic("dynamic:4,lp").flags == K.F_DYNAMIC | K.F_LP
    assert parse_heuristic("dynamic:all").flags == K.F_CLIQUES
    for bad in ("static:5", "dynamic", "clique", "static:2,static:3", ""):
        with pytest.raises(SearchError):
            parse_heuristic(bad)


# --- graphs -------------------------------------------------------------------------------------------------

def test_formats_read_the_same_graph():
    pace = parse_text("c a comment\np td 4 3\n1 2\n2 3\n3 4\n")
    dimacs = parse_text("c x\np edge 4 3\ne 1 2\ne 2 3\ne 3 4\n")
    plain = parse_text("# list\n1 2\n2 3\n3 4\n")
    assert np.array_equal(pace.edges, dimacs.edges) and np.array_equal(pace.edges, plain.edges)
    assert pace.digest() == dimacs.digest() == plain.digest()
    assert parse_text("10 20\n20 30\n").labels_of([0, 2]) == [10, 30]


@pytest.mark.parametrize("text, message", [
    ("p td 3\n1 2\n", "malformed 'p' line"),
    ("p tw 3 1\n1 2\n", "malformed 'p' line"),
    ("p td 3 1\np td 3 1\n1 2\n", "a second 'p' line"),
    ("1 2\np td 3 1\n", "after edges"),
    ("p td 3 1\n1 4\n", "out of range"),
    ("p td 3 1\n0 1\n", "out of range"),
    ("p td 3 1\n2 2\n", "self-loop"),
    ("p td 3 2\n1 2\n", "promises 2 edges"),
    ("p td 3 1\n1 2\n2 3\n", "more edges"),
    ("p td 3 1\n1 x\n", "not a whole number"),
    ("p edge 3 1\n1 2\n", "expected an edge 'e u v'"),
    ("1 2 3\n", "expected an edge"),
    (f"p td {10 ** 15} 1\n1 2\n", "vertices"),
    (f"p td 1000 {10 ** 16}\n1 2\n", "needs about"),
])
def test_bad_graphs_are_refused_in_one_line(text, message):
    with pytest.raises(GraphError, match=message) as info:
        parse_text(text, "g.gr")
    assert "\n" not in str(info.value)


def test_repeated_edges_are_merged_and_counted():
    g = parse_text("p td 3 3\n1 2\n2 1\n2 3\n")
    assert g.m == 2 and g.merged == 1


def test_stated_optimum_from_comment_and_out_file(tmp_path):
    (tmp_path / "a.gr").write_text("p td 3 2\n1 2\n2 3\n")
    (tmp_path / "a.out").write_text("s vc 3 1\n2\n")
    assert read_graph(tmp_path / "a.gr").optimal == 1
    assert parse_text("# optimal 4\n1 2\n").optimal == 4


def test_random_graphs_are_the_talks_class_and_reproducible():
    g = random_graph(150, 16, 7, 3)
    assert g.n == 150 and g.m == 1200
    assert len({tuple(e) for e in g.edges.tolist()}) == 1200 and (g.edges[:, 0] < g.edges[:, 1]).all()
    assert np.array_equal(g.edges, random_graph(150, 16, 7, 3).edges)
    assert not np.array_equal(g.edges, random_graph(150, 16, 7, 4).edges)
    full = random_graph(6, 5, 1)
    assert full.m == 15


# --- the clique table ---------------------------------------------------------------------------------------

def test_cliques_against_brute_force():
    rng = np.random.default_rng(5)
    for _ in range(5):
        n = int(rng.integers(5, 14))
        edges = random_edges(rng, n, 0.55)
        es = {tuple(e) for e in edges.tolist()}
        table = cliques_of(n, edges)
        for k, found in ((3, table.triangles), (4, table.quads)):
            want = [c for c in itertools.combinations(range(n), k)
                    if all(p in es for p in itertools.combinations(c, 2))]
            assert [tuple(r) for r in found.tolist()] == want


def test_clique_table_file_round_trip_and_damage(tmp_path):
    from pdbtool.tables.cache import TableCache

    g = random_graph(40, 10, 1)
    table, built = get_table(g, TableCache(tmp_path))
    assert built and table.counts == find_cliques(g).counts
    again, built = get_table(g, TableCache(tmp_path))
    assert not built and np.array_equal(again.triangles, table.triangles)
    assert verify_file(table.path).ok
    raw = bytearray(table.path.read_bytes())
    raw[-20] ^= 1
    bad = tmp_path / "bad.pdb"
    bad.write_bytes(bytes(raw))
    report = verify_file(bad)
    assert not report.ok and "checksum" in report.failure
    # a consistent file whose cliques are not the graph's: the recomputation finds it
    forged = CliqueTable(table.vertices, table.edges, table.triangles[1:], table.quads, table.graph_hash)
    forged.save(tmp_path / "forged.pdb")
    report = verify_file(tmp_path / "forged.pdb")
    assert not report.ok and "triangles" in report.failure


# --- the command line ---------------------------------------------------------------------------------------

def run(command, args, **kw):
    return CliRunner().invoke(COMMANDS[command], [str(a) for a in args], **kw)


@pytest.fixture(scope="module")
def batch_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("graphs")
    (d / "a.gr").write_text("c optimal 2\np td 4 3\n1 2\n2 3\n3 4\n")
    (d / "b.gr").write_text("p td 3 2\n1 2\n2 4\n")
    (d / "c.dimacs").write_text("p edge 5 4\ne 1 2\ne 1 3\ne 1 4\ne 1 5\n")
    (d / "d.gr").write_text("p td 3 2\n1 1\n2 3\n")
    return d


def test_cli_bad_input_one_line_exit_2_batch_goes_on(batch_dir, tmp_path):
    result = run("solve", [batch_dir, "--format", "json", "--cache-dir", tmp_path])
    assert result.exit_code == 2
    records = [json.loads(line) for line in result.stdout.splitlines()]
    by_id = {r["id"]: r for r in records}
    assert by_id["a.gr"]["size"] == 2 and by_id["a.gr"]["solved"]
    assert by_id["c.dimacs"]["cover"] == [1]
    assert "out of range" in by_id["b.gr"]["error"] and "self-loop" in by_id["d.gr"]["error"]
    assert all("\n" not in (r["error"] or "") for r in records)


def test_cli_disagreement_exit_3(tmp_path):
    (tmp_path / "w.gr").write_text("c optimal 1\np td 4 3\n1 2\n2 3\n3 4\n")
    result = run("solve", [tmp_path / "w.gr", "--cache-dir", tmp_path])
    assert result.exit_code == 3 and "DISAGREES" in result.stdout


def test_cli_jobs_resume_and_pace(tmp_path):
    d = tmp_path / "g"
    assert run("random", ["--vertices", 40, "--degree", 8, "--seed", 3, "-n", 3, "--output-dir", d]).exit_code == 0
    out = tmp_path / "r.jsonl"
    one = run("solve", [d, "--format", "json", "--cache-dir", tmp_path])
    two = run("solve", [d, "--format", "json", "--jobs", 2, "-H", "dynamic:3", "--cache-dir", tmp_path,
                        "--output", out, "--pace", tmp_path / "pace", "--clock", "cpu", "--time-limit", 600])
    assert one.exit_code == two.exit_code == 0
    sizes = [[json.loads(x)["size"] for x in r.stdout.splitlines()] for r in (one, two)]
    assert sizes[0] == sizes[1]
    sol = sorted((tmp_path / "pace").iterdir())[0].read_text().split()
    assert sol[:3] == ["s", "vc", "40"] and int(sol[3]) == sizes[0][0] == len(sol) - 4
    # a held cover edited to leave an edge uncovered is solved again, not trusted
    lines = out.read_text().splitlines()
    first = json.loads(lines[0])
    first["cover"] = first["cover"][1:]
    first["size"] -= 1
    first["lower_bound"] -= 1
    out.write_text("\n".join([json.dumps(first)] + lines[1:]) + "\n")
    three = run("solve", [d, "--format", "json", "--cache-dir", tmp_path, "--output", out, "--resume"])
    assert three.exit_code == 0 and "solving it again" in three.stderr
    assert [json.loads(x)["size"] for x in three.stdout.splitlines()] == sizes[0][:1]


def test_cli_tables_build_inspect_verify(tmp_path):
    g = tmp_path / "g.gr"
    assert run("random", ["--vertices", 30, "--degree", 9, "--seed", 1]).exit_code == 0
    g.write_text(run("random", ["--vertices", 30, "--degree", 9, "--seed", 1]).stdout)
    built = run("build", [g, "--cache-dir", tmp_path / "c", "--format", "json"])
    assert built.exit_code == 0 and json.loads(built.stdout)["built"]
    shown = run("inspect", ["--graph", g, "--cache-dir", tmp_path / "c"])
    assert shown.exit_code == 0 and "triangles" in shown.stdout
    ok = run("verify", ["--graph", g, "--cache-dir", tmp_path / "c"])
    assert ok.exit_code == 0 and ok.stdout.startswith("OK")
    solved = run("solve", [g, "-H", "static:4", "--reductions", "none", "--format", "json", "--cache-dir",
                          tmp_path / "c"])
    assert json.loads(solved.stdout)["clique_table"] == "cache"
    path = json.loads(built.stdout)["file"]
    raw = bytearray(open(path, "rb").read())
    raw[len(raw) // 2] ^= 0xFF
    bad = tmp_path / "bad.pdb"
    bad.write_bytes(bytes(raw))
    failed = run("verify", [bad])
    assert failed.exit_code == 3 and "FAIL" in failed.stdout
    refused = run("inspect", [tmp_path / "g.gr"])
    assert refused.exit_code == 1 and "not a pdbtool table" in refused.stderr


# --- the MaxSAT-style tightening ------------------------------------------------------------------------------

TIGHTEN_TRIALS = 150


def test_maxsat_tightening_is_sound_against_brute_force():
    """Every vertex that the tightening takes out of the branching list keeps the independent sets of the
    first kmin cliques and the moved vertices at kmin vertices at most."""
    from pdbtool.vcover.maxsat import tighten

    rng = np.random.default_rng(53)
    moved_total = 0
    for _ in range(TIGHTEN_TRIALS):
        n = int(rng.integers(8, 23))
        edges = random_edges(rng, n, float(rng.uniform(0.4, 0.85)))
        indptr, indices = csr_of(n, edges)
        words = (n + 63) // 64
        adj = K.adjacency_bits(indptr, indices, words)
        status = np.zeros(n, dtype=np.int8)
        deg = (indptr[1:] - indptr[:-1]).astype(np.int64)
        pbits, qbits = np.zeros(words, dtype=np.uint64), np.zeros(words, dtype=np.uint64)
        order_v, order_k = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        free, c = K.clique_cover_bits(status, deg, adj, pbits, qbits, order_v, order_k)
        for kmin in range(1, c):
            ks = order_k.copy()
            cbits = np.zeros((3 * n, words), dtype=np.uint64)
            for v, k in zip(order_v[:free].tolist(), ks[:free].tolist()):
                cbits[k - 1, v >> 6] |= np.uint64(1) << np.uint64(v & 63)
            scratch = [np.zeros(n, dtype=np.int64) for _ in range(4)]
            moved = tighten(adj, order_v, ks, free, kmin, cbits, cbits[n:2 * n], cbits[2 * n:], *scratch)
            inside = [v for v, k in zip(order_v[:free].tolist(), ks[:free].tolist()) if k == -1 or k <= kmin]
            assert moved == sum(1 for k in ks[:free].tolist() if k == -1)
            moved_total += moved
            index = {v: i for i, v in enumerate(inside)}
            sub = [(index[u], index[v]) for u, v in edges.tolist() if u in index and v in index]
            alpha = len(inside) - oracle(len(inside), sub)
            assert alpha <= kmin, (n, edges.tolist(), kmin, ks.tolist())
    assert moved_total > 0


def test_maxsat_on_and_off_find_the_optimum():
    rng = np.random.default_rng(54)
    for _ in range(6):
        n = int(rng.integers(20, 31))
        g = Graph(n, random_edges(rng, n, float(rng.uniform(0.2, 0.5))))
        opt = oracle(n, g.edges)
        for maxsat in (True, False):
            result = solve(g, "cliques", "none", maxsat=maxsat)
            assert result.optimal and result.size == opt == result.lower_bound
            check_cover(g, result.cover, opt)


# --- the local search of the first cover ----------------------------------------------------------------------

def _random_csr(rng, count, most, p_low, p_high):
    for _ in range(count):
        n = int(rng.integers(2, most))
        edges = random_edges(rng, n, float(rng.uniform(p_low, p_high)))
        yield (n, edges, *csr_of(n, edges))


def test_local_search_edge_numbers_match_both_ends():
    from pdbtool.vcover.local_search import _edge_ids

    for n, edges, indptr, indices in _random_csr(np.random.default_rng(55), 20, 40, 0.05, 0.9):
        eid, eu, ev = _edge_ids(indptr, indices)
        assert sorted(zip(eu.tolist(), ev.tolist())) == sorted(map(tuple, edges.tolist()))
        for v in range(n):
            for i in range(indptr[v], indptr[v + 1]):
                assert {int(eu[eid[i]]), int(ev[eid[i]])} == {v, int(indices[i])}


def test_local_search_returns_a_cover_no_larger_and_finds_small_optima():
    from pdbtool.vcover.local_search import numvc

    for n, edges, indptr, indices in _random_csr(np.random.default_rng(56), 30, 21, 0.1, 0.7):
        cover = np.zeros(n, dtype=np.int8)
        greedy = int(K.greedy_cover(indptr, indices, cover))
        size = int(numvc(indptr, indices, cover, 3000, 1, 0, True))  # the solver's argument types
        opt = oracle(n, edges)
        assert opt <= size <= greedy and int(cover.sum()) == size
        inside = cover.astype(bool)
        assert edges.size == 0 or bool(np.all(inside[edges[:, 0]] | inside[edges[:, 1]]))
        assert size == opt, (n, edges.tolist())


def test_local_search_on_and_off_find_the_optimum():
    g = random_graph(60, 12, 3)
    with_ls, without = solve(g), solve(g, local_steps=0)
    assert with_ls.optimal and without.optimal and with_ls.size == without.size
    assert with_ls.first_size <= with_ls.greedy_size == without.first_size
    check_cover(g, with_ls.cover, with_ls.size)


def test_standard_input_is_read_with_a_cap(monkeypatch):
    """``-`` reads standard input as a graph, and refuses in one line a stream past the cap of a file."""
    import io
    import sys

    import pdbtool.files
    from pdbtool.vcover.graph import GraphError, read_graph

    text = b"p td 3 2\n1 2\n2 3\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    graph = read_graph("-")
    assert graph.n == 3 and len(graph.edges) == 2
    monkeypatch.setattr(pdbtool.files, "MAX_TEXT_BYTES", 10)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text)))
    with pytest.raises(GraphError, match="more than 10 bytes"):
        read_graph("-")


def test_local_search_heap_tops_the_scans_choice():
    """The heap of the cover's vertices keeps at its top the vertex a scan of the cover would take out
    (highest dscore, then the oldest move, then the lowest number), through removals, insertions and
    score changes."""
    from pdbtool.vcover import local_search as L

    rng = np.random.default_rng(57)
    n = 40
    incover = (rng.random(n) < 0.6).astype(np.int8)
    dscore = rng.integers(-5, 3, n).astype(np.int64)
    moved = rng.integers(0, 4, n).astype(np.int64)
    heap, hpos = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    hlen = L._heap_build(incover, heap, hpos, dscore, moved)
    for _ in range(400):
        inside = np.flatnonzero(incover)
        if inside.size:
            assert heap[0] == min(inside, key=lambda v: (-dscore[v], moved[v], v))
            assert all(hpos[heap[p]] == p for p in range(hlen)) and hlen == inside.size
        v = int(rng.integers(n))
        if incover[v] and rng.random() < 0.3:
            hlen = L._heap_remove(v, hlen, heap, hpos, dscore, moved)
            incover[v] = 0
        elif not incover[v]:
            incover[v] = 1
            heap[hlen], hpos[v] = v, hlen
            hlen += 1
            L._sift_up(hlen - 1, heap, hpos, dscore, moved)
        else:
            dscore[v] += int(rng.integers(-3, 4))
            moved[v] = int(rng.integers(0, 6))
            L._heap_fix(v, hlen, heap, hpos, dscore, moved)


def test_local_search_stops_at_its_floor():
    """A cover of the floor's size ends the search: at the greedy cover's size it is kept as it is, at the
    optimum the optimum is found."""
    from pdbtool.vcover.local_search import numvc

    checked = 0
    for n, edges, indptr, indices in _random_csr(np.random.default_rng(58), 40, 30, 0.2, 0.5):
        greedy = np.zeros(n, dtype=np.int8)
        size = int(K.greedy_cover(indptr, indices, greedy))
        opt = oracle(n, edges)
        if size == opt:
            continue
        for floor in (size, opt):
            cover = greedy.copy()
            assert int(numvc(indptr, indices, cover, 100_000, 1, floor, True)) == floor == int(cover.sum())
        checked += 1
    assert checked


def test_local_search_heap_and_scan_make_the_same_moves():
    """The heap only indexes the scan's choice: both give the same cover, step for step."""
    from pdbtool.vcover.local_search import numvc

    for n, _edges, indptr, indices in _random_csr(np.random.default_rng(59), 12, 40, 0.1, 0.6):
        greedy = np.zeros(n, dtype=np.int8)
        K.greedy_cover(indptr, indices, greedy)
        for steps in (37, 400):
            heap, scan = greedy.copy(), greedy.copy()
            assert numvc(indptr, indices, heap, steps, 3, 0, True) == numvc(indptr, indices, scan, steps, 3, 0, False)
            assert np.array_equal(heap, scan)
