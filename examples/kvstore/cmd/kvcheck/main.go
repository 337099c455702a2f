// Command kvcheck is opcheck's command line for the kvstore operator: the
// verbs of cmd/explore (list, check, replay, shrink, view, merge) over
// kvstore/correct and kvstore/broken. A user's module gets its own the same
// way (docs/user-guide.md, step 9).
package main

import (
	"github.com/opcheck/opcheck/examples/kvstore"
	"github.com/opcheck/opcheck/explore"
)

func main() { explore.Main(kvstore.Scenarios()...) }
