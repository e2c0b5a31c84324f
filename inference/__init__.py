"""Inference passes: pure functions of the frames that add spawn, launch and artifact edges."""
