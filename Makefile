# opcheck: model checking for Kubernetes controllers.
GO ?= go

.PHONY: test vet race explore bench fmt

# test: what CI runs. vet, then every package's tests, then the race
# detector over the simulator (the controller host hands control between
# goroutines; -race proves the hand-off is clean).
test: vet
	$(GO) test -count=1 ./...
	$(GO) test -count=1 -race ./simulator/...

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || (echo "gofmt wants to rewrite:"; gofmt -l .; exit 1)
	$(GO) vet ./...

# explore: explore every shipped scenario with default bounds, print verdicts.
explore:
	$(GO) run ./cmd/explore check $$($(GO) run ./cmd/explore list)

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./simulator/

fmt:
	gofmt -w $$(git ls-files '*.go')
