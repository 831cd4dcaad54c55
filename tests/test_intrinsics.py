"""The bit intrinsics against plain-Python definitions: pdep/pext (BMI2 and the loop fallback), select_bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numba import njit

from pdbtool._native.intrinsics import _pdep_loop, _pext_loop, deposit_bits, extract_bits, select_bit

WORDS = st.integers(0, (1 << 64) - 1)


def set_bits(mask: int) -> list[int]:
    return [pos for pos in range(64) if mask >> pos & 1]


def pdep_reference(src: int, mask: int) -> int:
    return sum((src >> i & 1) << pos for i, pos in enumerate(set_bits(mask)))


def pext_reference(src: int, mask: int) -> int:
    return sum((src >> pos & 1) << i for i, pos in enumerate(set_bits(mask)))


@njit
def _all(src, mask):
    return _pdep_loop(src, mask), _pext_loop(src, mask), deposit_bits(src, mask), extract_bits(src, mask)


@njit
def _select(j, mask):
    return select_bit(j, mask)


@settings(max_examples=300, deadline=None)
@given(WORDS, WORDS)
def test_deposit_and_extract_match_their_definitions(src, mask):
    pdep_loop, pext_loop, pdep, pext = (int(x) for x in _all(np.uint64(src), np.uint64(mask)))
    assert pdep_loop == pdep == pdep_reference(src, mask)
    assert pext_loop == pext == pext_reference(src, mask)
    assert pext_reference(pdep, mask) == src & ((1 << bin(mask).count("1")) - 1)


@pytest.mark.parametrize("src, mask", [(0, 0), ((1 << 64) - 1, 0), (0, (1 << 64) - 1),
                                       ((1 << 64) - 1, (1 << 64) - 1), (1, 1 << 63), (1 << 63, 1 << 63)])
def test_deposit_and_extract_at_the_word_edges(src, mask):
    pdep_loop, pext_loop, pdep, pext = (int(x) for x in _all(np.uint64(src), np.uint64(mask)))
    assert pdep_loop == pdep == pdep_reference(src, mask)
    assert pext_loop == pext == pext_reference(src, mask)


@settings(max_examples=200, deadline=None)
@given(WORDS.filter(bool), st.data())
def test_select_bit_is_the_jth_set_bit(mask, data):
    ones = set_bits(mask)
    j = data.draw(st.integers(0, len(ones) - 1))
    assert int(_select(j, np.uint64(mask))) == 1 << ones[j]

