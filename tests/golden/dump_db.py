#!/usr/bin/env python3
"""Prints a SQLite database as text: each table's DDL, then its rows in
insertion order (rowid), so that golden databases compare as text across
SQLite versions.  Usage: dump_db.py FILE.db"""
import sqlite3
import sys


def main(path):
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    tables = con.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table' "
                         "ORDER BY name").fetchall()
    for name, sql in tables:
        print(sql)
        for row in con.execute(f'SELECT * FROM "{name}" ORDER BY rowid'):
            print("  " + repr(row))
    con.close()


if __name__ == "__main__":
    main(sys.argv[1])
