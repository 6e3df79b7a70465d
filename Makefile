# hetsim build. `make` builds bin/hetsim; see README.md for the rest (`make help`).
# Sources are found by wildcard: a new .c file in a library folder, tests/unit/<layer>/test_*.c or bench/bench_*.c
# is built without editing this file.

CC      ?= cc
BUILD   ?= build
SAN     ?=
OPT     ?= -O2
HDF5_CFLAGS := $(shell pkg-config --cflags hdf5-serial 2>/dev/null)
HDF5_LIBS   := $(shell pkg-config --libs hdf5-serial 2>/dev/null)
CFLAGS  ?= $(OPT) -g
WARN    := -Wall -Wextra -Werror -Wshadow -Wpedantic -Wmissing-prototypes -Wstrict-prototypes -Wno-unused-parameter \
	   $(if $(findstring clang,$(CC)),,-Wno-format-truncation)
ALL_CFLAGS := -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE $(WARN) $(CFLAGS) -I. $(HDF5_CFLAGS) -MMD -MP
ifeq ($(SAN),1)
ALL_CFLAGS += -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
LDSAN := -fsanitize=address,undefined
endif
LDLIBS  := -lyaml -ljansson -lgsl -lgslcblas $(HDF5_LIBS) -lpthread -lm
CHECK_LIBS := $(shell pkg-config --libs check 2>/dev/null || echo -lcheck -lsubunit -lrt)

# The library's folders, bottom layer first (tools/check-layers.sh enforces the order; docs/architecture.md).
LIBDIRS := sim/base config sim/engine topology calib models sim/coll sim/net sim/fabric sim/exec sim/study \
	   traces reports sim/cli
