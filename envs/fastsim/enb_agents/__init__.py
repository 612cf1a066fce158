"""Base-station agents of the fast model: what the eNB computes and stamps on the ACKs.

``xrc.py``: XRC's agent (per UE capacity and HoL, per flow the explicit rate C_i), run at the
end of every TTI (``driver.step_cell``). ``router.py`` with ``xcp.py`` and ``rcp.py``: the
bottleneck's router of the explicit-feedback controls (per UE here, or at the wired bottleneck),
called at the same point when a flow runs XCP or RCP. Another agent is a sibling module here.
"""
