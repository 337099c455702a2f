package simulator

import (
	"encoding/json"
	"hash/fnv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// jsonContentHash is the content hash as it was first written: a deep
// copy without resourceVersion and managedFields, through json.Marshal,
// into FNV-64a. contentHasher must put objects in the same classes (equal
// hashes exactly when these are equal), so the explorer's equality classes
// of states stay exactly what they were.
func jsonContentHash(t testing.TB, obj client.Object) uint64 {
	t.Helper()
	c := copyObject(obj)
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	h := fnv.New64a()
	h.Write(data)
	return h.Sum64()
}

// contentTestPod has a value in most kinds of field: strings, maps,
// slices, pointers, times, quantities, owner references.
func contentTestPod() *corev1.Pod {
	grace := int64(30)
	yes := true
	now := metav1.NewTime(testEpoch)
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace: "default", Name: "web-0", UID: "uid-1", ResourceVersion: "17", Generation: 2,
			Labels:            map[string]string{"app": "web", "tier": "<front>&"},
			Annotations:       map[string]string{"note": "a \"quoted\" value"},
			Finalizers:        []string{"example.com/hold"},
			OwnerReferences:   []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet", Name: "web", UID: "uid-0", Controller: &yes}},
			ManagedFields:     []metav1.ManagedFieldsEntry{{Manager: "kubectl", Operation: metav1.ManagedFieldsOperationUpdate}},
			CreationTimestamp: now,
		},
		Spec: corev1.PodSpec{
			NodeName:                      NodeName,
			TerminationGracePeriodSeconds: &grace,
			Containers: []corev1.Container{{Name: "c", Image: "img:1", Args: []string{"--x"},
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data-web-0"}}}},
		},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			PodIP:      "10.0.0.1",
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: now}},
		},
	}
}

var testEpoch = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// The content hash puts objects in json.Marshal's classes (of the object
// without its resourceVersion and managedFields), for typed objects
// (shallow copy), for unstructured ones (deep copy), and for every object
// the built-in actors leave in a store; and hashing leaves the object as
// it was.
func TestContentHashIsTheJSONHash(t *testing.T) {
	w, user := newActorTestWorld()
	if err := user.Create(t.Context(), testSet(3)); err != nil {
		t.Fatal(err)
	}
	settleActors(t, w, controllerFirst())
	objs := []client.Object{contentTestPod(), testSet(2), &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Thing",
		"metadata": map[string]any{"name": "t", "namespace": "default", "resourceVersion": "9"},
		"spec":     map[string]any{"size": int64(3)},
	}}}
	for _, c := range w.Store.History() {
		objs = append(objs, c.Object)
	}
	if len(objs) < 10 {
		t.Fatalf("only %d objects", len(objs))
	}
	var x explorerHooks
	classes := ContentClasses{}
	for _, obj := range objs {
		before, err := json.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		got := x.content.hash(obj)
		if again := x.content.hash(obj); again != got { // the second time through the scratch value
			t.Fatalf("%T %s: content hash %x, then %x", obj, obj.GetName(), got, again)
		}
		if err := classes.Add(obj, got, jsonContentHash(t, obj)); err != nil {
			t.Fatal(err)
		}
		after, _ := json.Marshal(obj)
		if string(before) != string(after) {
			t.Fatalf("%T %s: hashing changed the object:\n%s\n%s", obj, obj.GetName(), before, after)
		}
	}
}

