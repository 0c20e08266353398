# Makefile for the rope book.  The book (rope.nw, chapters/*.nw) is the
# source; everything in generated/ and build/ is derived from it.
#
#   make               librope.a and the CLI build/rope
#   make test          every chapter's Check suite      (CHAPTER=N: one chapter)
#   make book          book/rope.pdf
#   make check-book    the shape of the built book (book/check-book.py)
#   make exercise CHAPTER=N   check your own answers to chapter N's exercises
#   make exercise CHAPTER=N ONLY=N.K   check one of them
#   make tangle        refresh the committed generated/ from the .nw files
#   make check-generated      fail if generated/ differs from a fresh tangle
#   make lint          fail if the chunk roots differ from the expected list
#   make bench         the attention benchmark of chapter 5
#   make experiments   chapter 7's training grid (book/data/evidence/)
#   make corpus        chapter 7's text, extracted and verified (build/corpus/)
#   make fuzz          the fuzz targets, FUZZ_SECONDS (60) each
#   make wasm          the interactive figures' module and its test programs
#   make deps          install the Debian packages the project needs
#   make clean

SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := all
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:
MAKEFLAGS += --no-builtin-rules
comma := ,

# ---------------------------------------------------------------- sources
# The order of the files fixes the order of the tangled code and of the book:
# rope.nw first, then chapters/ in name order (chapters, appendices, back matter).
CHAPTER_FILES := $(sort $(wildcard chapters/*.nw))
NW := rope.nw $(CHAPTER_FILES)

# Chapter N's file and short NAME; the NAME names its generated files.
FILE_1 := chapters/01-why-positions.nw
NAME_1 := positions
FILE_2 := chapters/02-sinusoidal.nw
NAME_2 := sinusoidal
FILE_3 := chapters/03-rope.nw
NAME_3 := rotary
FILE_4 := chapters/04-long-context.nw
NAME_4 := scaling
FILE_5 := chapters/05-attention.nw
NAME_5 := attention
FILE_6 := chapters/06-beyond-one-machine.nw
NAME_6 := ring
FILE_7 := chapters/07-evidence.nw
NAME_7 := evidence
FILE_8 := chapters/08-minimind.nw
NAME_8 := minimind

CHAPTERS := $(strip $(foreach n,1 2 3 4 5 6 7 8,$(if $(wildcard $(FILE_$n)),$n)))
NAMES := $(foreach n,$(CHAPTERS),$(NAME_$n))

# Roots beyond the standard set of a chapter (one line per chapter).
EXTRA_ROOTS_1 :=

EXTRA_ROOTS_2 :=

EXTRA_ROOTS_3 :=

EXTRA_ROOTS_4 :=

EXTRA_ROOTS_5 := generated/bench/bench-attention.c \
  generated/bench/bench-harness.c generated/bench/bench-harness.h \
  generated/bench/bench-machine.c generated/bench/bench-machine.h \
  generated/bench/record.c generated/bench/record.h \
  generated/bench/record-attention.c \
  generated/lib/attention-kernels.h generated/lib/attention-tune.h \
  generated/lib/attention-simd.c generated/lib/attention-bf16.c \
  generated/lib/attention-naive.c generated/lib/attention-plan.c

EXTRA_ROOTS_6 := generated/lib/ring-mpi.h generated/lib/ring-mpi.c \
  generated/bench/record-ring.c \
  generated/cli/rope-ring-cli.c generated/tests/test-ring-mpi.c

EXTRA_ROOTS_7 := generated/bench/bench-evidence.c python/bench-evidence.py \
  generated/lib/corpus.h generated/lib/corpus.c generated/tools/kjv-corpus.py \
  generated/lib/evidence-f32.h generated/lib/evidence-f32.c \
  generated/tests/test-evidence-f32.c generated/lib/linear-f32.c \
  generated/lib/lm-f32.h generated/lib/lm-f32.c generated/cli/cli-lm.c \
  generated/tests/test-lm-f32.c generated/tools/evidence-compare.py

EXTRA_ROOTS_8 := generated/lib/minimind-file.c generated/lib/minimind-linear.c \
  generated/cli/minimind-reference.h generated/cli/minimind-reference.c \
  generated/tests/test-minimind-reference.c \
  generated/tests/test-minimind-linear.c \
  generated/bench/bench-minimind.c python/bench-minimind.py \
  python/minimind_convert.py python/minimind_numpy.py \
  python/minimind_tokenizer.py python/test_minimind.py \
  python/crosscheck_model.py

# ---------------------------------------------------------------- roots
# The list of roots is the list of generated files; `make lint` holds the
# roots that noroots finds equal to this list.  generated/ is grouped as
# the book is: lib/ is the library a reader compares with MiniMind (Part I);
# cli/, tests/, bookdata/, bench/ and exercises/ are the workshop (Part II).
CORE_ROOTS := generated/lib/rope.h generated/lib/npy.h generated/lib/npy.c \
  generated/tests/tests.h generated/tests/test-npy.c generated/tests/test-runner.c \
  generated/cli/cli.h generated/cli/tables.h generated/cli/tables.c \
  generated/bookdata/bookdata.h \
  generated/cli/rope-cli.c generated/cli/cli-util.c \
  generated/tests/test-main.c generated/tests/test-util.c \
  generated/bookdata/bookdata-main.c generated/bookdata/bookdata-util.c \
  generated/exercises/exercise-main.c
chapter_roots = generated/lib/$1.h generated/lib/$1.c generated/tests/test-$1.c \
  generated/cli/cli-$1.c generated/bookdata/bookdata-$1.c \
  generated/exercises/exercises-$1.h generated/exercises/exercises-$1-starter.c \
  generated/tests/test-exercises-$1.c generated/exercises/exercises-$1-solution.c
ROOTS := $(CORE_ROOTS) $(foreach m,$(NAMES),$(call chapter_roots,$m)) \
  $(foreach n,$(CHAPTERS),$(EXTRA_ROOTS_$n))

# ---------------------------------------------------------------- build
# SANITIZE=address,undefined builds into its own directory, so sanitized and
# plain objects never mix.
ifeq ($(strip $(SANITIZE)),)
B := build
else
B := build/san-$(subst $(comma),-,$(SANITIZE))
endif
T := build/tangle

CC ?= cc
ifeq ($(origin CC),default)
CC := cc
endif
CFLAGS ?= -O2 -g
WARN := -std=c11 -Wall -Wextra -Wpedantic -Werror
# No fused multiply-add contraction: the float32 RoPE path must round each
# product and sum separately, as PyTorch does (chapter 3).
ALLCFLAGS = $(WARN) $(CFLAGS) -ffp-contract=off -D_POSIX_C_SOURCE=200809L \
  -I$(T) -pthread $(XCFLAGS)
LDLIBS := -lm -pthread
CHECK_LIBS = $(shell pkg-config --libs check 2>/dev/null || echo -lcheck)
ifneq ($(strip $(SANITIZE)),)
ALLCFLAGS += -fsanitize=$(SANITIZE) -fno-omit-frame-pointer \
  -fno-sanitize-recover=all
LDFLAGS += -fsanitize=$(SANITIZE)
endif

HEADERS := $(addprefix $(T)/,$(notdir $(filter %.h,$(ROOTS))))
# Chapter 5's kernel: attention.c, its reference, its two speed paths and
# its plan (attention-plan.c, which the HTML edition also compiles);
# chapter 7's float32 block, evidence-f32.c (its workshop);
# npy.c reads and writes the NumPy files of the workshop's frame.
LIB_EXTRA := $(if $(filter attention,$(NAMES)),attention-naive attention-simd \
  attention-bf16 attention-plan) $(if $(filter evidence,$(NAMES)),corpus evidence-f32 \
  linear-f32 lm-f32) $(if $(filter minimind,$(NAMES)),minimind-file \
  minimind-linear)
LIB_OBJS := $(foreach m,$(NAMES) $(LIB_EXTRA) npy,$(B)/obj/$m.o)
# The tables that the program and the book share (the frame of the
# workshop) are linked by the CLI, the book-data writer and the tests.
TABLES_OBJS := $(B)/obj/tables.o
CLI_OBJS := $(B)/obj/rope-cli.o $(B)/obj/cli-util.o $(TABLES_OBJS) \
  $(foreach m,$(NAMES),$(B)/obj/cli-$m.o) \
  $(if $(filter evidence,$(NAMES)),$(B)/obj/cli-lm.o) \
  $(if $(filter minimind,$(NAMES)),$(B)/obj/minimind-reference.o)
TEST_OBJS := $(B)/obj/test-main.o $(B)/obj/test-util.o $(B)/obj/test-npy.o \
  $(B)/obj/test-runner.o \
  $(TABLES_OBJS) \
  $(foreach m,$(NAMES),$(B)/obj/test-$m.o $(B)/obj/test-exercises-$m.o \
  $(B)/obj/exercises-$m-solution.o) \
  $(if $(filter evidence,$(NAMES)),$(B)/obj/test-evidence-f32.o \
  $(B)/obj/test-lm-f32.o) \
  $(if $(filter minimind,$(NAMES)),$(B)/obj/minimind-reference.o \
  $(B)/obj/test-minimind-reference.o $(B)/obj/test-minimind-linear.o)
BOOKDATA_OBJS := $(B)/obj/bookdata-main.o $(B)/obj/bookdata-util.o \
  $(TABLES_OBJS) \
  $(foreach m,$(NAMES),$(B)/obj/bookdata-$m.o) \
  $(if $(filter minimind,$(NAMES)),$(B)/obj/minimind-reference.o)
# Chapter 5's book data runs the benchmark harness that make bench runs.
BENCH_OBJS := $(if $(filter attention,$(NAMES)),$(B)/obj/bench-harness.o \
  $(B)/obj/bench-machine.o)
BOOKDATA_OBJS += $(BENCH_OBJS)

.PHONY: all tangle check-generated lint test book check-book exercise bench record-ring \
  clean deps deps-check deps-ci crosscheck experiments corpus
all: $(B)/librope.a $(B)/rope.h $(B)/rope

# The library's headers, beside the library: rope.h includes the others.
LIB_HEADERS := rope.h npy.h $(foreach m,$(NAMES),$m.h) \
  $(if $(filter evidence,$(NAMES)),corpus.h evidence-f32.h lm-f32.h)
$(B)/rope.h: $(addprefix $(T)/,$(LIB_HEADERS))
	@mkdir -p $(@D)
	cp $^ $(@D)/

# Tangle every root with #line directives into build/tangle, so compiler
# errors, gdb and Check failures point into the .nw files.  cpif leaves
# unchanged files alone, so only what changed is recompiled.
$(T)/.stamp: $(NW) Makefile
	@mkdir -p $(T)
	@for r in $(ROOTS); do \
	  notangle -L -R"$$r" $(NW) > $(T)/.tmp || { echo "notangle failed for $$r" >&2; exit 1; }; \
	  cpif $(T)/$$(basename "$$r") < $(T)/.tmp; \
	done; rm -f $(T)/.tmp; chmod 644 $(T)/*.[ch]; touch $@
$(T)/%.c $(T)/%.h: $(T)/.stamp ;

$(B)/obj/%.o: $(T)/%.c $(HEADERS) | $(T)/.stamp
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) $(LIB_PIC) -c $< -o $@
# The trainer's vectorised linear layers (workshop W7.10): -O3 lets the
# compiler vectorise their one loop; the sums stay in order.
$(B)/obj/linear-f32.o: ALLCFLAGS += -O3
# The double-precision reference of chapter 8 (workshop W8b): -O3 lets
# gcc vectorise its loops over the outputs, whose lengths vary.
$(B)/obj/minimind-reference.o: ALLCFLAGS += -O3
# The library's objects serve librope.a and librope.so alike (the
# workshop of the Python binding): position-independent, and with
# -fno-semantic-interposition gcc gives them the instructions it gives
# without -fPIC, so they are compiled once.
$(LIB_OBJS): LIB_PIC := -fPIC -fno-semantic-interposition

$(B)/librope.a: $(LIB_OBJS)
	rm -f $@; ar rcs $@ $^

$(B)/rope: $(CLI_OBJS) $(B)/librope.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Chapter 6: the ring over MPI.  Only these files include mpi.h; mpicc
# compiles them into build/mpi and links build/rope-ring (the CLI's
# objects without rope-cli.o's main) and the MPI test program.
MPICC := mpicc
RING := $(if $(filter ring,$(NAMES)),$(B)/rope-ring $(B)/test-ring-mpi)
RING_ENV := ROPE_RING=$(B)/rope-ring ROPE_RING_TEST=$(B)/test-ring-mpi
$(B)/mpi/%.o: $(T)/%.c $(HEADERS) | $(T)/.stamp
	@mkdir -p $(@D)
	$(MPICC) $(ALLCFLAGS) -c $< -o $@
$(B)/rope-ring: $(B)/mpi/rope-ring-cli.o $(B)/mpi/ring-mpi.o \
    $(filter-out $(B)/obj/rope-cli.o,$(CLI_OBJS)) $(B)/librope.a
	$(MPICC) $(LDFLAGS) -o $@ $^ $(LDLIBS)
$(B)/test-ring-mpi: $(B)/mpi/test-ring-mpi.o $(B)/mpi/ring-mpi.o $(B)/librope.a
	$(MPICC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Every header compiles on its own, as Hanson's interfaces do: a unit
# that includes only it, with the build's warnings (the MPI header with
# mpicc).  make test builds these objects.
HEADER_CHECKS = $(patsubst $(T)/%.h,$(B)/hdr/%.o,$(filter-out \
  %/ring-mpi.h,$(HEADERS))) $(if $(RING),$(B)/hdr/ring-mpi.o)
$(B)/hdr/%.o: $(T)/%.h $(HEADERS) | $(T)/.stamp
	@mkdir -p $(@D)
	echo '#include "$*.h"' | $(CC) $(ALLCFLAGS) -x c -c - -o $@
$(B)/hdr/ring-mpi.o: $(T)/ring-mpi.h $(HEADERS) | $(T)/.stamp
	@mkdir -p $(@D)
	echo '#include "ring-mpi.h"' | $(MPICC) $(ALLCFLAGS) -x c -c - -o $@

# ---------------------------------------------------------------- tests
# Every pthread_create of the test program goes through test-main.c's
# wrapper, which fails a test that starts a thread outside a test case
# tagged threads; under ThreadSanitizer only those cases run (the frame
# of the workshop, "Tests that run threads").
$(B)/test-rope: $(TEST_OBJS) $(BENCH_OBJS) $(B)/librope.a
	$(CC) $(LDFLAGS) -Wl,--wrap=pthread_create -o $@ $^ $(CHECK_LIBS) $(LDLIBS)
TEST_TAGS := $(if $(findstring thread,$(SANITIZE)),CK_INCLUDE_TAGS=threads)

# The starters are compiled too (never linked): a learner's first build
# must not fail on the book's own code.
STARTER_OBJS := $(foreach m,$(NAMES),$(B)/obj/exercises-$m-starter.o)

test: deps corpus
	@$(MAKE) --no-print-directory $(B)/test-rope $(B)/rope $(STARTER_OBJS) $(RING) \
	  $(HEADER_CHECKS)
	$(TEST_TAGS) ROPE_CLI=$(B)/rope $(RING_ENV) ROPE_CORPUS=$(CORPUS) \
	  $(B)/test-rope $(CHAPTER)
	$(PYTEST_STEP)

# The learner's flow: your answers live in tests/exercises/NAME.c (made from
# the starter the first time, never overwritten), checked by the same tests
# that check the book's solutions.
EXNAME = $(NAME_$(CHAPTER))
EXFILE = tests/exercises/$(EXNAME).c
exercise: deps
	@[ -n "$(CHAPTER)" ] && [ -n "$(EXNAME)" ] || \
	  { echo "usage: make exercise CHAPTER=N (N = $(CHAPTERS))" >&2; exit 2; }
	@$(MAKE) --no-print-directory $(T)/.stamp
	@if [ ! -f $(EXFILE) ]; then mkdir -p tests/exercises; \
	  cp generated/exercises/exercises-$(EXNAME)-starter.c $(EXFILE); \
	  echo "created $(EXFILE) from the starter: fill in the bodies, then run make exercise CHAPTER=$(CHAPTER) again"; fi
	@$(MAKE) --no-print-directory $(B)/exercise-$(EXNAME)
	$(B)/exercise-$(EXNAME) $(ONLY)

# The learner's file is compiled as its own: a #line directive left in it
# (the starters of earlier editions had them) is blanked, keeping every
# other line's number, so that an error names the learner's file and line.
$(B)/obj/learner-%.o: tests/exercises/%.c $(HEADERS)
	@mkdir -p $(@D)
	@{ printf '#line 1 "%s"\n' '$<'; \
	  sed 's/^[[:space:]]*#[[:space:]]*line[[:space:]].*$$//' '$<'; } > $(@:.o=.c)
	$(CC) -std=c11 -Wall -Wextra $(CFLAGS) -I$(T) -c $(@:.o=.c) -o $@
$(B)/obj/exercise-main-%.o: $(T)/exercise-main.c $(HEADERS)
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -DEXERCISE_SUITE=exercises_$*_suite \
	  -DEXERCISE_TABLE=exercises_$*_table \
	  -DEXERCISE_NAME='"$*"' -c $< -o $@
$(B)/exercise-%: $(B)/obj/exercise-main-%.o $(B)/obj/test-exercises-%.o \
    $(B)/obj/learner-%.o $(B)/obj/test-util.o $(B)/librope.a
	$(CC) $(LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(LDLIBS)

# ---------------------------------------------------------------- book
# Programs tangled from the book write the data its figures and prose use.
$(B)/bookdata: $(BOOKDATA_OBJS) $(B)/librope.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The measurements the book prints were recorded by make bench RECORD=1
# into book/data/measured/ (with their provenance); the book reads them
# from build/data/ beside the computed data.  Building the book times
# nothing.
MEASURED := book/data/measured
build/data/.stamp: $(B)/bookdata $(RING) $(wildcard $(MEASURED)/*) \
  $(SECTIONS) $(wildcard generated/lib/*)
	@mkdir -p build/data
	cp $(MEASURED)/* build/data/
	$(PYTHON) $(SECTIONS) map $(sort $(wildcard generated/lib/*.h generated/lib/*.c)) \
	  > build/data/library-map.tex
	$(RING_ENV) $(B)/bookdata build/data
	touch $@

build/book/rope.tex: $(NW) Makefile
	@mkdir -p build/book
	@# Quoted code in the prose ([[...]], woven as {\Tt{}...\nwendquote})
	@# gets straight quotes, as code chunks do (the preamble of rope.nw).
	@# noweave leaves the names of chunks raw; an underscore in the name
	@# of a file (python/minimind_convert.py) is escaped for TeX.
	noweave -delay -index $(NW) | perl -pe \
	  's{(\{\\Tt\{\}.*?\\nwendquote\})}{my $$x = $$1; $$x =~ /\\LA\{\}/ or $$x =~ s/\x27/\\textquotesingle{}/g; $$x =~ /\\LA\{\}/ or $$x =~ s/\x60/\\textasciigrave{}/g; $$x}ge; s{(\\(?:moddef|nwnotused)\{|\\nwixlogsorted\{c\}\{\{)((?:python|generated)/[^~\}]*)}{my ($$p, $$n) = ($$1, $$2); $$n =~ s/_/\\_/g; "$$p$$n"}ge' > $@.tmp
	mv $@.tmp $@

BOOK_SUPPORT := $(wildcard book/*.bib book/*.sty)

book: deps corpus
	@$(MAKE) --no-print-directory book/rope.pdf

book/rope.pdf: build/book/rope.tex build/data/.stamp $(BOOK_SUPPORT)
	@# latexmk reruns pdflatex until the cross-references settle.  A page
	@# break that moves a chunk label between two pages can keep them
	@# moving by one page forever; that is reported, not fatal.  Any LaTeX
	@# error is fatal.
	cd build/book && if ! TEXINPUTS=.:../../book//: BIBINPUTS=../../book: \
	  BSTINPUTS=../../book: latexmk -pdf -e '$$max_repeat=8' \
	  -interaction=nonstopmode -halt-on-error -file-line-error -silent \
	  rope.tex > latexmk.out 2>&1; then \
	  if grep -q 'needed too many passes' latexmk.out \
	     && ! grep -q '^!\|^\./rope\.tex:[0-9]*:' rope.log; then \
	    echo "book: note: a cross-reference still moved by a page after the last pass"; \
	  else tail -40 latexmk.out; grep -A5 '^!\|:[0-9]*:' rope.log | head -40; exit 1; fi; fi
	@bash book/check-log.sh build/book/rope.log
	cp build/book/rope.pdf $@
	@echo "book/rope.pdf: $$(pdfinfo $@ 2>/dev/null | awk '/^Pages/{print $$2}') pages"

# The shape of the built book: Part I and Part II in the contents, the
# code share and length of each Part I chapter, library code that copies
# verbatim from the PDF, the PDF's metadata, the index's running heads.
check-book: book
	/usr/bin/python3 book/check-book.py

# ---------------------------------------------------------------- bench
# Chapter 5's measurements: progress on stderr, the table on stdout.
$(B)/bench-attention: $(B)/obj/bench-attention.o $(BENCH_OBJS) $(B)/librope.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS) -ldl

# The first edition of the kernel (commit 10606e8, before the cache and the
# pool), for the decode comparison: its library files from git history, one
# shared library (-Bsymbolic: its calls stay inside it; the bench dlopens
# it RTLD_LOCAL). Without git or that commit (a tarball), a .skipped file
# says why and make bench prints it.
FIRST_EDITION := 10606e8
REL := $(B)/release
$(REL)/librope-1st.so:
	@mkdir -p $(REL); rm -f $@.skipped
	@if git rev-parse -q --verify $(FIRST_EDITION)^{commit} >/dev/null 2>&1; \
	then for f in $$(git ls-tree --name-only $(FIRST_EDITION) generated/lib/); do \
	  git show $(FIRST_EDITION):$$f > $(REL)/$$(basename $$f) || exit 1; done; \
	  $(CC) -std=c11 $(CFLAGS) -ffp-contract=off -D_POSIX_C_SOURCE=200809L \
	    -pthread -fPIC -shared -Wl,-Bsymbolic -o $@ \
	    $$(ls $(REL)/*.c | grep -v ring-mpi) -lm \
	  || echo "compiling the first edition ($(FIRST_EDITION)) failed" > $@.skipped; \
	else echo "no git history with commit $(FIRST_EDITION) (not a clone)" \
	  > $@.skipped; fi

# Debian's python3-torch multiplies matrices with the system's BLAS;
# without OpenBLAS (which it recommends) that is the reference BLAS, and
# chapter 8's comparison would measure that library, not PyTorch.
BENCH_PACKAGES := libopenblas0-pthread
bench: deps
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(BENCH_PACKAGES)"
	@$(MAKE) --no-print-directory $(B)/bench-attention $(EV_BENCH) $(MM_BENCH) \
	  $(REL)/librope-1st.so $(if $(RECORD),$(B)/record $(RING))
	$(B)/bench-attention $(REL)/librope-1st.so $(MEASURED)
	$(if $(EV_BENCH),$(EV_BENCH) $(PYTHON) python/bench-evidence.py)
	$(if $(MM_BENCH),$(MM_BENCH) $(PYTHON) python/bench-minimind.py \
	  $(if $(RECORD),$(MEASURED) "$$(git describe --always --dirty 2> /dev/null || echo unknown)"))
	$(if $(RECORD),$(RING_ENV) $(B)/record $(MEASURED) \
	  "$$(git describe --always --dirty 2> /dev/null || echo unknown)")

# make record-ring: chapter 6's recorder alone (it writes its own
# provenance, book/data/measured/ring-provenance.txt).
record-ring: deps
	@$(MAKE) --no-print-directory $(B)/record $(RING)
	$(RING_ENV) $(B)/record $(MEASURED) \
	  "$$(git describe --always --dirty 2> /dev/null || echo unknown)" ring

# make bench RECORD=1: the recorders of the book's measurements.
RECORD_OBJS := $(B)/obj/record.o $(B)/obj/bookdata-util.o \
  $(foreach m,$(filter attention ring,$(NAMES)),$(B)/obj/record-$m.o)
$(B)/record: $(RECORD_OBJS) $(BENCH_OBJS) $(B)/librope.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Chapter 7: training tokens/s of the tiny model, and PyTorch's in the
# same run (skipped, with a line saying so, without python3-torch).
EV_BENCH := $(if $(filter evidence,$(NAMES)),$(B)/bench-evidence)
$(B)/bench-evidence: $(B)/obj/bench-evidence.o $(B)/librope.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# Chapter 8: prefill and decode tokens/s of MiniMind's default model in C
# and in PyTorch, in the same run (workshop W8b).
MM_BENCH := $(if $(filter minimind,$(NAMES)),$(B)/bench-minimind)
$(B)/bench-minimind: $(B)/obj/bench-minimind.o $(BENCH_OBJS) $(B)/librope.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# ---------------------------------------------------------------- experiments
# Chapter 7 (workshop, "The grid"): make experiments trains and measures
# the language models of the grid, EXP_JOBS runs at a time, each run one
# `rope lm' process with one thread, and writes results.tsv and
# provenance.txt into EXP_OUT (book/data/evidence/, which make book
# reads).  QUICK=1 runs one seed of each encoding on a tenth of the
# tokens into build/experiments-quick/ (CI runs it; the book's data are
# not touched).  EXP_SEEDS and EXP_OUT rerun the grid with other seeds
# elsewhere; make experiments-compare EXP_OUT=DIR then says which of its
# means fall inside the book's intervals.
EXP_JOBS ?= 2
ifeq ($(QUICK),1)
EXP_SEEDS ?= 1
EXP_OUT ?= build/experiments-quick
EXP_ARGS ?= --tokens 200000 --eval-tokens 4096 --trials 1
EXP_CONVERGE :=
else
EXP_SEEDS ?= 1 2 3 4 5
EXP_OUT ?= book/data/evidence
EXP_ARGS ?=
EXP_CONVERGE := converge
endif
EXP_RUNS = $(foreach s,$(EXP_SEEDS),nope:1e4:$s:0 sin:1e4:$s:0 \
  rope:1e4:$s:10 rope:1e6:$s:0 $(if $(EXP_CONVERGE),rope:1e4:$s:30))
.PHONY: experiments experiments-compare
EXP_RUNS_DIR = build/experiments/$(subst /,-,$(EXP_OUT))
experiments: deps corpus
	@$(MAKE) --no-print-directory $(B)/rope
	@mkdir -p $(EXP_OUT) $(EXP_RUNS_DIR); \
	rm -f $(EXP_RUNS_DIR)/*; start=$$(date +%s); \
	commit=$$(git rev-parse HEAD 2>/dev/null || echo unknown)$$(git diff --quiet HEAD -- 2>/dev/null || echo +changes); \
	started=$$(date -u +%Y-%m-%dT%H:%MZ); \
	echo "experiments: $(words $(EXP_RUNS)) runs, $(EXP_JOBS) at a time; progress in $(EXP_RUNS_DIR)/*.log" >&2; \
	for r in $(EXP_RUNS); do echo $$r; done | tr ':' ' ' | xargs -P $(EXP_JOBS) -n 4 sh -c \
	  'f=$(EXP_RUNS_DIR)/$$0-$$1-$$2-$$3; \
	   $(B)/rope lm --pe $$0 --base $$1 --seed $$2 --ft-percent $$3 $(EXP_ARGS) \
	     $$( [ $$3 = 30 ] && echo --ft-only ) > $$f.tsv 2> $$f.log \
	   && echo "experiments: $$0 base $$1 seed $$2 done ($$(tail -1 $$f.log | sed "s/.*\[\([0-9]*\) s\].*/\1/") s)" >&2 \
	   || { echo "experiments: $$0 base $$1 seed $$2 failed:" >&2; tail -3 $$f.log >&2; exit 255; }' \
	&& if [ "$(EXP_APPEND)" = 1 ]; then \
	  cat $(EXP_RUNS_DIR)/*.tsv | grep -v '^#' >> $(EXP_OUT)/results.tsv \
	  && echo "appended runs '$(strip $(EXP_RUNS))' at commit $$commit, started $$started, $$(( $$(date +%s) - start )) s" >> $(EXP_OUT)/provenance.txt \
	  && echo "experiments: appended $$(cat $(EXP_RUNS_DIR)/*.tsv | grep -vc '^#') rows to $(EXP_OUT)/results.tsv"; exit $$?; fi \
	&& { head -1 $$(ls $(EXP_RUNS_DIR)/*.tsv | head -1); \
	     cat $(EXP_RUNS_DIR)/*.tsv | grep -v '^#'; } > $(EXP_OUT)/results.tsv \
	&& { echo "command make experiments EXP_RUNS='$(strip $(EXP_RUNS))' EXP_ARGS='$(EXP_ARGS)' QUICK='$(QUICK)'"; \
	  echo "commit $$commit"; echo "started $$started"; \
	  echo "date $$(date -u +%Y-%m-%dT%H:%MZ)"; \
	  echo "cpu $$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)"; \
	  echo "cores $$(nproc)"; echo "jobs $(EXP_JOBS)"; \
	  echo "runs $(words $(EXP_RUNS))"; \
	  echo "seeds $(sort $(foreach r,$(EXP_RUNS),$(word 3,$(subst :, ,$r))))"; \
	  echo "seconds $$(( $$(date +%s) - start ))"; } > $(EXP_OUT)/provenance.txt \
	&& echo "experiments: $$(grep -vc '^#' $(EXP_OUT)/results.tsv) rows in $(EXP_OUT)/results.tsv, $$(( $$(date +%s) - start )) s"
experiments-compare: $(T)/.stamp
	@$(PYTHON) $(T)/evidence-compare.py book/data/evidence/results.tsv $(EXP_OUT)/results.tsv
build/data/.stamp: $(wildcard book/data/evidence/*)

# ---------------------------------------------------------------- corpus
# Chapter 7's text (the workshop, "The King James corpus"): the King
# James Version of Debian's bible-kjv-text, printed by the bible program
# of bible-kjv and made a corpus file by kjv-corpus.py, under a temporary
# name (two lanes of CI may run this at once) renamed only when its size
# and its sha256, recorded in tests/checksums/kjv-corpus.txt, are right.
CORPUS_PACKAGES := bible-kjv bible-kjv-text
CORPUS := build/corpus/kjv.txt
CORPUS_SUM := tests/checksums/kjv-corpus.txt
CORPUS_COMMAND := bible -f -p /usr/lib Gen1:1-Rev22:21
CORPUS_MIN_BYTES := 2000000
corpus:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(CORPUS_PACKAGES)"
	@$(MAKE) --no-print-directory $(CORPUS)
# Python has no #line: the tool is tangled plain, as sections.py is,
# under a name of its own and renamed only if it changed (both lanes).
CORPUS_TOOL := build/tools/kjv-corpus.py
$(CORPUS_TOOL): $(NW)
	@mkdir -p $(@D); tmp=$@.tmp.$$$$; \
	notangle -R'generated/tools/kjv-corpus.py' $(NW) > "$$tmp"; \
	if cmp -s "$$tmp" $@; then rm -f "$$tmp"; else mv "$$tmp" $@; fi
$(CORPUS): $(CORPUS_TOOL) $(CORPUS_SUM) $(wildcard /usr/lib/bible.data)
	@command -v bible > /dev/null || \
	  { echo "corpus: no bible program (Debian bible-kjv): run make corpus" >&2; exit 1; }
	@mkdir -p $(@D); tmp=$@.tmp.$$$$; trap 'rm -f "$$tmp"' EXIT; \
	version=$$(dpkg-query -W -f='$${Version}' bible-kjv-text); \
	$(CORPUS_COMMAND) | $(PYTHON) $(CORPUS_TOOL) \
	  "bible-kjv-text $$version" "$(CORPUS_COMMAND)" > "$$tmp"; \
	size=$$(wc -c < "$$tmp"); \
	if [ "$$size" -lt $(CORPUS_MIN_BYTES) ]; then \
	  echo "corpus: the text from bible-kjv-text $$version has $$size bytes, fewer than $(CORPUS_MIN_BYTES)" >&2; exit 1; fi; \
	got=$$(sha256sum "$$tmp" | cut -c1-64); \
	want=$$(sed -n 's/^\([0-9a-f]\{64\}\) .*/\1/p' $(CORPUS_SUM)); \
	made=$$(sed -n 's/^[0-9a-f]\{64\} //p' $(CORPUS_SUM)); \
	if [ "$$got" != "$$want" ]; then \
	  echo "corpus: the text from bible-kjv-text $$version has sha256 $$got, not $$want as recorded for $$made in $(CORPUS_SUM)" >&2; exit 1; fi; \
	mv "$$tmp" $@; \
	echo "corpus: $@, $$size bytes from bible-kjv-text $$version, sha256 as recorded"
build/data/.stamp: $(CORPUS)

# ---------------------------------------------------------------- html
# The HTML edition (the workshop chapter "The HTML edition"): book/html/ from
# the same sources, and a test of every page in headless Chromium.
HTML_ROOTS := generated/html/nw2html.py generated/html/katex-render.js \
  generated/html/test-html.js generated/html/rope.css generated/html/rope.js
ROOTS += $(HTML_ROOTS)
HTML_DEBIAN_PACKAGES := pandoc libjs-katex nodejs mupdf-tools chromium
HT := build/html-tool
.PHONY: html test-html
$(HT)/.stamp: $(NW) Makefile
	@mkdir -p $(HT)
	@for r in $(HTML_ROOTS); do notangle -R"$$r" $(NW) > $(HT)/.tmp; \
	  cpif $(HT)/$$(basename "$$r") < $(HT)/.tmp; done; rm -f $(HT)/.tmp; touch $@
book/html/index.html: $(HT)/.stamp $(NW) book/rope.pdf build/data/.stamp
	/usr/bin/python3 $(HT)/nw2html.py --out book/html --data build/data \
	  --aux build/book/rope.aux --bbl build/book/rope.bbl \
	  --figdir build/html-fig --katex-script $(HT)/katex-render.js \
	  --css $(HT)/rope.css --js $(HT)/rope.js \
	  --interactive $(W)/interactive.js \
	  $(NW)
html: deps
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(HTML_DEBIAN_PACKAGES)"
	@$(MAKE) --no-print-directory book/html/index.html
build/html-node/.stamp: book/html-package.json book/html-package-lock.json
	@command -v npm > /dev/null || $(MAKE) --no-print-directory deps DEBIAN_PACKAGES=npm
	@mkdir -p $(@D)
	cp book/html-package.json $(@D)/package.json
	cp book/html-package-lock.json $(@D)/package-lock.json
	cd $(@D) && npm ci --no-audit --no-fund --loglevel=error
	touch $@
test-html: html
	@$(MAKE) --no-print-directory build/html-node/.stamp
	NODE_PATH=build/html-node/node_modules node $(HT)/test-html.js \
	  book/html build/html-shots
	@$(MAKE) --no-print-directory $(W)/rope-wasm-native $(W)/rope-wasm-musl \
	  $(W)/test-interactive.js
	NODE_PATH=build/html-node/node_modules node $(W)/test-interactive.js \
	  book/html $(W)/rope-wasm-native $(W)/rope-wasm-musl

# ---------------------------------------------------------------- wasm
# The interactive figures of the HTML edition (the workshop chapter "The
# HTML edition", section "Interactive figures"): the library's functions
# and the figures' glue compiled to WebAssembly and embedded in
# build/wasm/interactive.js; the same glue compiled natively twice for
# the test, against glibc (the library as make builds it) and against
# musl (whose mathematics the module's wasi-libc shares).
WASM_ROOTS := generated/html/wasm/rope-wasm.h generated/html/wasm/rope-wasm.c \
  generated/html/wasm/rope-wasm-native.c generated/html/interactive.js \
  generated/html/test-interactive.js
ROOTS += $(WASM_ROOTS)
WASM_PACKAGES := clang lld wasi-libc libclang-rt-14-dev-wasm32 musl-tools
HTML_DEBIAN_PACKAGES += $(WASM_PACKAGES)
W := build/wasm
WASM_LIB := positions sinusoidal rotary scaling attention-plan
WASM_SRC := $(addprefix $(T)/,$(addsuffix .c,$(WASM_LIB)) rope-wasm.c)
WASM_CFLAGS := $(WARN) -ffp-contract=off -I$(T)
.PHONY: wasm
wasm:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(WASM_PACKAGES)"
	@$(MAKE) --no-print-directory $(W)/interactive.js $(W)/rope-wasm-native \
	  $(W)/rope-wasm-musl $(W)/test-interactive.js
	@echo "wasm: $(W)/rope.wasm, $$(wc -c < $(W)/rope.wasm) bytes, embedded in $(W)/interactive.js"
$(W)/rope.wasm: $(WASM_SRC) $(HEADERS) $(T)/rope-wasm.h | $(T)/.stamp
	@mkdir -p $(@D)
	clang --target=wasm32-wasi -mexec-model=reactor -Oz $(WASM_CFLAGS) \
	  -Wl,--strip-all -o $@ $(WASM_SRC)
$(W)/rope-wasm-native: $(T)/rope-wasm-native.c $(T)/rope-wasm.c $(T)/rope-wasm.h \
  $(B)/librope.a
	@mkdir -p $(@D)
	$(CC) $(ALLCFLAGS) -o $@ $(T)/rope-wasm-native.c $(T)/rope-wasm.c \
	  $(B)/librope.a $(LDLIBS)
$(W)/rope-wasm-musl: $(T)/rope-wasm-native.c $(WASM_SRC) $(HEADERS) $(T)/rope-wasm.h
	@mkdir -p $(@D)
	musl-gcc -O2 $(WASM_CFLAGS) -D_POSIX_C_SOURCE=200809L -o $@ \
	  $(T)/rope-wasm-native.c $(WASM_SRC) -lm
$(W)/test-interactive.js: $(NW) Makefile
	@mkdir -p $(@D)
	@notangle -R"generated/html/test-interactive.js" $(NW) > $@.tmp
	@mv $@.tmp $@
$(W)/interactive.js: $(W)/interactive-template.js $(W)/rope.wasm
	b64=$$(base64 -w0 $(W)/rope.wasm); \
	  sed "s|ROPE_WASM_BASE64_HERE|$$b64|" $< > $@.tmp
	@grep -q ROPE_WASM_BASE64_HERE $@.tmp && { echo "wasm: module not embedded" >&2; exit 1; } || true
	mv $@.tmp $@
$(W)/interactive-template.js: $(NW) Makefile
	@mkdir -p $(@D)
	@notangle -R"generated/html/interactive.js" $(NW) > $@.tmp
	@mv $@.tmp $@
book/html/index.html: $(W)/interactive.js

# ---------------------------------------------------------------- fuzz
# make fuzz [FUZZ_SECONDS=60]: the libFuzzer targets of the frame of the
# workshop ("Fuzzing"), built with clang under ASan+UBSan in build/fuzz
# and run one after the other on their seeds (tests/fuzz/NAME/) and the
# corpus of earlier runs; fails at the first finding.
FUZZ_TARGETS := npy cli $(if $(filter minimind,$(NAMES)),minimind)
ROOTS += $(foreach t,$(FUZZ_TARGETS),generated/fuzz/fuzz-$t.c)
FUZZ_PACKAGES := clang libclang-rt-14-dev
FUZZ_SECONDS ?= 60
.PHONY: fuzz
FZ := build/fuzz
FUZZ_CC := clang
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer
# clang knows no optimize attribute (chapter 5 asks gcc for one).
FUZZ_CFLAGS = $(WARN) -Wno-unknown-attributes -g $(FUZZ_SAN) \
  -fsanitize=fuzzer-no-link \
  -ffp-contract=off -D_POSIX_C_SOURCE=200809L -I$(T) -pthread
FUZZ_LIB = $(foreach m,$(NAMES) $(LIB_EXTRA) npy,$(FZ)/obj/$m.o)
FUZZ_CLI = $(FZ)/obj/cli-util.o $(FZ)/obj/tables.o \
  $(foreach m,$(NAMES),$(FZ)/obj/cli-$m.o) \
  $(if $(filter evidence,$(NAMES)),$(FZ)/obj/cli-lm.o) \
  $(if $(filter minimind,$(NAMES)),$(FZ)/obj/minimind-reference.o)
# The kernel's two speed paths are linked into fuzz-cli (the attention
# command calls the kernel) but no parser reaches them, and clang spends
# minutes optimizing their unrolled loops under the sanitizers: they are
# compiled at -O0, with the same sanitizers and coverage.
FUZZ_O0 := $(filter $(FZ)/obj/attention-simd.o $(FZ)/obj/attention-bf16.o,$(FUZZ_LIB))
$(FUZZ_O0): FUZZ_OPT := -O0

FUZZ_OPT := -O1
$(FZ)/obj/%.o: $(T)/%.c $(HEADERS) | $(T)/.stamp
	@mkdir -p $(@D)
	$(FUZZ_CC) $(FUZZ_CFLAGS) $(FUZZ_OPT) -c $< -o $@
$(FZ)/obj/fuzz-cli.o: $(T)/rope-cli.c
# The .npy target links the reader alone.
$(FZ)/fuzz-npy: $(FZ)/obj/fuzz-npy.o $(FZ)/obj/npy.o
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)
$(FZ)/fuzz-cli: $(FZ)/obj/fuzz-cli.o $(FUZZ_CLI) $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)
# Chapter 8's weight file: the reader (workshop W8) with the library.
$(FZ)/fuzz-minimind: $(FZ)/obj/fuzz-minimind.o $(FUZZ_LIB)
	$(FUZZ_CC) $(FUZZ_SAN) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)

fuzz:
	@$(MAKE) --no-print-directory deps \
	  DEBIAN_PACKAGES="$(DEBIAN_PACKAGES) $(FUZZ_PACKAGES)"
	@$(MAKE) --no-print-directory $(foreach t,$(FUZZ_TARGETS),$(FZ)/fuzz-$t)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p $(FZ)/corpus-$$t $(FZ)/crash-$$t; log=$(FZ)/fuzz-$$t.log; \
	  if ! $(FZ)/fuzz-$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
	      -close_fd_mask=3 -print_final_stats=1 \
	      -artifact_prefix=$(FZ)/crash-$$t/ $(FZ)/corpus-$$t \
	      tests/fuzz/$$t > $$log 2>&1; then \
	    tail -60 $$log; echo "fuzz: $$t: FINDING, input in $(FZ)/crash-$$t/" >&2; \
	    exit 1; fi; \
	  runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log); \
	  secs=$$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' $$log); \
	  echo "fuzz: $$t: $$runs runs in $$secs s, no finding ($$(ls $(FZ)/corpus-$$t | wc -l) inputs in the corpus)"; \
	done

