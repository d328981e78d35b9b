"""The Python example, with a client that reads a row's changes otherwise
than the row they stand for: it drops observed_at from them. The example
never decides on observed_at, so it also notes each row's observed_at as
it reads it: the history shows what the child read. `converge driver
selftest` must name it at its last check (selftest_test.go)."""

import os
import runpy
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "..")
sys.path.insert(0, os.path.join(ROOT, "sim", "workspace", "driver", "python"))

import converge_driver as cd  # noqa: E402

read = cd._Conn.row_in


def row_in(self, r):
    if self.version >= 3 and r["id"] in self.held:
        r.pop("observed_at", None)
    row = read(self, r)
    self.send({"type": "note", "text": f"read {row['id']} observed_at {row['observed_at']}"})
    return row


cd._Conn.row_in = row_in
runpy.run_path(os.path.join(ROOT, "examples", "python-coordinator", "coordinator.py"), run_name="__main__")
