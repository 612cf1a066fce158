""" "A run directory" is one model: ``model.zip`` for ``train.py`` and ``evaluate.py`` alike.

``train.py`` evaluates the last model at the end by default (``final_model=last``), the model
``evaluate.py`` loads for a run directory; the best periodic model is chosen explicitly:
``final_model=best``, or ``<run_dir>/best_model.zip`` as an ``evaluate.py`` controller.
"""

from __future__ import annotations

from pathlib import Path

from configs.schema import compose_train, validate_train
from evaluation.resolve import resolve_checkpoint, resolve_controller
from workflows.train import _final_model


def _run_dir(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    (run / ".hydra").mkdir(parents=True)
    (run / ".hydra" / "config.yaml").write_text(
        "agent: {name: ppo, algo: PPO}\nfeatures: raw\nnorm_obs: true\n"
    )
    for name in ("model.zip", "vecnormalize.pkl", "best_model.zip", "best_vecnormalize.pkl"):
        (run / name).write_bytes(b"x")
    return run


def test_train_and_evaluate_take_the_same_model_of_a_run_directory(tmp_path):
    run = _run_dir(tmp_path)
    typed = validate_train(compose_train([f"run_dir={run}"]))
    assert typed.final_model == "last"
    path, which = _final_model(typed, run)
    spec = resolve_controller(str(run))
    assert (path, which) == (run / "model.zip", "last")
    assert Path(spec.name) == path.resolve()
    assert Path(spec.vecnormalize) == (run / "vecnormalize.pkl").resolve()


def test_the_best_model_is_chosen_explicitly(tmp_path):
    run = _run_dir(tmp_path)
    typed = validate_train(compose_train([f"run_dir={run}", "final_model=best"]))
    assert _final_model(typed, run) == (run / "best_model.zip", "best")
    spec = resolve_checkpoint(run / "best_model.zip")
    assert Path(spec.name) == (run / "best_model.zip").resolve()
    assert Path(spec.vecnormalize) == (run / "best_vecnormalize.pkl").resolve()
    assert spec.algo == "PPO" and spec.label == "ppo"