# ---------------------------------------------------------------- python
# Workshop: the library from Python: build/librope.so for python/rope.py
# (the objects of librope.a, which are position-independent), the
# binding's unittest step of make test, and make crosscheck
# MINIMIND=/path/to/minimind.
PY_ROOTS := python/rope.py python/tests.py python/crosscheck.py
ROOTS += $(PY_ROOTS)
PYTHON ?= /usr/bin/python3
all: $(B)/librope.so

$(B)/librope.so: $(LIB_OBJS)
	$(CC) $(LDFLAGS) -shared -o $@ $^ $(LDLIBS)

# A sanitized library cannot be loaded into an unsanitized Python, and
# CHAPTER=N asks for one chapter's suites: both skip the Python step.
PYTEST_STEP = $(if $(strip $(SANITIZE)$(CHAPTER)),@echo "python: binding tests skipped ($(if $(strip $(SANITIZE)),sanitizer build,CHAPTER=$(CHAPTER)))", \
  $(MAKE) --no-print-directory $(B)/librope.so && \
  PYTHONDONTWRITEBYTECODE=1 ROPE_LIB=$(B)/librope.so ROPE_CLI=$(B)/rope \
  /usr/bin/python3 -m unittest -v python/tests.py python/test_minimind.py)

# The crosscheck needs PyTorch and NumPy: the reader's own $(PYTHON)
# if it has them, else Debian's python3-torch and python3-numpy.
# make's functions split words at spaces, so MINIMIND is never handed to
# one ($(wildcard) would look for each word of "/path with space"): the
# shell tests the file, and every use quotes the path in single quotes
# (each ' of it written '\'').
shell_quote = '$(subst ','\'',$1)'
MINIMIND_Q = $(call shell_quote,$(MINIMIND))
crosscheck:
	$(if $(strip $(MINIMIND)),,$(error crosscheck needs MINIMIND=/path/to/minimind, a clone of jingyaogong/minimind))
	$(if $(shell test -f $(MINIMIND_Q)/model/model_minimind.py && echo yes),,$(error crosscheck: $(MINIMIND)/model/model_minimind.py not found; MINIMIND must name a MiniMind checkout))
	@$(PYTHON) -c 'import torch, numpy' 2> /dev/null || \
	  $(MAKE) --no-print-directory deps DEBIAN_PACKAGES="python3-torch python3-numpy"
	@$(MAKE) --no-print-directory $(B)/librope.so $(B)/rope
	$(PYTHON) python/crosscheck.py --minimind $(MINIMIND_Q) --lib $(B)/librope.so
	$(PYTHON) python/crosscheck_model.py --minimind $(MINIMIND_Q) --rope $(B)/rope
	/usr/bin/python3 book/check-minimind-lines.py --minimind $(MINIMIND_Q)

