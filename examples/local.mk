# examples: complete programs that `make check` builds and runs.
check_PROGRAMS += examples/swiglu
examples_swiglu_SOURCES = examples/swiglu.c
examples_swiglu_LDADD = libbk.la -lm
# Plain programs, not TAP: the generic test driver judges them by exit status.
TESTS += examples/run-swiglu.sh
EXTRA_DIST += examples/run-swiglu.sh
