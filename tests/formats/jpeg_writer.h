// JPEGs that encode_jpeg (TurboJPEG) cannot write, made with libjpeg's own API for tests, fuzz
// seeds and benchmarks: CMYK and YCCK images (with or without Adobe's marker), and progressive
// images with as many scans as wanted.
#pragma once

// clang-format off
#include <cstdio>  // jpeglib.h uses FILE without including it.
#include <jpeglib.h>
// clang-format on

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace sluice::testing {

struct LibjpegImage {
  const uint8_t* pixels = nullptr;  // height × width × components, row-major.
  int height = 0;
  int width = 0;
  int components = 3;
  J_COLOR_SPACE in_space = JCS_RGB;        // JCS_GRAYSCALE, JCS_RGB or JCS_CMYK.
  J_COLOR_SPACE jpeg_space = JCS_UNKNOWN;  // The file's: JCS_UNKNOWN for libjpeg's default.
  bool adobe_marker = true;  // libjpeg writes one for CMYK and YCCK unless told not to.
  int quality = 95;
  // Progressive in these scans when not empty (libjpeg's scan script, all components each).
  std::vector<jpeg_scan_info> scans;
};

// Encodes with libjpeg (which exits the process on misuse: the arguments here are the test's own).
inline std::string libjpeg_encode(const LibjpegImage& image) {
  jpeg_compress_struct cinfo;
  jpeg_error_mgr jerr;
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  unsigned char* out = nullptr;
  unsigned long out_size = 0;
  jpeg_mem_dest(&cinfo, &out, &out_size);
  cinfo.image_width = static_cast<JDIMENSION>(image.width);
  cinfo.image_height = static_cast<JDIMENSION>(image.height);
  cinfo.input_components = image.components;
  cinfo.in_color_space = image.in_space;
  jpeg_set_defaults(&cinfo);
  if (image.jpeg_space != JCS_UNKNOWN) jpeg_set_colorspace(&cinfo, image.jpeg_space);
  cinfo.write_Adobe_marker = image.adobe_marker ? cinfo.write_Adobe_marker : FALSE;
  jpeg_set_quality(&cinfo, image.quality, TRUE);
  if (!image.scans.empty()) {
    cinfo.scan_info = image.scans.data();
    cinfo.num_scans = static_cast<int>(image.scans.size());
  }
  jpeg_start_compress(&cinfo, TRUE);
  const size_t stride = static_cast<size_t>(image.width) * image.components;
  while (cinfo.next_scanline < cinfo.image_height) {
    JSAMPROW row = const_cast<JSAMPROW>(image.pixels + cinfo.next_scanline * stride);
    jpeg_write_scanlines(&cinfo, &row, 1);
  }
  jpeg_finish_compress(&cinfo);
  jpeg_destroy_compress(&cinfo);
  std::string bytes(reinterpret_cast<const char*>(out), out_size);
  std::free(out);
  return bytes;
}

// A progressive grey JPEG of a flat height × width image in 1 + ac_scans scans: the DC scan, then
// the one full AC scan ac_scans times over, each with its Huffman table. The image being flat,
// every AC scan is nothing but end-of-band runs, and each repeat is valid (first-pass scans may
// code a coefficient again), so a decoder has no reason to stop early: it passes over every block
// once per scan.
inline std::string many_scan_jpeg(int height, int width, int ac_scans, uint8_t value = 120) {
  const std::vector<uint8_t> pixels(static_cast<size_t>(height) * width, value);
  jpeg_scan_info dc{};
  dc.comps_in_scan = 1;
  jpeg_scan_info ac = dc;
  ac.Ss = 1;
  ac.Se = 63;
  const std::string two_scans = libjpeg_encode({.pixels = pixels.data(),
                                                .height = height,
                                                .width = width,
                                                .components = 1,
                                                .in_space = JCS_GRAYSCALE,
                                                .scans = {dc, ac}});
  // Walk the segments: the AC scan is the last DHT (its table) up to the EOI at the end.
  const auto* p = reinterpret_cast<const unsigned char*>(two_scans.data());
  const size_t n = two_scans.size();
  size_t last_dht = 0;
  for (size_t i = 2; i + 4 <= n && p[i] == 0xFF;) {
    const unsigned char marker = p[i + 1];
    if (marker == 0xD9) break;
    if (marker == 0xC4) last_dht = i;
    i += 2 + ((size_t{p[i + 2]} << 8) | p[i + 3]);
    if (marker != 0xDA) continue;
    while (i + 1 < n &&
           !(p[i] == 0xFF && p[i + 1] != 0x00 && (p[i + 1] < 0xD0 || p[i + 1] > 0xD7))) {
      ++i;
    }
  }
  const std::string ac_scan = two_scans.substr(last_dht, n - 2 - last_dht);
  std::string bytes = two_scans.substr(0, n - 2);
  for (int i = 1; i < ac_scans; ++i) bytes += ac_scan;
  return bytes + "\xFF\xD9";
}

}  // namespace sluice::testing
