"""Entry point: ``python -m benchmarks [--quick] [--out PATH] ...``."""

from benchmarks.driver import main

if __name__ == "__main__":  # spawned workers import this module as __mp_main__
    raise SystemExit(main())
