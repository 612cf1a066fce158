"""In-house learners for the fast backend, beside SB3's (``agents/``).

- ``learners.ppo``: PPO over a whole batch of cells as arrays (one file, CleanRL's way).
- ``learners.policy``: its trained policy with SB3's ``predict``, save/load, and the export to
  an SB3 model and ``VecNormalize``.
- ``learners.cells``: a run's training cells (the mixture's batches) stepped as one numpy batch.
"""
