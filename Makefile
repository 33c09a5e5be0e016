# SPDX-License-Identifier: LGPL-2.1-or-later
# node-reset: one non-recursive GNU Makefile. pkg-config for every library.

VERSION     := 0.1.0
PREFIX      ?= /usr/local
BINDIR      ?= $(PREFIX)/sbin
MANDIR      ?= $(PREFIX)/share/man
DATADIR     ?= $(PREFIX)/share/node-reset
SYSCONFDIR  ?= /etc
# Units follow the prefix (/usr/local/lib/systemd/system is in systemd's search path); only the
# distribution's own prefix takes the distribution's directory (/lib/systemd/system on Debian 12).
ifeq ($(PREFIX),/usr)
UNITDIR     ?= $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null || echo /lib/systemd/system)
else
UNITDIR     ?= $(PREFIX)/lib/systemd/system
endif
CATALOGDIR  ?= $(PREFIX)/lib/systemd/catalog
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
# zsh reads the distribution's completions from vendor-completions, a local one's from site-functions.
ifeq ($(PREFIX),/usr)
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/vendor-completions
else
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
endif
FISHCOMPDIR ?= $(PREFIX)/share/fish/vendor_completions.d
DESTDIR     ?=
O           ?= build

CC          ?= cc
CLANG       ?= clang
PKG_CONFIG  ?= pkg-config

ifeq ($(V),1)
Q :=
else
Q := @
endif
# "make -s" is silent: no "  CC ..." lines either.
ifneq ($(findstring s,$(firstword -$(MAKEFLAGS))),)
SAY := :
else
SAY := echo
endif

# The libraries whose headers each module may include; a module is compiled with its own list's
# flags only, and tests/integration/test-layers.sh fails when a file includes a library header
# outside its module's list or a module includes one it must not depend on (Debian's pkg-config
# gives empty --cflags for most of these, so the flags alone would not catch it). dlib/ forwards
# to every library; tests and fuzzers may use them all. lib/, the compiled half of include/, uses none.
AGENT_PKGS    := libsystemd yaml-0.1 libcrypto libcurl sqlite3
NETRESET_PKGS := libmnl libnftnl libip4tc libip6tc libipset libbpf
GRPC_PKGS     := libcurl
CRI_PKGS      :=
ETCD_PKGS     :=
LIB_PKGS      :=
TEST_PKGS     := cmocka
ALL_PKGS      := $(sort $(AGENT_PKGS) $(NETRESET_PKGS) $(GRPC_PKGS) $(CRI_PKGS) $(ETCD_PKGS))
DLIB_PKGS     := $(ALL_PKGS)

# pkg-config is asked when the first recipe that needs its answer runs, not when make reads this
# file: on a machine that has never built node-reset, "make deps demo" installs the libraries first
# and only then asks (a parse-time ":=" asked before deps ran and compiled without the -I flags).
# Each answer is computed once and kept. A package pkg-config does not know stops the build, naming
# it, instead of leaving its flags silently empty.
pkg_missing = $(shell for p in $(1); do $(PKG_CONFIG) --exists $$p 2>/dev/null || printf '%s ' $$p; done)
pkg_config  = $(if $(shell command -v $(PKG_CONFIG) 2>/dev/null),,$(error $(PKG_CONFIG) is not installed; run "sudo make deps"))$\
              $(if $(strip $(call pkg_missing,$(2))),$(error pkg-config ($(PKG_CONFIG)) cannot find $\
              $(strip $(call pkg_missing,$(2))); run "sudo make deps"))$(shell $(PKG_CONFIG) $(1) $(2))
