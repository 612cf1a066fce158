"""The README's CellGym Bench rows, rendered from a published leaderboard (never copied by hand).

    .venv/bin/python -m evaluation.readme_benchmark docs/benchmark/ns3 --fast docs/benchmark/fast
    .venv/bin/python -m evaluation.readme_benchmark docs/benchmark/ns3 --print   # only print it

Reads the leaderboard's ``numbers.json`` (``python -m evaluation.benchmark publish`` writes it:
the aggregates of every variant, the runs' kinds, the controllers asked for and the provenance),
and writes between the README's ``benchmark-top`` markers:

- a line saying what is ranked: the suite, split and backend, the score and its normalisation,
  how many controllers are ranked, and a link to the whole ``leaderboard.md``;
- the top ``TOP`` rows of the leaderboard's ranking (``evaluation.benchmark.render.ranking``: the
  default variant's IQM, best first, the computed optimum among them, so the ranks are those of
  ``leaderboard.md``), then the main job's policy's row when it ranks lower: rank, controller
  (a readable name and the leaderboard's label; a checkpoint under ``runs/main/``, or the main
  job's committed policy ``docs/main-job/policy``, is "the main job's policy"), the IQM of the
  normalised score with its 95 % stratified bootstrap interval, the mean, and with ``--fast``
  the same controller's IQM on the fast backend's leaderboard (``–`` where that leaderboard does
  not rank it: ns-3's TCPs the fast model lacks);
- a line naming the files read, each one's commit and the command that made it (its provenance),
  and this command.

It lives beside ``evaluation.readme_table`` rather than in ``evaluation.benchmark``: the
published leaderboards record ``evaluation/benchmark/*.py`` among their inputs, so a module there
would make them stale. ``tests/evaluation/test_readme_benchmark.py`` fails when the README's
block differs from what this renders from the committed ``docs/benchmark/ns3``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cellgym.paths import REPO_ROOT
from cellgym.vocab import SpecError

BEGIN = "<!-- benchmark-top:begin -->"
END = "<!-- benchmark-top:end -->"
#: Rows of the ranking shown (the main job's policy is added when it ranks lower).
TOP = 8
#: The command, as the README's line names it.
COMMAND = "python -m evaluation.readme_benchmark"
#: Where the main job's runs are (``configs/experiment/default.yaml``: ``hydra.run.dir``).
MAIN_RUNS = "runs/main/"
#: Where ``evaluation.readme_table`` commits the main job's policy.
MAIN_POLICY = "docs/main-job/policy"
#: Readable names of the registry's controllers (``cellgym.controllers``) and the optimum.
TITLES: dict[str, str] = {
    "cubic": "CUBIC",
    "newreno": "NewReno",
    "linuxreno": "Linux Reno",
    "bbr": "BBR",
    "illinois": "Illinois",
    "veno": "Veno",
    "vegas": "Vegas",
    "bic": "BIC",
    "htcp": "H-TCP",
    "hybla": "Hybla",
    "highspeed": "HighSpeed",
    "scalable": "Scalable",
    "westwoodplus": "Westwood+",
    "yeah": "YeAH",
    "lp": "TCP-LP",
    "ledbat": "LEDBAT",
    "dctcp": "DCTCP",
    "xrc": "XRC's native sender",
    "xcp": "XCP",
    "rcp": "RCP",
    "xcpr": "XCP-r",
    "pbecc": "PBE-CC",
    "xrc_policy": "XRC policy",
    "explicit_rate": "explicit-rate policy",
    "pbecc_policy": "PBE-CC policy",
    "oracle": "delayed-feedback oracle",
    "optimum": "offline optimum, computed",
}
#: Readable names of trained checkpoints' labels (their agent's name, else the algorithm).
ALGORITHMS: dict[str, str] = {
    "ppo": "PPO",
    "fast_ppo": "PPO (fast_ppo)",
    "recurrent_ppo": "recurrent PPO",
    "sac": "SAC",
    "td3": "TD3",
    "a2c": "A2C",
    "ddpg": "DDPG",
}
#: The backends' names in the text.
BACKEND_NAMES = {"ns3": "ns-3", "fast": "fast"}
#: The columns' common settings must agree between the two leaderboards.
_SAME = ("suite", "version", "suite_sha256", "split", "default_variant", "seeds", "normalise")


def load(folder: Path) -> dict[str, Any]:
    """The leaderboard's ``numbers.json``.

    Raises:
        SpecError: The folder holds no ``numbers.json``.
    """
    path = folder / "numbers.json"
    if not path.is_file():
        raise SpecError(f"{folder} holds no numbers.json: publish the leaderboard first")
    return json.loads(path.read_text())


def _shown(path: Path) -> str:
    """``path`` relative to the repository when inside it, else as given."""
    try:
        return path.resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def _asked(numbers: Mapping[str, Any]) -> list[str]:
    """The controllers the leaderboard's command named (``publish``'s, else ``--controllers``)."""
    if "publish" in numbers:
        return [str(c) for c in numbers["publish"]["controllers"]]
    args = list(numbers["provenance"].get("args") or ())
    out = []
    for i, a in enumerate(args):
        value = args[i + 1] if a == "--controllers" and i + 1 < len(args) else None
        if a.startswith("--controllers="):
            value = a.partition("=")[2]
        out += [c.strip() for c in (value or "").split(",") if c.strip()]
    return out


def checkpoints(numbers: Mapping[str, Any]) -> dict[str, str]:
    """Each trained controller's label -> the checkpoint argument that made it.

    The trained entrants come in the order of their arguments (``resolve_entrants``); a
    checkpoint left out (its files absent) has no runs. Empty when they do not pair up.
    """
    from evaluation.benchmark.publish import is_checkpoint

    kinds = {r["controller"]: r["kind"] for r in numbers["runs"]}
    trained = [c for c, k in kinds.items() if k == "trained"]
    left = {x["controller"] for x in numbers.get("left_out", ())}
    texts = [t for t in dict.fromkeys(_asked(numbers)) if is_checkpoint(t) and t not in left]
    return dict(zip(trained, texts, strict=True)) if len(trained) == len(texts) else {}


def is_main(text: str) -> bool:
    """Whether a checkpoint argument (``[<algo>:]<path>``) is a run of the main job."""
    path = text.split(":", 1)[1] if re.match(r"^[A-Za-z_]+:", text) else text
    if re.search(rf"(^|/){re.escape(MAIN_POLICY)}/?$", path):
        return True
    return re.search(rf"(^|/){re.escape(MAIN_RUNS)}", path) is not None


def title(label: str, kind: str, checkpoint: str | None = None) -> str:
    """The controller's cell: a readable name and the leaderboard's label."""
    if kind == "trained":
        algo = ALGORITHMS.get(label.split("@")[0].lower(), label)
        name = f"main job's policy, {algo}" if checkpoint and is_main(checkpoint) else algo
    else:
        name = TITLES.get(label, label)
    return name if name == label else f"{name} (`{label}`)"


def _check_same(board: Mapping[str, Any], fast: Mapping[str, Any]) -> None:
    a, b = board["setup"], fast["setup"]
    if b["backend"] != "fast":
        raise SpecError(f"--fast names a leaderboard of backend {b['backend']!r}, not 'fast'")
    differ = [k for k in _SAME if a.get(k) != b.get(k)]
    if differ:
        raise SpecError(
            f"the two leaderboards differ in {', '.join(differ)}: publish both from the same "
            "suite and split"
        )


def shown_rows(board: Mapping[str, Any]) -> list[tuple[int, dict[str, Any]]]:
    """(rank, aggregate row) of the ranking's first ``TOP``, then the main job's lower down."""
    from evaluation.benchmark.render import ranking

    paths = checkpoints(board)
    rank = list(enumerate(ranking(dict(board)).to_dict("records"), 1))
    lower = [(i, r) for i, r in rank[TOP:] if is_main(paths.get(r["controller"], ""))]
    return rank[:TOP] + lower


def table(board: Mapping[str, Any], fast: Mapping[str, Any] | None = None) -> list[str]:
    """The rows' markdown lines (module docstring)."""
    from evaluation.benchmark.render import fmt, ranking, with_ci

    kinds = {r["controller"]: r["kind"] for r in board["runs"]}
    paths = checkpoints(board)
    head = ["#", "controller", "IQM [95 % CI]", "mean"]
    on_fast = {}
    if fast is not None:
        head.append("fast backend: IQM [95 % CI]")
        on_fast = {r["controller"]: r for r in ranking(dict(fast)).to_dict("records")}
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for i, r in shown_rows(board):
        c = r["controller"]
        cells = [str(i), title(c, kinds.get(c, ""), paths.get(c)), with_ci(r, "iqm"),
                 fmt(r.get("mean"))]  # fmt: skip
        if fast is not None:
            cells.append(with_ci(on_fast[c], "iqm") if c in on_fast else "–")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def _source(folder: Path, numbers: Mapping[str, Any]) -> str:
    prov = numbers["provenance"]
    commit = (prov.get("commit") or "unknown")[:12]
    dirty = ", its inputs modified from it" if prov.get("dirty") else ""
    return (
        f"`{_shown(folder / 'numbers.json')}` (commit `{commit}`{dirty}; made by "
        f"`{prov['command']}`)"
    )


