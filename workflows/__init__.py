"""Hydra entry points, wiring configs, training pieces (``agents``) and ``evaluation``.

``workflows.train`` is ``python train.py``; ``workflows.evaluate`` is ``python evaluate.py``.
"""
