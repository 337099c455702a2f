package targets

import (
	"fmt"
	"strings"

	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/targets/casskop"
	"github.com/opcheck/opcheck/targets/kuberay"
	"github.com/opcheck/opcheck/targets/zookeeper"
)

// All returns every shipped scenario, freshly built, in a fixed order:
// zookeeper buggy, upstream-fix, fixed; then casskop buggy, upstream-fix,
// fixed; then kuberay scale, lifecycle (KubeRay's own controller, unmodified).
func All() []*simulator.Scenario {
	var out []*simulator.Scenario
	for _, v := range zookeeper.Variants() {
		out = append(out, zookeeper.Scenario(v))
	}
	for _, v := range casskop.Variants() {
		out = append(out, casskop.Scenario(v))
	}
	for _, v := range kuberay.Variants() {
		out = append(out, kuberay.Scenario(v))
	}
	return out
}

// Names returns the names of All, in the same order.
func Names() []string {
	var names []string
	for _, sc := range All() {
		names = append(names, sc.Name)
	}
	return names
}

// Lookup returns the shipped scenario with the given name, e.g.
// "zookeeper/buggy". An unknown name is an error that lists the known ones.
func Lookup(name string) (*simulator.Scenario, error) {
	for _, sc := range All() {
		if sc.Name == name {
			return sc, nil
		}
	}
	return nil, fmt.Errorf("unknown scenario %q: use one of %s (see `explore list`)", name, strings.Join(Names(), ", "))
}
