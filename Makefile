# hetsim build. `make` builds bin/hetsim; see README.md for the rest (`make help`).
# Sources are found by wildcard: a new .c file in a library folder, tests/unit/test_*.c or bench/bench_*.c
# is built without editing this file.

CC      ?= cc
BUILD   ?= build
SAN     ?=
OPT     ?= -O2
HDF5_CFLAGS := $(shell pkg-config --cflags hdf5-serial 2>/dev/null)
HDF5_LIBS   := $(shell pkg-config --libs hdf5-serial 2>/dev/null)
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter $(if $(findstring clang,$(CC)),,-Wno-format-truncation)
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) -I. $(HDF5_CFLAGS) -MMD -MP
ifeq ($(SAN),1)
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
endif
LDLIBS  := -lyaml -lgsl -lgslcblas $(HDF5_LIBS) -lpthread -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt)

LIBDIRS := sim config models topology calib traces reports
LIBSRC  := $(filter-out sim/main.c,$(wildcard $(addsuffix /*.c,$(LIBDIRS))))
LIBOBJ  := $(LIBSRC:%.c=$(BUILD)/%.o)
LIB     := $(BUILD)/libhetsim.a
HETSIM  := $(if $(filter build,$(BUILD)),bin/hetsim,$(BUILD)/bin/hetsim)

TESTSRC := $(wildcard tests/unit/test_*.c)
TESTBIN := $(TESTSRC:tests/unit/%.c=$(BUILD)/tests/%)
BENCHSRC := $(wildcard bench/bench_*.c)
BENCHBIN := $(BENCHSRC:bench/%.c=$(BUILD)/bench/%)

.PHONY: all deps test check-asan demo bench kernels fuzz clean help tests
all: $(HETSIM)

help:
	@echo "make            build bin/hetsim"
	@echo "make demo       install missing packages, build, run scenarios/default.yaml"
	@echo "make test       install missing packages, build, run every test"
	@echo "make check-asan the tests under AddressSanitizer and UndefinedBehaviorSanitizer"
	@echo "make bench      benchmarks (engine hold model, ...)"
	@echo "make fuzz       build libFuzzer harnesses with clang and run each briefly"
	@echo "make kernels    CUDA microbenchmarks, where nvcc exists"
	@echo "make deps       install the Debian packages hetsim needs"

deps:
	@tools/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

$(HETSIM): $(BUILD)/sim/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $^ $(LDLIBS)

$(BUILD)/tests/%: tests/unit/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDSAN) $(CHECK_LIBS) $(LDLIBS)

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -o $@ $< $(LIB) $(LDSAN) $(LDLIBS)

tests: $(HETSIM) $(TESTBIN)

test:
	@tools/deps.sh
	@$(MAKE) --no-print-directory tests
	@HETSIM=$(HETSIM) BUILD=$(BUILD) tests/run.sh

check-asan:
	@tools/deps.sh
	@$(MAKE) --no-print-directory BUILD=build-asan SAN=1 OPT=-O1 test

demo:
	@tools/deps.sh
	@$(MAKE) --no-print-directory all
	./bin/hetsim run scenarios/default.yaml

bench: $(BENCHBIN) $(HETSIM)
	@for b in $(BENCHBIN); do echo "== $$b"; $$b || exit 1; done

fuzz:
	@tests/fuzz/run.sh

kernels:
	@$(MAKE) --no-print-directory -C kernels

clean:
	rm -rf build build-asan build-fuzz bin

-include $(LIBOBJ:.o=.d) $(BUILD)/sim/main.d
