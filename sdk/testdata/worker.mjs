// The Node test worker of the pool's integration tests: the same tasks as worker.py.
import { spawn } from "node:child_process";
import { setTimeout as sleepFor } from "node:timers/promises";
import { task, serve, recycle } from "../node/offload-worker.mjs";

class ValueError extends Error {
  name = "ValueError";
}

task("echo", (inp) => ({ Text: inp.Text, N: inp.N }));

task("blob", (inp) => ({ Width: inp.Width, Size: inp.Image.length, Image: Buffer.from(inp.Image).reverse() }));

task("fail", () => {
  throw new ValueError("bad width 7");
});

task("sleep", async (inp, signal) => {
  console.error("sleep: started");
  await sleepFor(inp.Seconds * 1000, undefined, { signal }); // rejects when the pool cancels
  return { Slept: true };
});

task("stubborn", (inp) => {
  console.error("stubborn: deaf to the cancel"); // synchronous on a pipe: the pool sees it before the loop
  const end = Date.now() + inp.Seconds * 1000;
  while (Date.now() < end); // blocks the event loop: the cancel cannot reach it
  return { Slept: true };
});

task("grandchild", () => {
  const child = spawn("sleep", ["300"], { stdio: "inherit" }); // holds the worker's stdout and stderr, as in worker.py
  return { PID: child.pid };
});

task("print", () => {
  console.log("first line on stdout");
  process.stdout.write(Buffer.from([0, 0, 0, 0x10, 3, 0, 0, 0, 0xff, 0xfe, 0x20, 0x6e, 0x6f, 0x74, 0x80, 0x81, 0x0a]));
  console.log("third line on stdout");
  console.error("one line on stderr");
  return { OK: true };
});

task("exit", (inp) => {
  process.stderr.write("dying now\n");
  process.exit(inp.Code);
});

task("alloc", async (inp) => {
  const memory = Buffer.alloc(inp.MiB << 20, 1); // filled, so every page is resident
  await sleepFor(inp.Seconds * 1000);
  return { MiB: memory.length >> 20 };
});

task("recycle", () => {
  recycle();
  return { PID: process.pid };
});

task("pid", () => ({ PID: process.pid }));

task("trace", (inp, signal, call) => ({ Trace: call.trace }));

task("env", () => ({ Dir: process.cwd(), Model: process.env.MODEL ?? "" }));

task("bytes", (inp) => ({ Data: Buffer.alloc(inp.N, "x") }));

serve();
