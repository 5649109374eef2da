# Thin wrapper around CMake so that a fresh machine needs two commands:
#   make demo   installs what is missing, builds, runs the default study
#   make test   installs what is missing, builds, runs the whole test suite
# Variables: BUILD (build directory), CMAKE_FLAGS (extra -D options),
# STUDY (the study `make demo` runs), JOBS (parallel build jobs), CMAKE
# (the cmake to run), SKIP_DEPS=1 (do not look for missing packages).
# `make demo` builds quietly: the build's output goes to $(BUILD)/build.log
# and is shown (its last 40 lines) only when the build fails.

BUILD ?= build
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
STUDY ?= studies/paper-configs.yaml
WERROR ?= ON
CMAKE_FLAGS ?=
CMAKE ?= cmake
LOG = $(BUILD)/build.log

# Debian/Ubuntu packages dlrmc needs to build and test. CUDA is optional
# (dlrmc-bench is built when the toolkit is found).
DEPS = cmake make gcc clang pkg-config libyaml-dev libpcre2-dev \
       libcmocka-dev libyajl-dev zlib1g-dev python3 python3-jsonschema \
       python3-yaml graphviz

SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all deps configure build quiet-build demo test clean

all: build

deps:
	@[ "$(SKIP_DEPS)" = 1 ] && exit 0; missing=""; for p in $(DEPS); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$missing; \
	fi

configure: deps
	$(CMAKE) -S . -B $(BUILD) -DDC_WERROR=$(WERROR) $(CMAKE_FLAGS)

build: configure
	$(CMAKE) --build $(BUILD) -j $(JOBS)

quiet-build: deps
	@mkdir -p $(BUILD); printf 'building dlrmc (log: %s) ... ' '$(LOG)'; \
	if { $(CMAKE) -S . -B $(BUILD) -DDC_WERROR=$(WERROR) $(CMAKE_FLAGS) && \
	     $(CMAKE) --build $(BUILD) -j $(JOBS); } >'$(LOG)' 2>&1; then \
	  echo done; \
	else \
	  echo failed; tail -n 40 '$(LOG)'; \
	  echo "the build failed; the whole log is $(LOG)"; exit 1; \
	fi

demo: quiet-build
	@echo '$$ dlrmc run $(STUDY) --format md'
	@$(BUILD)/compiler/dlrmc run $(STUDY) --format md

test: build
	ctest --test-dir $(BUILD) -j $(JOBS) --output-on-failure

clean:
	rm -rf $(BUILD)
