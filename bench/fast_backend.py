"""Environment steps per second: the ns-3 backend against the fast backend, single and batched.

    .venv/bin/python bench/fast_backend.py [--ns3-sim-time 5] [--seconds 3] [--skip-ns3]

Scenario: one UE at 100 m, 50 RBs, one bulk flow driven by the agent (``CellGym/LteSingleFlow``),
20 ms steps, action 0 (keep the window). It times:

- the ns-3 backend: ``LteCellEnv(backend="ns3")``, steps of one episode (reset timed apart);
- the fast backend, one environment: ``gym.make("CellGym/LteSingleFlow-v0", backend="fast")``,
  whose step is one compiled call (``envs.fastsim.single``), and once more through the Python
  path of the same step (``fused_step=False``: the environment code the ns-3 backend runs);
- the fast backend batched: ``make_fast_vec_env`` (Gymnasium ``VectorEnv``) with 1, 64 and 1024
  cells, counting every cell's step (aggregate env steps/s), and the bare compiled kernel
  (``FastCellBatch.step``) on the same batches, which shows the Python wrapper's share (one
  thread by default on a machine with fewer than 4 numba threads; once more for 64 and 1024 cells
  with numba threads over cells, ``parallel=True``);
- how cost grows with UEs per cell (one CUBIC flow per UE) and flows per cell (CUBIC flows on
  one UE), for 1 and 64 cells of the bare kernel;
- NR cells (``cell.type: nr``) beside the LTE cell of the same run: ``gym.make`` single env and
  bare kernel, 20 MHz at 30 kHz (2 slots per ms) and 100 MHz at 120 kHz in FR2 (8 slots per ms),
  each with its ratio to the LTE figure, medians of 3 alternating rounds (``--nr-only`` runs
  just this comparison).

Every figure is from this one run; ratios are against the ns-3 figure of the same run.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import envs  # noqa: E402,F401
from cellgym.scenario import FlowSpec, ScenarioSpec  # noqa: E402
from envs.fastsim import FastCellBatch, FastSimParams  # noqa: E402
from envs.fastsim.vector_env import make_fast_vec_env  # noqa: E402
from envs.lte_cell import LteCellEnv  # noqa: E402

#: Long enough that no timed loop reaches the end of an episode.
LONG_S = 1e6  # about 11.6 days: 5e7 steps of 20 ms


def timed(step: Callable[[], None], seconds: float, per_call: int = 1) -> float:
    """Calls of ``step`` per second (times ``per_call``) over about ``seconds`` of wall time."""
    step()  # warm: compilation, caches
    n, t0 = 0, time.perf_counter()
    while True:
        step()
        n += 1
        if n % 8 == 0 and time.perf_counter() - t0 >= seconds:
            break
    return n * per_call / (time.perf_counter() - t0)


def bench_ns3(sim_time_s: float, cell: dict | None = None) -> tuple[float, float]:
    """(steps/s, reset s) of ``LteCellEnv(backend="ns3")`` over one episode (``cell``: the
    scenario's cell section, default the LTE cell)."""
    spec = {"name": "single_flow", "sim_time_s": sim_time_s, "flows": [{"cca": "agent"}]}
    if cell is not None:
        spec["cell"] = cell
    env = LteCellEnv(scenario=spec, backend="ns3")
    try:
        t0 = time.perf_counter()
        env.reset(seed=1)
        reset_s = time.perf_counter() - t0
        action = np.zeros(1, dtype=np.float32)
        n, t0 = 0, time.perf_counter()
        done = False
        while not done:
            _, _, terminated, truncated, _ = env.step(action)
            done = terminated or truncated
            n += 1
        return n / (time.perf_counter() - t0), reset_s
    finally:
        env.close()


#: The NR cells of the comparison: (label, ``cell`` section).
NR_CELLS: tuple[tuple[str, dict], ...] = (
    ("NR 20 MHz mu=1", {"type": "nr", "numerology": 1, "bandwidth_mhz": 20.0}),
    ("NR FR2 100 MHz mu=3", {"type": "nr", "numerology": 3, "bandwidth_mhz": 100.0,
                             "frequency_ghz": 28.0}),
)  # fmt: skip


def bench_fast_single(seconds: float, fused: bool = True, cell: dict | None = None) -> float:
    """Steps/s of one fast environment made through ``gym.make``.

    ``fused=False`` times the Python path of the same step (``LteCellEnv.fused_step``);
    ``cell``: the scenario's cell section (default: the LTE cell).
    """
    scenario = {"name": "single_flow", "sim_time_s": LONG_S, "flows": [{"cca": "agent"}]}
    if cell is not None:
        scenario["cell"] = cell
    env = gym.make("CellGym/LteSingleFlow-v0", backend="fast", scenario=scenario)
    env.unwrapped.fused_step = fused  # type: ignore[attr-defined]
    env.reset(seed=1)
    action = np.zeros(1, dtype=np.float32)
    rate = timed(lambda: env.step(action), seconds)
    env.close()
    return rate


def bench_vec(num_envs: int, seconds: float) -> float:
    """Aggregate env steps/s of ``make_fast_vec_env`` with ``num_envs`` cells."""
    spec = {"name": "single_flow", "sim_time_s": LONG_S, "flows": [{"cca": "agent"}]}
    venv = make_fast_vec_env(spec, num_envs=num_envs, seed=1)
    venv.reset(seed=1)
    actions = np.zeros((num_envs, 1), dtype=np.float32)
    return timed(lambda: venv.step(actions), seconds, per_call=num_envs)


def bench_kernel(
    spec: ScenarioSpec, batch: int, seconds: float, parallel: bool | None = None
) -> float:
    """Aggregate cell steps/s of the bare kernel (``FastCellBatch.step``)."""
    cells = FastCellBatch(FastSimParams.from_spec(spec), batch, parallel=parallel)
    cells.reset(np.arange(1, batch + 1))
    actions = None
    if spec.agent_flows:
        actions = np.tile([[[50_000.0, 0.0]]], (batch, len(spec.agent_flows), 1))
    return timed(lambda: cells.step(actions), seconds, per_call=batch)


def main() -> None:
    """Print the figures."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--ns3-sim-time", type=float, default=5.0, help="simulated s of the ns-3 run")
    ap.add_argument("--seconds", type=float, default=3.0, help="wall s per fast measurement")
    ap.add_argument("--skip-ns3", action="store_true", help="no ns-3 run (no ratios)")
    ap.add_argument("--nr-only", action="store_true", help="only the NR vs LTE comparison")
    args = ap.parse_args()
    if not 1.0 <= args.ns3_sim_time <= 600.0:
        ap.error(f"--ns3-sim-time={args.ns3_sim_time}: allowed [1, 600]")
    if not 0.1 <= args.seconds <= 600.0:
        ap.error(f"--seconds={args.seconds}: allowed [0.1, 600]")

    if args.nr_only:
        bench_nr(args.seconds, ns3_sim_time_s=None if args.skip_ns3 else args.ns3_sim_time)
        return
    ns3 = None
    if not args.skip_ns3:
        ns3, reset_s = bench_ns3(args.ns3_sim_time)
        print(f"ns-3 backend (LteCellEnv)         {ns3:>12,.0f} steps/s   (reset {reset_s:.2f} s)")

    def line(label: str, rate: float) -> None:
        ratio = f"   x{rate / ns3:,.0f} ns-3" if ns3 else ""
        print(f"{label:<34}{rate:>12,.0f} steps/s{ratio}", flush=True)

    line("fast, gym.make single env", bench_fast_single(args.seconds))
    line("  the same, Python step path", bench_fast_single(args.seconds, fused=False))
    single_agent = ScenarioSpec(name="bench", sim_time_s=LONG_S, flows=[FlowSpec(cca="agent")])
    for b in (1, 64, 1024):
        line(f"fast, VectorEnv {b} cells", bench_vec(b, args.seconds))
        line(f"fast, bare kernel {b} cells", bench_kernel(single_agent, b, args.seconds))
    for b in (64, 1024):
        rate = bench_kernel(single_agent, b, args.seconds, parallel=True)
        line(f"fast, bare kernel {b} cells threads", rate)

    print("\nCost growth (bare kernel, CUBIC flows; cell steps/s for 1 and 64 cells):")
    print(f"{'cell':<22}{'1 cell':>14}{'64 cells':>14}")
    for n_ues in (1, 2, 4, 8):
        spec = ScenarioSpec(
            name="bench", sim_time_s=LONG_S, num_ues=n_ues,
            channel={"distances_m": [100.0 + 40.0 * u for u in range(n_ues)]},
            flows=[FlowSpec(ue=u) for u in range(n_ues)],
        )  # fmt: skip
        r1, r64 = (bench_kernel(spec, b, args.seconds / 2) for b in (1, 64))
        print(f"{n_ues} UEs x 1 flow{'':<8}{r1:>14,.0f}{r64:>14,.0f}", flush=True)
    for n_flows in (2, 4, 8):
        spec = ScenarioSpec(
            name="bench", sim_time_s=LONG_S, flows=[FlowSpec() for _ in range(n_flows)]
        )
        r1, r64 = (bench_kernel(spec, b, args.seconds / 2) for b in (1, 64))
        print(f"1 UE x {n_flows} flows{'':<10}{r1:>14,.0f}{r64:>14,.0f}", flush=True)
    bench_nr(args.seconds, ns3_sim_time_s=None if args.skip_ns3 else args.ns3_sim_time)


def bench_nr(seconds: float, rounds: int = 3, ns3_sim_time_s: float | None = None) -> None:
    """NR cells beside the LTE cell, same scenario otherwise: steps/s and the ratio to LTE.

    The cells are measured in turn, ``rounds`` times, and each figure is the median of its
    rounds: on a shared machine the load drifts between measurements. With ``ns3_sim_time_s``,
    each cell's ns-3 environment (5G-LENA for NR) is timed once too, and the single fast
    environment's rate is given as a ratio to it.
    """
    print("\nNR cells (one agent flow at 100 m; medians of alternating rounds; ratio to LTE):")
    cells = (("LTE 50 RBs", None), *NR_CELLS)
    runs: dict[str, list[tuple[float, float, float]]] = {label: [] for label, _ in cells}
    for _ in range(rounds):
        for label, cell in cells:
            data = {"name": "bench", "sim_time_s": LONG_S, "flows": [{"cca": "agent"}]}
            if cell is not None:
                data["cell"] = cell
            spec = ScenarioSpec.from_config(data)
            single = bench_fast_single(seconds, cell=cell)
            k1, k64 = (bench_kernel(spec, b, seconds) for b in (1, 64))
            runs[label].append((single, k1, k64))
    med = {label: np.median(np.array(r), axis=0) for label, r in runs.items()}
    if ns3_sim_time_s is not None:
        print(f"{'cell':<24}{'ns-3 env':>12}{'fast single env':>18}{'x ns-3':>10}")
        for label, cell in cells:
            rate, _ = bench_ns3(ns3_sim_time_s, cell)
            fast = med[label][0]
            print(f"{label:<24}{rate:>12,.0f}{fast:>18,.0f}{fast / rate:>10,.0f}", flush=True)
    lte = med["LTE 50 RBs"]
    print(f"{'cell':<24}{'gym.make single':>18}{'kernel 1 cell':>16}{'kernel 64 cells':>18}")
    for label, _ in cells:
        m = med[label]
        print(f"{label:<24}{m[0]:>18,.0f}{m[1]:>16,.0f}{m[2]:>18,.0f}")
        if label != "LTE 50 RBs":
            x = m / lte
            print(f"{'  x LTE':<24}{x[0]:>18.2f}{x[1]:>16.2f}{x[2]:>18.2f}", flush=True)


if __name__ == "__main__":
    main()
