"""A worker whose hello says protocol version 99, then waits for the pool to close fd 3."""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import offload_worker  # noqa: E402

hello = {"version": 99, "pid": os.getpid(), "tasks": ["echo"]}
offload_worker._write_frame(offload_worker._HELLO, 0, json.dumps(hello).encode())
while os.read(3, 1 << 16):
    pass
