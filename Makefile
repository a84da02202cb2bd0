# kmmscand: build, boot and test harness. `make help` lists the targets.
# Kernel code lives at its in-tree paths (mm/, include/, Documentation/,
# tools/); edits to existing upstream files are in patches/; the machinery
# that assembles, builds and boots it is in harness/.

SHELL := /bin/bash
H := harness

PROG ?=
NAME ?=
ARGS ?=
FILES ?=
export FILES NODE0_MB NODE1_MB DIMM1_MB CPUS ACCEL VM_TIMEOUT APPEND MM_SET HOSTFS

.PHONY: help kernel assemble test test-mm demo smoke vm-run vm-shell series series-lint series-check config-variants clean distclean

help: ## Show this help
	@$(H)/help.sh $(MAKEFILE_LIST)
	@echo
	@echo "VM variables: NODE0_MB=1024 NODE1_MB=1024 DIMM1_MB=256 CPUS=2 ACCEL=tcg|kvm VM_TIMEOUT=<s> APPEND=<cmdline>"
	@echo "test-mm:      make test-mm [MM_SET=full|ci]   (CPUS defaults to 3 there)"
	@echo "smoke:        make smoke NAME=<name> [ARGS=\"...\"]   (make smoke: the names)"
	@echo "vm-run:       make vm-run PROG=<program or script> [ARGS=\"...\"] [FILES=\"...\"] [HOSTFS=0|1|auto]"
	@echo "vm-shell:     make vm-shell [HOSTFS=1|0] [FILES=\"...\"]   (interactive; needs a terminal)"

assemble: ## Assemble build/linux = Debian linux-source-6.12 + overlay + patches
	@$(H)/assemble.sh

kernel: ## Assemble, configure (tinyconfig + fragment) and build the kernel
	@$(H)/build-kernel.sh

# Host-side checks of the other parts of the repo that `make test` runs
# and counts: each prints "ok NAME" / "not ok NAME: why" lines.
HOST_CHECKS := bench/test-report.sh

test: ## Build everything, run checkpatch, KUnit and kselftests in the VM
	@HOST_CHECKS="$(HOST_CHECKS)" $(H)/test.sh

test-mm: ## Upstream mm selftests, kmmscand off vs promoting their memory (MM_SET=full|ci)
	@$(H)/test-mm.sh

demo: ## Boot the VM and watch kmmscand promote a hot set from node 1 to node 0
	@$(H)/demo.sh

smoke: ## Run one measurement of smoke/ (NAME=<name> [ARGS="..."]; no NAME: the list)
	@smoke/smoke.sh "$(NAME)" $(ARGS)

vm-run: ## Run PROG (binary or script; host programs via HOSTFS) with ARGS in the two-tier VM
	@$(H)/build-kernel.sh >&2
	@$(H)/vm-run.sh "$(PROG)" $(ARGS); rc=$$?; \
	 [ $$rc -eq 0 ] || echo "vm-run: exit status $$rc (make itself exits 2; harness/vm-run.sh returns $$rc unchanged)" >&2; \
	 exit $$rc

vm-shell: ## Interactive shell in the two-tier VM (the host's userland; HOSTFS=0: busybox)
	@$(H)/build-kernel.sh >&2
	@$(H)/vm-shell.sh

series: ## Write the git format-patch series + cover letter to build/series/
	@$(H)/assemble.sh >/dev/null
	@python3 $(H)/series.py export build/series

series-check: ## git am the series on pristine 6.12, build after each patch, lint
	@$(H)/series-check.sh

series-lint: ## series-check without the builds: git am, checkpatch per patch, kernel-doc, selftests build
	@SERIES_BUILD=0 $(H)/series-check.sh

clean: ## Remove kernel build output (keeps the unpacked source)
	rm -rf build/kbuild build/kbuild-* build/test build/test-mm build/vm-run build/demo build/smoke

distclean: ## Remove everything under build/
	rm -rf build

-include bench/bench.mk

test-debug: ## KASAN/lockdep/DEBUG_VM kernel + stress + fault injection
	@$(H)/test-debug.sh

config-variants: ## MEMCG=n + THP=n kernel: build, boot, promotion tests
	@$(H)/config-variants.sh
