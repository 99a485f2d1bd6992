#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_cli_run_options (tests/fuzz/corpus_fuzz_cli_run_options/).

Usage: make_corpus_cli_run_options.py [OUT_DIR]
Each file is the command line after `aiprof run`, arguments separated by
NUL bytes: the command lines of the docs and tests/e2e/test_run.sh, every
option, and every usage error.  libFuzzer's own finds are merged into the
same directory (-merge=1) and kept under their hash names.
"""
import os
import sys

CASES = {
    # as in README.md, docs/PYTHON.md and tests/e2e/test_run.sh
    "doc_whole": ["--dir", "./result", "--record-shapes", "--", "python3", "train.py"],
    "doc_dynamic": ["--config", "./prof_cfg", "--", "python3", "train.py"],
    "doc_program": ["--dir", "./result", "--", "./my_program", "args"],
    "e2e_own_steps": ["--dir", "/tmp/t/whole", "--", "build/bin/train_loop", "--steps", "5",
                      "--dir", "/tmp/t/own"],
    "e2e_window": ["--dir", "/tmp/t/win", "--delay", "0.4", "--duration", "0.4", "--",
                   "prog_ticker", "1200"],
    "e2e_exit_status": ["--dir", "/tmp/t/st", "--", "sh", "-c", "exit 7"],
    "every_switch": ["--record-shapes", "--with-stack", "--profile-memory", "--with-modules",
                     "--with-flops", "--no-mstx", "--children", "--no-analyse", "true"],
    "no_analyze_spelling": ["--no-analyze", "true"],
    "command_without_dashes": ["--with-stack", "python3", "-m", "train"],
    "dash_command_after_dashes": ["--", "-weird-name"],
    "empty_command": ["", "arg"],
    "help_short": ["-h"],
    "help_long": ["--dir", "x", "--help", "--bogus"],
    "help_as_value": ["--dir", "-h", "true"],
    "delay_zero": ["--delay", "0", "true"],
    "delay_exp": ["--delay", "1e-3", "--duration", "2.5", "true"],
    # usage errors
    "err_nothing": [],
    "err_no_command": ["--dir", "x"],
    "err_only_dashes": ["--"],
    "err_needs_value": ["--dir"],
    "err_unknown": ["--bogus", "--", "true"],
    "err_equals_form": ["--dir=x", "--", "true"],
    "err_single_dash": ["-", "true"],
    "err_delay_text": ["--delay", "abc", "--", "true"],
    "err_delay_negative": ["--delay", "-1", "--", "true"],
    "err_duration_zero": ["--duration", "0", "--", "true"],
    "err_duration_huge": ["--duration", "1e9", "--", "true"],
    "err_duration_nan": ["--duration", "nan", "true"],
    "err_config_and_delay": ["--config", "d", "--delay", "1", "true"],
    "err_config_and_duration": ["--duration", "2", "--config", "d", "--", "true"],
}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "corpus_fuzz_cli_run_options")
    os.makedirs(out, exist_ok=True)
    for name, args in CASES.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(b"\0".join(a.encode() for a in args))


if __name__ == "__main__":
    main()
