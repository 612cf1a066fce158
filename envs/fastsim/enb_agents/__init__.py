"""Base-station agents of the fast model: what the eNB computes and stamps on the ACKs.

``xrc.py``: XRC's agent (per UE capacity and HoL, per flow the explicit rate C_i), run at the
end of every TTI (``driver.step_cell``). Another agent is a sibling module here, called from the
driver at the same point.
"""
