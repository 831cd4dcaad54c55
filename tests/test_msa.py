"""Multiple sequence alignment (``pdbtool.msa``): costs against an exhaustive lattice dynamic program, the
heuristics' admissibility and consistency on every lattice node, the two-sequence case against
Needleman-Wunsch and Gotoh, PA-Star's cost model worked by hand, the tables' files, and the command line's
bad inputs."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from pdbtool.msa import alignment_cost, align, make_model, parse_fasta
from pdbtool.msa.commands import COMMANDS
from pdbtool.msa.costs import AMINO_ACIDS, pastar_table, score_table
from pdbtool.msa.dp import INF, pair_suffix
from pdbtool.msa.heuristics import build, encode
from pdbtool.msa.kernels import node_heuristics
from pdbtool.msa.search import strides_of

from conftest import examples

PASTAR = make_model("pastar")
BLOSUM = make_model("blosum62")


def instance(*seqs):
    return parse_fasta("".join(f">s{i}\n{s}\n" for i, s in enumerate(seqs)), "test", "protein")


class Lattice:
    """Exhaustive dynamic programs over every node of a small instance's lattice, vectorised: ``cost[x, m]``,
    the cost of the column ``m`` (a 0/1 vector of the sequences it advances) at the node ``x``, ``succ[x, m]``
    the node it leads to and ``valid[x, m]`` whether it stays in the lattice; ``fwd`` and ``back`` the least
    costs from the start and to the end.  Nodes are numbered by the search's packed key (``strides_of``)."""

    def __init__(self, model, seqs):
        k = len(seqs)
        self.k = k
        self.lens = np.array([len(s) for s in seqs], dtype=np.int64)
        self.strides = strides_of(self.lens)
        total = int(np.prod(self.lens + 1))
        keys = np.arange(total, dtype=np.int64)
        x = (keys[:, None] // self.strides) % (self.lens + 1)                      # nodes x k
        self.moves = np.array([m for m in itertools.product((0, 1), repeat=k) if any(m)], dtype=np.int64)
        y = x[:, None, :] + self.moves[None, :, :]                                 # nodes x moves x k
        self.valid = (y <= self.lens).all(axis=2)
        self.succ = np.where(self.valid, keys[:, None] + self.moves @ self.strides, 0)
        codes = encode(model, seqs)
        # letter index of sequence i at x_i (its last letter past the end: such moves are not valid)
        letter = np.stack([codes[i][np.minimum(x[:, i], len(seqs[i]) - 1)] for i in range(k)], axis=1)
        cost = np.zeros(self.valid.shape, dtype=np.int64)
        for i, j in itertools.combinations(range(k), 2):
            mi, mj = self.moves[:, i][None, :], self.moves[:, j][None, :]
            both = model.sub[letter[:, i], letter[:, j]].astype(np.int64)[:, None]
            cost += np.where(mi & mj, both, np.where(mi | mj, model.gap, model.gap_gap))
        self.cost = cost
        level = x.sum(axis=1)
        big = np.int64(1) << 50
        back = np.full(total, big, dtype=np.int64)
        back[total - 1] = 0
        for lv in range(int(level.max()) - 1, -1, -1):
            at = np.flatnonzero(level == lv)
            back[at] = np.where(self.valid[at], cost[at] + back[self.succ[at]], big).min(axis=1)
        fwd = np.full(total, big, dtype=np.int64)
        fwd[0] = 0
        for lv in range(int(level.max())):
            at = np.flatnonzero(level == lv)
            ok = self.valid[at]
            np.minimum.at(fwd, self.succ[at][ok], (fwd[at][:, None] + cost[at])[ok])
        self.fwd, self.back = fwd, back
        self.best = int(back[0])
        self.on_optimal = fwd + back == self.best

    def check_consistent(self, h):
        """``h[x] <= cost(x, m) + h[y]`` for every move between two nodes of finite heuristic; the goal's 0."""
        finite = h < INF
        edge = self.valid & finite[:, None] & finite[self.succ]
        bad = edge & (h[:, None] > self.cost + h[self.succ])
        assert not bad.any(), np.argwhere(bad)[:3]
        assert h[-1] == 0


def optimum(model, seqs):
    return Lattice(model, seqs).best


protein = st.text(alphabet="ACDEFGHIKLMNPQRSTVWY", min_size=1, max_size=4)


@settings(max_examples=examples(40), deadline=None)
@given(st.lists(protein, min_size=2, max_size=4), st.sampled_from(["pastar", "blosum62"]),
       st.sampled_from([None, "none"]), st.sampled_from(["astar", "pea"]))
def test_optimal_cost_equals_the_exhaustive_lattice(seqs, cost, triangles, search):
    model = make_model(cost)
    if len(seqs) == 4 and sum(map(len, seqs)) > 12:
        seqs = [s[:3] for s in seqs]
    inst = instance(*seqs)
    result = align(inst, model, [] if triangles == "none" else None, search=search)
    assert result.solved and result.cost == optimum(model, seqs)
    assert [r.replace("-", "") for r in result.rows] == list(seqs)
    assert alignment_cost(model, result.rows) == result.cost


@pytest.fixture(scope="module")
def small_family():
    from pdbtool.msa.families import family

    return family(4, 6, seed=3, substitution=0.3, indel=0.2)


@pytest.fixture(scope="module")
def five_family():
    from pdbtool.msa.families import family

    return family(5, 5, seed=8, substitution=0.4, indel=0.3)


@pytest.fixture(scope="module")
def lattices():
    """Each (model, sequences)'s :class:`Lattice`, made once for the module's tests."""
    made: dict = {}

    def get(model, seqs):
        key = (model.name, tuple(seqs))
        if key not in made:
            made[key] = Lattice(model, seqs)
        return made[key]

    return get


@pytest.mark.parametrize("model", [PASTAR, BLOSUM], ids=["pastar", "blosum62"])
@pytest.mark.parametrize("partitions", [[], [[(0, 1, 2)]], [[(0, 1, 3)], [(1, 2, 3)]]],
                         ids=["pairwise", "one-triangle", "max-of-two"])
def test_heuristics_admissible_and_consistent_on_every_node(small_family, lattices, model, partitions):
    seqs = small_family
    codes = encode(model, seqs)
    lat = lattices(model, seqs)
    for bound in (None, 10**8):   # the progressive alignment's bound, and no cut at all
        heur = build(model, codes, partitions, bound=bound)
        h = node_heuristics(lat.k, lat.lens, lat.strides, *heur.arrays())
        if bound is not None and not partitions:
            assert (h < INF).all()
        if bound is None and partitions:
            # cut regions: exact along every optimal alignment, pruned elsewhere only
            assert (h[lat.on_optimal] <= lat.back[lat.on_optimal]).all()
        else:
            assert (h <= lat.back).all()
        assert not (lat.on_optimal & (h >= INF)).any()
        lat.check_consistent(h)
        if model.gap_gap and partitions:
            # two-gap columns priced: each triangle takes the larger of its column-shifted and plain tables,
            # so the heuristic is at least the same partitions' without the column bound, on every node
            plain = node_heuristics(lat.k, lat.lens, lat.strides, *build(model, codes, partitions, bound=bound,
                                                                          column_bound=False).arrays())
            assert (h >= plain).all()


@pytest.mark.parametrize("model", [PASTAR, BLOSUM], ids=["pastar", "blosum62"])
def test_every_packing_admissible_consistent_and_above_each_partition(five_family, lattices, model):
    """Five sequences, every triangle held: the best packing at each node and the triangles' average,
    admissible and consistent on every lattice node, at least each packing alone and above them somewhere."""
    seqs = five_family
    codes = encode(model, seqs)
    lat = lattices(model, seqs)
    for bound in (None, 10**8):   # the progressive alignment's bound, and no cut at all
        every = build(model, codes, None, 0, bound=bound)
        assert len(every.partitions) == 15 and len(every.triangles) == 10 and every.share() == 3
        h = node_heuristics(lat.k, lat.lens, lat.strides, *every.arrays())
        singles = np.maximum.reduce([
            node_heuristics(lat.k, lat.lens, lat.strides,
                            *build(model, codes, [[every.triangles[t] for t in part]], bound=bound).arrays())
            for part in every.partitions])
        assert (h >= singles).all()
        if bound is not None:
            assert (h > singles).any()     # the triangles' average beats every packing somewhere
        if bound is not None:
            assert (h < INF).all() and (h <= lat.back).all()
        else:
            assert not (lat.on_optimal & (h >= INF)).any()
            assert (h[lat.on_optimal] <= lat.back[lat.on_optimal]).all()
        lat.check_consistent(h)


def needleman_wunsch(model, a, b):
    sub = lambda x, y: int(model.sub[model.letters.index(x), model.letters.index(y)])  # noqa: E731
    D = {(0, 0): 0}
    for i in range(len(a) + 1):
        for j in range(len(b) + 1):
            if i or j:
                D[i, j] = min(([D[i - 1, j - 1] + sub(a[i - 1], b[j - 1])] if i and j else [])
                              + ([D[i - 1, j] + model.gap] if i else []) + ([D[i, j - 1] + model.gap] if j else []))
    return D[len(a), len(b)]


def gotoh_by_enumeration(model, a, b):
    """The least affine cost over every alignment of two short sequences."""
    best = None
    n, m = len(a), len(b)
    for length in range(max(n, m), n + m + 1):
        for cols_a in itertools.combinations(range(length), n):
            rest = [c for c in range(length) if c not in cols_a]
            for cols_b in itertools.combinations(range(length), m):
                if any(c not in cols_b for c in rest):
                    continue
                ra = ["-"] * length
                rb = ["-"] * length
                for c, ch in zip(cols_a, a):
                    ra[c] = ch
                for c, ch in zip(cols_b, b):
                    rb[c] = ch
                v = alignment_cost(model, ["".join(ra), "".join(rb)])
                best = v if best is None else min(best, v)
    return best


@settings(max_examples=examples(30), deadline=None)
@given(protein, protein)
def test_two_sequences_equal_needleman_wunsch(a, b):
    result = align(instance(a, b), PASTAR)
    assert result.cost == needleman_wunsch(PASTAR, a, b)
    codes = encode(PASTAR, [a, b])
    assert int(pair_suffix(codes[0], codes[1], PASTAR.sub, PASTAR.gap, 0)[0, 0]) == result.cost


@settings(max_examples=examples(25), deadline=None)
@given(protein, protein)
def test_affine_two_sequences_equal_gotoh(a, b):
    model = make_model("blosum62", gaps="affine", gap=2, gap_open=9)
    result = align(instance(a, b), model)
    assert result.solved and result.cost == gotoh_by_enumeration(model, a, b)
    assert alignment_cost(model, result.rows) == result.cost


def test_affine_with_three_sequences_is_refused():
    from pdbtool.errors import PdbtoolError

    with pytest.raises(PdbtoolError, match="two sequences only"):
        align(instance("AC", "AD", "AE"), make_model("pam250", gaps="affine"))


def test_pastar_model_worked_by_hand():
    # PA-Star's src/Cost.cpp: W-W 0, C-C 5, C-W 25, A-F 21; a residue against a gap 30, two gaps 30
    table = pastar_table()
    assert (table["W", "W"], table["C", "C"], table["C", "W"], table["A", "F"]) == (0, 5, 25, 21)
    # WW / W- / W-: the first column 0, the second (W, -, -) 30 + 30 and 30 for the two gaps -> 90
    # (W- / -W costs 60 + 60); with two gaps free the optimum would be 60
    assert align(instance("WW", "W", "W"), PASTAR).cost == 90
    assert alignment_cost(PASTAR, ["WW", "W-", "W-"]) == 90
    assert alignment_cost(make_model("pam250"), ["WW", "W-", "W-"]) == 60
    # CW / C-: 5 + 30
    assert align(instance("CW", "C"), PASTAR).cost == 35


def test_pastar_matrix_is_pam250_but_four_pairs():
    pam = score_table("pam250")
    table = pastar_table()
    differ = sorted({tuple(sorted(p)) for p in itertools.product(AMINO_ACIDS, repeat=2)
                     if table[p] != 17 - pam[p]})
    assert differ == [("A", "F"), ("F", "N"), ("G", "P"), ("N", "P")]


# --- the command line ----------------------------------------------------------------------------------------

GOOD = ">a\nMKVLAAG\n>b\nMKVLGAG\n>c\nMRVLAG\n"


@pytest.fixture(scope="module")
def fasta_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("fasta")
    (d / "good.fasta").write_text(GOOD)
    return d


@pytest.mark.parametrize("text, words", [
    ("just some text\n", "not FASTA"),
    (">a\n\n>b\nMKV\n", "empty"),
    (">a\nMKV\n>b\nMK1J\n", "protein alphabet"),
    (">a\nMKVL\n", "one sequence"),
    ("".join(f">s{i}\nMK\n" for i in range(13)), "13 sequences"),
    ("\0\1\2", "binary"),
])
def test_bad_input_one_line_exit_2_batch_goes_on(fasta_dir, tmp_path, text, words):
    bad = tmp_path / "bad.fasta"
    bad.write_bytes(text.encode())
    result = CliRunner().invoke(COMMANDS["solve"], [str(bad), str(fasta_dir / "good.fasta"), "--format", "json"])
    assert result.exit_code == 2, result.output
    records = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert [r["id"] for r in records if r["solved"]] == ["good"]
    errors = [line for line in result.stderr.splitlines() if "bad" in line]
    assert len(errors) == 1 and words in errors[0]
    if words == "protein alphabet":
        assert "'1', J" in errors[0]


def test_file_too_large_refused(tmp_path, monkeypatch):
    import pdbtool.msa.sequences as S

    monkeypatch.setattr(S, "MAX_FILE_BYTES", 10)
    big = tmp_path / "big.fasta"
    big.write_text(GOOD)
    result = CliRunner().invoke(COMMANDS["solve"], [str(big)])
    assert result.exit_code == 2 and "larger than" in result.stderr


def test_solve_json_record_and_resume(fasta_dir, tmp_path):
    out = tmp_path / "results.jsonl"
    args = [str(fasta_dir / "good.fasta"), "--format", "json", "-o", str(out)]
    first = CliRunner().invoke(COMMANDS["solve"], args)
    assert first.exit_code == 0, first.output
    record = json.loads(first.stdout.splitlines()[0])
    for key in ("id", "solved", "cost", "alignment", "expanded", "generated", "cpu_seconds", "peak_bytes"):
        assert key in record
    assert record["cost"] == optimum(PASTAR, ["MKVLAAG", "MKVLGAG", "MRVLAG"])
    again = CliRunner().invoke(COMMANDS["solve"], args + ["--resume"])
    assert again.exit_code == 0 and "1 held" in again.stdout + again.stderr or again.stdout.strip() == ""
    # a held record whose cost was raised is not trusted: solved again
    tampered = dict(record, cost=record["cost"] + 1)
    out.write_text(json.dumps(tampered) + "\n")
    third = CliRunner().invoke(COMMANDS["solve"], args + ["--resume"])
    assert third.exit_code == 0
    assert json.loads(third.stdout.splitlines()[0])["cost"] == record["cost"]


def test_memory_budget_stops_cleanly(tmp_path):
    from pdbtool.msa.families import family

    f = tmp_path / "fam.fasta"
    f.write_text("".join(f">s{i}\n{s}\n" for i, s in enumerate(family(6, 60, seed=1, substitution=0.6, indel=0.2))))
    result = CliRunner().invoke(COMMANDS["solve"], [str(f), "--triangles", "none", "--memory", "2M",
                                                    "--format", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout.splitlines()[0])
    assert not record["solved"] and record["stopped"] == "memory"
    assert record["lower_bound"] <= record["upper_bound"]


def test_tables_build_inspect_verify_and_damage(fasta_dir, tmp_path):
    cache = tmp_path / "cache"
    built = CliRunner().invoke(COMMANDS["build"], [str(fasta_dir / "good.fasta"), "--cache-dir", str(cache),
                                                   "--format", "json"])
    assert built.exit_code == 0, built.output
    path = json.loads(built.stdout.splitlines()[0])["path"]
    shown = CliRunner().invoke(COMMANDS["inspect"], [path, "--format", "json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["lengths"] == [7, 7, 6]
    assert CliRunner().invoke(COMMANDS["verify"], [path]).exit_code == 0
    data = bytearray(open(path, "rb").read())
    data[-20] ^= 0xFF
    open(path, "wb").write(bytes(data))
    damaged = CliRunner().invoke(COMMANDS["verify"], [path])
    assert damaged.exit_code == 1 and "checksum" in damaged.stderr and len(damaged.stderr.splitlines()) == 1


def test_random_families_are_seeded():
    one = CliRunner().invoke(COMMANDS["random"], ["-k", "4", "--length", "30", "--seed", "7"])
    two = CliRunner().invoke(COMMANDS["random"], ["-k", "4", "--length", "30", "--seed", "7"])
    assert one.exit_code == 0 and one.stdout == two.stdout
    inst = parse_fasta(one.stdout)
    assert inst.k == 4


def test_help_does_not_import_numba():
    import subprocess
    import sys

    code = ("import sys\nfrom click.testing import CliRunner\nfrom pdbtool.msa.commands import COMMANDS\n"
            "for c in COMMANDS.values():\n    CliRunner().invoke(c, ['--help'])\n"
            "print('NUMBA' if 'numba' in sys.modules else 'LIGHT')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "LIGHT"


def test_tables_built_in_slices_equal_one_piece(five_family, monkeypatch):
    """The three-way regions and tables, built a few cells a kernel call (so that a stop is seen between
    calls), equal those built in one piece."""
    from pdbtool.msa import heuristics

    codes = encode(PASTAR, five_family)
    whole = build(PASTAR, codes, None, 0)
    monkeypatch.setattr(heuristics, "SLICE_CELLS", 1)
    sliced = build(PASTAR, codes, None, 0)
    assert sliced.triangles == whole.triangles and sliced.tri_plain
    for name in ("tri_lo", "tri_cnt", "tri_cells", "tri_plain"):
        assert all(np.array_equal(a, b) for a, b in zip(getattr(sliced, name), getattr(whole, name))), name


def test_an_interrupted_table_build_stops_its_workers():
    """A signal raises in the main thread as it waits for the workers (here: one worker's exception, which
    the main thread meets first): the running builds stop at their next slice, none runs to its end."""
    import threading
    import time

    from pdbtool.msa.heuristics import _Stop, _Stopped

    stop = _Stop()
    running = threading.Event()
    seen = []

    def work(item):
        if item == "interrupt":
            running.wait(10)
            raise KeyboardInterrupt
        seen.append(f"{item} started")
        running.set()
        for _ in range(10_000):
            try:
                stop.check()
            except _Stopped:
                seen.append(f"{item} stopped")
                raise
            time.sleep(0.001)
        seen.append(f"{item} ran to its end")

    with pytest.raises(KeyboardInterrupt):
        stop.run_all(work, ["interrupt", "running", "pending"], 2)
    # (a worker may take the pending build before the main thread cancels it: it stops at its first look)
    started = [s.split()[0] for s in seen if s.endswith("started")]
    assert "running" in started and sorted(s.split()[0] for s in seen if s.endswith("stopped")) == sorted(started)
    assert not any(s.endswith("its end") for s in seen)


def test_time_limit_stops_the_table_build(five_family):
    """A time limit that passes while the three-way tables are built stops there: unsolved, the pairwise
    heuristic's start value the lower bound, the progressive alignment's cost the upper one."""
    inst = instance(*five_family)
    stopped = align(inst, PASTAR, None, -1, time_limit=0.0)
    assert not stopped.solved and stopped.stopped == "time" and "three-way tables" in stopped.notes[0]
    pairwise = build(PASTAR, encode(PASTAR, five_family), [])
    assert stopped.lower_bound == pairwise.start_value() and stopped.upper_bound == pairwise.upper_bound
    solved = align(inst, PASTAR, None, -1)
    assert solved.solved and stopped.lower_bound <= solved.cost <= stopped.upper_bound


def test_refined_progressive_alignment_bounds_the_optimum(five_family, lattices):
    """The upper bound: a progressive alignment, refined by realigning each sequence to the others, spells
    the sequences, costs what its columns cost, no more than the progressive one and no less than the
    optimum."""
    from pdbtool.msa import dp

    codes = encode(PASTAR, five_family)
    rows = dp.progressive(codes, [0, 1, 2, 3, 4], PASTAR.sub, PASTAR.gap, PASTAR.gap_gap)
    first = dp.rows_cost(rows, PASTAR.sub, PASTAR.gap, PASTAR.gap_gap)
    cost, refined = dp.refine(codes, rows, PASTAR.sub, PASTAR.gap, PASTAR.gap_gap)
    text = ["".join("-" if v < 0 else PASTAR.letters[v] for v in row) for row in refined]
    assert [t.replace("-", "") for t in text] == list(five_family)
    assert alignment_cost(PASTAR, text) == cost
    assert lattices(PASTAR, five_family).best <= cost <= first
