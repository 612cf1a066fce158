"""Paper experiments and the calibration of the fast backend against ns-3."""
