package properties

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestUseSchemeFollowsTheScheme: the kind set UseScheme checks against is
// built once per scheme and shared, and built again once the scheme has
// registered more types.
func TestUseSchemeFollowsTheScheme(t *testing.T) {
	s := runtime.NewScheme()
	s.AddKnownTypes(schema.GroupVersion{Version: "v1"}, &corev1.Pod{}, &corev1.PodList{})
	require.Panics(t, func() { NewState().UseScheme(s).Get("ConfigMap", "ns", "x") }, "a kind the scheme lacks")
	_, ok := NewState().UseScheme(s).Get("Pod", "ns", "x")
	require.False(t, ok)
	s.AddKnownTypes(schema.GroupVersion{Version: "v1"}, &corev1.ConfigMap{}, &corev1.ConfigMapList{})
	require.NotPanics(t, func() { NewState().UseScheme(s).Get("ConfigMap", "ns", "x") }, "a kind registered since the set was built")
}
