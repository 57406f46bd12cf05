"""The ``goldgate`` command: argument parsing over the library; ``main(argv) -> int``."""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Sequence
from typing import Any

from goldgate._version import __version__
from goldgate.errors import GoldgateError, Terminated
from goldgate.terminal import console

EXIT_OK = 0
EXIT_REGRESSION = 1
EXIT_ERROR = 2
EXIT_INTERNAL = 3  # a bug: the traceback is saved to a file (goldgate.crash)
EXIT_SIGINT = 130
EXIT_SIGTERM = 143  # 128 + 15; SIGHUP exits 129, SIGQUIT 131

# Each command lives in goldgate.cli.commands.<module> and provides
#   add_arguments(parser: argparse.ArgumentParser) -> None
#   run(args: argparse.Namespace) -> int
#   HELP: str (one line)
COMMANDS: dict[str, str] = {
    "init": "goldgate.cli.commands.init",
    "run": "goldgate.cli.commands.run",
    "bless": "goldgate.cli.commands.bless",
    "check": "goldgate.cli.commands.check",
    "score": "goldgate.cli.commands.score",
    "compare": "goldgate.cli.commands.compare",
    "schema": "goldgate.cli.commands.schema",
    "report": "goldgate.cli.commands.report",
    "history": "goldgate.cli.commands.history",
    "calibrate": "goldgate.cli.commands.calibrate",
}


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        # The message quotes what was typed (an invalid choice, an unknown option).
        console.err(f"goldgate: error: {message}")
        self.exit(EXIT_ERROR)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser; with ``only``, the other commands are names without their modules."""
    parser = _Parser(prog="goldgate", description="A regression gate for text-generation quality.")
    parser.add_argument("--version", action="version", version=f"goldgate {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, module_name in COMMANDS.items():
        if only is not None and name != only:
            # Importing every command costs each run of one of them start-up time.
            subparsers.add_parser(name)
            continue
        module = importlib.import_module(module_name)
        sub = subparsers.add_parser(name, help=module.HELP, description=module.HELP)
        module.add_arguments(sub)
        sub.set_defaults(_run=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run a goldgate command; 0 pass, 1 regression, 2 usage or input error, 3 internal error.

    Exit code 1 is a verdict and nothing else: anything raised that is not a
    :class:`GoldgateError` nor a way out asked for (Ctrl-C, ``sys.exit``, a stop signal) is a
    crash, saved to a file and reported in one line (exit 3). That includes a
    ``BaseException`` that is no exception of ours: a tokenizer's Rust ``PanicException``.
    """
    previous = _on_stop_signals_raise()
    try:
        code = _main(argv)
    except SystemExit:
        raise  # argparse's own exits (usage errors, --help, --version)
    except KeyboardInterrupt:
        console.err("goldgate: interrupted")
        return EXIT_SIGINT
    except Terminated as stop:
        console.err(f"goldgate: terminated ({_signal_name(stop.signum)})")
        return 128 + stop.signum
    except BrokenPipeError:
        # A write to the closed pipe that did not go through console.reader_may_leave: the
        # command did not finish, so there is no verdict to keep. Silence the flush at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_ERROR
    except BaseException as exc:
        from goldgate.crash import crash_message, is_crash, save_traceback

        if not is_crash(exc):
            raise
        console.err(crash_message(exc, save_traceback(exc)))
        return EXIT_INTERNAL
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    # What is still buffered for a pipe is written now: a reader gone by then must not turn
    # the verdict into Python's exit code 120 for a failed flush at exit.
    with console.reader_may_leave():
        sys.stdout.flush()
    return code


#: Signals that stop goldgate by unwinding like Ctrl-C, so that a command system's process
#: group is killed and the cache kept: a CI runner cancelling the job (SIGTERM), a closed
#: terminal or SSH session (SIGHUP), Ctrl-\ (SIGQUIT). By default the last two would end
#: goldgate at once and leave the command's processes running.
STOP_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT")


def _on_stop_signals_raise() -> dict[int, Any]:
    """Make each stop signal raise :class:`Terminated`; the handlers replaced, by signal.

    Only the main thread may set a handler; elsewhere (main() called from a worker thread)
    the signals keep their actions. A signal ignored when goldgate starts (``nohup`` ignores
    SIGHUP) stays ignored.
    """
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, frame: object) -> None:
        raise Terminated(signum)

    previous: dict[int, Any] = {}
    for name in STOP_SIGNALS:
        signum = getattr(signal, name, None)  # Windows has no SIGHUP nor SIGQUIT
        if signum is None or signal.getsignal(signum) == signal.SIG_IGN:
            continue
        replaced = signal.signal(signum, handler)
        previous[signum] = replaced if replaced is not None else signal.SIG_DFL
    return previous


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


#: commands whose paired bootstrap multiplies large matrices (see _single_threaded_blas)
BOOTSTRAPPING = ("run", "bless", "calibrate", "compare")
#: ``score`` multiplies no matrix at all: OpenBLAS's threads would only cost it their start-up
#: (~15-20 ms of CPU, a tenth of scoring a 1,000-sentence corpus with BLEU)
ONE_BLAS_THREAD = (*BOOTSTRAPPING, "score")


def _single_threaded_blas() -> None:
    """Load NumPy with one BLAS thread, unless it is loaded already or the user chose a count.

    The bootstrap's products are many small GEMMs (32 resamples × 32,768 examples): OpenBLAS
    threads spin on them, costing 3-4× the CPU time of one thread, and scoring already keeps
    every core busy with processes. The variable is read once, when the library loads; it
    is removed again at once, so a system command run later does not inherit it. An empty
    value chooses nothing (OpenBLAS then starts a thread per core, as when it is unset: a CI
    template's ``OPENBLAS_NUM_THREADS: ${{ vars.X }}`` with no such variable), and is put back.
    """
    chosen = os.environ.get("OPENBLAS_NUM_THREADS")
    if "numpy" in sys.modules or chosen:
        return
    os.environ["OPENBLAS_NUM_THREADS"] = "1"
    try:
        import numpy  # noqa: F401
    finally:
        if chosen is None:
            del os.environ["OPENBLAS_NUM_THREADS"]
        else:
            os.environ["OPENBLAS_NUM_THREADS"] = chosen


def _main(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    command = words[0] if words and words[0] in COMMANDS else None
    parser = build_parser(command)
    args = parser.parse_args(words)
    if not getattr(args, "_run", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    if command in ONE_BLAS_THREAD:
        _single_threaded_blas()
    if command in BOOTSTRAPPING:
        from goldgate.execution.memory import one_heap_arena

        one_heap_arena()  # the gate's threads share one heap (see goldgate.execution.memory)
    try:
        code: int = args._run(args)
    except GoldgateError as exc:
        console.err(f"goldgate: error: {exc}")
        return exc.exit_code
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