// Values that differ but encode alike in JSON hash alike: the explorer
// merged the states they make, and must go on merging them.
func TestContentHashMergesWhatJSONMerges(t *testing.T) {
	var x explorerHooks
	base := contentTestPod()
	baseHash := x.content.hash(base)
	alike := map[string]func(p *corev1.Pod){
		"args nil vs empty (omitempty)":     func(p *corev1.Pod) { p.Spec.Containers[0].Command = []string{} },
		"labels map rebuilt in other order": func(p *corev1.Pod) { p.Labels = map[string]string{"tier": "<front>&", "app": "web"} },
		"annotations empty vs nil":          func(p *corev1.Pod) { p.Spec.NodeSelector = map[string]string{} },
		"quantity 1000m vs 1": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("1000m")
		},
		"time within the same second": func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(testEpoch.Add(400 * time.Millisecond)) },
		"time in another zone":        func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(testEpoch.In(time.FixedZone("x", 3600))) },
		"condition time within the second": func(p *corev1.Pod) {
			p.Status.Conditions[0].LastTransitionTime = metav1.NewTime(testEpoch.Add(time.Millisecond))
		},
		"empty ephemeral containers": func(p *corev1.Pod) { p.Spec.EphemeralContainers = []corev1.EphemeralContainer{} },
	}
	for what, change := range alike {
		p := contentTestPod()
		change(p)
		if j, bj := jsonContentHash(t, p), jsonContentHash(t, base); j != bj {
			t.Fatalf("%s: the JSON encodings differ: the case does not test what it says", what)
		}
		if h := x.content.hash(p); h != baseHash {
			t.Errorf("%s: JSON encodes it alike, but the content hash differs (%x, base %x)", what, h, baseHash)
		}
	}
	// A nil slice without omitempty is null, an empty one [].
	none, empty := contentTestPod(), contentTestPod()
	none.Spec.Containers, empty.Spec.Containers = nil, []corev1.Container{}
	if jsonContentHash(t, none) == jsonContentHash(t, empty) {
		t.Fatal("containers nil and empty encode alike: the case does not test what it says")
	}
	if x.content.hash(none) == x.content.hash(empty) {
		t.Error("containers nil (null) and empty ([]) hash alike")
	}
	// And a zero creation time (omitzero) is left out as JSON leaves it out.
	zero := contentTestPod()
	zero.CreationTimestamp = metav1.Time{}
	zero2 := contentTestPod()
	zero2.CreationTimestamp = metav1.NewTime(time.Time{})
	if x.content.hash(zero) != x.content.hash(zero2) || x.content.hash(zero) == x.content.hash(contentTestPod()) {
		t.Errorf("zero creation times: %x and %x, set: %x; want the zero ones equal and unlike the set one", x.content.hash(zero), x.content.hash(zero2), x.content.hash(contentTestPod()))
	}
}

// Every change of content changes the hash, in metadata, spec and status;
// a change of resourceVersion or managedFields alone does not.
func TestContentHashSeesEveryField(t *testing.T) {
	var x explorerHooks
	base := x.content.hash(contentTestPod())
	changes := map[string]func(p *corev1.Pod){
		"label value":          func(p *corev1.Pod) { p.Labels["app"] = "web2" },
		"label added":          func(p *corev1.Pod) { p.Labels["x"] = "" },
		"annotation":           func(p *corev1.Pod) { p.Annotations["note"] = "other" },
		"finalizer removed":    func(p *corev1.Pod) { p.Finalizers = nil },
		"owner uid":            func(p *corev1.Pod) { p.OwnerReferences[0].UID = "uid-9" },
		"owner not controller": func(p *corev1.Pod) { p.OwnerReferences[0].Controller = nil },
		"uid":                  func(p *corev1.Pod) { p.UID = types.UID("uid-2") },
		"generation":           func(p *corev1.Pod) { p.Generation = 3 },
		"deletion timestamp":   func(p *corev1.Pod) { ts := metav1.NewTime(testEpoch); p.DeletionTimestamp = &ts },
		"creation time":        func(p *corev1.Pod) { p.CreationTimestamp = metav1.NewTime(testEpoch.Add(1e9)) },
		"image":                func(p *corev1.Pod) { p.Spec.Containers[0].Image = "img:2" },
		"args emptied":         func(p *corev1.Pod) { p.Spec.Containers[0].Args = nil },
		"grace":                func(p *corev1.Pod) { g := int64(0); p.Spec.TerminationGracePeriodSeconds = &g },
		"claim":                func(p *corev1.Pod) { p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName = "other" },
		"node":                 func(p *corev1.Pod) { p.Spec.NodeName = "" },
		"phase":                func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending },
		"condition":            func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionFalse },
		"pod ip":               func(p *corev1.Pod) { p.Status.PodIP = "10.0.0.2" },
		"namespace":            func(p *corev1.Pod) { p.Namespace = "other" },
		"kind":                 func(p *corev1.Pod) { p.Kind = "" },
		"cpu request": func(p *corev1.Pod) {
			p.Spec.Containers[0].Resources.Requests[corev1.ResourceCPU] = resource.MustParse("2")
		},
	}
	seen := map[uint64]string{base: "base"}
	for what, change := range changes {
		p := contentTestPod()
		change(p)
		h := x.content.hash(p)
		if prev, dup := seen[h]; dup {
			t.Errorf("%s: hashes as %s (%x)", what, prev, h)
		}
		seen[h] = what
	}
	same := contentTestPod()
	same.ResourceVersion = "99"
	same.ManagedFields = append(same.ManagedFields, metav1.ManagedFieldsEntry{Manager: "other"})
	if h := x.content.hash(same); h != base {
		t.Errorf("resourceVersion and managedFields changed the hash: %x, want %x", h, base)
	}
	// Another type with the same field values is another content.
	sts, sts2 := testSet(2), testSet(3)
	if x.content.hash(sts) == x.content.hash(sts2) {
		t.Error("StatefulSets with 2 and 3 replicas hash the same")
	}
	if x.content.hash(sts) != x.content.hash(testSet(2)) {
		t.Error("two equal StatefulSets hash differently")
	}
}

