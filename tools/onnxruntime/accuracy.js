// The test accuracy ONNX Runtime gets from an exported model on an IDX data set (Fashion-MNIST):
//   node accuracy.js MODEL.onnx IMAGES.idx3[.gz] LABELS.idx1[.gz] MEAN STD
// Inputs are normalized as in training, (p / 255 - MEAN) / STD (zotrain export prints both).
const fs = require("fs");
const zlib = require("zlib");
const ort = require("onnxruntime-node");

function idx(path) {
  const raw = fs.readFileSync(path);
  return path.endsWith(".gz") ? zlib.gunzipSync(raw) : raw;
}

async function main() {
  const [model, imagesPath, labelsPath, mean, std] = process.argv.slice(2);
  const images = idx(imagesPath), labels = idx(labelsPath);
  const n = images.readUInt32BE(4), h = images.readUInt32BE(8), w = images.readUInt32BE(12);
  const session = await ort.InferenceSession.create(model);
  const batch = 250;
  let correct = 0;
  for (let b = 0; b < n; b += batch) {
    const rows = Math.min(batch, n - b);
    const x = new Float32Array(rows * h * w);
    for (let i = 0; i < rows * h * w; ++i)
      x[i] = (images[16 + b * h * w + i] / 255 - Number(mean)) / Number(std);
    const out = await session.run({ [session.inputNames[0]]: new ort.Tensor("float32", x, [rows, 1, h, w]) });
    const y = out[session.outputNames[0]].data, classes = y.length / rows;
    for (let r = 0; r < rows; ++r) {
      let best = 0;
      for (let c = 1; c < classes; ++c) if (y[r * classes + c] > y[r * classes + best]) best = c;
      if (best === labels[8 + b + r]) ++correct;
    }
  }
  console.log(`${model}: ONNX Runtime test accuracy ${(100 * correct / n).toFixed(2)}% (${correct} of ${n})`);
}

main().catch((e) => {
  console.error(`onnxruntime: ${e.message}`);
  process.exit(1);
});
