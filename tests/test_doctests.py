import doctest

import pytest

import cellgym.draws
import cellgym.scenario
import envs.fast_params
import envs.lte_cell
import learners.cells
import learners.ppo


@pytest.mark.parametrize(
    "module",
    [
        cellgym.scenario,
        cellgym.draws,
        envs.lte_cell,
        envs.fast_params,
        learners.cells,
        learners.ppo,
    ],
)
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
