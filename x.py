#!/usr/bin/env python3
"""Entry point: hands over to the Rust build crate in src/bootstrap (./x.py help).

On a machine without cargo (a GPU machine that runs what was built elsewhere) it runs the
bootstrap binary built before, from target/debug."""
import os
import shutil
import subprocess
import sys

root = os.path.dirname(os.path.abspath(__file__))
if shutil.which("cargo"):
    cmd = ["cargo", "run", "--quiet", "-p", "offload-bootstrap", "--bin", "bootstrap", "--"]
else:
    cmd = [os.path.join(root, "target", "debug", "bootstrap")]
sys.exit(subprocess.call(cmd + sys.argv[1:], cwd=root))
