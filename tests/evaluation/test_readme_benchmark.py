"""The README's CellGym Bench rows are rendered from a leaderboard's files (readme_benchmark).

The leaderboards here are written by the benchmark's own writer (``leaderboard.build`` and
``write_leaderboard``, as ``publish`` calls them) from synthetic runs of the mini-suite: nothing
is simulated. The last test holds the repository's README to the committed leaderboard.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from cellgym import controllers
from cellgym.paths import REPO_ROOT
from evaluation import readme_benchmark as rb
from evaluation import readme_table
from evaluation.benchmark import publish
from evaluation.benchmark.leaderboard import build, write_leaderboard
from evaluation.benchmark.metrics import RAW_COLUMNS, RUN_COLUMNS
from evaluation.benchmark.runner import KEY_COLUMNS
from evaluation.benchmark.scores import optimum_row
from evaluation.benchmark.suite import load_suite

#: The main job's checkpoint, as ``publish --controllers`` names it (its files need not exist).
MAIN = "runs/main/ppo/2026-01-01_00-00-00"
#: Each controller's quality (its runs' utilization) on ns-3: ``ppo`` (the main job) ranks 12th.
NS3 = {"cubic": 0.5, "newreno": 0.45, "bbr": 0.6, "vegas": 0.3, "xrc": 0.9, "xcp": 0.8,
       "rcp": 0.75, "pbecc": 0.85, "xrc_policy": 0.92, "explicit_rate": 0.7, "oracle": 0.88,
       "ppo": 0.4}  # fmt: skip
#: On the fast backend: no Vegas (ns-3 only), other numbers.
FAST = {c: min(0.98, q + 0.04 * (i % 3)) for i, (c, q) in enumerate(NS3.items()) if c != "vegas"}
KINDS = {"ppo": "trained", "xrc_policy": "baseline", "explicit_rate": "baseline",
         "oracle": "baseline"}  # fmt: skip


def _frame(suite, quality: dict[str, float], backend: str) -> pd.DataFrame:
    """The runs table ``runs_frame`` would read from a cache holding these runs."""
    rows = []
    for c, q in [*quality.items(), ("optimum", None)]:
        for task, seed, _ in suite.runs("test"):
            row = {"controller": c, "kind": KINDS.get(c, "native"), "task": task.name,
                   "group": task.group, "cell": task.cell, "channel": task.channel,
                   "seed": int(seed), "backend": backend, "status": "ok", "error": "",
                   "wall_s": 1.0}  # fmt: skip
            metrics = {k: float("nan") for k in RUN_COLUMNS}
            if q is None:
                row.update(kind="computed", wall_s=0.0)
                metrics.update(optimum_row())
            else:
                u = q + 0.01 * (seed % 7)  # the seeds differ a little
                metrics.update({k: u for k in RAW_COLUMNS})
                metrics.update(thpt=u, delay_inflation=1 + 3 * (1 - u), inter_fairness=u,
                               competitor_tput_mbps=10 * (1 - u),
                               competitor_rtt_ms=50.0)  # fmt: skip
            rows.append({**row, **metrics})
    return pd.DataFrame(rows, columns=[*KEY_COLUMNS, *RUN_COLUMNS])


def _publish(suite, quality: dict[str, float], backend: str, out: Path) -> None:
    """A leaderboard folder as ``publish`` writes it (``evaluation.benchmark.publish``)."""
    names = [c for c in quality if c != "ppo"]
    args = [publish.SUBCOMMAND, "--suite", "mini", "--backend", backend, "--controllers", MAIN,
            "--out", str(out)]  # fmt: skip
    frame = _frame(suite, quality, backend)
    numbers = build(suite, "test", backend, frame, args, 200, command=publish.COMMAND,
                    generated_by=f"{publish.COMMAND} {publish.SUBCOMMAND}")  # fmt: skip
    numbers["publish"] = {"controllers": [*names, MAIN], "runs": len(frame), "run_now": 0,
                          "from_cache": len(frame), "wall_s": 1.0}  # fmt: skip
    write_leaderboard(numbers, out)


@pytest.fixture(scope="module")
def boards(tmp_path_factory) -> dict[str, Path]:
    """``docs/benchmark/ns3`` and ``docs/benchmark/fast`` of the mini-suite, side by side."""
    root = tmp_path_factory.mktemp("benchmark")
    suite = load_suite("mini")
    _publish(suite, NS3, "ns3", root / "ns3")
    _publish(suite, FAST, "fast", root / "fast")
    return {"ns3": root / "ns3", "fast": root / "fast"}


def _readme(tmp_path: Path) -> tuple[Path, str, str]:
    """A README with the block between other text and another generated block."""
    before = f"# x\n\n{readme_table.BEGIN}\n| a |\n{readme_table.END}\n\n```bash\ncmd\n```\n\n"
    after = "\n\n## Next\n\ntext  with  spaces\n"
    readme = tmp_path / "README.md"
    readme.write_text(f"{before}{rb.BEGIN}\nnot published yet\n{rb.END}{after}")
    return readme, before, after


def _expected_rows(folder: Path) -> list[tuple[str, str, str]]:
    """(controller, IQM [low, high], mean) in ranking order, from ``aggregates.csv``."""
    agg = pd.read_csv(folder / "aggregates.csv")
    agg = agg[agg["variant"].eq("mixed")].sort_values("iqm", ascending=False)
    return [(r.controller, f"{r.iqm:.3f} [{r.iqm_low:.3f}, {r.iqm_high:.3f}]", f"{r.mean:.3f}")
            for r in agg.itertuples()]  # fmt: skip


def _cells(block: str) -> list[list[str]]:
    rows = [ln for ln in block.splitlines() if ln.startswith("| ") and not ln.startswith("| #")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in rows]


def test_the_block_is_rendered_from_the_leaderboards_files(boards, tmp_path) -> None:
    readme, before, after = _readme(tmp_path)
    args = [str(boards["ns3"]), "--fast", str(boards["fast"]), "--readme", str(readme)]
    assert rb.main(args) == 0
    text = readme.read_text()
    # Everything outside the markers is kept, byte for byte.
    assert text.startswith(before + rb.BEGIN) and text.endswith(rb.END + after)
    assert "not published yet" not in text
    block = text[text.index(rb.BEGIN) : text.index(rb.END) + len(rb.END)]
    expected = _expected_rows(boards["ns3"])
    fast = {c: iqm for c, iqm, _ in _expected_rows(boards["fast"])}
    cells = _cells(block)
    # The first TOP rows of the ranking, then the main job's policy (12th), as aggregates.csv says.
    ranks = [*range(1, rb.TOP + 1), 12]
    assert [int(c[0]) for c in cells] == ranks
    for row, rank in zip(cells, ranks, strict=True):
        controller, iqm, mean = expected[rank - 1]
        assert row[2:4] == [iqm, mean], controller
        assert row[4] == fast.get(controller, "–")
        assert f"(`{controller}`)" in row[1]
    assert cells[0][1] == "offline optimum, computed (`optimum`)"
    assert cells[1][1] == "XRC policy (`xrc_policy`)"
    assert cells[-1][1] == "main job's policy, PPO (`ppo`)"
    # 12 controllers ranked (the optimum is computed, not a controller); the whole leaderboard.
    md = f"{boards['ns3']}/leaderboard.md"
    assert (
        "test split on the ns-3 backend (the official score): 12 controllers ranked" in block
        and f"[{md}]({md})" in block
    )
    assert "its first 8 rows, then the main job's policy" in block
    # The line naming the files, their commits and commands, and this command.
    numbers = json.loads((boards["ns3"] / "numbers.json").read_text())
    prov = numbers["provenance"]
    line = block.splitlines()[-2]
    assert line.startswith(
        f"Generated by `python -m evaluation.readme_benchmark {boards['ns3']} --fast "
        f"{boards['fast']}` from `{boards['ns3']}/numbers.json` (commit "
        f"`{(prov['commit'] or 'unknown')[:12]}`"
    )
    assert f"made by `{prov['command']}`" in line and "--controllers runs/main/ppo/" in line
    assert f"`{boards['fast']}/numbers.json`" in line
    assert line.endswith(f"The main job's policy is the checkpoint `{MAIN}`.")
    # --print prints the same block and changes nothing.
    assert rb.render(boards["ns3"], boards["fast"]) == block


def test_a_second_rewrite_changes_nothing_and_markdown_is_not_read(boards, tmp_path) -> None:
    readme, _, _ = _readme(tmp_path)
    args = [str(boards["ns3"]), "--fast", str(boards["fast"]), "--readme", str(readme)]
    assert rb.main(args) == 0
    once = readme.read_text()
    assert rb.main(args) == 0
    assert readme.read_text() == once
    # The numbers come from numbers.json: the markdown and the CSVs are not read.
    copy = tmp_path / "ns3"
    shutil.copytree(boards["ns3"], copy)
    for name in ("leaderboard.md", "aggregates.csv"):
        (copy / name).write_text("edited by hand\n")
    assert _cells(rb.render(copy, boards["fast"])) == _cells(
        rb.render(boards["ns3"], boards["fast"])
    )
    # ... and a change there shows.
    numbers = json.loads((copy / "numbers.json").read_text())
    mine = ("xrc_policy", numbers["setup"]["default_variant"])
    top = next(a for a in numbers["aggregates"] if (a["controller"], a["variant"]) == mine)
    top["mean"] = 0.123456
    (copy / "numbers.json").write_text(json.dumps(numbers))
    assert "| 0.123 |" in rb.render(copy, boards["fast"])


def test_without_the_fast_leaderboard_the_column_is_left_out(boards) -> None:
    block = rb.render(boards["ns3"])
    assert "| # | controller | IQM [95 % CI] | mean |" in block
    assert "fast backend" not in block and "--fast" not in block
    assert all(len(row) == 4 for row in _cells(block))


def test_a_missing_or_mismatched_leaderboard_is_refused(boards, tmp_path, capsys) -> None:
    readme, _, _ = _readme(tmp_path)
    original = readme.read_text()
    assert rb.main([str(tmp_path / "none"), "--readme", str(readme)]) == 2
    assert "holds no numbers.json" in capsys.readouterr().err
    # Two ns-3 leaderboards, or two suites' leaderboards, do not make the fast column.
    assert rb.main([str(boards["ns3"]), "--fast", str(boards["ns3"]), "--readme", str(readme)]) == 2
    assert "not 'fast'" in capsys.readouterr().err
    other = tmp_path / "fast"
    shutil.copytree(boards["fast"], other)
    numbers = json.loads((other / "numbers.json").read_text())
    numbers["setup"]["split"] = "train"
    (other / "numbers.json").write_text(json.dumps(numbers))
    assert rb.main([str(boards["ns3"]), "--fast", str(other), "--readme", str(readme)]) == 2
    assert "differ in split" in capsys.readouterr().err
    assert readme.read_text() == original
    readme.write_text("no markers\n")
    assert rb.main([str(boards["ns3"]), "--readme", str(readme)]) == 2
    assert "needs one <!-- benchmark-top:begin -->" in capsys.readouterr().err


def test_every_registry_controller_has_a_readable_name() -> None:
    assert set(controllers.CONTROLLERS) - set(rb.TITLES) == set()
    assert rb.title("ppo", "trained", "runs/main/ppo/x") == "main job's policy, PPO (`ppo`)"
    assert rb.title("ppo", "trained", "ppo:runs/main/ppo/x") == "main job's policy, PPO (`ppo`)"
    assert rb.title("ppo", "trained", "docs/main-job/policy") == "main job's policy, PPO (`ppo`)"
    assert rb.title("sac", "trained", "runs/other/sac/x") == "SAC (`sac`)"
    assert rb.title("sac", "trained", "docs/main-job/policy-old") == "SAC (`sac`)"
    assert rb.title("my_pkg.mod:Mine", "policy") == "my_pkg.mod:Mine"


def _section(text: str) -> str:
    start = text.index("### CellGym Bench")
    return text[start : text.index("\n## ", start)]


def test_the_readme_has_the_block_in_the_benchmark_section() -> None:
    text = (REPO_ROOT / "README.md").read_text()
    assert text.count(rb.BEGIN) == 1 and text.count(rb.END) == 1
    section = _section(text)
    assert rb.BEGIN in section and rb.END in section
    # After the section's command block, which holds the command that fills it.
    commands = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert commands and commands.end() < section.index(rb.BEGIN)
    assert (
        ".venv/bin/python -m evaluation.readme_benchmark docs/benchmark/ns3 --fast "
        "docs/benchmark/fast" in commands.group(1)
    )


def test_the_readmes_block_is_the_committed_leaderboards() -> None:
    """A hand-edited or stale block fails here once ``docs/benchmark/ns3`` is committed."""
    text = (REPO_ROOT / "README.md").read_text()
    block = text[text.index(rb.BEGIN) : text.index(rb.END) + len(rb.END)]
    board, fast = REPO_ROOT / "docs/benchmark/ns3", REPO_ROOT / "docs/benchmark/fast"
    if not (board / "numbers.json").is_file():
        assert "not published yet" in block, "README.md shows benchmark rows without a leaderboard"
        pytest.skip("docs/benchmark/ns3/numbers.json is not committed yet (the leaderboard is not "
                    "published): nothing to compare the README's benchmark block with")  # fmt: skip
    expected = rb.render(board, fast if (fast / "numbers.json").is_file() else None)
    assert block == expected, (
        "README.md's benchmark block differs from the committed leaderboard: run "
        "`.venv/bin/python -m evaluation.readme_benchmark docs/benchmark/ns3 --fast "
        "docs/benchmark/fast` (without --fast when docs/benchmark/fast is absent)"
    )
