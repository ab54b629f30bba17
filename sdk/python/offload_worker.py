"""Serve tasks to an offload pool (github.com/offloadgo/offload) from Python.

    from offload_worker import task, serve, Cancelled, recycle, current_call

    @task("thumb")
    def thumb(inp):          # inp: the call's input as JSON decodes it; its blob field, if any, is bytes
        return {"Width": inp["Width"], "Image": b"..."}  # one bytes value at the top level goes as the blob

    serve()                  # never returns

The contract, in brief (sdk/PROTOCOL.md, version 1, has all of it): the pool
starts this program with frames in on fd 3 and out on fd 4; serve() says hello
with the registered task names, then answers each call with exactly one frame,
one call at a time. A task's exception becomes the call's error (type, message,
traceback); SystemExit ends the process, and the call fails as crashed. When the caller gives up, the pool writes a cancel frame and sends
SIGINT: Cancelled is raised in the task if that call is still running, as soon
as it runs Python code again (time.sleep and blocking reads are interrupted); a
task that does not stop is killed after the pool's TerminateGrace. When
the pool closes fd 3, or its process dies (SIGTERM), the program kills its own
process group, so nothing a task started outlives it. Stdout and stderr are
free for the program's own use. Standard library only; Python 3.7 or later.
"""
import json, os, select, signal, struct, sys, threading, traceback

__all__ = ["task", "serve", "Cancelled", "recycle", "current_call", "Call"]

VERSION = 1
_IN, _OUT = 3, 4
_CALL, _CANCEL, _RESULT, _ERROR, _TOO_LARGE, _UNKNOWN, _HELLO = 1, 2, 3, 4, 6, 7, 0xFF
_FRAME = struct.Struct(">IB3xQ")  # body length, kind, three zero bytes, call id
_LENGTH = struct.Struct(">I")     # a message's JSON header length
_BYTES = (bytes, bytearray, memoryview)
_to_json = json.JSONEncoder(allow_nan=False, separators=(",", ":")).encode  # Go's encoding/json refuses NaN
_tasks = {}
_running = None  # the Call being run, set only inside _answer's try (see _on_sigint)
_max_frame = 0


class Cancelled(BaseException):
    """Raised in a task whose call the pool cancelled; cause is "canceled", "deadline" or "closed".

    A BaseException, as KeyboardInterrupt is, so that a task's `except Exception` does not swallow it."""

    def __init__(self, cause):
        super().__init__(cause)
        self.cause = cause


class Call:
    """The call being run: id, task name, trace (the caller's trace context, a dict)."""
    __slots__ = ("id", "task", "trace", "_recycle", "_cancel_taken")

    def __init__(self, id, header):
        self.id, self.task = id, header["task"]
        self.trace = header.get("trace") or {}
        self._recycle = self._cancel_taken = False


def task(name):
    """Decorator: serve the function as the task name; it takes the input and returns a JSON-able output."""
    if not isinstance(name, str):
        raise TypeError('offload_worker: task takes the name: @task("thumb")')

    def register(fn):
        if name in _tasks:
            raise ValueError(f"offload_worker: task {name!r} is registered twice")
        _tasks[name] = fn
        return fn
    return register


def current_call():
    """The Call being run, or None outside a task."""
    return _running


def recycle():
    """Ask the pool to replace this process once it has read the running call's answer."""
    if _running is None:
        raise RuntimeError("offload_worker: recycle() is called outside a task")
    _running._recycle = True


def _die():
    os.killpg(0, signal.SIGKILL)  # the pool gave this process a group of its own


def _fail(why):
    print(f"offload_worker: protocol error: {why}", file=sys.stderr, flush=True)
    _die()


def _read_exact(n):
    buf = bytearray(n)
    view, got = memoryview(buf), 0
    while got < n:
        k = os.readv(_IN, [view[got:]])
        if k == 0:
            _die()  # the pool closed the channel
        got += k
    return buf


def _read_frame():
    length, kind, cid = _FRAME.unpack(_read_exact(_FRAME.size))
    if length > _max_frame:
        _fail(f"a frame of {length} bytes is over the maximum of {_max_frame}")
    return kind, cid, _read_exact(length)


def _write_frame(kind, cid, head, blob=b""):
    try:
        for part in (_FRAME.pack(len(head) + len(blob), kind, cid) + head, blob):
            view = memoryview(part)
            while view:
                view = view[os.write(_OUT, view):]
    except BrokenPipeError:
        _die()  # the pool is gone


def _split(body):
    """A message body's JSON header (a dict) and its blob."""
    (n,) = _LENGTH.unpack_from(body)
    return json.loads(body[4:4 + n].decode()), body[4 + n:]


def _message(head, call=None):
    if call is not None and call._recycle:
        head["recycle"] = True
    text = _to_json(head).encode()
    return _LENGTH.pack(len(text)) + text