# The appendix prints a sample of a recorded run (book/data/), which
# the book cannot repeat at build time: MiniMind is not in the repository.
build/data/crosscheck-sample.tex: book/data/crosscheck-sample.txt Makefile
	@mkdir -p $(@D)
	{ echo '\begin{verbatim}'; grep -E '^(#|function|-|crosscheck:|\[|precompute)|d96 b1e6 (plain|yarn) S(0|30000) 8/4' \
	  $< | fold -s -w 100; echo '\end{verbatim}'; } > $@
book/rope.pdf: build/data/crosscheck-sample.tex

# ---------------------------------------------------------------- checks
# The clean tangle of generated/ and python/, with a comment naming the
# book's section before each chunk's code (the frame of the workshop,
# "Generated files and line directives"): noweb's pipeline run by hand,
# markup and the section filter once for all roots, nt once per root,
# then the pass that turns the filter's marks into comments.  The tool is
# itself a root, tangled first without it.  make tangle and make
# check-generated both run $(call clean_tangle,DIR).
TOOL_ROOTS := generated/tools/sections.py
ROOTS += $(TOOL_ROOTS)
NOWEB_LIB := /usr/lib/noweb
SECTIONS := build/tools/sections.py
$(SECTIONS): $(NW)
	@mkdir -p $(@D)
	@notangle -R'generated/tools/sections.py' $(NW) > $@.tmp
	@mv $@.tmp $@