pkg_once    = $(eval $(1) := $$(call pkg_config,$(2),$(3)))$($(1))
PKG_CFLAGS  = $(call pkg_once,PKG_CFLAGS,--cflags,$(ALL_PKGS))
# Every package is checked before the first compile, whatever its module: a missing one stops the
# build before anything compiles, not halfway through (pkg-config --exists prints nothing).
PKG_CHECKED = $(call pkg_once,PKG_CHECKED,--exists,$(ALL_PKGS))
# The flags of one module's list (MODULE is set per object below); an empty list has none.
MODULE_CFLAGS = $(if $(strip $($(MODULE)_PKGS)),$(call pkg_once,PKG_CFLAGS_$(MODULE),--cflags,$($(MODULE)_PKGS)))
PKG_LIBS    = $(call pkg_once,PKG_LIBS,--libs,$(ALL_PKGS))
TEST_CFLAGS = $(call pkg_once,TEST_CFLAGS,--cflags,$(TEST_PKGS))
TEST_LIBS   = $(call pkg_once,TEST_LIBS,--libs,$(TEST_PKGS))
# "make deps X" (also with -j): nothing that compiles, links or tests starts before deps is done.
DEPS_FIRST  := $(filter deps build-deps,$(MAKECMDGOALS))
# The binary links only libc: every library is opened by soname when a phase needs it (dlib/);
# pkg-config gives their headers. Test fixtures make calls the agent never makes, so tests link
# the libraries too (the agent's own calls still go through dlib/, which finds the same copy).
TEST_LINK_LIBS = -Wl,--as-needed $(PKG_LIBS) -Wl,--no-as-needed

WARNINGS := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
            -Wwrite-strings -Wformat=2 -Wimplicit-fallthrough=5 -Wno-unused-parameter
ifeq ($(WERROR),1)
WARNINGS += -Werror
endif
HARDEN_CFLAGS  := -fstack-protector-strong -D_FORTIFY_SOURCE=2
HARDEN_LDFLAGS := -Wl,-z,relro,-z,now
OPT      ?= -O2 -g
CFLAGS   ?=
LDFLAGS  ?=

BASE_CFLAGS  = -std=gnu11 $(OPT) $(WARNINGS) $(HARDEN_CFLAGS) -D_GNU_SOURCE \
               -DNODE_RESET_VERSION='"$(VERSION)"' -Iinclude -I.
# Modules' objects: their own libraries' flags. Tests and helpers: every library's.
MODULE       ?= ALL
OBJ_CFLAGS   = $(PKG_CHECKED)$(BASE_CFLAGS) $(MODULE_CFLAGS) $(CFLAGS)
ALL_CFLAGS   = $(BASE_CFLAGS) $(PKG_CFLAGS) $(CFLAGS)
ALL_LDFLAGS := $(HARDEN_LDFLAGS) $(LDFLAGS)

