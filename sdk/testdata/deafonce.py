"""A worker whose first process says hello, waits for its first call to
arrive and exits without reading it; every later process (the file named
by DEAF_MARK exists) serves echo through the SDK."""
import json, os, select, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
import offload_worker  # noqa: E402
from offload_worker import serve, task  # noqa: E402

mark = os.environ["DEAF_MARK"]
if not os.path.exists(mark):
    open(mark, "w").close()
    hello = {"version": 1, "pid": os.getpid(), "tasks": ["echo"]}
    offload_worker._write_frame(offload_worker._HELLO, 0, json.dumps(hello).encode())
    select.select([3], [], [])  # the call is in the pipe: leave it there
    sys.exit(0)


@task("echo")
def echo(inp):
    return {"Text": inp["Text"], "N": inp["N"]}


serve()