clean_tangle = $(NOWEB_LIB)/markup $(NW) | /usr/bin/python3 $(SECTIONS) mark > $1/.marked; \
  for r in $(ROOTS); do mkdir -p "$1/$$(dirname "$$r")"; \
    $(NOWEB_LIB)/nt -R"$$r" < $1/.marked > "$1/$$r" \
      || { echo "nt failed for $$r" >&2; exit 1; }; \
  done; rm -f $1/.marked; /usr/bin/python3 $(SECTIONS) comment $1 $(ROOTS)

tangle: deps-check $(SECTIONS)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; $(call clean_tangle,$$tmp); \
	for r in $(ROOTS); do mkdir -p "$$(dirname "$$r")"; \
	  cpif "$$r" < "$$tmp/$$r"; chmod 644 "$$r"; \
	done
	@for f in $$(find generated -type f); do \
	  case " $(ROOTS) " in *" $$f "*) ;; *) echo "removing stale $$f"; rm -f "$$f";; esac; \
	done

check-generated: deps-check $(SECTIONS)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; $(call clean_tangle,$$tmp); \
	if diff -r "$$tmp/generated" generated > "$$tmp/diff" \
	   && diff -r -x __pycache__ "$$tmp/python" python >> "$$tmp/diff"; then \
	  echo "check-generated: generated/ and python/ match a fresh tangle ($(words $(ROOTS)) files)"; \
	else head -40 "$$tmp/diff"; \
	  echo "check-generated: generated/ or python/ is stale: run make tangle and commit" >&2; exit 1; fi

