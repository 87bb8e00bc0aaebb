# Thin wrappers over the CMake presets. Every target first makes sure the Debian packages are
# installed (a no-op when they are).
.PHONY: deps build demo test test-minimal test-asan test-tsan format-check bench clean

JOBS ?= $(shell nproc)

deps:
	bash scripts/install-deps.sh

build: deps
	cmake --preset release
	cmake --build --preset release -j $(JOBS)

demo: build
	./build/sluice train

test: build
	ctest --preset release -j $(JOBS)

# The library and `sluice` built without the optional MPI and HDF5 components, as for a user who
# has neither: what needs them is refused with a clear message, and the package installs without.
test-minimal: deps
	cmake --preset minimal
	cmake --build --preset minimal -j $(JOBS)
	scripts/check-minimal-build.sh build-minimal

# AddressSanitizer + UndefinedBehaviorSanitizer over the suite. The preset leaves out UBSan's
# vptr check: oneTBB's flow graph casts each task to its type after destroying it (in its headers,
# so in our binary), which that check reports on every message. LeakSanitizer ignores oneTBB's
# worker threads' thread-local storage (tests/lsan.supp): the library never joins them.
# Both sanitizer presets keep only line tables (-g1): reports still name each frame's file and
# line, and the builds take about a third less time than with full debug information. The ASan
# preset compiles at -O1, as AddressSanitizer's own documentation suggests: the build takes a
# fifth less time than at -O2, and the suite runs about a tenth longer.
test-asan: deps
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS) -LE install

# ThreadSanitizer over the engine's and the strategies' tests, and the TFRecord reader's with its
# read-ahead thread (tests/tsan.supp explains what it cannot see). Sanitizer builds run a
# strategy's replicas on threads of their own that block in collectives, since the sanitizers
# cannot follow the stack switches of the oneTBB resumable tasks release builds suspend there. The
# preset's TSAN_OPTIONS turn off the search for an earlier report of the same stack or address:
# halt_on_error ends the run at the first real race anyway, and that search scans every address the
# suppressed oneTBB reports ever named (a mirrored training run took 53 s with it, 3.5 s without).
test-tsan: deps
	cmake --preset tsan
	cmake --build --preset tsan -j $(JOBS) --target dataset_test strategy_test multi_worker_test \
	  multi_worker_probe sluice_cli formats_test
	ctest --preset tsan -j $(JOBS) -L 'engine|strategy'
	ctest --preset tsan -j $(JOBS) -R '^TFRecordTest\.'

# Every C++ file as .clang-format says (clang-format 14, Debian 12's).
format-check: deps
	git ls-files '*.cc' '*.h' | xargs clang-format --dry-run --Werror

bench: build
	./build/sluice bench overhead
	./build/sluice bench map-scaling
	./build/bench/pipeline_bench

clean:
	rm -rf build build-debug build-minimal build-asan build-tsan
