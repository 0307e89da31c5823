"""Benchmarks and the synthetic estate generator shared by the scale and report benches."""