def render(board_dir: Path, fast_dir: Path | None = None) -> str:
    """The README block (markers included) from the leaderboard folder(s).

    Raises:
        SpecError: A folder without ``numbers.json``, or two leaderboards that do not match.
    """
    from evaluation.benchmark.render import ranking

    board = load(board_dir)
    fast = load(fast_dir) if fast_dir is not None else None
    if fast is not None:
        _check_same(board, fast)
    s = board["setup"]
    kinds = {r["controller"]: r["kind"] for r in board["runs"]}
    order = list(ranking(dict(board)).get("controller", ()))
    ranked = sum(kinds.get(c) != "computed" for c in order)
    backend = BACKEND_NAMES.get(s["backend"], s["backend"])
    official = "the official score" if s["official"] else "not the official score"
    not_ranked = len(board["incomplete"]) + len(board.get("left_out", ()))
    unranked = f"; {not_ranked} not ranked (listed there)" if not_ranked else ""
    md = _shown(board_dir / "leaderboard.md")
    below = ", then the main job's policy" if len(shown_rows(board)) > TOP else ""
    intro = (
        f"CellGym Bench {s['suite']} (version {s['version']}), {s['split']} split on the "
        f"{backend} backend ({official}): {ranked} controllers ranked by the IQM of the "
        f"normalised score (`{s['default_variant']}` weights; 0 = `{s['normalise']['zero']}`, "
        f"1 = `{s['normalise']['one']}`) over {len(s['tasks'])} tasks x {len(s['seeds'])} "
        f"seeds, with 95 % stratified bootstrap intervals. Below: its first {TOP} rows{below}; "
        f"every controller, variant, task and metric: [{md}]({md}){unranked}."
    )
    if fast is not None:
        intro += (
            " The last column is the same controller's IQM on the fast backend, normalised "
            "there by that backend's own references."
        )
    command = [COMMAND, _shown(board_dir)]
    sources = [_source(board_dir, board)]
    if fast_dir is not None and fast is not None:
        command += ["--fast", _shown(fast_dir)]
        sources.append(_source(fast_dir, fast))
    mains = [t for t in checkpoints(board).values() if is_main(t)]
    main_line = "".join(f" The main job's policy is the checkpoint `{t}`." for t in mains)
    footer = f"Generated by `{' '.join(command)}` from {' and '.join(sources)}.{main_line}"
    return "\n".join([BEGIN, intro, "", *table(board, fast), "", footer, END])


