# opcheck: model checking for Kubernetes controllers.
GO ?= go
# Where make nightly writes its JSON results and HTML report.
NIGHTLY_DIR ?= opcheck-nightly
FUZZTIME ?= 60s

.PHONY: test vet explore fuzz nightly bench view fmt

# test: what CI runs. vet, then every package's tests, then the race
# detector over the simulator (the controller host hands control between
# goroutines; -race proves the hand-off is clean; -short keeps its
# 1,000-schedule determinism test to 100 schedules under the slow detector).
test: vet
	$(GO) test -count=1 -timeout 30m ./...
	$(GO) test -count=1 -race -short ./simulator/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (echo "gofmt wants to rewrite:"; gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...

# explore: every shipped scenario with the default strategy (exhaustive) and
# bounds, one verdict per scenario. The buggy variants are meant to be
# caught, so exit status 1 (violations found) is the expected outcome here;
# 2 (a usage or harness error) fails.
explore:
	@$(GO) run ./cmd/explore check $$($(GO) run ./cmd/explore list); status=$$?; test $$status -le 1

# fuzz: each fuzz target for FUZZTIME. The buggy case studies' targets are
# expected to fail (the fuzzer finds the seed bug); the others must not.
fuzz:
	-$(GO) test -run '^$$' -fuzz '^FuzzZookeeper$$' -fuzztime $(FUZZTIME) ./targets/zookeeper
	-$(GO) test -run '^$$' -fuzz '^FuzzCasskop$$' -fuzztime $(FUZZTIME) ./targets/casskop
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./traces
	$(GO) test -run '^$$' -fuzz '^FuzzKVStore$$' -fuzztime $(FUZZTIME) ./examples/kvstore

# nightly: exhaustive exploration of every scenario with larger bounds,
# a JSON result and an HTML report in NIGHTLY_DIR; exit 1 on any violation.
nightly:
	@mkdir -p $(NIGHTLY_DIR)
	@$(GO) run ./cmd/explore check -json -crashes 2 -stale 2 -drops 1 -time 20m -out $(NIGHTLY_DIR)/traces $$($(GO) run ./cmd/explore list) > $(NIGHTLY_DIR)/results.json; status=$$?; test $$status -le 1
	$(GO) run ./cmd/explore merge -html $(NIGHTLY_DIR)/report.html $(NIGHTLY_DIR)/results.json

# bench: the benchmarks of docs/benchmarks.md.
bench:
	$(GO) test -run '^$$' -bench . -benchmem ./simulator/ ./explore/ ./properties/

# view: the viewer page of the newest trace in opcheck-out.
view:
	@trace=$$(ls -t opcheck-out/*.trace 2>/dev/null | head -n 1); \
	test -n "$$trace" || { echo "no trace in opcheck-out: run make explore first"; exit 2; }; \
	$(GO) run ./cmd/explore view $$trace

fmt:
	gofmt -w $$(git ls-files '*.go')
