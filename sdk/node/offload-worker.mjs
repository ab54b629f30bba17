// Serve tasks to an offload pool (github.com/offloadgo/offload) from Node.
//
//   import { task, serve, recycle } from "./offload-worker.mjs";
//   task("thumb", async (inp, signal, call) => ({ Width: inp.Width }));
//   serve();
//
// The contract, in brief (sdk/PROTOCOL.md, version 1, has all of it): the pool
// starts this program with frames in on fd 3 and out on fd 4; serve() says
// hello with the registered task names, then answers each call with exactly
// one frame, one call at a time. A task gets the call's input as JSON decodes
// it (its blob field, if any, a Buffer), an AbortSignal that aborts when the
// pool cancels the call, and the call ({id: a BigInt, task, trace: the
// caller's trace context}). It returns (or resolves to) a JSON-able output;
// one Buffer or Uint8Array at its top level travels as the
// blob. A throw becomes the call's error (type, message, stack). The pool sends
// SIGINT with each cancel; it is ignored here, the cancel frame aborts the
// signal. When the pool closes fd 3, or its process dies (SIGTERM), the program
// kills its own process group, so nothing a task started outlives it. A task
// that blocks the event loop can be neither cancelled nor stopped by SIGTERM
// until it yields: the pool kills it after its TerminateGrace. Stdout and
// stderr are free for the program's own use. Standard library only.
import net from "node:net";

const VERSION = 1;
const CALL = 0x01, CANCEL = 0x02, RESULT = 0x03, ERROR = 0x04, TOO_LARGE = 0x06, UNKNOWN = 0x07, HELLO = 0xff;
const FRAME_HEADER = 16;

const tasks = new Map();
let running = null; // the call being run: {id, task, trace, controller, recycle}
let maxFrame = 0;
let output = null;

/** Cancelled is the AbortSignal's reason when the pool cancels a call; cause is "canceled", "deadline" or "closed". */
export class Cancelled extends Error {
  constructor(cause) {
    super(`offload-worker: the call was cancelled (${cause})`, { cause });
    this.name = "Cancelled";
  }
}

/** task serves fn as the task name: fn(input, signal, call) returns or resolves to the output. */
export function task(name, fn) {
  if (typeof name !== "string" || typeof fn !== "function") throw new TypeError("offload-worker: task(name, fn) takes a string and a function");
  if (tasks.has(name)) throw new Error(`offload-worker: task ${JSON.stringify(name)} is registered twice`);
  tasks.set(name, fn);
}

/** recycle asks the pool to replace this process once it has read the running call's answer. */
export function recycle() {
  if (running === null) throw new Error("offload-worker: recycle() is called outside a task");
  running.recycle = true;
}

function killGroup() {
  process.kill(0, "SIGKILL"); // the pool gave this process a group of its own
}

function fail(why) {
  process.stderr.write(`offload-worker: protocol error: ${why}\n`);
  killGroup();
}

function writeFrame(kind, id, head, blob) {
  const header = Buffer.alloc(FRAME_HEADER);
  header.writeUInt32BE(head.length + (blob ? blob.length : 0), 0);
  header[4] = kind;
  header.writeBigUInt64BE(id, 8);
  output.write(Buffer.concat([header, head])); // a socket writes its buffers whole and in order
  if (blob && blob.length > 0) output.write(blob);
}

function message(head, call) {
  if (call && call.recycle) head.recycle = true;
  const text = Buffer.from(JSON.stringify(head));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(text.length, 0);
  return Buffer.concat([length, text]);
}

function split(body) {
  const n = body.readUInt32BE(0);
  return { header: JSON.parse(body.subarray(4, 4 + n).toString("utf8")), blob: body.subarray(4 + n) };
}

function errorHead(err) {
  if (!(err instanceof Error)) return { type: "Error", message: String(err), traceback: "" };
  const type = err.name !== "Error" ? err.name : err.constructor.name; // class ValueError extends Error {}
  return { type, message: err.message, traceback: err.stack ?? "" };
}

