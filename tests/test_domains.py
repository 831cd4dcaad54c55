"""The domain registry and the command line's dispatch (issue 52): every command's --help in every domain
spells the shared options alike; --domain, a table's header kind and an instance file's suffix select the
domain; --format text|json|csv and the --json alias; predict reads its instances' board.

The registry is tested with a small domain of this module's own ("toy": the fewest steps from n to 0, a
step being n - 1 or, for even n, n / 2), registered for the tests that need it.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from pdbtool import domains
from pdbtool.cli._common import (cache_dir_option, format_option, output_option, record_printer, seed_option,
                                 time_limit_option, user_errors)
from pdbtool.cli.main import COMMANDS as SHARED_NAMES, cli
from pdbtool.errors import PdbtoolError

SHARED_OPTIONS = ("--format", "--cache-dir", "--threads", "--jobs", "--time-limit", "--output", "--resume",
                  "--progress", "--ray", "--seed", "--domain")

# --- the toy domain: its commands module is this test module ---------------------------------------------

NAME = "toy"
HELP = "a test domain: the fewest steps from n to 0 (n - 1, or n / 2 when even)"
TABLE_KINDS = ("toy-table",)
INSTANCE_SUFFIXES = (".toy",)


def toy_steps(n: int) -> int:
    """The exact answer by breadth-first search (the oracle of the toy's solve)."""
    frontier, seen, depth = {n}, {n}, 0
    while 0 not in frontier:
        frontier = {m for x in frontier for m in ((x - 1,) + ((x // 2,) if x % 2 == 0 else ())) if m not in seen}
        seen |= frontier
        depth += 1
    return depth


@click.command("build")
@click.option("--size", type=click.IntRange(1, 4096), default=64, show_default=True)
@output_option("Where to write the table.")
@format_option()
@user_errors
def toy_build(size, output, fmt):
    """Write the table of the fewest steps of 0..SIZE-1."""
    import numpy as np

    from pdbtool.tables import fileformat

    values = np.array([toy_steps(n) for n in range(size)], dtype=np.uint8)
    header = fileformat.make_header(kind="toy-table", width=size, height=1, goal=[0], tiles=[], blank="none",
                                    encoding="byte", entries=size)
    fileformat.save(output, header, values)
    with record_printer(fmt) as emit:
        emit({"file": output, "entries": size, "max": int(values.max())}, f"toy table of {size} entries  {output}")


@click.command("inspect")
@click.argument("files", nargs=-1, type=click.Path(dir_okay=False))
@cache_dir_option
@format_option()
@user_errors
def toy_inspect(files, cache_dir, fmt):
    """Show a toy table's kind and size."""
    from pdbtool.tables import fileformat

    with record_printer(fmt) as emit:
        for path in files:
            header, _ = fileformat.read_header(path)
            if header.get("kind") != "toy-table":
                raise PdbtoolError(f"{path}: not a toy table")
            emit({"file": path, "kind": header["kind"], "entries": header["entries"]},
                 f"toy table of {header['entries']} entries  {path}")


@click.command("solve")
@click.argument("instances", type=click.Path(dir_okay=False))
@time_limit_option
@seed_option(None, "Unused by the toy (its search is deterministic).")
@format_option()
@user_errors
def toy_solve(instances, time_limit, seed, fmt):
    """Solve each n of a .toy file (one a line)."""
    with open(instances, encoding="utf-8") as f:
        numbers = [int(line) for line in f if line.strip()]
    with record_printer(fmt) as emit:
        for n in numbers:
            emit({"id": str(n), "solved": True, "length": toy_steps(n)}, f"{n}: {toy_steps(n)} steps")


COMMANDS = {"build": toy_build, "inspect": toy_inspect, "solve": toy_solve}


@pytest.fixture
def toy():
    with domains.registered("toy", __name__):
        yield


def invoke(*args: str):
    return CliRunner().invoke(cli, list(args))


# --- the registry -------------------------------------------------------------------------------------------

def test_the_registry_holds_tile_and_hanoi4_by_protocol():
    assert domains.names()[0] == domains.DEFAULT == "tile"
    assert {"tile", "hanoi4"} <= set(domains.names())
    for name in domains.names():
        module = domains.load(name)
        assert module.NAME == name and module.HELP
        assert set(module.COMMANDS) <= set(SHARED_NAMES), name
    assert domains.domain_of_kind("hanoi4") == "hanoi4"
    assert domains.domain_of_kind("dynamic") == "tile"
    assert domains.domain_of_kind("no-such-kind") is None and domains.domain_of_kind(None) is None


def test_registering_a_domain_lasts_the_block_and_a_module_must_follow_the_protocol():
    with domains.registered("toy", __name__):
        assert "toy" in domains.names() and domains.domain_of_instances("x/A.TOY") == "toy"
        with pytest.raises(domains.DomainError, match="already"):
            with domains.registered("toy", __name__):
                pass
    assert "toy" not in domains.names()
    with domains.registered("broken", "pdbtool.errors"):  # a module without NAME, COMMANDS, ...
        with pytest.raises(domains.DomainError, match="lacks NAME"):
            domains.load("broken")
    with domains.registered("other", __name__):  # NAME says toy
        with pytest.raises(domains.DomainError, match="calls itself"):
            domains.load("other")


def _shared_specs(command: click.Command) -> dict[str, tuple]:
    ctx = click.Context(command)
    specs = {}
    for p in command.params:
        if not isinstance(p, click.Option):
            continue
        names = tuple(sorted(p.opts + p.secondary_opts))
        shared = [n for n in names if n in SHARED_OPTIONS]
        if shared:
            choices = tuple(p.type.choices) if isinstance(p.type, click.Choice) else None
            specs[shared[0]] = (names, p.make_metavar(ctx), choices, p.is_flag, p.hidden)
    return specs


def test_every_help_of_every_domain_spells_the_shared_options_alike(toy):
    seen: dict[str, dict[tuple, list[str]]] = {}
    for domain in domains.names():
        for name in domains.command_names(domain):
            where = f"{name} --domain {domain}"
            result = invoke(name, "--domain", domain, "--help")
            assert result.exit_code == 0, (where, result.output)
            assert "--domain" in result.output and "--json" not in result.output, where
            command = domains.load(domain).COMMANDS[name]
            specs = _shared_specs(command)
            assert "--domain" in specs, where
            if name != "random":  # every command that prints results has --format
                assert "--format" in specs, where
                assert specs["--format"][2] == ("text", "json", "csv"), where
            for option, spec in specs.items():
                seen.setdefault(option, {}).setdefault(spec, []).append(where)
    assert set(seen["--domain"]) and all("toy" in spec[2] for spec in seen["--domain"])
    different = {option: variants for option, variants in seen.items() if len(variants) > 1}
    assert not different, json.dumps({o: [w for ws in v.values() for w in ws[:1]] + [str(list(v))]
                                      for o, v in different.items()}, indent=1)


def test_help_of_another_domain_imports_no_numba():
    code = ("import sys\nfrom pdbtool.cli import main\n"
            "for argv in (['build', '--domain', 'hanoi4', '--help'], ['predict', '--help'], ['sample', '--help']):\n"
            "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
            "print('NUMBA' if 'numba' in sys.modules else 'LIGHT')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("LIGHT"), out


# --- the dispatch -------------------------------------------------------------------------------------------

def test_domain_from_its_option_its_table_kind_and_its_instance_suffix(toy, tmp_path):
    table = tmp_path / "t.tbl"
    r = invoke("build", "--domain", "toy", "--size", "40", "-o", str(table), "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"file": str(table), "entries": 40, "max": max(toy_steps(n) for n in range(40))}
    r = invoke("inspect", str(table))  # no --domain: the header's kind selects the toy
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("toy table of 40 entries")
    inst = tmp_path / "three.toy"
    inst.write_text("6\n13\n")
    r = invoke("solve", str(inst), "--format", "csv")  # no --domain: the suffix selects the toy
    assert r.exit_code == 0, r.output
    assert list(csv.DictReader(io.StringIO(r.stdout))) == [
        {"id": "6", "solved": "True", "length": str(toy_steps(6))},
        {"id": "13", "solved": "True", "length": str(toy_steps(13))}]
    assert toy_steps(6) == 4 and toy_steps(13) == 6  # 6 3 2 1 0; 13 12 6 3 2 1 0


def test_unknown_domain_and_missing_command_are_one_line_and_status_2(toy, tmp_path):
    r = invoke("solve", "x.txt", "--domain", "nosuch")
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert "unknown domain" in r.output and "tile, hanoi4" in r.output and "toy" in r.output
    r = invoke("predict", "--domain", "hanoi4")
    assert r.exit_code == 2 and r.output.count("\n") == 1
    assert "hanoi4 domain has no predict command" in r.output and "domains with predict: tile" in r.output
    r = invoke("verify", "--domain", "toy", "--help")
    assert r.exit_code == 2 and "its commands: build, inspect, solve" in r.output


def test_files_of_two_domains_are_refused(toy, tmp_path):
    inst = tmp_path / "a.toy"
    inst.write_text("3\n")
    hanoi = tmp_path / "h.tbl"
    from pdbtool.tables import fileformat

    import numpy as np

    fileformat.save(hanoi, fileformat.make_header(kind="hanoi4", disks=1, target="peg3", layout="half",
                                                  encoding="byte", entries=2), np.zeros(2, np.uint8))
    r = invoke("inspect", str(hanoi), str(inst))
    assert r.exit_code == 2 and "several domains (hanoi4, toy)" in r.output


# --- --format and the --json alias --------------------------------------------------------------------------

def test_json_is_a_hidden_alias_of_format_json(toy, tmp_path):
    table = tmp_path / "t.tbl"
    a = invoke("build", "--domain", "toy", "--size", "8", "-o", str(table), "--json")
    b = invoke("build", "--domain", "toy", "--size", "8", "-o", str(table), "--format", "json")
    assert a.exit_code == 0 and a.stdout == b.stdout and json.loads(a.stdout)["entries"] == 8
    r = invoke("build", "--domain", "toy", "--size", "8", "-o", str(table), "--json", "--format", "csv")
    assert r.exit_code == 2 and "not both" in r.output


def test_csv_cells_hold_lists_and_nested_values():
    with CliRunner().isolation() as (out, _err, *_):
        with record_printer("csv") as emit:
            emit({"id": "a", "moves": [1, 2, 3], "nested": {"x": [1]}, "none": None})
            emit({"id": "b", "extra": True})
    rows = list(csv.DictReader(io.StringIO(out.getvalue().decode())))
    assert rows == [{"id": "a", "moves": "1 2 3", "nested": '{"x": [1]}', "none": "", "extra": ""},
                    {"id": "b", "moves": "", "nested": "", "none": "", "extra": "True"}]


@pytest.fixture(scope="module")
def hanoi_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("hanoi")
    r = invoke("build", "--domain", "hanoi4", "--disks", "3", "--cache-dir", str(cache))
    assert r.exit_code == 0, r.output
    return cache


@pytest.mark.parametrize("args", [
    ["build", "--domain", "hanoi4", "--disks", "3"],
    ["inspect", "--domain", "hanoi4", "--disks", "3"],
    ["verify", "--domain", "hanoi4", "--disks", "3"],
    ["convert", "--domain", "hanoi4", "--disks", "3", "--encoding", "nibble"],
    ["solve", "--domain", "hanoi4", "--disks", "3", "--heuristic", "static:3", "--moves"],
])
def test_format_json_and_csv_in_the_hanoi4_domain(hanoi_cache, args):
    args = args + ["--cache-dir", str(hanoi_cache)]
    as_json = invoke(*args, "--format", "json")
    assert as_json.exit_code == 0, as_json.output
    record = json.loads(as_json.stdout.splitlines()[0])
    as_csv = invoke(*args, "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    row = next(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert list(row) == list(record)
    if args[0] == "solve":
        assert record["length"] == 5 and row["length"] == "5"  # Frame-Stewart: 3 disks on 4 pegs
        assert json.loads(row["moves"]) == record["moves"]


EIGHT = "2 8 5 0 4 3 7 6 1  # optimal 25\n1 0 2 3 4 5 6 7 8  # optimal 1\n"  # on 3x3 (the length gives it)


def test_predict_reads_its_instances_board_and_prints_json_and_csv(tmp_path):
    inst = tmp_path / "eight.txt"
    inst.write_text(EIGHT)
    base = ["predict", str(inst), "--heuristic", "manhattan", "--samples", "20000"]
    text = invoke(*base)
    assert text.exit_code == 0, text.output
    assert "manhattan on 3x3" in text.stdout
    assert text.stdout == invoke(*base, "--board", "3x3").stdout
    lines = [json.loads(line) for line in invoke(*base, "--format", "json").stdout.splitlines()]
    assert [r.get("id") for r in lines[:2]] == ["1", "2"] and lines[2]["summary"] and lines[2]["board"] == "3x3"
    assert lines[1]["last_bound"] == 1
    rows = list(csv.DictReader(io.StringIO(invoke(*base, "--format", "csv").stdout)))
    assert [r["id"] for r in rows] == ["1", "2"] and rows[0]["h0"] == str(lines[0]["h0"])


def test_sample_prints_its_histogram_as_csv():
    r = invoke("sample", "--board", "2x2", "--heuristic", "manhattan", "--exact", "--format", "csv")
    assert r.exit_code == 0, r.output
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    assert sum(int(x["states"]) for x in rows) == 12  # the solvable states of 2x2
    assert float(rows[-1]["at_most_h"]) == 1.0
    data = json.loads(invoke("sample", "--board", "2x2", "--heuristic", "manhattan", "--exact", "--json").stdout)
    assert data["states"] == 12
    assert [(h, k) for h, k in enumerate(data["histogram"]) if k] == [(int(x["h"]), int(x["states"])) for x in rows]


def _manhattan(tiles, width):
    return sum(abs(c % width - t % width) + abs(c // width - t // width) for c, t in enumerate(tiles) if t)


def test_sample_of_instances_reads_their_board_and_counts_their_states(tmp_path):
    inst = tmp_path / "eight.txt"
    lines = ["2 8 5 0 4 3 7 6 1", "1 0 2 3 4 5 6 7 8", "1 2 0 3 4 5 6 7 8", "3 1 2 4 0 5 6 7 8"]
    inst.write_text("\n".join(lines) + "\n")
    r = invoke("sample", str(inst), "--heuristic", "manhattan", "--format", "json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    expected = [_manhattan([int(x) for x in line.split()], 3) for line in lines]
    assert data["board"] == "3x3" and data["states"] == 4 and data["of"] == f"instances of {inst}"
    assert data["histogram"] == [expected.count(h) for h in range(max(expected) + 1)]
    assert data["mean"] == pytest.approx(sum(expected) / 4) and data["parity"]
    r = invoke("sample", str(inst), "--heuristic", "manhattan", "--exact")
    assert r.exit_code == 1 and "not both" in r.output


@pytest.fixture(scope="module")
def tile_cache(tmp_path_factory):
    cache = tmp_path_factory.mktemp("tile")
    r = invoke("build", "--pattern", "1,2,3", "--board", "3x3", "--cache-dir", str(cache))
    assert r.exit_code == 0, r.output
    return cache


@pytest.mark.parametrize("args", [
    ["build", "--pattern", "1,2,3", "--board", "3x3"],
    ["inspect", "--pattern", "1,2,3", "--board", "3x3"],
    ["verify", "--cache", "--samples", "200", "--seed", "1"],
    ["convert", "--pattern", "1,2,3", "--board", "3x3", "--encoding", "nibble"],
])
def test_format_json_and_csv_in_the_tile_domain(tile_cache, args):
    args = args + ["--cache-dir", str(tile_cache)]
    records = [json.loads(line) for line in invoke(*args, "--format", "json").stdout.splitlines()]
    as_csv = invoke(*args, "--format", "csv")
    assert as_csv.exit_code == 0, as_csv.output
    rows = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert len(rows) == len(records) >= 1
    assert list(rows[0])[:len(records[0])] == list(records[0])  # the first record's keys, then any others'
    assert all(row["file"] == str(record["file"]) for row, record in zip(rows, records))
