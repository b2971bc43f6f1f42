"""The benchmark workloads; each module holds its worker-side functions and its report section."""
