# Convenience entry points; CMake + Ninja do the real work.
#   make deps       install build/test dependencies (apt; no-op when present)
#   make configure  configure build/ (only when it is not configured yet)
#   make build      build everything
#   make check      deps + build + every test (ctest, which runs lit too)
#   make demo       deps + build + scripts/demo.sh: install the runtime into
#                   build/install, compile the example models, build examples/cpp
#                   against the installed runtime and run it on each model

BUILD_DIR ?= build
BUILD_TYPE ?= Release
MLIR_DIR ?= /usr/lib/llvm-22/lib/cmake/mlir
PYTHON ?= /usr/bin/python3
DEMO_MODELS ?= mlp cnn transformer
DEMO_RUNS ?= 100
# Cache hits across checkouts in other folders (CI clones afresh).
export CCACHE_BASEDIR := $(CURDIR)

.PHONY: all deps configure build check demo

all: build

deps:
	scripts/install-deps.sh

configure: $(BUILD_DIR)/build.ninja

$(BUILD_DIR)/build.ninja:
	cmake -G Ninja -S . -B $(BUILD_DIR) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DMLIR_DIR=$(MLIR_DIR)

build: configure
	ninja -C $(BUILD_DIR)

check: deps
	$(MAKE) build
	ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error -j 2
	scripts/fuzz.sh import 30
	scripts/fuzz.sh module 30

demo: deps
	$(MAKE) build
	BUILD_DIR="$(BUILD_DIR)" PYTHON="$(PYTHON)" DEMO_MODELS="$(DEMO_MODELS)" \
	  DEMO_RUNS="$(DEMO_RUNS)" scripts/demo.sh
