"""The A/A benchmark of compare's verdict (docs/aa-benchmark.md#aa-benchmark-of-compare): see
aabench.__main__."""
