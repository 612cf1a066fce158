"""Cells of a batch spread over threads (``envs.fastsim.threads``): slices and error handling."""

from __future__ import annotations

import threading

import pytest

from envs.fastsim.threads import over_cells, slices


@pytest.mark.parametrize(
    ("batch", "parts", "want"),
    [
        (1, 4, [(0, 1)]),
        (8, 1, [(0, 8)]),
        (8, 2, [(0, 4), (4, 8)]),
        (10, 4, [(0, 3), (3, 6), (6, 8), (8, 10)]),
        (3, 8, [(0, 1), (1, 2), (2, 3)]),
    ],
)
def test_slices_cover_the_batch_once_in_order(batch, parts, want):
    assert slices(batch, parts) == want


@pytest.mark.parametrize(("batch", "parts"), [(0, 2), (4, 0)])
def test_slices_refuse_an_empty_batch_or_no_part(batch, parts):
    with pytest.raises(ValueError, match="allowed"):
        slices(batch, parts)


def test_each_cell_is_stepped_once_and_slices_run_on_several_threads():
    seen: list[tuple[int, int, int, str]] = []
    lock = threading.Lock()

    def kernel(b0, b1, tag):
        with lock:
            seen.append((b0, b1, threading.get_ident(), tag))

    over_cells(kernel, 10, 3)("x")
    assert sorted((b0, b1) for b0, b1, _, _ in seen) == [(0, 4), (4, 7), (7, 10)]
    assert {tag for *_, tag in seen} == {"x"}
    assert threading.get_ident() in {t for _, _, t, _ in seen}  # the caller runs a slice
    assert len({t for _, _, t, _ in seen}) >= 2
    seen.clear()
    over_cells(kernel, 10, 1)("y")
    assert seen == [(0, 10, threading.get_ident(), "y")]


def test_a_failing_slice_raises_after_every_slice_has_ended():
    ended: list[int] = []
    release = threading.Event()

    def kernel(b0, b1):
        if b0 == 0:
            raise RuntimeError("slice 0 failed")
        release.wait(5.0)
        ended.append(b0)

    def run():
        over_cells(kernel, 3, 3)()

    threading.Timer(0.2, release.set).start()
    with pytest.raises(RuntimeError, match="slice 0 failed"):
        run()
    assert sorted(ended) == [1, 2]
