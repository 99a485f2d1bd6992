#!/usr/bin/env python3
"""Every function the library exports has a caller (issue 28 point 7).

A non-static function defined under src/ (public aip_* or internal aip__*)
must be named somewhere in the tree other than where it is defined or
declared: in the library, the CLI, the Python extension, the PyTorch
adapter, or a test.  One that is named nowhere is dead code (an internal
helper nothing calls) or a public entry nothing runs (not even a test), and
either way it can be wrong without anyone noticing: remove it, or call it.
Comments do not count as callers.  A line-based reading of C that relies on
the project's style: a definition starts at the beginning of a line with its
return type.

Exit status 1 if any such function is found.

Usage: scripts/check_callers.py [SOURCE_DIR]
"""
import os
import re
import sys

SEARCHED = ("src", "include", "python", "adapters", "tests")
SOURCE_ENDINGS = (".c", ".h", ".cpp", ".cc")
DEFINITION = re.compile(r"^(?!static\b)[A-Za-z_][\w \*]*?\b(aip_{1,2}[a-z]\w*)\(", re.M)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def sources(root):
    for top in SEARCHED:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith(SOURCE_ENDINGS):
                    path = os.path.join(folder, name)
                    with open(path, encoding="utf-8", errors="replace") as fh:
                        # comments blanked, lines kept
                        text = COMMENT.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), fh.read())
                    yield os.path.relpath(path, root), text


def defined(files):
    """(file, name) of every non-static function defined under src/."""
    for path, text in files.items():
        if not path.startswith("src/") or not path.endswith(".c"):
            continue
        for m in DEFINITION.finditer(text):
            line_end = text.find("\n", m.start())
            line = text[m.start():line_end if line_end >= 0 else len(text)]
            if not line.rstrip().endswith(";"):  # a definition, not a declaration
                yield path, m.group(1)


def uses(files):
    """name -> how many times it appears other than where it is declared or
    defined (a line that starts with a type and the name)."""
    count = {}
    own = re.compile(r"^(?!\s)[A-Za-z_][\w \*]*?\b(aip_{1,2}[a-z]\w*)\(", re.M)
    word = re.compile(r"\baip_{1,2}[a-z]\w*\b")
    for text in files.values():
        for m in word.finditer(text):
            count[m.group(0)] = count.get(m.group(0), 0) + 1
        for m in own.finditer(text):
            count[m.group(1)] -= 1
    return count


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    files = dict(sources(root))
    count = uses(files)
    dead = [(path, name) for path, name in defined(files) if count.get(name, 0) <= 0]
    for path, name in dead:
        print("%s: %s() is defined and never called (nor tested)" % (path, name))
    print("functions without a caller: %d" % len(dead))
    return 1 if dead else 0


if __name__ == "__main__":
    sys.exit(main())
