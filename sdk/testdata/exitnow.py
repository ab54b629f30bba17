"""A worker that fails to start: it prints to stderr and exits with status 3 at once."""
import sys

print("cannot load model", file=sys.stderr)
sys.exit(3)
