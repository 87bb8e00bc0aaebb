// Loops that the compiler vectorises on its own, compiled once more for AVX2 and for AVX-512 and
// chosen when the library loads (GCC's target_clones): the build targets x86-64-v2, whose SSE
// vectors hold a quarter of AVX-512's lanes. The clones compute the same IEEE operations on each
// element in the same order, only more elements at a time: the build never contracts a·b + c into
// one rounding (-ffp-contract=off, CMakeLists.txt) nor reassociates sums, so results do not depend
// on the CPU.
// ThreadSanitizer builds keep one version: the loader runs the clones' resolver before the
// sanitizer's runtime is ready, and its instrumentation crashes there.
#pragma once

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define SLUICE_VECTOR_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define SLUICE_VECTOR_CLONES
#endif
