# profconv: plain Makefile.
#   make                 build build/profconv, build/libprofconv.a and .so, build/profconv.1
#   make check           build and run every test
#   make SAN=1 check     the same under AddressSanitizer and UBSan (build-san/)
#   make TSAN=1 check    the same under ThreadSanitizer (build-tsan/)
#   make example         build, generate an example profile, convert it
#   make bench           run the benchmarks in bench/
#   make install PREFIX=/usr/local   (and make uninstall; DESTDIR honoured)
#   make LTO=1           the program optimized across files at link time (faster, slower to build)

# Every core, unless -j is given: a clean build and its tests compile
# about 300 files, 47 s on one core here and 26 s on two.
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)

CC ?= cc
PREFIX ?= /usr/local
OPT ?= -O2 -g

ifeq ($(SAN),1)
BUILD := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT := -O1 -g
STDCXX := -lstdc++
else ifeq ($(TSAN),1)
# ThreadSanitizer, for the tests that run the library on several threads:
#   make TSAN=1 check T=threads
BUILD := build-tsan
SANFLAGS := -fsanitize=thread
OPT := -O1 -g
STDCXX := -lstdc++
else
BUILD := build
SANFLAGS :=
# Only the C++ runtime's demangler is used: linked in statically, it
# spares every run the loading of the whole shared C++ runtime (1.4 ms of
# a 7 ms start here).  The sanitizers want the shared one.  The static
# runtime comes with g++ on Debian and Ubuntu but is a package of its own
# on Fedora (libstdc++-static): without it, the shared one is linked.  The
# compiler answers the bare name when it has no such file.
STDCXX_A := $(shell $(CC) -print-file-name=libstdc++.a 2>/dev/null)
STDCXX_STATIC := -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic
STDCXX := $(if $(filter /%,$(STDCXX_A)),$(STDCXX_STATIC),-lstdc++)
# LTO=1 optimizes the program across files at link time: small functions
# called for every value, such as the Perfetto reader's checked field
# reads and the millisecond writer, are inlined into callers in other
# files, and the 1M-sample conversions here took 3-10 % less time (0.61 s
# to 0.55 s on the real capture, 1.16 s to 1.06 s on generated simpleperf;
# measured while the sink's room, now inline in sink.h, was a call too).  It is not the default: a clean serial build takes 37 s
# instead of 22 s here.  The objects then hold ordinary code too (fat),
# so that the libraries, tests and tools link them as before.
LTO ?= 0
endif
ifeq ($(LTO),1)
LTO_CFLAGS := -flto=auto -ffat-lto-objects
# Every other link takes the ordinary code: optimizing each test and
# tool across files would double the build's time.
LTO_OFF := -fno-lto
endif

CFLAGS_ALL = -std=c11 -pthread -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
             -Iinclude -Isrc $(OPT) $(SANFLAGS) $(CFLAGS)
LDFLAGS_ALL = -pthread $(SANFLAGS) $(LTO_OFF) $(LDFLAGS)
LDLIBS_ALL = -lisal -lzstd -lz -ldw -lelf $(STDCXX) -lm $(LDLIBS)

