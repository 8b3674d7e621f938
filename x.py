#!/usr/bin/env python3
"""Entry point: hands over to the Rust build crate in src/bootstrap (./x.py help)."""
import os
import subprocess
import sys

root = os.path.dirname(os.path.abspath(__file__))
cmd = ["cargo", "run", "--quiet", "-p", "offload-bootstrap", "--bin", "bootstrap", "--"] + sys.argv[1:]
sys.exit(subprocess.call(cmd, cwd=root))