lint: deps-check
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	noroots $(NW) | sed 's/^<<\(.*\)>>$$/\1/' | sort > "$$tmp/found"; \
	printf '%s\n' $(ROOTS) | sort > "$$tmp/expected"; \
	if diff "$$tmp/expected" "$$tmp/found" > "$$tmp/diff"; then \
	  echo "lint: the $(words $(ROOTS)) roots are the expected ones"; \
	else echo "lint: roots differ from the expected list (< expected, > found):" >&2; \
	  cat "$$tmp/diff" >&2; exit 1; fi
	@if LC_ALL=C grep -n '[^ -~	]' $(NW) Makefile README.md; then \
	  echo "lint: non-ASCII characters above" >&2; exit 1; fi
	@# Every exercise has a worked solution and a Check test case.
	@n=0; bad=0; for ex in $$(grep -oh 'label{ex:[0-9]*\.[0-9]*}' $(NW) \
	    | sed 's/.*ex:\(.*\)}/\1/'); do n=$$((n+1)); \
	  grep -q "label{sol:$$ex}" $(NW) || { echo "lint: exercise $$ex has no solution" >&2; bad=1; }; \
	  grep -q "\"exercise $$ex\"" $(NW) || { echo "lint: exercise $$ex has no test case" >&2; bad=1; }; \
	done; [ $$bad = 0 ] || exit 1; \
	echo "lint: the $$n exercises each have a solution and a test case"

# ---------------------------------------------------------------- set-up
DEBIAN_PACKAGES := build-essential pkg-config noweb check \
  texlive-latex-base texlive-latex-recommended texlive-pictures lmodern \
  latexmk poppler-utils python3 openmpi-bin libopenmpi-dev python3-numpy \
  python3-torch

deps:
	@missing=""; for p in $(DEBIAN_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' "$$p" 2>/dev/null | grep -q 'install ok installed' \
	    || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "deps: installing$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "deps: missing Debian packages; run as root:" >&2; \
	    echo "  apt-get install -y$$missing" >&2; exit 1; fi; fi

# Every package that a target of .ci/run installs when it is missing,
# in one apt-get: CI runs this first, so that its two lanes never run
# apt-get at the same time.
deps-ci:
	@$(MAKE) --no-print-directory deps DEBIAN_PACKAGES="$(DEBIAN_PACKAGES) \
	  $(FUZZ_PACKAGES) $(HTML_DEBIAN_PACKAGES) $(CORPUS_PACKAGES) $(if $(shell command -v npm),,npm)"

# The checks need only noweb; they do not install TeX.
deps-check:
	@command -v notangle > /dev/null || $(MAKE) --no-print-directory deps

clean:
	rm -rf build book/rope.pdf

