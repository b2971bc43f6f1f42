"""The run: start workers, go through every workload, write the report, pick the exit code.

Exit codes: 0 when every system that ran computed the NumPy limit's numbers, 1 when a
system computed different numbers, 2 when the harness itself broke.
"""

from __future__ import annotations

import shlex
import sys
import traceback

from benchmarks import environment, report
from benchmarks.rounds import run_interleaved
from benchmarks.session import HarnessError, Session
from benchmarks.settings import Settings, parse_settings
from benchmarks.workloads import (
    deep_chain,
    import_time,
    layout_svg,
    memory_step,
    mlp,
    mlp_products,
    tiny_ops,
    trace_overhead,
    training_loop,
)

EXIT_WRONG_NUMBERS = 1
EXIT_HARNESS_BROKE = 2


def run_all(session: Session) -> list[report.Table]:
    """Every workload in order; timed ones interleaved, the rest in fresh processes."""
    settings = session.settings
    session.progress("timing MLP step, its products alone and tiny ops")
    tables = run_interleaved(session, [mlp.workload(settings), mlp_products.workload(settings),
                                       tiny_ops.workload(settings)])
    session.progress("trace observation")
    trace_table = trace_overhead.run(session)
    session.progress("deep chain (fresh processes)")
    tables.append(deep_chain.run(session))
    session.progress("memory (fresh processes)")
    tables.append(memory_step.run(session))
    tables.append(trace_table)
    session.progress("layout + SVG")
    tables.append(layout_svg.run(session))
    session.progress("import time")
    tables.append(import_time.run(session))
    session.progress("training loop")
    tables += run_interleaved(session, [training_loop.workload(settings)])
    return tables


def write_report(session: Session, tables: list[report.Table], load_before: str) -> str:
    """Render the Markdown report, print it and write it to ``settings.out``."""
    settings: Settings = session.settings
    command = shlex.join(["python", "-m", "benchmarks", *sys.argv[1:]])
    facts = environment.run_facts(settings, load_before, environment.load_average(), command)
    if session.wrong:
        facts.append(
            "**Systems that computed different numbers from the NumPy limit:** "
            + "; ".join(session.wrong)
        )
    text = report.render(
        "gradnb benchmarks", facts, [environment.systems_table(session), *tables], session.notes
    )
    settings.out.parent.mkdir(parents=True, exist_ok=True)
    settings.out.write_text(text, encoding="utf-8")
    print(text)
    return text


def main(argv: list[str] | None = None) -> int:
    """Run the suite; the exit code says whether every number matched (see module doc)."""
    settings = parse_settings(argv)
    load_before = environment.load_average()
    session = Session(settings)
    try:
        session.progress(f"starting workers: {', '.join(settings.systems)}")
        session.start()
        tables = run_all(session)
        write_report(session, tables, load_before)
    except HarnessError as error:
        print(f"benchmark harness error: {error}", file=sys.stderr)
        return EXIT_HARNESS_BROKE
    except Exception:  # noqa: BLE001 - any other failure is the harness's own bug
        traceback.print_exc()
        return EXIT_HARNESS_BROKE
    finally:
        session.close()
    if session.wrong:
        print("WRONG numbers: " + "; ".join(session.wrong), file=sys.stderr)
        return EXIT_WRONG_NUMBERS
    return 0