// interfaceHolder is a custom resource with interface-typed fields,
// nil and not: the content hash takes them as encoding/json does.
type interfaceHolder struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Marshaler         json.Marshaler `json:"marshaler"`
	Any               any            `json:"any,omitempty"`
}

func (h *interfaceHolder) DeepCopyObject() runtime.Object {
	c := *h
	c.ObjectMeta = *h.ObjectMeta.DeepCopy()
	return &c
}

// Interface fields, nil or holding values that encode alike or not, are
// hashed in JSON's classes, and a nil one with a MarshalJSON method does
// not panic.
func TestContentHashOfInterfaceFields(t *testing.T) {
	q := resource.MustParse("1")
	q2 := resource.MustParse("1000m")
	objs := []*interfaceHolder{
		{},
		{Marshaler: q},
		{Marshaler: q2}, // encodes as "1" too
		{Marshaler: resource.MustParse("2")},
		{Any: int64(3)},
		{Any: float64(3)}, // encodes as 3 too
		{Any: "3"},
		{Any: map[string]any{"b": 1, "a": []any{nil, "x"}}},
	}
	var x explorerHooks
	classes := ContentClasses{}
	for i, o := range objs {
		o.Name = "h"
		if err := classes.Add(o, x.content.hash(o), jsonContentHash(t, o)); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
	}
	if x.content.hash(objs[1]) != x.content.hash(objs[2]) || x.content.hash(objs[4]) != x.content.hash(objs[5]) {
		t.Error("values that encode alike behind an interface hash differently")
	}
}

// treeNode is a recursive type, as a CRD's schema can be.
type treeNode struct {
	Name string     `json:"name"`
	Kids []treeNode `json:"kids,omitempty"`
	Next *treeNode  `json:"next,omitempty"`
}

type treeHolder struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Tree              treeNode `json:"tree"`
}

func (h *treeHolder) DeepCopyObject() runtime.Object {
	c := *h // the tests below never modify one
	return &c
}

// A recursive type compiles (its encoder refers to itself) and hashes in
// JSON's classes.
func TestContentHashOfRecursiveTypes(t *testing.T) {
	objs := []*treeHolder{
		{},
		{Tree: treeNode{Name: "a"}},
		{Tree: treeNode{Name: "a", Kids: []treeNode{}}}, // omitempty: as above
		{Tree: treeNode{Name: "a", Kids: []treeNode{{Name: "b"}}}},
		{Tree: treeNode{Name: "a", Next: &treeNode{Name: "b"}}},
		{Tree: treeNode{Name: "a", Next: &treeNode{Name: "b", Next: &treeNode{Kids: []treeNode{{Name: "c"}}}}}},
	}
	var x explorerHooks
	classes := ContentClasses{}
	for i, o := range objs {
		o.Name = "t"
		if err := classes.Add(o, x.content.hash(o), jsonContentHash(t, o)); err != nil {
			t.Fatalf("object %d: %v", i, err)
		}
	}
	if x.content.hash(objs[1]) != x.content.hash(objs[2]) {
		t.Error("an empty omitempty slice hashes unlike a nil one")
	}
}
