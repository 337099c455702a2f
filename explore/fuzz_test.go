package explore

import (
	"testing"

	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// The fuzz targets check the fixed variants, which must not violate any
// property under any schedule. Plain `go test` runs only the seed corpus;
// `go test -fuzz FuzzZookeeperFixed ./explore/` searches.

func FuzzZookeeperFixed(f *testing.F) { Fuzz(f, zookeeper.Scenario(zookeeper.Fixed)) }

func FuzzCasskopUpstreamFix(f *testing.F) { Fuzz(f, casskop.Scenario(casskop.UpstreamFix)) }
