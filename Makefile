# profconv: plain Makefile.
#   make                 build build/profconv and build/libprofconv.a
#   make check           build and run every test
#   make SAN=1 check     the same under AddressSanitizer and UBSan (build-san/)
#   make example         build, generate an example profile, convert it
#   make bench           run the benchmarks in bench/
#   make install PREFIX=/usr/local

CC ?= cc
PREFIX ?= /usr/local
OPT ?= -O2 -g

ifeq ($(SAN),1)
BUILD := build-san
SANFLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
OPT := -O1 -g
STDCXX := -lstdc++
else
BUILD := build
SANFLAGS :=
# Only the C++ runtime's demangler is used: linked in statically, it
# spares every run the loading of the whole shared C++ runtime (1.4 ms of
# a 7 ms start here).  The sanitizers want the shared one.
STDCXX := -Wl,-Bstatic -lstdc++ -Wl,-Bdynamic
endif

CFLAGS_ALL = -std=c11 -pthread -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
             -Iinclude -Isrc $(OPT) $(SANFLAGS) $(CFLAGS)
LDFLAGS_ALL = -pthread $(SANFLAGS) $(LDFLAGS)
LDLIBS_ALL = -lisal -lzstd -lz $(STDCXX) -lm $(LDLIBS)

LIB_SRC := $(filter-out src/cli.c,$(wildcard src/*.c))
LIB_OBJ := $(LIB_SRC:src/%.c=$(BUILD)/src/%.o)
TEST_SRC := $(wildcard tests/*.c)
TEST_OBJ := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%.o)
BENCH_TOOLS := $(BUILD)/gen-simpleperf $(BUILD)/gen-perfetto $(BUILD)/skim

all: $(BUILD)/profconv

$(BUILD)/src/%.o: src/%.c $(wildcard src/*.h) include/profconv.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(BUILD)/tests/%.o: tests/%.c $(wildcard tests/*.h) $(wildcard src/*.h) include/profconv.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -c -o $@ $<

$(BUILD)/bench/%.o: bench/%.c $(wildcard bench/*.h) $(wildcard tests/*.h) $(wildcard src/*.h) include/profconv.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS_ALL) -Itests -c -o $@ $<

$(BUILD)/libprofconv.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/profconv: $(BUILD)/src/cli.o $(BUILD)/libprofconv.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/run-tests: $(TEST_OBJ) $(BUILD)/libprofconv.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/gen-simpleperf: $(BUILD)/bench/gen_simpleperf.o $(BUILD)/tests/sp_encode.o $(BUILD)/libprofconv.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

$(BUILD)/gen-perfetto: $(BUILD)/bench/gen_perfetto.o $(BUILD)/tests/pf_encode.o $(BUILD)/libprofconv.a
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(LDLIBS_ALL)

# speedscope's published schema (npm package speedscope) validates the
# speedscope output; without npm or the registry those checks are skipped.
check: $(BUILD)/profconv $(BUILD)/run-tests
	@bash tests/tools/get-speedscope-schema.sh
	PROFCONV=$(BUILD)/profconv ./$(BUILD)/run-tests $(T)

$(BUILD)/skim: $(BUILD)/bench/skim.o $(BUILD)/libprofconv.a
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

install: $(BUILD)/profconv $(BUILD)/libprofconv.a
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/include $(DESTDIR)$(PREFIX)/lib
	install -m 755 $(BUILD)/profconv $(DESTDIR)$(PREFIX)/bin/profconv
	install -m 644 include/profconv.h $(DESTDIR)$(PREFIX)/include/profconv.h
	install -m 644 $(BUILD)/libprofconv.a $(DESTDIR)$(PREFIX)/lib/libprofconv.a

clean:
	rm -rf build build-san example.trace example.json.gz

.PHONY: all check example bench install clean
