"""The files each generated report depends on: one home for the provenance inputs.

A report's provenance (``cellgym.provenance``) records the SHA-256 of every file matching its
input globs (relative to the repository root; ``**`` matches any depth), and
``tests/evaluation/test_provenance.py`` names the inputs changed since the committed report. The
experiments run scenarios through the same rollout, session and bridge code, so they share
``COMMON``; each adds what only it reads.
"""

from __future__ import annotations

#: Read by every report: the ns-3 scenario program's sources (cached and live ns-3 runs come from
#: its binary), the core (scenario and its sections, records, metrics, reward, vocabulary, wire
#: schema) and the ns-3 rollout path. Not this module: a report's own patterns are recorded with
#: it, and a change to them shows as inputs added or removed, so declaring another report here
#: changes none of the others.
COMMON: tuple[str, ...] = (
    "ns3-scenarios/CMakeLists.txt",
    "ns3-scenarios/NS3-VERSION",
    "ns3-scenarios/model/**/*",
    "ns3-scenarios/helper/**/*",
    "ns3-scenarios/examples/**/*",
    "cellgym/controllers.py",
    "cellgym/fields.py",
    "cellgym/metrics.py",
    "cellgym/reward.py",
    "cellgym/scenario.py",
    "cellgym/cell_spec.py",
    "cellgym/path_extras.py",
    "cellgym/router_spec.py",
    "cellgym/traces/spec.py",
    "cellgym/workload.py",
    "cellgym/seeding.py",
    "cellgym/vocab.py",
    "cellgym/proto/*.proto",
    "evaluation/rollouts.py",
    "envs/bridge.py",
    "envs/contract.py",
    "envs/ns3_session.py",
    "envs/records.py",
    "envs/session.py",
)

#: The calibration tables (``python -m evaluation.experiments.calibrate``): also the fast model,
#: the calibration scenarios, the suite's modules and the policies that drive its agent rows
#: (through ``LteCellEnv`` on both backends).
CALIBRATION: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "envs/lte_cell.py",
    "cellgym/traces/**/*",
    "configs/scenario/calibration/*.yaml",
    "evaluation/experiments/calibrate.py",
    "evaluation/experiments/calibration_drivers.py",
    "evaluation/experiments/calibration_report.py",
    "baselines/__init__.py",
    "baselines/base.py",
    "baselines/xrc.py",
)

#: The XRC paper's reproduction (``python -m evaluation.experiments.xrc_paper``): also the figure
#: scenarios, its module, the environment and the XRC baseline. The report text (``xrc_report``)
#: is not an input: ``--render`` rewrites it from ``numbers.json``.
XRC_PAPER: tuple[str, ...] = (
    *COMMON,
    "configs/scenario/xrc_fig*.yaml",
    "evaluation/experiments/xrc_paper.py",
    "baselines/__init__.py",
    "baselines/base.py",
    "baselines/xrc.py",
    "envs/lte_cell.py",
)

#: Several learned flows (``python -m evaluation.experiments.multi_agent``): also the training
#: stack (the fast model, the multi-agent environments, the agent factory and configs), the
#: scenarios, the baselines it runs and its module.
MULTI_AGENT: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "envs/multi_flow.py",
    "envs/lte_cell.py",
    "agents/*.py",
    "workflows/train.py",
    "evaluation/resolve.py",
    "cellgym/zeus.py",
    "configs/schema.py",
    "configs/train.yaml",
    "configs/experiment/default.yaml",
    "configs/agent/ppo.yaml",
    "configs/scenario/multi_agent*.yaml",
    "evaluation/experiments/multi_agent.py",
    "baselines/__init__.py",
    "baselines/base.py",
    "baselines/xrc.py",
)

#: The Zeus evaluation (``python -m evaluation.experiments.zeus``): also the fast model (the fast
#: backend's tables), the trace readers and generators and the trace scenarios (the capacity
#: replayed, the buffer regimes), the Zeus metrics, the oracle policy and the environment
#: contract its driver uses, and its module. The report (``zeus_report``) is not an input:
#: ``--render`` rewrites the tables, figures and text from ``numbers.json``. The traces live
#: outside the repository (``$CELLGYM_TRACES``): the optimum's rows record each series' digest.
ZEUS: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "envs/lte_cell.py",
    "cellgym/zeus.py",
    "cellgym/traces/*.py",
    "configs/scenario/traces/*.yaml",
    "evaluation/experiments/zeus.py",
    "baselines/__init__.py",
    "baselines/base.py",
    "baselines/oracle.py",
)

#: XRC's Figs. 1 and 5 with XCP, RCP and PBE-CC
#: (``python -m evaluation.experiments.explicit_cell``): also the fast model (its backend's rows),
#: the figure scenarios, the XRC reproduction's module (its scenarios and analysis) and its own
#: module. The report text is rewritten by ``--render``.
EXPLICIT_CELL: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "configs/scenario/xrc_fig*.yaml",
    "evaluation/experiments/xrc_paper.py",
    "evaluation/experiments/explicit_cell.py",
)