def rewrite(readme: str, new_block: str) -> str:
    """``readme`` with the text between the markers (inclusive) replaced by ``new_block``.

    ``readme_table.rewrite`` with this block's markers, which must appear exactly once.
    """
    from evaluation.readme_table import rewrite as rewrite_block

    if readme.count(BEGIN) != 1 or readme.count(END) != 1:
        raise SpecError(f"the README needs one {BEGIN} ... {END} block")
    try:
        return rewrite_block(readme, new_block, BEGIN, END)
    except ValueError:
        raise SpecError(f"the README needs one {BEGIN} ... {END} block") from None


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite (or ``--print``) the README's block; 2 for a missing file or a mismatch."""
    ap = argparse.ArgumentParser(prog=COMMAND, description=__doc__.splitlines()[0])
    ap.add_argument("board", type=Path, help="the published leaderboard (docs/benchmark/ns3)")
    ap.add_argument("--fast", type=Path, help="the fast backend's leaderboard beside it")
    ap.add_argument("--readme", type=Path, default=REPO_ROOT / "README.md")
    ap.add_argument("--print", action="store_true", help="print the block, change nothing")
    args = ap.parse_args(list(sys.argv[1:] if argv is None else argv))
    try:
        new_block = render(args.board, args.fast)
        if args.print:
            print(new_block)
            return 0
        text = rewrite(args.readme.read_text(), new_block)
    except SpecError as exc:
        print(f"{COMMAND}: error: {exc}", file=sys.stderr)
        return 2
    args.readme.write_text(text)
    print(f"{COMMAND}: {args.readme} rewritten from {args.board}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
