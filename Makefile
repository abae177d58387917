# Thin wrapper over CMake. `make` builds build/wakeq with the build dependencies only
# (scripts/deps); `make check` installs the test dependencies too (scripts/deps --test:
# cmocka, PostgreSQL, ...) and runs the whole suite (normal build and ASan+UBSan build;
# the crash sweep runs in the ASan build only, WQ_CRASH_SWEEP=OFF in the normal one:
# CONTRIBUTING.md, "How long the suite takes"); `make demo` runs the narrated
# end-to-end scenario.
BUILD ?= build
ASAN_BUILD ?= build-asan
DEB_BUILD ?= build-deb
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
CTEST_FLAGS ?= --output-on-failure --timeout 300

.PHONY: all build deps test-deps check check-normal check-asan demo install uninstall deb clean fuzz soak

all: build

deps:
	@scripts/deps

test-deps:
	@scripts/deps --test

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
	cmake --build $(BUILD) -j $(JOBS)

check: test-deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWQ_TESTS=ON -DWQ_CRASH_SWEEP=OFF -DWQ_RANDOM_SECONDS=10 >/dev/null
	cmake --build $(BUILD) -j $(JOBS)
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DWQ_SANITIZE=ON -DWQ_TESTS=ON >/dev/null
	cmake --build $(ASAN_BUILD) -j $(JOBS)
	scripts/with-postgres sh -c 'cd $(BUILD) && ctest $(CTEST_FLAGS) -j $(JOBS) && cd ../$(ASAN_BUILD) && ctest $(CTEST_FLAGS) -j $(JOBS)'

# Fuzzing (tests/fuzz): every libFuzzer target for FUZZ_SECONDS each, FUZZ_JOBS (2) at
# once (clang build in build-fuzz). `make check` runs each for 6 s, two at a time.
FUZZ_SECONDS ?= 120
fuzz: deps
	tests/fuzz/run.sh $(FUZZ_SECONDS) $(CURDIR)/build-fuzz

# The seeded kill loop (tests/crash/random) for SECONDS of chaos per backend, TASKS tasks
# (SEED=N replays a run). `make check` runs it for 25 s in the ASan build, 10 s in the
# normal one (tests/CMakeLists.txt, WQ_RANDOM_SECONDS).
SECONDS ?= 600
TASKS ?= 5000
soak: build
	scripts/with-postgres sh -c 'for b in sqlite postgres; do \
		WAKEQ_BIN=$(CURDIR)/$(BUILD)/wakeq WAKEQ_TESTS=$(CURDIR)/tests WAKEQ_TEST_BACKEND=$$b \
		SECONDS_CHAOS=$(SECONDS) TASKS=$(TASKS) python3 tests/crash/random || exit 1; done'

demo: build
	@scripts/deps --demo
	examples/demo.sh $(BUILD)/wakeq

install: build
	cmake --install $(BUILD)

# Removes what `make install` installed (CMake's manifest of it).
uninstall:
	@test -f $(BUILD)/install_manifest.txt || { echo "nothing installed from $(BUILD)"; exit 1; }
	xargs rm -f < $(BUILD)/install_manifest.txt

# A Debian package (CPack) from a build of its own configured for /usr: build-deb/wakeq_*.deb.
deb: deps
	scripts/make-deb $(DEB_BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(DEB_BUILD) demo
