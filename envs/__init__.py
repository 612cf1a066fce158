"""CellGym environments. Importing this package registers them with Gymnasium."""

from gymnasium.envs.registration import register

_ENTRY = "envs.lte_cell:LteCellEnv"

register(
    id="CellGym/LteSingleFlow-v0",
    entry_point=_ENTRY,
    kwargs={"scenario": {"name": "single_flow", "flows": [{"cca": "agent"}]}},
)
register(
    id="CellGym/LteVsCubic-v0",
    entry_point=_ENTRY,
    kwargs={
        "scenario": {"name": "vs_cubic", "flows": [{"cca": "cubic"}, {"cca": "agent"}]},
    },
)
register(
    id="CellGym/LteFluctuating-v0",
    entry_point=_ENTRY,
    kwargs={
        "scenario": {
            "name": "fluctuating",
            "sim_time_s": 30.0,
            "channel": {"mobility": "random"},
            "flows": [{"cca": "agent"}],
        }
    },
)
register(
    id="CellGym/NrSingleFlow-v0",
    entry_point=_ENTRY,
    kwargs={"scenario": "nr_single_flow"},
)
register(
    id="CellGym/NrVsCubic-v0",
    entry_point=_ENTRY,
    kwargs={"scenario": "nr_vs_cubic"},
)
register(
    id="CellGym/NrMmWave-v0",
    entry_point=_ENTRY,
    kwargs={"scenario": "nr_mmwave"},
)
