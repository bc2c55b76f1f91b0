// Replaced by the benchmark harness.
