"""pdbtool/registry.py is the one list of names: the CLI's choices and --help, Solver and make_heuristic all
follow it, and a new entry is all a heuristic needs besides its module."""

from __future__ import annotations

import click
import pytest

from pdbtool import registry
from pdbtool.cli.solve import command as solve_command
from pdbtool.heuristics import HeuristicError, make_heuristic
from pdbtool.puzzle.board import Board
from pdbtool.search.solver import Solver, SolverError


def choices(command: click.Command, option: str) -> list[str]:
    param = next(p for p in command.params if p.name == option)
    assert isinstance(param.type, click.Choice)
    return list(param.type.choices)


def test_solve_offers_exactly_the_registered_names():
    assert choices(solve_command, "heuristic") == list(registry.HEURISTICS)
    assert choices(solve_command, "blank") == list(registry.BLANK_RULES)
    assert choices(solve_command, "encoding") == list(registry.ENCODINGS)
    assert choices(solve_command, "dynamic") == list(registry.DYNAMIC_SETS)
    text = solve_command.get_help(click.Context(solve_command)).replace("\n", " ")
    for entry in registry.HEURISTICS.values():
        assert entry.name in text


def test_every_factory_imports_and_takes_only_known_inputs():
    for entry in registry.HEURISTICS.values():
        inputs = entry.inputs()
        assert "board" in inputs and set(inputs) <= set(registry.HEURISTIC_INPUTS), entry.name
        if entry.partition:
            assert {"patterns", "tables"} <= set(inputs), entry.name
        if entry.dynamic:
            assert "dynamic" in inputs, entry.name


def test_unknown_names_are_one_line_errors():
    with pytest.raises(SolverError, match="unknown heuristic 'nope': choose one of pdb, manhattan"):
        Solver(Board(3, 3), heuristic="nope")
    with pytest.raises(SolverError, match="unknown blank rule"):
        Solver(Board(3, 3), heuristic="manhattan", blank="sideways")
    with pytest.raises(HeuristicError, match="unknown heuristic"):
        make_heuristic("nope", board=Board(3, 3))


def test_a_new_registry_line_is_all_a_heuristic_needs(monkeypatch):
    """The CONTRIBUTING.md recipe: an entry naming a module's class makes it a heuristic of Solver."""
    entry = registry.Heuristic("manhattan-again", "Manhattan distance under another name",
                               "pdbtool.heuristics.manhattan:Manhattan")
    monkeypatch.setitem(registry.HEURISTICS, entry.name, entry)
    board = Board(3, 3)
    state = (8, 6, 7, 2, 5, 4, 3, 0, 1)
    again = Solver(board, heuristic="manhattan-again").solve(state)
    plain = Solver(board, heuristic="manhattan").solve(state)
    assert again.solved and again.heuristic == "manhattan-again"
    assert (again.length, again.nodes_generated) == (plain.length, plain.nodes_generated)
