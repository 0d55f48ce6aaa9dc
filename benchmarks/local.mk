# benchmarks/: see benchmarks/README.md