LIBSRC  := $(filter-out sim/cli/main.c,$(wildcard $(addsuffix /*.c,$(LIBDIRS))))
LIBOBJ  := $(LIBSRC:%.c=$(BUILD)/%.o)
LIB     := $(BUILD)/libhetsim.a
HETSIM  := $(if $(filter build,$(BUILD)),bin/hetsim,$(BUILD)/bin/hetsim)

# The ns-3 network model (sim/net/net_ns3.cc, the one C++ file), built only where pkg-config finds libns3-dev,
# as kernels/ is built only where nvcc is; without it the model's table entry says "not built". NS3=0 skips it.
# Adding or removing libns3-dev changes HS_HAVE_NS3, which the objects that read it follow (NS3_STAMP below).
CXX     ?= g++
NS3_PC  := ns3-core ns3-network ns3-point-to-point
NS3     ?= $(shell pkg-config --exists $(NS3_PC) 2>/dev/null && command -v $(CXX) >/dev/null && echo 1)
ifeq ($(NS3),1)
ALL_CFLAGS += -DHS_HAVE_NS3=1
LIBOBJ  += $(BUILD)/sim/net/net_ns3.o
LDLIBS  += $(shell pkg-config --libs $(NS3_PC)) -lstdc++
ALL_CXXFLAGS := -std=c++17 -DHS_HAVE_NS3=1 -Wall -Wextra -Werror $(CFLAGS) -I. $(shell pkg-config --cflags $(NS3_PC)) \
	$(if $(filter 1,$(SAN)),$(CXXSAN)) -MMD -MP
CXXSAN  := -fsanitize=address,undefined -fno-omit-frame-pointer
$(BUILD)/%.o: %.cc
	@mkdir -p $(dir $@)
	$(CXX) $(ALL_CXXFLAGS) -c $< -o $@
endif
# the objects that read HS_HAVE_NS3 rebuild when it changes (a stamp per setting, the other one removed)
NS3_STAMP := $(BUILD)/ns3-$(if $(filter 1,$(NS3)),on,off).stamp
$(BUILD)/sim/net/net.o $(BUILD)/sim/net/net_ns3_none.o: $(NS3_STAMP)
$(NS3_STAMP):
	@mkdir -p $(dir $@)
	@rm -f $(BUILD)/ns3-on.stamp $(BUILD)/ns3-off.stamp
	@touch $@

TESTSRC := $(wildcard tests/unit/*/test_*.c)
TESTBIN := $(addprefix $(BUILD)/tests/,$(notdir $(TESTSRC:.c=)))
BENCHSRC := $(wildcard bench/bench_*.c)
BENCHBIN := $(BENCHSRC:bench/%.c=$(BUILD)/bench/%)

# make install PREFIX=/usr/local DESTDIR=...: the GNU directory variables, as Debian's packaging expects them.
# The binary finds its data relative to itself (PREFIX/bin -> PREFIX/share/hetsim), so nothing here is compiled
# in and DESTDIR staging works unchanged (calib/profile.c).
PREFIX  ?= /usr/local
DESTDIR ?=
bindir  := $(PREFIX)/bin
datadir := $(PREFIX)/share/hetsim
mandir  := $(PREFIX)/share/man/man1
docdir  := $(PREFIX)/share/doc/hetsim
MANPAGE := $(BUILD)/hetsim.1

.PHONY: all deps test check-asan check-layers golden golden-update demo bench kernels fuzz clean help tests \
	install uninstall man
all: $(HETSIM)

help:
	@echo "make            build bin/hetsim"
	@echo "make demo       install missing packages, build, run scenarios/default.yaml"
	@echo "make test       install missing packages, build, run every test"
	@echo "make check-asan the tests under AddressSanitizer and UndefinedBehaviorSanitizer"
	@echo "make check-layers  fail when a folder includes a folder above it (tools/check-layers.sh)"
	@echo "make golden     compare every shipped scenario's output with tests/golden/expected/"
	@echo "make golden-update  rewrite those outputs (review the diff before committing)"
	@echo "make bench      benchmarks (engine hold model, ...)"
	@echo "make fuzz       build libFuzzer harnesses with clang and run each briefly"
	@echo "make kernels    CUDA microbenchmarks, where nvcc exists"
	@echo "make deps       install the Debian packages hetsim needs"
	@echo "make install    PREFIX=/usr/local DESTDIR=...: the binary, hetsim(1), profiles under share/hetsim/,"
	@echo "                scenarios as examples and the docs under share/doc/hetsim/ (make uninstall)"

deps:
	@tools/deps.sh

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c $< -o $@

$(LIB): $(LIBOBJ)
	@rm -f $@
	ar rcs $@ $^

$(HETSIM): $(BUILD)/sim/cli/main.o $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(LDSAN) -o $@ $^ $(LDLIBS)

# A unit test lives in tests/unit/<layer>/ and builds to $(BUILD)/tests/<name>: one rule per test, so its
# dependency file (-MMD) names the headers it includes and touching one rebuilds the test.
define test_rule
$(BUILD)/tests/$(notdir $(1:.c=)): $(1) $(LIB)
	@mkdir -p $$(dir $$@)
	$$(CC) $$(ALL_CFLAGS) -MF $$@.d -o $$@ $$< $$(LIB) $$(LDSAN) $$(CHECK_LIBS) $$(LDLIBS)
endef
$(foreach t,$(TESTSRC),$(eval $(call test_rule,$(t))))

$(BUILD)/bench/%: bench/%.c $(LIB)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -MF $@.d -o $@ $< $(LIB) $(LDSAN) $(LDLIBS)

tests: $(HETSIM) $(TESTBIN)

# hetsim(1) from the option tables (sim/cli/man.c), so it lists exactly what the parser accepts.
man: $(MANPAGE)
$(MANPAGE): $(HETSIM)
	@mkdir -p $(dir $@)
	$(HETSIM) help --man > $@.tmp && mv $@.tmp $@

# Every file under calib/measurements and scenarios keeps its relative path (manifests name scenarios
# relative to themselves).
install: $(HETSIM) $(MANPAGE)
	install -d $(DESTDIR)$(bindir) $(DESTDIR)$(mandir) $(DESTDIR)$(datadir)/profiles $(DESTDIR)$(docdir)
	install -m 755 $(HETSIM) $(DESTDIR)$(bindir)/hetsim
	install -m 644 $(MANPAGE) $(DESTDIR)$(mandir)/hetsim.1
	install -m 644 calib/profiles/*.yaml $(DESTDIR)$(datadir)/profiles/
	@for f in $$(cd calib && find measurements -type f | LC_ALL=C sort); do \
		install -D -m 644 calib/$$f $(DESTDIR)$(datadir)/$$f || exit 1; done
	@for f in $$(find scenarios docs/img -type f | LC_ALL=C sort); do \
		case $$f in docs/*) to=$${f#docs/};; *) to=examples/$$f;; esac; \
		install -D -m 644 $$f $(DESTDIR)$(docdir)/$$to || exit 1; done
	install -m 644 README.md docs/*.md $(DESTDIR)$(docdir)/

uninstall:
	rm -f $(DESTDIR)$(bindir)/hetsim $(DESTDIR)$(mandir)/hetsim.1
	rm -rf $(DESTDIR)$(datadir) $(DESTDIR)$(docdir)

test:
	@tools/deps.sh
	@tools/check-layers.sh
	@$(MAKE) --no-print-directory tests
	@HETSIM=$(HETSIM) BUILD=$(BUILD) tests/run.sh

check-layers:
	@tools/check-layers.sh

golden: $(HETSIM)
	@HETSIM=$(HETSIM) tests/golden/run.sh

golden-update: $(HETSIM)
	@HETSIM=$(HETSIM) tests/golden/run.sh --update

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

-include $(LIBOBJ:.o=.d) $(BUILD)/sim/cli/main.d $(TESTBIN:=.d) $(BENCHBIN:=.d)
