"""The benchmarks' Python worker: "blobecho" returns its input's blob unchanged, so
that the 10 MiB round trip (bench/extern_blob_test.go) moves bytes and does nothing else."""
import os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "sdk", "python"))
from offload_worker import task, serve  # noqa: E402


@task("blobecho")
def blobecho(inp):
    return {"Data": inp["Data"]}


serve()
