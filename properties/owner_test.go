package properties

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"

	"github.com/opcheck/opcheck/model"
)

func ownedSts(name string, owner *corev1.ConfigMap, controller bool) *appsv1.StatefulSet {
	st := sts(name, 1)
	st.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID, Controller: &controller}}
	return st
}

// Delete and re-create under the same name: the old instance's StatefulSet
// names the owner by kind and name like the new one's, but only the UID
// tells them apart. The issue-12 regression: by name, the old instance's
// objects passed for the new instance's members.
func TestOwnedByJudgesPerInstance(t *testing.T) {
	old := cr("zk", 3)
	old.UID = types.UID("uid-old")
	cur := cr("zk", 1)
	cur.UID = types.UID("uid-new")

	var b builder
	b.create(model.ActorUser, "ConfigMap", old)
	b.create(ctrl, "StatefulSet", ownedSts("zk-old", old, true))
	b.remove(model.ActorUser, "ConfigMap", old)
	b.create(model.ActorUser, "ConfigMap", cur)
	b.create(ctrl, "StatefulSet", ownedSts("zk-new", cur, true))
	b.create(ctrl, "StatefulSet", ownedSts("zk-side", cur, false))
	s := Replay(&b.h, -1)

	byName := 0
	for _, st := range List[*appsv1.StatefulSet](s, ns, nil) {
		if ref := metav1.GetControllerOf(st); ref != nil && ref.Name == "zk" {
			byName++
		}
	}
	require.Equal(t, 2, byName, "by name, both instances' StatefulSets look owned")

	crNow, ok := Get[*corev1.ConfigMap](s, ns, "zk")
	require.True(t, ok)
	var got []string
	for _, st := range ListOwned[*appsv1.StatefulSet](s, crNow) {
		got = append(got, st.Name)
	}
	require.Equal(t, []string{"zk-new", "zk-side"}, got)

	oldSts, _ := Get[*appsv1.StatefulSet](s, ns, "zk-old")
	newSts, _ := Get[*appsv1.StatefulSet](s, ns, "zk-new")
	side, _ := Get[*appsv1.StatefulSet](s, ns, "zk-side")
	require.False(t, OwnedBy(oldSts, crNow))
	require.True(t, OwnedBy(oldSts, old))
	require.True(t, ControlledBy(newSts, crNow))
	require.False(t, ControlledBy(side, crNow), "an owner reference without controller: true is not the controller")
	require.True(t, OwnedBy(side, crNow))
	require.False(t, OwnedBy(newSts, cr("zk", 1)), "an owner without a UID owns nothing")
	require.False(t, OwnedBy(nil, crNow))
}

// Looking objects up by Go type cannot misspell a kind; a Kind string or a
// type the scheme does not know panics with what to do, instead of the
// lookup coming back empty and the property holding vacuously. The issue-12
// regression: State.List("Pdo", ...) returned nothing, silently.
func TestStateLookupFailsLoudlyOnUnknownKind(t *testing.T) {
	var b builder
	b.create(model.ActorUser, "Pod", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "zk-0", Namespace: ns}})
	b.create(model.ActorUser, "ConfigMap", cr("zk", 1))

	checked := NewState().UseScheme(clientgoscheme.Scheme)
	for i := range b.h.Events {
		checked.Apply(&b.h.Events[i])
	}
	pods := List[*corev1.Pod](checked, ns, nil)
	require.Len(t, pods, 1)
	require.Equal(t, "zk-0", pods[0].Name)
	p, ok := Get[*corev1.Pod](checked, ns, "zk-0")
	require.True(t, ok)
	require.Equal(t, "zk-0", p.Name)
	_, ok = Get[*corev1.Pod](checked, ns, "zk-9")
	require.False(t, ok)
	require.Len(t, checked.List("Pod", ns, nil), 1)
	require.Empty(t, checked.List("Secret", ns, nil), "a known kind with no objects is simply empty")

	require.PanicsWithValue(t, `properties: unknown kind "pod" (did you mean Pod?): no type of that kind is registered in the scenario's scheme, so a lookup would always come back empty. Kinds are case-sensitive and singular, e.g. "Pod"; look objects up by Go type instead: properties.Get[*corev1.Pod](s, namespace, name)`,
		func() { checked.List("pod", ns, nil) })
	require.Panics(t, func() { checked.Get("Pdo", ns, "zk-0") })
	type Unregistered struct{ corev1.ConfigMap }
	require.PanicsWithValue(t, "properties: type *properties.Unregistered is not registered in the scenario's scheme, so no object of it can be in the store; register it (its AddToScheme) or look up the type you meant",
		func() { List[*Unregistered](checked, ns, nil) })
	require.Panics(t, func() { List[runtime.Object](checked, ns, nil) })

	// Without a scheme (a history read back from a trace) the Go type's
	// name is its Kind.
	plain := Replay(&b.h, -1)
	cm, ok := Get[*corev1.ConfigMap](plain, ns, "zk")
	require.True(t, ok)
	require.Equal(t, "zk", cm.Name)
}
