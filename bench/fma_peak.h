// The machine's float32 multiply-add peak, measured: the bound the model's kernels are judged
// against, taken in the same run as they are, since a shared machine's clock moves from one run to
// the next.
#pragma once

#include <string>

namespace sluice::bench {

// GFLOP/s of `threads` threads each running independent chains of vector multiply-adds (2 FLOPs a
// lane) for about `seconds`, on the instruction set the model's kernels run ("avx512", "avx2");
// 0 for one without fused multiply-add.
double fma_peak_gflops(const std::string& kernel, int threads, double seconds);

}  // namespace sluice::bench
