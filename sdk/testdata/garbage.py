"""A worker that says a correct hello (task "echo"), then answers its first call with a
result frame whose JSON header is not JSON, and waits to be killed."""
import os, struct, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import offload_worker  # noqa: E402
from offload_worker import current_call, serve, task  # noqa: E402


@task("echo")
def echo(inp):
    not_json = b"{not json"
    offload_worker._write_frame(offload_worker._RESULT, current_call().id, struct.pack(">I", len(not_json)) + not_json)
    while True:
        time.sleep(3600)


serve()