async function run(id, body) {
  let call = null, answer;
  try {
    const { header, blob } = split(body);
    const fn = tasks.get(header.task);
    if (fn === undefined) {
      answer = [UNKNOWN, message({ message: `offload-worker: no task named ${JSON.stringify(header.task)} here` })];
    } else {
      const input = header.input;
      if (header.blob) input[header.blob] = blob;
      const controller = new AbortController();
      call = running = { id, task: header.task, trace: header.trace ?? {}, controller, recycle: false };
      const out = await fn(input, controller.signal, { id, task: call.task, trace: call.trace });
      const fields = out !== null && typeof out === "object" && !(out instanceof Uint8Array)
        ? Object.keys(out).filter((k) => out[k] instanceof Uint8Array) : [];
      if (fields.length > 1) {
        throw new TypeError(`offload-worker: task ${JSON.stringify(call.task)} returned ${fields.length} byte arrays (${fields.join(", ")}); at most one travels as the blob`);
      }
      if (fields.length === 1) {
        answer = [RESULT, message({ output: { ...out, [fields[0]]: null }, blob: fields[0] }, call), out[fields[0]]];
      } else {
        answer = [RESULT, message({ output: out === undefined ? null : out }, call)];
      }
    }
  } catch (err) {
    answer = [ERROR, message(errorHead(err), call)];
  }
  running = null;
  const size = answer[1].length + (answer[2] ? answer[2].length : 0);
  if (size > maxFrame) {
    answer = [TOO_LARGE, message({ message: `offload-worker: the answer of ${size} bytes is over the maximum frame of ${maxFrame}` })];
  }
  writeFrame(answer[0], id, answer[1], answer[2]);
}

function onFrame(kind, id, body) {
  if (kind === CANCEL) {
    // Frames come in order and one call runs at a time: a cancel for another id is late (its call was answered).
    if (running !== null && running.id === id) running.controller.abort(new Cancelled(split(body).header.cause ?? ""));
  } else if (kind !== CALL) {
    fail(`a frame of kind 0x${kind.toString(16)} came from the pool`);
  } else if (running !== null) {
    fail(`call ${id} came during call ${running.id}`);
  } else {
    run(id, body);
  }
}

/** serve says hello to the pool, then answers its calls one at a time. It returns at once; the process serves until the pool closes it. */
export function serve() {
  if (process.env.OFFLOAD_WORKER !== "1") {
    throw new Error("offload-worker: serve() runs only as an offload pool's worker (OFFLOAD_WORKER=1 is not set)");
  }
  maxFrame = Number(process.env.OFFLOAD_WORKER_MAX_FRAME);
  if (!Number.isSafeInteger(maxFrame) || maxFrame <= 0) {
    throw new Error(`offload-worker: OFFLOAD_WORKER_MAX_FRAME is ${JSON.stringify(process.env.OFFLOAD_WORKER_MAX_FRAME)}, not a size in bytes`);
  }
  process.on("SIGINT", () => {}); // a cancel's signal: the cancel frame does the work
  process.on("SIGTERM", killGroup); // Linux: the pool's process died
  if (process.env.OFFLOAD_WORKER_LIFELINE) { // elsewhere: EOF on the lifeline says so
    const lifeline = new net.Socket({ fd: Number(process.env.OFFLOAD_WORKER_LIFELINE), readable: true, writable: false });
    lifeline.on("end", killGroup);
    lifeline.on("error", killGroup);
    lifeline.resume();
  }
  output = new net.Socket({ fd: 4, readable: false, writable: true });
  output.on("error", killGroup);
  const input = new net.Socket({ fd: 3, readable: true, writable: false });
  input.on("end", killGroup);
  input.on("error", killGroup);
  let chunks = [], buffered = 0, header = null;
  const take = (n) => {
    const all = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, buffered);
    const rest = all.subarray(n);
    chunks = rest.length > 0 ? [rest] : [];
    buffered = rest.length;
    return all.subarray(0, n);
  };
  input.on("data", (chunk) => {
    chunks.push(chunk);
    buffered += chunk.length;
    for (;;) {
      if (header === null) {
        if (buffered < FRAME_HEADER) return;
        const h = take(FRAME_HEADER);
        header = { length: h.readUInt32BE(0), kind: h[4], id: h.readBigUInt64BE(8) };
        if (header.length > maxFrame) return fail(`a frame of ${header.length} bytes is over the maximum of ${maxFrame}`);
      }
      if (buffered < header.length) return;
      const { kind, id, length } = header;
      header = null;
      onFrame(kind, id, take(length));
    }
  });
  const hello = { version: VERSION, pid: process.pid, tasks: [...tasks.keys()].sort() };
  writeFrame(HELLO, 0n, Buffer.from(JSON.stringify(hello)));
}
