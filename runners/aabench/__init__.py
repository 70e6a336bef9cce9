"""The A/A benchmark of compare's verdict (README "A/A benchmark"): see aabench.__main__."""
