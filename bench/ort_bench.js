// onnxruntime side of the benchmark (onnxruntime-node, CPU execution provider): one long-lived
// process per model, driven over stdin by bench/bench.py with the same protocol as
// bench/nncc_bench.cpp, so that blocks of runs of the two interleave.
//
//   node bench/ort_bench.js model.onnx INPUT_DIR [--threads T] [--dump-optimized OUT.onnx]
//
// --dump-optimized: only creates the session with optimizedModelFilePath = OUT.onnx (the graph
// onnxruntime actually runs after its fusions), prints "dumped" and exits.
//
// Session options: intraOpNumThreads = interOpNumThreads = T (default 1), graphOptimizationLevel
// 'all', executionMode 'sequential'. Each timed run is one `await session.run(feeds)`, so it
// includes the binding's setImmediate hop and the copy of the outputs into JS tensors (the
// harness floor is measured on an Identity model by bench.py and reported).
'use strict';
const fs = require('fs');
const path = require('path');
const readline = require('readline');
const ort = require('onnxruntime-node');

function statusKb(key) {
  const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(`^${key}:\\s+(\\d+)`, 'm'));
  return m ? Number(m[1]) : -1;
}

function say(line) {
  process.stdout.write(line + '\n');
}

async function main() {
  const args = process.argv.slice(2);
  if (args.length < 2) {
    process.stderr.write('usage: node ort_bench.js model.onnx INPUT_DIR [--threads T]\n');
    process.exit(2);
  }
  const [modelPath, inputDir] = args;
  let threads = 1;
  let dump = null;
  for (let i = 2; i + 1 < args.length; ++i) {
    if (args[i] === '--threads') threads = Number(args[++i]);
    else if (args[i] === '--dump-optimized') dump = args[++i];
  }
  const options = {
    intraOpNumThreads: threads,
    interOpNumThreads: threads,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
  };
  if (dump) {
    const s = await ort.InferenceSession.create(modelPath, { ...options, optimizedModelFilePath: dump });
    await s.release();
    say('dumped');
    return;
  }

  const inputData = [];
  for (let k = 0; ; ++k) {
    const p = path.join(inputDir, `input_${k}.bin`);
    if (!fs.existsSync(p)) break;
    const buf = fs.readFileSync(p);
    inputData.push(new Float32Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)));
  }
  const baseHwm = statusKb('VmHWM');

  let t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(modelPath, options);
  const sessionMs = Number(process.hrtime.bigint() - t0) / 1e6;

  if (session.inputNames.length !== inputData.length)
    throw new Error(`model has ${session.inputNames.length} inputs, found ${inputData.length} input_K.bin files`);
  const feeds = {};
  session.inputNames.forEach((name, k) => {
    const meta = session.inputMetadata[k];
    feeds[name] = new ort.Tensor('float32', inputData[k], meta.shape);
  });

  say(`ready base_hwm_kb=${baseHwm} load_ms=0 session_ms=${sessionMs.toFixed(3)} arena_bytes=-1`);
  let last = null;
  const rl = readline.createInterface({ input: process.stdin, terminal: false });
  for await (const line of rl) {
    const [cmd, arg] = line.trim().split(/\s+/);
    if (cmd === 'run') {
      const n = Number(arg || 1);
      const times = [];
      for (let i = 0; i < n; ++i) {
        const s = process.hrtime.bigint();
        last = await session.run(feeds);
        times.push(Number(process.hrtime.bigint() - s) / 1e6);
      }
      say('times ' + times.map((t) => t.toFixed(6)).join(' '));
    } else if (cmd === 'save') {
      if (!last) last = await session.run(feeds);
      session.outputNames.forEach((name, k) => {
        const d = last[name].data;
        fs.writeFileSync(path.join(arg, `output_${k}.bin`), Buffer.from(d.buffer, d.byteOffset, d.byteLength));
      });
      say('saved');
    } else if (cmd === 'mem') {
      say(`mem rss_kb=${statusKb('VmRSS')} hwm_kb=${statusKb('VmHWM')}`);
    } else if (cmd === 'quit') {
      break;
    } else if (cmd) {
      say(`error unknown command '${cmd}'`);
    }
  }
  rl.close();
  await session.release();
}

main().catch((e) => {
  say(`error ${String(e && e.message ? e.message : e).replace(/\n/g, ' ')}`);
  process.stderr.write(`ort_bench: error: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
