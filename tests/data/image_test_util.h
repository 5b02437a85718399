// Helpers for the EuroSAT and STL-10 tests: small generated JPEG images and STL-10 binaries.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
// jpeglib.h needs size_t and FILE declared first.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "data/data_test_util.h"

namespace zotrain::test {

// The value of channel c at row y, column x of a generated image.
using PixelFn = std::function<uint8_t(int64_t c, int64_t y, int64_t x)>;

// Writes a JPEG of `channels` (1: grayscale, 3: RGB) x h x w at quality 100 without chroma
// subsampling, so that decoding gives back each pixel within a few levels.
inline void write_jpeg(const std::string& path, int channels, int h, int w, const PixelFn& pixel) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr err;
  cinfo.err = jpeg_std_error(&err);
  jpeg_create_compress(&cinfo);
  unsigned char* buffer = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &buffer, &size);
  cinfo.image_width = static_cast<JDIMENSION>(w);
  cinfo.image_height = static_cast<JDIMENSION>(h);
  cinfo.input_components = channels;
  cinfo.in_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_set_defaults(&cinfo);
  jpeg_set_quality(&cinfo, 100, TRUE);
  for (int i = 0; i < cinfo.num_components; ++i)
    cinfo.comp_info[i].h_samp_factor = cinfo.comp_info[i].v_samp_factor = 1;
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<uint8_t> line(static_cast<size_t>(w * channels));
  while (cinfo.next_scanline < cinfo.image_height) {
    const int64_t y = cinfo.next_scanline;
    for (int64_t x = 0; x < w; ++x)
      for (int64_t c = 0; c < channels; ++c) line[size_t(x * channels + c)] = pixel(c, y, x);
    JSAMPROW row = line.data();
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  write_bytes(path, std::vector<uint8_t>(buffer, buffer + size));
  free(buffer);
}

// An image of one colour.
inline PixelFn constant(std::vector<uint8_t> colour) {
  return [colour](int64_t c, int64_t, int64_t) { return colour[size_t(c)]; };
}

// STL-10 binaries of `labels.size()` images: pixel (c, y, x) of image i is stl10_pixel(i, c, y,
// x), written column-major per channel as the real files are.
inline uint8_t stl10_pixel(int64_t i, int64_t c, int64_t y, int64_t x) {
  return uint8_t(i * 31 + c * 71 + y * 3 + x * 5);
}
inline void write_stl10(const std::string& x_path, const std::string& y_path,
                        const std::vector<uint8_t>& labels) {
  std::vector<uint8_t> x;
  for (int64_t i = 0; i < int64_t(labels.size()); ++i)
    for (int64_t c = 0; c < 3; ++c)
      for (int64_t col = 0; col < 96; ++col)
        for (int64_t row = 0; row < 96; ++row) x.push_back(stl10_pixel(i, c, row, col));
  write_bytes(x_path, x);
  write_bytes(y_path, labels);
}

}  // namespace zotrain::test