def _on_sigint(signum=None, frame=None):
    # Why this is safe (PROTOCOL.md, "One call at a time" and "Cancel"): between a call and its
    # answer the only frame the pool sends is one cancel for that call, written before its SIGINT.
    # - _running is set only once the call frame is read whole, and cleared before the loop reads
    #   again, so this never reads into a frame the loop is reading.
    # - It reads only when fd 3 is readable, so it never blocks: a late SIGINT, whose cancel came
    #   after its call's answer, finds that frame already read and ignored by the loop, and the
    #   pipe empty, or else the next call's own cancel (which is then meant).
    # - _cancel_taken is set before the read: one read per call, even if a second SIGINT runs this
    #   handler again inside it (a nested run that takes the frame first raises through this one).
    # - A SIGINT that came while the call frame was being read found no call; _answer runs this
    #   once itself after setting _running, so that cancel is not lost.
    # - Cancelled is raised only while _running is set, which is inside _answer's try: the
    #   exception becomes this call's one answer.
    call = _running
    if call is None or call._cancel_taken or not select.select([_IN], [], [], 0)[0]:
        return
    call._cancel_taken = True
    kind, cid, body = _read_frame()
    if kind != _CANCEL or cid != call.id:
        _fail(f"a frame of kind {kind:#x} for call {cid} came during call {call.id}")
    raise Cancelled(_split(body)[0].get("cause", ""))


def _answer(cid, body):
    """Run the call in body; return the answer's kind and body."""
    global _running
    call = None
    try:
        header, blob = _split(body)
        fn = _tasks.get(header["task"])
        if fn is None:
            return _UNKNOWN, _message({"message": f"offload_worker: no task named {header['task']!r} here"}), b""
        inp = header.get("input")
        if header.get("blob"):
            inp[header["blob"]] = bytes(blob)
        try:
            call = _running = Call(cid, header)
            _on_sigint()
            out = fn(inp)
        finally:
            _running = None
        blob, fields = b"", [k for k, v in out.items() if isinstance(v, _BYTES)] if isinstance(out, dict) else []
        if len(fields) > 1:
            raise TypeError(f"offload_worker: task {call.task!r} returned {len(fields)} bytes values "
                            f"({', '.join(map(str, fields))}); at most one travels as the blob")
        head = {"output": out}
        if fields:
            blob = memoryview(out[fields[0]]).cast("B")  # its length in bytes, whatever its format
            head = {"output": {**out, fields[0]: None}, "blob": fields[0]}
        return _RESULT, _message(head, call), blob
    except (Exception, Cancelled) as e:  # SystemExit and KeyboardInterrupt end the process
        _running = None
        tb = e.__traceback__.tb_next  # start at the task, not at this function
        return _ERROR, _message({"type": type(e).__name__, "message": str(e),
                                 "traceback": "".join(traceback.format_exception(type(e), e, tb))}, call), b""


def _watch_lifeline(fd):
    os.set_inheritable(fd, False)
    os.set_blocking(fd, True)
    while os.read(fd, 1):
        pass
    _die()  # a thread of its own: heard while a task runs, as SIGTERM is on Linux


def serve():
    """Say hello to the pool, then answer its calls one at a time. Never returns."""
    global _max_frame
    if os.environ.get("OFFLOAD_WORKER") != "1":
        sys.exit("offload_worker: serve() runs only as an offload pool's worker (OFFLOAD_WORKER=1 is not set)")
    _max_frame = int(os.environ["OFFLOAD_WORKER_MAX_FRAME"])
    for fd in (_IN, _OUT):
        os.set_blocking(fd, True)
        os.set_inheritable(fd, False)  # a task's children do not hold the pool's pipes
    sys.stdout.reconfigure(line_buffering=True)  # the pool logs lines as they come
    signal.signal(signal.SIGTERM, lambda signum, frame: _die())  # Linux: the pool's process died
    lifeline = os.environ.get("OFFLOAD_WORKER_LIFELINE")  # elsewhere: EOF on it says so
    if lifeline:
        threading.Thread(target=_watch_lifeline, args=(int(lifeline),), daemon=True).start()
    signal.signal(signal.SIGINT, _on_sigint)
    hello = {"version": VERSION, "pid": os.getpid(), "tasks": sorted(_tasks)}
    _write_frame(_HELLO, 0, _to_json(hello).encode())
    while True:
        kind, cid, body = _read_frame()
        if kind == _CANCEL:
            continue  # its call was answered already
        if kind != _CALL:
            _fail(f"a frame of kind {kind:#x} came between calls")
        kind, head, blob = _answer(cid, body)
        if len(head) + len(blob) > _max_frame:
            kind, head, blob = _TOO_LARGE, _message({"message": f"offload_worker: the answer of {len(head) + len(blob)}"
                                                               f" bytes is over the maximum frame of {_max_frame}"}), b""
        _write_frame(kind, cid, head, blob)
