import doctest

import pytest

import cellgym.scenario
import envs.fast_params
import envs.lte_cell


@pytest.mark.parametrize("module", [cellgym.scenario, envs.lte_cell, envs.fast_params])
def test_docstring_examples_run(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
