# Convenience entry points; CMake + Ninja do the real work.
#   make deps       install build/test dependencies (apt; no-op when present)
#   make configure  configure build/ (only when it is not configured yet)
#   make build      build everything
#   make check      deps + build + every test (ctest, which runs lit too)
#   make demo       deps + build + compile the example MLP and print its nn IR

BUILD_DIR ?= build
BUILD_TYPE ?= Release
MLIR_DIR ?= /usr/lib/llvm-22/lib/cmake/mlir
PYTHON ?= /usr/bin/python3
MODELS_DIR ?= examples/models
DEMO_CMD ?= $(BUILD_DIR)/bin/nncc $(MODELS_DIR)/mlp.onnx --emit=nn

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
	ctest --test-dir $(BUILD_DIR) --output-on-failure --no-tests=error

demo: deps
	$(MAKE) build
	$(PYTHON) $(MODELS_DIR)/make_models.py $(MODELS_DIR)
	$(DEMO_CMD)
