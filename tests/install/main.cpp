// Uses the installed headers and library: prints the size of a 2x3 tensor ("6").
#include <zotrain/core/tensor.h>

#include <iostream>

int main() {
  zotrain::Tensor t = zotrain::Tensor::zeros(zotrain::Shape{2, 3});
  std::cout << t.numel() << "\n";
  return 0;
}
