# brisk — the two commands: `make lab` and `make test`. Everything else is a helper.
#   make            build (release with debug info) into build/
#   make test       build and run every test (ctest), prints "N passed, N failed"
#   make lab        build and run the lab, writing tables, pcaps and JSON under out/lab/
#   make sanitize   build into build-asan/ with ASan + UBSan and run every test there
#   make clang      build with clang into build-clang/ (warnings are errors)
#   make try        build, then brisk-perf against Debian's iperf3 over a TAP in a namespace (root)
#   make install    build, then install headers, libraries, pkg-config files, tools and man pages under
#                   PREFIX (default /usr/local), inside DESTDIR if set (README "Installing and embedding")
#   make fuzz       build the libFuzzer targets into build-fuzz/ and run each FUZZ_SECONDS (default 60)
#   make clean
# Each target installs missing Debian packages first (scripts/deps.sh).

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
FUZZ_SECONDS ?= 60
PREFIX ?= /usr/local
DESTDIR ?=

.PHONY: all deps build test lab sanitize clang clean format fuzz

all: build

deps:
	@bash scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@bash scripts/run-tests.sh $(BUILD)

# The lab needs brisk-lab only; its build's output goes to a log, shown when the build fails.
lab: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_FLAGS) >/dev/null
	@echo "brisk: building brisk-lab (log: $(BUILD)/lab-build.log)" >&2
	@cmake --build $(BUILD) -j $(JOBS) --target brisk-lab >$(BUILD)/lab-build.log 2>&1 || \
		{ cat $(BUILD)/lab-build.log; echo "brisk: the build of brisk-lab failed" >&2; exit 1; }
	@$(BUILD)/brisk-lab seeds --out out/lab

# The prefix is given at configure time too, so that the library directory follows it as GNUInstallDirs
# chooses (lib/<multiarch> under /usr); changing it rebuilds nothing.
.PHONY: install
install: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX) $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD)

.PHONY: try
try: build
	@bash scripts/try.sh $(BUILD)

sanitize:
	@$(MAKE) --no-print-directory test BUILD=build-asan CMAKE_FLAGS="-DBRISK_SANITIZE=ON -DCMAKE_C_COMPILER=clang"

clang:
	@$(MAKE) --no-print-directory build BUILD=build-clang CMAKE_FLAGS="-DCMAKE_C_COMPILER=clang"

fuzz: deps
	@cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang -DBRISK_FUZZ=ON >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target fuzz_all
	@bash tests/fuzz/run.sh build-fuzz $(FUZZ_SECONDS)

format:
	@clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build build-asan build-clang build-fuzz out
