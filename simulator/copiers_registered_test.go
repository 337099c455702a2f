package simulator_test

import (
	"reflect"
	"testing"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"

	"github.com/opcheck/opcheck/simulator"
	_ "github.com/opcheck/opcheck/targets/kuberay" // registers RayCluster's copier
)

// TestRegisteredCopiersCopyLikeTheGeneratedMethods: the typed copiers that
// target packages register (KubeRay's RayCluster) copy as the reflective
// path does: a deep copy equal to its source sharing no memory, a status
// write's object with the request's status and the stored rest.
func TestRegisteredCopiersCopyLikeTheGeneratedMethods(t *testing.T) {
	simulator.CheckRegisteredCopiers(t, reflect.TypeFor[rayv1.RayCluster]())
}
