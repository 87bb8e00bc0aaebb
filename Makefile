# Thin wrappers over the CMake presets. Every target first makes sure the Debian packages are
# installed (a no-op when they are).
.PHONY: deps build demo test test-asan test-tsan bench clean

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

# AddressSanitizer + UndefinedBehaviorSanitizer over the suite. The preset leaves out UBSan's
# vptr check: oneTBB's flow graph casts each task to its type after destroying it (in its headers,
# so in our binary), which that check reports on every message. LeakSanitizer ignores oneTBB's
# worker threads' thread-local storage (tests/lsan.supp): the library never joins them.
# The strategy tests are left out: their replicas suspend in collectives as oneTBB resumable
# tasks, whose stack switches AddressSanitizer cannot follow, so an error thrown after a switch
# is misreported as a stack overflow (the example programs, which use strategies without such
# errors, still run).
test-asan: deps
	cmake --preset asan
	cmake --build --preset asan -j $(JOBS)
	ctest --preset asan -j $(JOBS) -LE 'install|strategy'

# ThreadSanitizer over the engine's tests (tests/tsan.supp explains what it cannot see). Not the
# strategies': their replicas suspend in collectives as oneTBB resumable tasks, which switch
# stacks in a way ThreadSanitizer cannot follow (it crashes).
test-tsan: deps
	cmake --preset tsan
	cmake --build --preset tsan -j $(JOBS) --target dataset_test
	ctest --preset tsan -L engine

bench: build
	./build/sluice bench overhead
	./build/sluice bench map-scaling
	./build/bench/pipeline_bench

clean:
	rm -rf build build-debug build-asan build-tsan