# Sources are found in their folders (src/ is laid out by pipeline stage);
# header dependencies come from the compiler (-MD), so a new file needs no
# line here.  They name the system's headers too: a change of those
# rebuilds, and the build-dependency check (tests/tools/check-build-deps.sh)
# reads which headers the build used from them.
LIB_SRC := $(sort $(shell find src -name '*.c' -not -path 'src/cli/*'))
CLI_SRC := $(sort $(wildcard src/cli/*.c))
LIB_OBJ := $(LIB_SRC:%.c=$(BUILD)/%.o)
CLI_OBJ := $(CLI_SRC:%.c=$(BUILD)/%.o)
TEST_SRC := $(sort $(shell find tests -name '*.c'))
FUZZ_SRC := $(wildcard fuzz/*.c)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/%.o) $(FUZZ_SRC:%.c=$(BUILD)/%.o)
DEPFLAGS = -MD -MP
TEST_INC := -Itests -Itests/support -Ifuzz -Ibench
BENCH_TOOLS := $(BUILD)/gen-simpleperf $(BUILD)/gen-perfetto $(BUILD)/gen-unsymbolized $(BUILD)/skim $(BUILD)/gen-heap-graph

# The shared library's soname changes with the major version only.
VERSION := $(shell sed -n 's/^\#define PROFCONV_VERSION "\(.*\)"/\1/p' include/profconv.h)
SONAME := libprofconv.so.$(firstword $(subst ., ,$(VERSION)))
SHLIB := libprofconv.so.$(VERSION)

all: $(BUILD)/profconv $(BUILD)/libprofconv.a $(BUILD)/$(SHLIB) $(BUILD)/profconv.1

# The library's own functions are hidden (include/profconv.h makes its
# declarations visible), so that the archive's one object and the shared
# library export the public API alone; tests and tools link the objects
# themselves.  One set of objects serves both libraries: -fPIC costs next
# to nothing on x86-64.
$(BUILD)/src/%.o: src/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -fvisibility=hidden -fPIC $(LTO_CFLAGS) $(DEPFLAGS) -c -o $@ $<

# The tests' own code is compiled without optimization: what they time
# is the library's, built as above, and a clean clone's tests then build
# in about half the time (15 s to 8 s here), which a change's checks wait
# for.  Their support code keeps the optimization: its validators and
# encoders read and write every byte of thousands of conversions (the
# damaged-corpus test took 4.4 s with them at -O0, 3.0 s at -O2).
TEST_OPT = -O0

$(BUILD)/tests/%.o: tests/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(TEST_OPT) $(DEPFLAGS) $(TEST_INC) -c -o $@ $<

$(BUILD)/tests/support/%.o: tests/support/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) $(TEST_INC) -c -o $@ $<

$(BUILD)/fuzz/%.o: fuzz/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) $(TEST_INC) -c -o $@ $<

$(BUILD)/bench/%.o: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) $(DEPFLAGS) $(TEST_INC) -c -o $@ $<

$(BUILD)/libprofconv.a: $(LIB_OBJ)
	rm -f $@ $(BUILD)/libprofconv.o
	$(LD) -r -o $(BUILD)/libprofconv.o $^
	objcopy --localize-hidden -R '.gnu.lto_*' -R '.gnu.debuglto_*' $(BUILD)/libprofconv.o
	ar rcs $@ $(BUILD)/libprofconv.o

# The archive keeps ordinary code alone (its hidden symbols made local
# would not match the intermediate code): with link-time optimization the
# program links the objects themselves.
ifeq ($(LTO),1)
$(BUILD)/profconv: $(CLI_OBJ) $(LIB_OBJ)
	$(CC) -pthread -flto=auto $(OPT) $(LDFLAGS) -o $@ $^ $(LDLIBS_ALL)
else
$(BUILD)/profconv: $(CLI_OBJ) $(BUILD)/libprofconv.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)
endif

$(BUILD)/run-tests: $(TEST_OBJ) $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/gen-simpleperf: $(BUILD)/bench/gen_simpleperf.o $(BUILD)/tests/support/sp_encode.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/gen-perfetto: $(BUILD)/bench/gen_perfetto.o $(BUILD)/tests/support/pf_encode.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/gen-unsymbolized: $(BUILD)/bench/gen_unsymbolized.o $(BUILD)/tests/support/pf_encode.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/gen-heap-graph: $(BUILD)/bench/gen_heap_graph.o $(BUILD)/tests/support/pf_encode.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

# speedscope's published schema (npm package speedscope) validates the
# speedscope output; without npm or the registry those checks are skipped.
check: $(BUILD)/profconv $(BUILD)/libprofconv.a $(BUILD)/run-tests $(BUILD)/$(SHLIB) $(BUILD)/profconv.1
	@bash tests/tools/get-speedscope-schema.sh
	PROFCONV=$(BUILD)/profconv ./$(BUILD)/run-tests $(T)

$(BUILD)/skim: $(BUILD)/bench/skim.o $(LIB_OBJ)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

example: $(BUILD)/profconv $(BUILD)/gen-simpleperf
	./$(BUILD)/gen-simpleperf --samples 20000 --threads 6 -o example.trace
	./$(BUILD)/profconv example.trace -o example.json.gz
	@echo "Open example.json.gz at https://profiler.firefox.com (Load a profile from file)."

# The gzip comparison also measures libdeflate when libdeflate-dev is
# installed; it is not needed otherwise.
$(BUILD)/gzip-bench: bench/gzip_bench.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -o $@ $< $(LDFLAGS_ALL) $(LDLIBS_ALL) \
	    $(if $(wildcard /usr/include/libdeflate.h),-ldeflate)

bench: $(BUILD)/profconv $(BENCH_TOOLS) $(BUILD)/gzip-bench
	bash bench/run.sh $(BUILD)

# Fuzzing with libFuzzer (Debian clang and libclang-rt-14-dev), under
# AddressSanitizer and UBSan.  fuzz-smoke runs every target for
# FUZZ_SECONDS from its saved corpus (fuzz/corpus/TARGET), keeping what it
# finds in build-fuzz/corpus/TARGET; a crash stops it, with the input saved
# as build-fuzz/crash-TARGET-*.  make check replays the saved corpus and
# past crashes (fuzz/crashes/TARGET) with the normal build.
FUZZ_TARGETS := simpleperf perfetto perfscript gzip proguard filter roundtrip options gzipwrap perfetto_compressed perfdata
FUZZ_CC ?= clang
FUZZ_SECONDS ?= 20
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS := -std=c11 -pthread -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g -O1 \
               $(FUZZ_SAN) -fsanitize=fuzzer-no-link -DPC_FUZZ_LIBFUZZER \
               -Iinclude -Isrc -Itests -Itests/support -Ifuzz
FUZZ_SUPPORT := tests/support/fixtures.c tests/support/sp_encode.c \
                tests/support/processed_valid.c tests/support/gecko_valid.c \
                tests/support/jsonmini.c fuzz/fuzz_common.c fuzz/budget.c
# The allocation budget of budget.c wraps the allocator.
FUZZ_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc
FUZZ_OBJ := $(patsubst %.c,build-fuzz/%.o,$(LIB_SRC) $(FUZZ_SUPPORT))

build-fuzz/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(DEPFLAGS) -c -o $@ $<

build-fuzz/fuzz-%: build-fuzz/fuzz/fuzz_%.o $(FUZZ_OBJ)
	$(FUZZ_CC) -pthread $(FUZZ_SAN) -fsanitize=fuzzer $(FUZZ_WRAP) -o $@ $^ -lisal -lzstd -lz -ldw -lelf -lstdc++ -lm

fuzz-build: $(FUZZ_TARGETS:%=build-fuzz/fuzz-%)

fuzz-smoke: fuzz-build
	@for t in $(FUZZ_TARGETS); do \
	    mkdir -p build-fuzz/corpus/$$t; \
	    build-fuzz/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 -rss_limit_mb=2048 \
	        -print_final_stats=1 -artifact_prefix=build-fuzz/crash-$$t- \
	        build-fuzz/corpus/$$t fuzz/corpus/$$t > build-fuzz/$$t.log 2>&1 || \
	        { tail -n 60 build-fuzz/$$t.log; echo "fuzz-smoke: $$t failed"; exit 1; }; \
	    echo "fuzz $$t: $$(grep -o 'stat::number_of_executed_units: [0-9]*' build-fuzz/$$t.log | \
	        cut -d' ' -f2) runs in $(FUZZ_SECONDS) s, $$(grep -o 'cov: [0-9]*' build-fuzz/$$t.log | \
	        tail -n 1)"; \
	done

# The same targets for AFL++ (Debian afl++, optional): afl-clang-fast and
# its libFuzzer driver, e.g.
#   afl-fuzz -i fuzz/corpus/perfetto -o afl-out -- build-afl/fuzz-perfetto
AFL_CC ?= afl-clang-fast
AFL_DRIVER ?= /usr/lib/afl/libAFLDriver.a
AFL_CFLAGS := -std=c11 -pthread -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g -O1 \
              -DPC_FUZZ_LIBFUZZER -Iinclude -Isrc -Itests -Itests/support -Ifuzz
AFL_OBJ := $(patsubst %.c,build-afl/%.o,$(LIB_SRC) $(FUZZ_SUPPORT))

build-afl/%.o: %.c
	@mkdir -p $(dir $@)
	AFL_QUIET=1 $(AFL_CC) $(AFL_CFLAGS) $(DEPFLAGS) -c -o $@ $<

build-afl/fuzz-%: build-afl/fuzz/fuzz_%.o $(AFL_OBJ)
	AFL_QUIET=1 $(AFL_CC) -pthread $(FUZZ_WRAP) -o $@ $^ $(AFL_DRIVER) -lisal -lzstd -lz -ldw -lelf -lstdc++ -lm

fuzz-afl: $(FUZZ_TARGETS:%=build-afl/fuzz-%)

fuzz-replay: $(BUILD)/profconv $(BUILD)/run-tests
	PROFCONV=$(BUILD)/profconv ./$(BUILD)/run-tests fuzz_replay

# The shared library loads the shared C++ runtime (for its demangler).
$(BUILD)/$(SHLIB): $(LIB_OBJ)
	$(CC) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined $(LDFLAGS_ALL) -o $@ $^ \
	    -lisal -lzstd -lz -ldw -lelf -lstdc++ -lm $(LDLIBS)
	ln -sf $(SHLIB) $(BUILD)/$(SONAME)
	ln -sf $(SHLIB) $(BUILD)/libprofconv.so

# The man page is the CLI's one help text (src/cli/help.c) set in roff.
$(BUILD)/profconv.1: $(BUILD)/profconv tools/man.sh
	sh tools/man.sh $(BUILD)/profconv $(VERSION) > $@.tmp
	mv $@.tmp $@

library: $(BUILD)/libprofconv.a $(BUILD)/$(SHLIB)
man: $(BUILD)/profconv.1

# make install [PREFIX=/usr/local] [DESTDIR=/staging] [LIBDIR=PREFIX/lib]
BINDIR ?= $(PREFIX)/bin
LIBDIR ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
MANDIR ?= $(PREFIX)/share/man
PKGCONFIGDIR ?= $(LIBDIR)/pkgconfig

install: $(BUILD)/profconv $(BUILD)/libprofconv.a $(BUILD)/$(SHLIB) $(BUILD)/profconv.1
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(INCLUDEDIR) $(DESTDIR)$(LIBDIR) \
	    $(DESTDIR)$(PKGCONFIGDIR) $(DESTDIR)$(MANDIR)/man1
	install -m 755 $(BUILD)/profconv $(DESTDIR)$(BINDIR)/profconv
	install -m 644 include/profconv.h $(DESTDIR)$(INCLUDEDIR)/profconv.h
	install -m 644 $(BUILD)/libprofconv.a $(DESTDIR)$(LIBDIR)/libprofconv.a
	install -m 755 $(BUILD)/$(SHLIB) $(DESTDIR)$(LIBDIR)/$(SHLIB)
	ln -sf $(SHLIB) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SHLIB) $(DESTDIR)$(LIBDIR)/libprofconv.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|g' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|g' -e 's|@VERSION@|$(VERSION)|g' \
	    profconv.pc.in > $(DESTDIR)$(PKGCONFIGDIR)/profconv.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/profconv.pc
	install -m 644 $(BUILD)/profconv.1 $(DESTDIR)$(MANDIR)/man1/profconv.1

# Removes exactly what install wrote (directories stay: others may share them).
uninstall:
	rm -f $(DESTDIR)$(BINDIR)/profconv $(DESTDIR)$(INCLUDEDIR)/profconv.h \
	    $(DESTDIR)$(LIBDIR)/libprofconv.a $(DESTDIR)$(LIBDIR)/$(SHLIB) \
	    $(DESTDIR)$(LIBDIR)/$(SONAME) $(DESTDIR)$(LIBDIR)/libprofconv.so \
	    $(DESTDIR)$(PKGCONFIGDIR)/profconv.pc $(DESTDIR)$(MANDIR)/man1/profconv.1

clean:
	rm -rf build build-san build-fuzz build-afl example.trace example.json.gz

-include $(shell find $(BUILD) build-fuzz build-afl -name '*.d' 2>/dev/null)

.PHONY: all check example bench install uninstall library man clean fuzz-build fuzz-smoke fuzz-afl fuzz-replay
