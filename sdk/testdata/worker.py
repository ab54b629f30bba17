"""The Python test worker of the pool's integration tests: the same tasks as worker.mjs."""
import os, signal, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from offload_worker import task, serve, recycle, current_call  # noqa: E402

_grandchildren = []  # kept, so that no Popen is reaped or warned about while it runs


@task("echo")
def echo(inp):
    return {"Text": inp["Text"], "N": inp["N"]}


@task("blob")
def blob(inp):
    image = inp["Image"]
    return {"Width": inp["Width"], "Size": len(image), "Image": image[::-1]}


@task("fail")
def fail(inp):
    raise ValueError("bad width 7")


@task("sleep")
def sleep(inp):
    print("sleep: started", file=sys.stderr, flush=True)
    time.sleep(inp["Seconds"])  # Cancelled is raised in here
    return {"Slept": True}


@task("stubborn")
def stubborn(inp):
    sdk_handler = signal.signal(signal.SIGINT, signal.SIG_IGN)
    print("stubborn: deaf to the cancel", file=sys.stderr, flush=True)
    try:
        end = time.monotonic() + inp["Seconds"]
        while time.monotonic() < end:
            time.sleep(0.01)
    finally:
        signal.signal(signal.SIGINT, sdk_handler)
    return {"Slept": True}


@task("grandchild")
def grandchild(inp):
    child = subprocess.Popen(["sleep", "300"])
    _grandchildren.append(child)
    return {"PID": child.pid}


@task("print")
def print_lines(inp):
    print("first line on stdout")
    sys.stdout.buffer.write(b"\x00\x00\x00\x10\x03\x00\x00\x00\xff\xfe not a frame \x80\x81\n")
    print("third line on stdout", flush=True)
    print("one line on stderr", file=sys.stderr, flush=True)
    return {"OK": True}


@task("exit")
def exit_now(inp):
    print("dying now", file=sys.stderr, flush=True)
    sys.exit(inp["Code"])


@task("alloc")
def alloc(inp):
    memory = bytearray(inp["MiB"] << 20)  # zeroed pages, not yet resident
    for i in range(0, len(memory), 4096):
        memory[i] = 1
    time.sleep(inp["Seconds"])
    return {"MiB": len(memory) >> 20}


@task("recycle")
def recycle_me(inp):
    recycle()
    return {"PID": os.getpid()}


@task("pid")
def pid(inp):
    return {"PID": os.getpid()}


@task("trace")
def trace(inp):
    return {"Trace": current_call().trace}


@task("env")
def env(inp):
    return {"Dir": os.getcwd(), "Model": os.environ.get("MODEL", "")}


@task("bytes")
def some_bytes(inp):
    return {"Data": b"x" * inp["N"]}


serve()
