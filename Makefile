# opcheck: model checking for Kubernetes controllers.
GO ?= go
# Where make nightly writes its JSON results and HTML report.
NIGHTLY_DIR ?= opcheck-nightly
FUZZTIME ?= 60s
# Where the targets build the explore command. They run the built binary,
# not go run, whose exit status is 1 for every failure: explore's statuses
# (0 no violation, 1 a violation, 2 a usage or harness error) must survive.
BIN ?= bin
EXPLORE = $(BIN)/explore

.PHONY: test vet explore fuzz nightly audit bench view fmt build

# test: what CI runs. vet, then every package's tests, then the race
# detector over the simulator (the controller host hands control between
# goroutines; -race proves the hand-off is clean; -short keeps its
# 1,000-schedule determinism test to 100 schedules under the slow detector)
# and over the explorer's parallel workers (they share a frontier and a
# visited table).
test: vet
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) -C examples/kvstore test -count=1 -timeout 10m ./...
	$(GO) test -count=1 -race -short ./simulator/...
	$(GO) test -count=1 -race -short -run 'TestWorkers' ./explore/

# examples/kvstore is a module of its own (it requires opcheck through a
# replace, as a user's module would), so ./... above does not reach it.
# When opcheck's go.mod changes, run go -C examples/kvstore mod tidy.

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt wants to rewrite:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	$(GO) -C examples/kvstore vet ./...

# build: the explore command, into $(BIN).
build:
	$(GO) build -o $(EXPLORE) ./cmd/explore

# explore: every shipped scenario with the default strategy (exhaustive) and
# bounds, one verdict per scenario. The buggy variants are meant to be
# caught, so exit status 1 (violations found) is the expected outcome here;
# 2 (a usage or harness error) fails.
explore: build
	@$(EXPLORE) check $$($(EXPLORE) list); status=$$?; test $$status -le 1

# fuzz: each fuzz target for FUZZTIME. The buggy case studies' targets are
# expected to fail (the fuzzer finds the seed bug); the others must not.
fuzz:
	-$(GO) test -run '^$$' -fuzz '^FuzzZookeeper$$' -fuzztime $(FUZZTIME) ./targets/zookeeper
	-$(GO) test -run '^$$' -fuzz '^FuzzCasskop$$' -fuzztime $(FUZZTIME) ./targets/casskop
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./traces
	$(GO) -C examples/kvstore test -run '^$$' -fuzz '^FuzzKVStore$$' -fuzztime $(FUZZTIME) .

# audit: every configuration of explore's final-state audit, the long ones
# included (TestFinalStateAudit: each search with and without its pruning
# or reduction must end in the same final states; docs/explore.md).
audit:
	OPCHECK_LONG_AUDIT=1 $(GO) test -count=1 -timeout 2h -run '^TestFinalStateAudit$$' -v ./explore/

# nightly: exhaustive exploration of every scenario with larger bounds,
# a JSON result and an HTML report in NIGHTLY_DIR; exit 1 on any violation.
nightly: build
	@mkdir -p $(NIGHTLY_DIR)
	@$(EXPLORE) check -json -crashes 2 -stale 2 -drops 1 -time 20m -out $(NIGHTLY_DIR)/traces $$($(EXPLORE) list) > $(NIGHTLY_DIR)/results.json; status=$$?; test $$status -le 1
	$(EXPLORE) merge -html $(NIGHTLY_DIR)/report.html $(NIGHTLY_DIR)/results.json

# bench: the benchmarks of docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./simulator/ ./explore/ ./properties/

# view: the viewer page of the newest trace in opcheck-out.
view: build
	@trace=$$(ls -t opcheck-out/*.trace 2>/dev/null | head -n 1); \
	test -n "$$trace" || { echo "no trace in opcheck-out: run make explore first"; exit 2; }; \
	$(EXPLORE) view $$trace

fmt:
	gofmt -w $$(git ls-files '*.go')
