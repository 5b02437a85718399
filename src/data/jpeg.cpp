#include "jpeg.h"

#include <csetjmp>
// jpeglib.h needs size_t and FILE declared first.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

#include "data_folder.h"
#include "zotrain/core/error.h"

namespace zotrain::detail {
namespace {

// libjpeg reports an error by calling error_exit, which must not return. It jumps back to the
// setjmp in decode: an exception could not unwind through libjpeg's C frames.
struct ErrorManager {
  jpeg_error_mgr base;  // first, so that libjpeg's pointer to it is a pointer to the whole
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX] = "";
  bool too_large = false;  // message says why
};

constexpr int64_t kMaxImageValues = int64_t{1} << 28;

[[noreturn]] void fail(j_common_ptr cinfo) {
  auto* err = reinterpret_cast<ErrorManager*>(cinfo->err);
  err->base.format_message(cinfo, err->message);
  std::longjmp(err->jump, 1);
}

// Level -1 is a warning about bad data (libjpeg would decode on, filling in gray); trace
// messages (level >= 0) are ignored.
void on_message(j_common_ptr cinfo, int level) {
  if (level < 0) fail(cinfo);
}

// Decodes `bytes` into `image`; false (and the reason in err.message) on any error. Everything
// that changes after setjmp lives behind a pointer, so the jump back leaves nothing indeterminate
// and skips no destructor.
bool decode(const std::vector<uint8_t>& bytes, ErrorManager& err, jpeg_decompress_struct& cinfo,
            Image& image) {
  cinfo.err = jpeg_std_error(&err.base);
  err.base.error_exit = fail;
  err.base.emit_message = on_message;
  if (setjmp(err.jump)) return false;
  jpeg_create_decompress(&cinfo);
  jpeg_mem_src(&cinfo, bytes.data(), static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&cinfo, TRUE);
  cinfo.out_color_space = cinfo.jpeg_color_space == JCS_GRAYSCALE ? JCS_GRAYSCALE : JCS_RGB;
  // A header may claim 65500 x 65500 pixels in a few bytes (issue 22, defect 7): refuse what no
  // training image is before anything is allocated for it.
  const int64_t values = int64_t{cinfo.image_width} * cinfo.image_height *
                         (cinfo.out_color_space == JCS_GRAYSCALE ? 1 : 3);
  if (values > kMaxImageValues) {
    std::snprintf(err.message, sizeof err.message,
                  "declares %u x %u pixels; expected at most %lld values (a training image)",
                  cinfo.image_width, cinfo.image_height, static_cast<long long>(kMaxImageValues));
    err.too_large = true;
    return false;
  }
  jpeg_start_decompress(&cinfo);
  const int64_t c = cinfo.output_components, h = cinfo.output_height, w = cinfo.output_width;
  image.shape = Shape{c, h, w};
  // Scan lines come interleaved ([W, C]), into a staging line past the planes.
  image.pixels.resize(static_cast<size_t>(c * h * w + c * w));
  uint8_t* line = image.pixels.data() + c * h * w;
  while (cinfo.output_scanline < cinfo.output_height) {
    const int64_t y = cinfo.output_scanline;
    JSAMPROW rows[1] = {line};
    jpeg_read_scanlines(&cinfo, rows, 1);
    for (int64_t x = 0; x < w; ++x)
      for (int64_t ch = 0; ch < c; ++ch) image.pixels[(ch * h + y) * w + x] = line[x * c + ch];
  }
  image.pixels.resize(static_cast<size_t>(c * h * w));
  jpeg_finish_decompress(&cinfo);
  return true;
}

}  // namespace

Image read_jpeg(const std::string& path) {
  const std::vector<uint8_t> bytes = read_file_bytes(path, "a JPEG image");
  // Every JPEG starts with the start-of-image marker FF D8 and another marker.
  if (bytes.size() < 3 || bytes[0] != 0xFF || bytes[1] != 0xD8 || bytes[2] != 0xFF)
    throw InputError(path + ": is not a JPEG image (it does not start with the bytes FF D8 FF)");
  ErrorManager err;
  jpeg_decompress_struct cinfo;
  Image image;
  const bool ok = decode(bytes, err, cinfo, image);
  jpeg_destroy_decompress(&cinfo);
  if (!ok && err.too_large) throw InputError(path + ": JPEG image " + err.message);
  if (!ok) throw InputError(path + ": corrupt JPEG image (libjpeg: " + err.message + ")");
  return image;
}

}  // namespace zotrain::detail