#: The XCP-r paper's experiments (``python -m evaluation.experiments.xcpr_paper``): the fast model
#: (XCP's router, XCP-r, ACK loss, the UDP cross traffic) and its module. The report
#: (``xcpr_report``) is not an input: ``--render`` rewrites it from ``numbers.json``.
XCPR_PAPER: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "cellgym/path_extras.py",
    "evaluation/experiments/xcpr_paper.py",
)

#: The XCP/RCP evaluation paper's flow-completion study (``python -m
#: evaluation.experiments.fct_paper``): also the fast model (the wired last hop, RED, the Pareto
#: workload, XCP and RCP), the workload's sizes and curves, and its module. The report
#: (``fct_report``) is not an input: ``--render`` rewrites it from ``numbers.json``.
FCT_PAPER: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "cellgym/workload.py",
    "evaluation/experiments/fct_paper.py",
)

#: The transfer check and report (``python -m evaluation.transfer``): every controller of the
#: report on both backends through ``evaluate.py``'s loop: also the fast model, both environment
#: classes, the scenario configs (the main job's rows, traces; the trace readers), the main job's
#: config (which rows), the baselines and example user policies it runs, the pool's job runner,
#: the tables' records, controller resolution and the tool's modules. The report text
#: (``transfer_report``) is not an input: ``--render`` rewrites it from ``numbers.json``.
TRANSFER: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "envs/lte_cell.py",
    "envs/multi_flow.py",
    "cellgym/traces/**/*",
    "configs/scenario/*.yaml",
    "configs/scenario/traces/*.yaml",
    "configs/experiment/default.yaml",
    "baselines/__init__.py",
    "baselines/base.py",
    "baselines/xrc.py",
    "evaluation/example_policies.py",
    "evaluation/pool.py",
    "evaluation/records.py",
    "evaluation/resolve.py",
    "evaluation/transfer.py",
    "evaluation/user_policies.py",
)

#: The main job (``make run``: ``python train.py experiment=default``, then the README's table by
#: ``python -m evaluation.readme_table <run>``): PPO trained on the fast model over the training
#: mixture, evaluated on ns-3 beside the baselines. Its run records these inputs' digests
#: (``workflows.train``); the table is current while the code still does what the run did.
MAIN_JOB: tuple[str, ...] = (
    *COMMON,
    "envs/fastsim/**/*",
    "envs/*.py",
    "cellgym/**/*.py",
    "agents/*.py",
    "baselines/*.py",
    "learners/*.py",
    "workflows/train.py",
    "train.py",
    "configs/**/*.yaml",
    "configs/schema.py",
    "evaluation/*.py",
)

#: What decides a benchmark run's result on either backend (``evaluation.benchmark.cache``: its
#: code digest is in every run's cache key): ``COMMON`` without the ns-3 sources, the trace
#: readers, both environment classes, the baselines, the agent factory and features (trained
#: checkpoints), the pool's job runner, the records, controller resolution, user policies and
#: the benchmark's per-run metrics. Any change here changes every cached run's key.
BENCHMARK_RUN_COMMON: tuple[str, ...] = (
    *(p for p in COMMON if not p.startswith("ns3-scenarios/")),
    "cellgym/traces/*.py",
    "envs/lte_cell.py",
    "envs/multi_flow.py",
    "baselines/*.py",
    "agents/factory.py",
    "agents/features.py",
    "evaluation/pool.py",
    "evaluation/records.py",
    "evaluation/resolve.py",
    "evaluation/user_policies.py",
    "evaluation/benchmark/metrics.py",
)
#: A benchmark run on ns-3: also the scenario program's sources.
BENCHMARK_RUNS_NS3: tuple[str, ...] = (
    *BENCHMARK_RUN_COMMON,
    *(p for p in COMMON if p.startswith("ns3-scenarios/")),
)
#: A benchmark run on the fast backend: also the fast model.
BENCHMARK_RUNS_FAST: tuple[str, ...] = (*BENCHMARK_RUN_COMMON, "envs/fastsim/**/*")

#: The published leaderboards (``python -m evaluation.benchmark publish``, ``docs/benchmark/ns3``
#: and ``docs/benchmark/fast``): their backend's runs, the benchmark's modules (scores,
#: normalisation, aggregates, the markdown) and the suite v1. The same files as the
#: leaderboard's own provenance (``evaluation.benchmark.leaderboard.inputs_of``).
BENCHMARK_NS3: tuple[str, ...] = (
    *BENCHMARK_RUNS_NS3,
    "evaluation/benchmark/*.py",
    "configs/benchmark/v1.yaml",
)
BENCHMARK_FAST: tuple[str, ...] = (
    *BENCHMARK_RUNS_FAST,
    "evaluation/benchmark/*.py",
    "configs/benchmark/v1.yaml",
)
