// Runs an ONNX model on ONNX Runtime with the inputs of a safetensors file and compares its
// outputs with those of another (ytape run's), by name. Each output's difference is
// max |ort - ytape| / max |ytape|, so that elements near zero do not dominate.
// usage: node onnx_runtime.mjs MODEL.onnx INPUTS.safetensors WANT.safetensors TOLERANCE
// onnxruntime-node is looked up in $ORT_MODULES (default: out/ort/node_modules, as
// bench/onnx_runtime.sh installs it).
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

const modules = process.env.ORT_MODULES ??
                new URL('../out/ort/node_modules', import.meta.url).pathname;
const require = createRequire(modules + '/');
const ort = require('onnxruntime-node');

const arrays = { F32: Float32Array, F64: Float64Array, I64: BigInt64Array };
const ortTypes = { F32: 'float32', F64: 'float64', I64: 'int64' };

// safetensors: an 8-byte little-endian header length, a JSON header, then the raw data.
// The header's shapes are row-major ones (ytape's reversed), as ONNX's are.
function readSafetensors(path) {
  const bytes = readFileSync(path);
  const n = Number(bytes.readBigUInt64LE(0));
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const tensors = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (!arrays[t.dtype]) throw new Error(`${name}: dtype ${t.dtype} is not supported here`);
    const [begin, end] = t.data_offsets;
    const raw = bytes.subarray(8 + n + begin, 8 + n + end);
    const data = new arrays[t.dtype](raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
    tensors[name] = new ort.Tensor(ortTypes[t.dtype], data, t.shape);
  }
  return tensors;
}

function difference(got, want) {
  let diff = 0, scale = 0;
  for (let i = 0; i < want.data.length; ++i) {
    diff = Math.max(diff, Math.abs(Number(got.data[i]) - Number(want.data[i])));
    scale = Math.max(scale, Math.abs(Number(want.data[i])));
  }
  return scale > 0 ? diff / scale : diff;
}

const [model, inputsPath, wantPath, tolerance] = process.argv.slice(2);
const session = await ort.InferenceSession.create(model);
const inputs = readSafetensors(inputsPath);
const feeds = {};
for (const name of session.inputNames) {
  if (!inputs[name]) throw new Error(`input ${name} is not in ${inputsPath}`);
  feeds[name] = inputs[name];
}
const started = performance.now();
const results = await session.run(feeds);
const ms = performance.now() - started;
const want = readSafetensors(wantPath);
let worst = 0, worstName = '';
for (const name of session.outputNames) {
  if (!want[name]) throw new Error(`output ${name} is not in ${wantPath}`);
  if (results[name].dims.join() !== want[name].dims.join()) {
    throw new Error(`output ${name}: shape ${results[name].dims} where ytape has ${want[name].dims}`);
  }
  const d = difference(results[name], want[name]);
  if (d >= worst) [worst, worstName] = [d, name];
}
const pass = worst <= Number(tolerance);
console.log(`${model}: ${session.outputNames.length} outputs, ONNX Runtime ${ms.toFixed(0)} ms; ` +
            `largest relative difference ${worst.toExponential(2)} (${worstName}), ` +
            `tolerance ${tolerance}: ${pass ? 'PASS' : 'FAIL'}`);
process.exit(pass ? 0 : 1);
