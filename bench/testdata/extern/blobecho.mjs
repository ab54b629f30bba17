// The benchmarks' Node worker: "blobecho" returns its input's blob unchanged, as blobecho.py does.
import { task, serve } from "../../../sdk/node/offload-worker.mjs";

task("blobecho", (inp) => ({ Data: inp.Data }));

serve();