# agent/ is in layers (docs/ARCHITECTURE.md lists them; tests/integration/test-layers.sh holds to it).
AGENT_SRCS    := $(filter-out agent/main.c,$(wildcard agent/*/*.c agent/*/*/*.c))
NETRESET_SRCS := $(wildcard netreset/*.c)
CRI_SRCS      := $(wildcard cri/*.c)
ETCD_SRCS     := $(wildcard etcd/*.c)
GRPC_SRCS     := $(wildcard grpc/*.c)
DLIB_SRCS     := $(wildcard dlib/*.c)
# include/'s functions that are more than a line: the base every module (and every test) links.
LIB_SRCS      := $(wildcard lib/*.c)
TEST_SUPPORT_SRCS := $(wildcard tests/support/*.c)
UNIT_TESTS    := $(patsubst tests/unit/%.c,$(O)/tests/%,$(wildcard tests/unit/test-*.c))
TEST_HELPERS  := $(patsubst tests/integration/%.c,$(O)/tests/%,$(wildcard tests/integration/*.c))
BENCH_PROGS   := $(patsubst bench/%.c,$(O)/bench/%,$(wildcard bench/*.c))

AGENT_LIB    := $(O)/libagent.a
NETRESET_LIB := $(O)/libnetreset.a
CRI_LIB      := $(O)/libcri.a
ETCD_LIB     := $(O)/libetcd.a
GRPC_LIB     := $(O)/libgrpc.a
DLIB_LIB     := $(O)/libdlib.a
COMMON_LIB   := $(O)/libcommon.a
# The base last: every library before it may use it.
LIBS_A       := $(AGENT_LIB) $(NETRESET_LIB) $(CRI_LIB) $(ETCD_LIB) $(GRPC_LIB) $(DLIB_LIB) $(COMMON_LIB)
# Code only the tests link: calls the agent must never make (creating pods), fixtures.
TEST_SUPPORT_LIB := $(O)/libtestsupport.a

objs = $(patsubst %.c,$(O)/%.o,$(1))

.PHONY: all completions check check-fast check-repo check-fleet check-unit check-integration check-fuzz check-asan check-valgrind \
        check-all fuzz analyze tidy cppcheck format-check install uninstall clean deps build-deps demo bench e2e-vm e2e-k8s

all: $(O)/node-reset

$(O)/%.o: %.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	@$(if $(Q),$(SAY) "  CC      $<")
	$(Q)$(CC) $(OBJ_CFLAGS) -MMD -MP -c -o $@ $<

$(call objs,$(AGENT_SRCS) agent/main.c): MODULE := AGENT
$(call objs,$(NETRESET_SRCS)): MODULE := NETRESET
$(call objs,$(CRI_SRCS)): MODULE := CRI
$(call objs,$(ETCD_SRCS)): MODULE := ETCD
$(call objs,$(GRPC_SRCS)): MODULE := GRPC
$(call objs,$(DLIB_SRCS)): MODULE := DLIB
$(call objs,$(LIB_SRCS)): MODULE := LIB

# The default manifest is embedded so that a copied binary works alone in a rescue shell.
$(O)/agent/config/embedded.o: manifests/default.conf
# So are the profiles (include profile:NAME, --profile).
$(O)/agent/config/profile-data.o: $(wildcard manifests/profiles/*.conf)

$(AGENT_LIB): $(call objs,$(AGENT_SRCS))
$(NETRESET_LIB): $(call objs,$(NETRESET_SRCS))
$(CRI_LIB): $(call objs,$(CRI_SRCS))
$(ETCD_LIB): $(call objs,$(ETCD_SRCS))
$(GRPC_LIB): $(call objs,$(GRPC_SRCS))
$(DLIB_LIB): $(call objs,$(DLIB_SRCS))
$(COMMON_LIB): $(call objs,$(LIB_SRCS))
$(TEST_SUPPORT_LIB): $(call objs,$(TEST_SUPPORT_SRCS))
$(O)/%.a:
	@mkdir -p $(dir $@)
	$(Q)rm -f $@ && ar rcs $@ $^

$(O)/node-reset: $(O)/agent/main.o $(LIBS_A)
	@$(if $(Q),$(SAY) "  LD      $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^

$(O)/tests/%: tests/unit/%.c $(TEST_SUPPORT_LIB) $(LIBS_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),$(SAY) "  TEST    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(TEST_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(TEST_SUPPORT_LIB) $(LIBS_A) $(TEST_LINK_LIBS) $(TEST_LIBS)

$(O)/tests/%: tests/integration/%.c $(TEST_SUPPORT_LIB) $(LIBS_A)
	@mkdir -p $(dir $@)
	@$(if $(Q),$(SAY) "  HELPER  $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(TEST_SUPPORT_LIB) $(LIBS_A) $(TEST_LINK_LIBS)

# Unit tests, integration tests (root, private namespaces) and the fuzz corpus replay; the runner
# prints the closing "N passed, N failed" line.
# check builds the bench programs too (it does not run them): a change that breaks their link shows
# at once, not first on a fresh clone's "make bench".
check: $(O)/node-reset $(UNIT_TESTS) $(TEST_HELPERS) $(BENCH_PROGS)
	$(Q)O=$(O) CLANG=$(CLANG) NR_SANITIZER_RUN=$(NR_SANITIZER_RUN) tests/run-tests.sh

check-unit: $(UNIT_TESTS)
	$(Q)O=$(O) tests/run-tests.sh unit

# The tiers of check: check-fast for the edit-compile-test loop (unit tests and the plan-only and
# --root phase tests, under two minutes), check-repo for the repository itself (format, layers,
# man pages and docs, package, install, make deps); tests/run-tests.sh lists which test is in which.
check-fast: $(O)/node-reset $(UNIT_TESTS) $(TEST_HELPERS)
	$(Q)O=$(O) tests/run-tests.sh fast

check-repo: $(O)/node-reset
	$(Q)O=$(O) tests/run-tests.sh repo

# The fleet tier: examples/ansible over SSH against 100 lab nodes (tests/lab/), failures included;
# about 5 minutes on 2 idle cores, not part of check (CI runs it as a step of its own).
check-fleet: $(O)/node-reset
	$(Q)O=$(O) tests/run-tests.sh fleet

check-asan:
	$(Q)$(MAKE) --no-print-directory O=$(O)-asan OPT="-O1 -g -fno-omit-frame-pointer" \
		CFLAGS="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
		LDFLAGS="-fsanitize=address,undefined" HARDEN_CFLAGS= NR_SANITIZER_RUN=1 check

check-valgrind: $(UNIT_TESTS)
	$(Q)O=$(O) VALGRIND=1 tests/run-tests.sh unit

check-all: check check-asan check-valgrind

# libFuzzer targets: clang only. "make fuzz FUZZ_SECONDS=60" runs each for that long.
FUZZ_SECONDS ?= 30
FUZZ_TARGETS := $(patsubst tests/fuzz/%.c,$(O)/fuzz/%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_CFLAGS   = -std=gnu11 -g -O1 -D_GNU_SOURCE -DNODE_RESET_VERSION='"$(VERSION)"' -Iinclude -I. $(PKG_CFLAGS) -fsanitize=fuzzer,address,undefined
FUZZ_SRCS_fileio    := agent/os/fileio.c agent/os/remote-fs.c agent/os/mountinfo.c
FUZZ_SRCS_manifest  := agent/config/manifest.c agent/config/installers.c agent/config/cnis.c agent/config/manifest-directives.c $(FUZZ_SRCS_fileio) agent/base/path.c agent/config/profile.c \
                       agent/config/profile-data.c agent/config/embedded.c netreset/route.c netreset/fib-rule.c netreset/nl.c \
                       netreset/conntrack.c
FUZZ_SRCS_mountinfo := agent/os/mountinfo.c
# The YAML loader asks dlib/ whether libyaml loads before it parses.
FUZZ_SRCS_yaml      := agent/config/yaml-util.c $(DLIB_SRCS)
FUZZ_SRCS_kubeconfig := agent/config/kubeconfig.c $(FUZZ_SRCS_yaml) $(FUZZ_SRCS_fileio)
FUZZ_SRCS_kubeconfig-prune := agent/phases/files/files-kubeconfig-prune.c agent/config/kubeconfig-entries.c $(FUZZ_SRCS_kubeconfig)
FUZZ_SRCS_grpc      := $(GRPC_SRCS)
FUZZ_SRCS_cri       := cri/messages.c $(FUZZ_SRCS_grpc)
FUZZ_SRCS_etcd      := etcd/messages.c $(FUZZ_SRCS_grpc)
FUZZ_SRCS_textblock := agent/phases/files/files-textblock.c
FUZZ_SRCS_envfile   := agent/config/envfile.c agent/config/unit-file.c $(FUZZ_SRCS_fileio)
FUZZ_SRCS_etcdflags := agent/config/etcd-flags.c agent/config/envfile.c $(FUZZ_SRCS_yaml)
FUZZ_SRCS_cniconf   := agent/config/cni-conf.c agent/base/json.c
# The API clients' parsers live beside their calls: the HTTP client (libcurl, loaded through dlib/,
# which brings every library's loader table) and what kube-api.c's credentials need come along.
FUZZ_SRCS_http      := agent/base/http.c agent/base/log.c grpc/curl.c $(DLIB_SRCS)
FUZZ_SRCS_docker    := agent/os/docker-api.c agent/base/json.c $(FUZZ_SRCS_fileio) $(FUZZ_SRCS_http)
FUZZ_SRCS_kubeapi   := agent/phases/drain/drain-pods.c agent/forget/forget-kubeadm.c agent/forget/forget-node.c \
                       agent/kube/kube-api.c agent/config/rancher-datadir.c agent/config/installers.c \
                       agent/config/envfile.c agent/config/unit-file.c agent/base/path.c \
                       agent/config/kubeconfig.c agent/config/node-name.c agent/config/yaml-util.c agent/base/json.c \
                       $(FUZZ_SRCS_fileio) $(FUZZ_SRCS_http)
FUZZ_SRCS_clusterstatus := $(FUZZ_SRCS_kubeapi)
# The base, built once with the fuzzers' instrumentation, and linked by every target.
FUZZ_COMMON_LIB := $(O)/fuzz/libcommon.a
$(O)/fuzz/lib/%.o: lib/%.c | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -c -o $@ $<
$(FUZZ_COMMON_LIB): $(patsubst lib/%.c,$(O)/fuzz/lib/%.o,$(LIB_SRCS))
$(O)/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_SRCS_manifest) $(FUZZ_SRCS_mountinfo) $(FUZZ_SRCS_kubeconfig) \
		$(FUZZ_SRCS_cri) $(FUZZ_SRCS_etcd) $(FUZZ_SRCS_textblock) $(FUZZ_SRCS_envfile) $(FUZZ_SRCS_cniconf) \
		$(FUZZ_SRCS_etcdflags) $(FUZZ_SRCS_docker) $(FUZZ_SRCS_kubeapi) $(FUZZ_SRCS_kubeconfig-prune) \
		$(FUZZ_COMMON_LIB) | $(DEPS_FIRST)
	@mkdir -p $(dir $@)
	$(Q)$(CLANG) $(FUZZ_CFLAGS) -o $@ $< $(FUZZ_SRCS_$*) $(FUZZ_COMMON_LIB) $(PKG_LIBS)

fuzz-build: $(FUZZ_TARGETS)
fuzz: $(FUZZ_TARGETS)
	$(Q)for t in $(FUZZ_TARGETS); do n=$$(basename $$t); mkdir -p $(O)/fuzz/corpus-$$n; \
		$$t -max_total_time=$(FUZZ_SECONDS) $(O)/fuzz/corpus-$$n tests/fuzz/corpus/$$n || exit 1; done

# A synthetic node in a private mount namespace: plan, run, status, and the volume's data survives.
demo: $(O)/node-reset
	$(Q)O=$(O) tests/demo.sh

# The acceptance test: a Debian 12 worker booted under QEMU (TCG) is reset end to end. Needs root;
# the guest image is built once, offline, into /var/cache/node-reset-e2e (keyed on
# tests/e2e/build-image.sh) from the packages "make deps" downloaded there.
e2e-vm: $(O)/node-reset
	$(Q)O=$(O) tests/e2e/run.sh

# Real Kubernetes 1.20 (kubeadm, kubelet, containerd) in systemd-nspawn nodes: a worker built by
# kubeadm is reset and joins again. Needs root and the build "make deps" caches in
# /var/cache/node-reset-k8s (tools/k8s-build.sh).
e2e-k8s: $(O)/node-reset $(O)/bench/cri-floor
	$(Q)O=$(O) tests/e2e-k8s/run.sh

deps:
	$(Q)tools/install-deps.sh

# Only what building the agent and "make demo" need (the README's first command).
build-deps:
	$(Q)tools/install-deps.sh --build

# Targets whose recipe runs a build or a test without a compile of this make's own before it.
check check-fast check-repo check-fleet check-unit check-asan check-valgrind demo e2e-vm e2e-k8s bench analyze tidy \
	fuzz fuzz-build: | $(DEPS_FIRST)

# The benches' floor helpers: plain programs linking what they use (they are not the agent).
$(O)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),$(SAY) "  BENCH   $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(shell $(PKG_CONFIG) --libs libnftnl libmnl)

# The runtime's floor for the pods phase: the project's CRI client and nothing else (libcurl is loaded
# through dlib, as the agent loads it).
$(O)/bench/cri-floor: bench/cri-floor.c $(CRI_LIB) $(GRPC_LIB) $(DLIB_LIB) $(COMMON_LIB)
	@mkdir -p $(dir $@)
	@$(if $(Q),$(SAY) "  BENCH   $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $< $(CRI_LIB) $(GRPC_LIB) $(DLIB_LIB) $(COMMON_LIB) $(TEST_LINK_LIBS)

# bench/pods.sh drives containerd through tests/integration/cri-helper: built here too, so that a
# fresh clone's "make bench" needs no "make check" first.
bench: $(O)/node-reset $(BENCH_PROGS) $(TEST_HELPERS)
	$(Q)for b in bench/*.sh; do O=$(O) $$b || exit 1; done

analyze:
	$(Q)$(MAKE) --no-print-directory O=$(O)-analyze CC="gcc -fanalyzer" all

tidy:
	$(Q)clang-tidy --quiet $(AGENT_SRCS) agent/main.c $(NETRESET_SRCS) $(CRI_SRCS) $(ETCD_SRCS) $(GRPC_SRCS) $(DLIB_SRCS) $(LIB_SRCS) -- $(ALL_CFLAGS)

cppcheck:
	$(Q)cppcheck --quiet --error-exitcode=1 --enable=warning,portability --inline-suppr \
		-D_GNU_SOURCE -Iinclude -I. agent netreset cri etcd grpc dlib lib

# Every module's sources and headers (tests/integration/test-format.sh runs this in "make check").
FORMAT_SRCS = $(sort $(wildcard agent/*.c agent/*/*.[ch] agent/*/*/*.[ch] netreset/*.[ch] cri/*.[ch] etcd/*.[ch] grpc/*.[ch] \
		dlib/*.[ch] include/*.h lib/*.c bench/*.c))
format-check:
	$(Q)clang-format --dry-run --Werror $(FORMAT_SRCS)

install: $(O)/node-reset
	install -D -m 0755 $(O)/node-reset $(DESTDIR)$(BINDIR)/node-reset
	install -D -m 0644 docs/node-reset.8 $(DESTDIR)$(MANDIR)/man8/node-reset.8
	install -D -m 0644 docs/node-reset.conf.5 $(DESTDIR)$(MANDIR)/man5/node-reset.conf.5
	install -d $(DESTDIR)$(DATADIR)/manifests
	install -m 0644 manifests/*.conf $(DESTDIR)$(DATADIR)/manifests/
	install -m 0644 docs/report.schema.json $(DESTDIR)$(DATADIR)/
	install -D -m 0644 docs/node-reset.catalog $(DESTDIR)$(CATALOGDIR)/node-reset.catalog
	install -d $(DESTDIR)$(DATADIR)/manifests/profiles
	install -m 0644 manifests/profiles/*.conf $(DESTDIR)$(DATADIR)/manifests/profiles/
	install -D -m 0644 shell-completion/bash/node-reset $(DESTDIR)$(BASHCOMPDIR)/node-reset
	install -D -m 0644 shell-completion/zsh/_node-reset $(DESTDIR)$(ZSHCOMPDIR)/_node-reset
	install -D -m 0644 shell-completion/fish/node-reset.fish $(DESTDIR)$(FISHCOMPDIR)/node-reset.fish
	$(if $(wildcard units/*),install -d $(DESTDIR)$(UNITDIR) && install -m 0644 units/* $(DESTDIR)$(UNITDIR)/)

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/node-reset $(DESTDIR)$(MANDIR)/man8/node-reset.8 $(DESTDIR)$(MANDIR)/man5/node-reset.conf.5
	rm -rf $(DESTDIR)$(DATADIR)
	rm -f $(DESTDIR)$(BASHCOMPDIR)/node-reset $(DESTDIR)$(CATALOGDIR)/node-reset.catalog
	rm -f $(DESTDIR)$(ZSHCOMPDIR)/_node-reset $(DESTDIR)$(FISHCOMPDIR)/node-reset.fish
	$(if $(wildcard units/*),cd $(DESTDIR)$(UNITDIR) && rm -f $(notdir $(wildcard units/*)))

# The completion scripts are the binary's output ("node-reset completion SHELL", from its option
# tables), kept in shell-completion/ so that the package and a review see them: "make completions"
# writes them again after a change to a table; test-deb.sh fails while they differ.
completions: $(O)/node-reset
	$(Q)$(O)/node-reset completion bash > shell-completion/bash/node-reset
	$(Q)$(O)/node-reset completion zsh > shell-completion/zsh/_node-reset
	$(Q)$(O)/node-reset completion fish > shell-completion/fish/node-reset.fish

# "make -s print-AGENT_PKGS": a variable's value, for the tests that check the Makefile's lists.
print-%:
	@echo $($*)

clean:
	rm -rf $(O) $(O)-asan $(O)-analyze

-include $(shell find $(O) -name '*.d' 2>/dev/null)
