// A small generated image-classification data set in the IDX layout of MNIST, learnable in a
// few epochs: class k is a bright square at a class-specific place, plus noise.
#pragma once

#include <string>

namespace zotrain::test {

// Writes train-*/t10k-* IDX files (28x28, 10 classes) into `dir` (created if needed).
void write_synthetic_data(const std::string& dir, int n_train, int n_test, unsigned seed);

}  // namespace zotrain::test
