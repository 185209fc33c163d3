# The two commands of the quick start: `make run` and `make test`. Both install what is missing
# (Debian packages), configure and build from scratch when needed.
BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 20
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=RelWithDebInfo
BIN := $(BUILD)/gpu-preflight

.PHONY: all deps configure build binary run test bench docs clean sanitize package fuzz format check-format

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

configure: deps $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The checker alone, without the test suite (most of the build time).
binary: configure
	cmake --build $(BUILD) -j $(JOBS) --target gpu-preflight

# Runs the checker on this host, then on the example snapshots; succeeds when the checker ran
# (exit 0 or 1), whatever the verdicts. Builds only the binary, so a fresh clone gets its first
# verdict without compiling the tests.
run: binary
	@scripts/run-examples.sh $(BIN)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# Benchmarks: every bench/*.sh, each given the build directory; each prints its comparison as a
# ratio measured in the same run (never an absolute time asserted).
# Then the Google Benchmark micro-benchmarks of the parsers, the scanner and the Host's reads
# (per-call costs), built first: bench/startup.sh takes its floor from them.
bench: build
	@scripts/install-deps.sh bench
	cmake $(BUILD) >/dev/null && cmake --build $(BUILD) --target gpf_micro_bench -j $(JOBS)
	@set -e; for b in bench/*.sh; do [ "$$b" = bench/lib.sh ] && continue; echo "== $$b"; $$b $(BUILD); done
	$(BUILD)/bench/micro/gpf_micro_bench --benchmark_min_time=0.2

# The Debian package, $(BUILD)/gpu-preflight_<version>_<arch>.deb (CPack; see cmake/packaging.cmake).
# Builds only what the package installs (the binary, the man page, the completion), not the tests.
package: configure
	cmake --build $(BUILD) -j $(JOBS) --target package-contents
	cd $(BUILD) && cpack -G DEB

# docs/rules.md from the rule table of the built binary (a test fails when it is stale).
docs: build
	cmake --build $(BUILD) --target docs

# ASan + UBSan with clang: the suite of our own code, any report fails it. Left out: the tests of
# what surrounds the binary (Slurm, the package, the schema validator, real NVIDIA libraries,
# Chromium, the manifests and scripts of contrib/, promtool and node_exporter, the docs, lint,
# shell completion, the journal's reader): they run the same code paths as the unit suites, cost
# minutes under the sanitizers, and run unsanitized in `make test`.
# At -O1 with line tables only, as the sanitizers' and libFuzzer's own guides advise: the suite
# ran twice as fast as at -O0 (`gpf_tests 'every fixture*'`: 32 s against 68 s), the objects are
# a third to a fifth the size, and a report still names file and line. Asserts stay on (Debug).
SANITIZE_CMAKE = -S . -B build-sanitize -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER=clang++ \
  -DGPF_SANITIZE=ON -DCMAKE_CXX_FLAGS_DEBUG="-O1 -gline-tables-only"
sanitize: deps
	cmake $(SANITIZE_CMAKE)
	cmake --build build-sanitize -j $(JOBS)
	cd build-sanitize && ctest --output-on-failure -j $(JOBS) \
	  -LE '^(slurm|package|schema|real-driver|fleet-html|contrib|prometheus|docs|lint|completion|journal)$$'

# libFuzzer on every parser (the sanitizer build's fuzz/ targets), FUZZ_SECONDS per target; any
# crash, leak or sanitizer report fails it (scripts/fuzz.sh, docs/reliability.md).
fuzz: deps
	cmake $(SANITIZE_CMAKE)
	cmake --build build-sanitize -j $(JOBS) --target fuzzers
	scripts/fuzz.sh build-sanitize $(FUZZ_SECONDS)

# The C++ layout (.clang-format) with the pinned clang-format-14: `format` rewrites the sources,
# `check-format` lists the files that differ and fails when any does (scripts/check-format.sh).
format: deps
	@scripts/check-format.sh --fix

check-format: deps
	@scripts/check-format.sh

clean:
	rm -rf $(BUILD) build-sanitize
