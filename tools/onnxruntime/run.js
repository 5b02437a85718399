// Runs an ONNX model in ONNX Runtime on float32 inputs from a file and writes its logits:
//   node run.js MODEL.onnx INPUT.bin N,C,H,W LOGITS.bin
// zotrain's tests compare them with zotrain's own (tests/models/onnx_test.cpp).
const fs = require("fs");
const ort = require("onnxruntime-node");

async function main() {
  const [model, input, dims, out] = process.argv.slice(2);
  const shape = dims.split(",").map(Number);
  const buf = fs.readFileSync(input);
  const x = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
  const session = await ort.InferenceSession.create(model);
  const result = await session.run({ [session.inputNames[0]]: new ort.Tensor("float32", x, shape) });
  const y = result[session.outputNames[0]].data;
  fs.writeFileSync(out, Buffer.from(y.buffer, y.byteOffset, y.byteLength));
}

main().catch((e) => {
  console.error(`onnxruntime: ${e.message}`);
  process.exit(1);
});
