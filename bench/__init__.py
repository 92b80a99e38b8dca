"""memvet's benchmarks; `make bench` runs them all and writes BENCHMARKS.md."""
