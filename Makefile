# Entry points that work on a fresh Debian 12 machine as root (see README.md).
#   make demo     install what is missing, build, run examples/hello_threads on 4 ranks
#   make test     install what is missing, build, run every test (default build, the Pth build's
#                 multithreaded tests, mpi4py's suite, ASan+UBSan and TSan builds)
#   make test-net the whole MPI suite across fake hosts (network namespaces, as root; ~40 min)
#   make test-mpi4py  mpi4py built from PyPI for the standard ABI, its test suite at 1-5 ranks
#   make install PREFIX=/opt/weft
#   make bench    run the benchmarks against MPICH and Open MPI (bench/README.md)

PREFIX ?= /usr/local
BUILD  ?= build
JOBS   ?= $(shell nproc)
DEPS    = cmake ninja-build gcc make pkg-config libhwloc-dev libfabric-dev libpmix-dev python3 procps
TEST_DEPS = mpich python3-venv iproute2 slurmctld slurmd slurm-client munge
BENCH_DEPS = mpich libmpich-dev openmpi-bin libopenmpi-dev valgrind

.PHONY: all deps build demo test test-default test-pth test-asan test-tsan test-net test-mpi4py install bench clean

all: build

deps:
	@./tools/install-deps.sh $(DEPS)

build: deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=$(PREFIX)
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	timeout 120 $(BUILD)/tools/mpiexec -n 4 --timeout 60 $(BUILD)/examples/hello_threads

test: deps
	@./tools/install-deps.sh $(TEST_DEPS)
	$(MAKE) --no-print-directory test-default
	$(MAKE) --no-print-directory test-pth
	$(MAKE) --no-print-directory test-mpi4py
	$(MAKE) --no-print-directory test-asan
	$(MAKE) --no-print-directory test-tsan

# Skipped tests print why on stdout, which ctest keeps in its log only: shown after the run.
test-default: build
	cd $(BUILD) && { ctest --output-on-failure --timeout 300 -j 2 -LE netsuite; rc=$$?; \
	  grep -h '^SKIP' Testing/Temporary/LastTest.log || true; exit $$rc; }

# The GNU Pth threading backend (M:1 user-level threads, docs/threads.md): a tree built with
# -DWEFT_THREADS=pth, where the multithreaded MPI programs and the threading layer's unit tests run
# with every thread a Pth thread (ctest label pth). Skipped, saying so, only if libpth-dev cannot be
# installed.
test-pth: deps
	@if ./tools/install-deps.sh libpth-dev; then :; else \
	  echo "SKIP: test-pth: libpth-dev (GNU Pth) could not be installed"; exit 0; fi; \
	cmake -S . -B $(BUILD)-pth -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DWEFT_THREADS=pth && \
	cmake --build $(BUILD)-pth -j $(JOBS) --target weft_pth_tests && \
	cd $(BUILD)-pth && ctest --output-on-failure --timeout 300 -j 2 -L pth

# The whole MPI suite across fake hosts (network namespaces; root): 2 hosts x 2 ranks, 3 x 1.
test-net: build
	@./tools/install-deps.sh $(TEST_DEPS)
	cd $(BUILD) && ctest --output-on-failure -L netsuite

# mpi4py (a real client of the standard ABI): built from its PyPI source with our mpicc, then its own
# test suite under our mpiexec at 1..5 ranks and an mpi4py.futures pool (tests/mpi4py/run.sh;
# exclusions with their reasons in tests/mpi4py/exclude.txt). Then the same with mpi4py built by
# MPICH's mpicc_abi (PyPI wheel mpich==5.0.2) and run on Weft's library: a binary made by another
# implementation of the standard ABI runs on Weft unchanged.
test-mpi4py: build
	@./tools/install-deps.sh $(TEST_DEPS) python3-dev
	tests/mpi4py/run.sh $(BUILD)
	MPI4PY_COMPILER=mpich tests/mpi4py/run.sh $(BUILD)

test-asan: deps
	cmake -S . -B $(BUILD)-asan -G Ninja --preset asan
	cmake --build $(BUILD)-asan -j $(JOBS)
	cd $(BUILD)-asan && ctest --output-on-failure --timeout 600 -j 2 -LE noasan

# ThreadSanitizer: the unit tests of concurrent structures and the multithreaded MPI programs.
test-tsan: deps
	cmake -S . -B $(BUILD)-tsan -G Ninja --preset tsan
	cmake --build $(BUILD)-tsan -j $(JOBS)
	cd $(BUILD)-tsan && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" \
	  ctest --output-on-failure --timeout 900 -j 2 -L "unit|mt" -LE notsan

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The peers are still measured when Weft does not build; run.sh marks Weft as failed then.
bench: deps
	@./tools/install-deps.sh $(BENCH_DEPS)
	-$(MAKE) --no-print-directory build
	bench/run.sh $(BUILD)

clean:
	rm -rf $(BUILD) $(BUILD)-asan $(BUILD)-tsan $(BUILD)-pth
