"""The senders (the servers' TCP), one module per congestion control of the fast model.

- ``newreno.py``, ``cubic.py``, ``bbr.py``, ``xrc.py``, ``agent.py``, ``xcp.py``, ``rcp.py``:
  one congestion control each (window growth, ssthresh, its own per-ACK or per-TTI state);
- ``dispatch.py``: the one place that branches on a flow's sender model (``codes.CCA_*``);
- ``ack.py``: ACK processing shared by all (RTT, explicit feedback, recovery entry and exit);
- ``recovery.py``: loss detection, ns-3.44's PRR, the retransmission timeout;
- ``send.py``: the send path (application data, pacing, retransmissions, new segments).

Adding a congestion control: its module here, its code in ``codes.py``, its branches in
``dispatch.py`` (and its ``fast_model`` in ``cellgym/controllers.py``).
"""
