package simulator

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// handCopied is a custom resource whose type has DeepCopyObject but no
// generated DeepCopyInto, on itself or its status: reads and status writes
// of it take the generic path.
type handCopied struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              handCopiedPart `json:"spec,omitempty"`
	Status            handCopiedPart `json:"status,omitempty"`
}

type handCopiedPart struct {
	Items []string `json:"items,omitempty"`
}

func (h *handCopied) DeepCopyObject() runtime.Object {
	out := *h
	h.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Items = append([]string(nil), h.Spec.Items...)
	out.Status.Items = append([]string(nil), h.Status.Items...)
	return &out
}

type handCopiedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []handCopied `json:"items"`
}

func (l *handCopiedList) DeepCopyObject() runtime.Object {
	out := &handCopiedList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	for i := range l.Items {
		out.Items = append(out.Items, *l.Items[i].DeepCopyObject().(*handCopied))
	}
	return out
}

// TestReadsAndWriteBacksAreTheCallersOwn: whatever a client call leaves in
// the caller's object (a Get, a List's items, the stored result copied back
// after Update and status Update) shares nothing with the store: mutating
// it, down to nested maps and slices, changes no stored object. Both copy
// paths are covered: a kind with a generated DeepCopyInto (Pod) and one
// without (handCopied).
func TestReadsAndWriteBacksAreTheCallersOwn(t *testing.T) {
	gv := schema.GroupVersion{Group: "test.opcheck.io", Version: "v1"}
	s := testScheme()
	s.AddKnownTypes(gv, &handCopied{}, &handCopiedList{})
	c := NewCluster(s, ClusterOptions{})
	cl := c.Client("user", 1, false)
	ctx := context.Background()

	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", Labels: map[string]string{"app": "a"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	hc := &handCopied{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "h", Labels: map[string]string{"app": "a"}},
		Spec: handCopiedPart{Items: []string{"spec"}}}
	for _, obj := range []client.Object{pod, hc} {
		if err := cl.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	// A status write: the request's status must be copied, not kept (the
	// caller may hold on to what it put there).
	items := []string{"status"}
	hc.Status.Items = items
	if err := cl.Status().Update(ctx, hc); err != nil {
		t.Fatal(err)
	}
	items[0] = "scribbled by the caller after UpdateStatus"
	conditions := []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
	pod.Status.Conditions = conditions
	if err := cl.Status().Update(ctx, pod); err != nil {
		t.Fatal(err)
	}
	conditions[0].Status = corev1.ConditionFalse

	snapshot := func() (*corev1.Pod, *handCopied) {
		pk, _ := c.Store.kinds.forObject(pod)
		hk, _ := c.Store.kinds.forObject(hc)
		p, _ := c.Store.peek(pk, "default/p")
		h, _ := c.Store.peek(hk, "default/h")
		return p.(*corev1.Pod).DeepCopy(), h.DeepCopyObject().(*handCopied)
	}
	wantPod, wantHC := snapshot()
	if got := wantHC.Status.Items; len(got) != 1 || got[0] != "status" {
		t.Fatalf("stored status items = %q, want [status]: the status update kept the caller's slice", got)
	}
	if got := wantPod.Status.Conditions; len(got) != 1 || got[0].Status != corev1.ConditionTrue {
		t.Fatalf("stored pod conditions = %v, want one Ready=True: the status update kept the caller's slice", got)
	}

	scribblePod := func(p *corev1.Pod) {
		p.Labels["app"] = "scribbled"
		p.Spec.Containers[0].Image = "scribbled"
		if len(p.Status.Conditions) > 0 {
			p.Status.Conditions[0].Type = "Scribbled"
		}
	}
	scribbleHC := func(h *handCopied) {
		h.Labels["app"] = "scribbled"
		h.Spec.Items[0] = "scribbled"
		h.Status.Items[0] = "scribbled"
	}
	var gotPod corev1.Pod
	var gotHC handCopied
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), &gotPod); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(hc), &gotHC); err != nil {
		t.Fatal(err)
	}
	scribblePod(&gotPod)
	scribbleHC(&gotHC)
	var pods corev1.PodList
	var hcs handCopiedList
	if err := cl.List(ctx, &pods, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	if err := cl.List(ctx, &hcs, client.InNamespace("default")); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || len(hcs.Items) != 1 {
		t.Fatalf("listed %d pods and %d handCopied, want 1 and 1", len(pods.Items), len(hcs.Items))
	}
	if pods.Items[0].APIVersion != "" || pods.Items[0].Kind != "" {
		t.Fatalf("a listed pod from an apiserver has apiVersion/kind %q/%q, want them empty", pods.Items[0].APIVersion, pods.Items[0].Kind)
	}
	scribblePod(&pods.Items[0])
	scribbleHC(&hcs.Items[0])
	// A write-back: Update copies the stored result into the caller's
	// object, which the caller then owns.
	for _, obj := range []client.Object{&gotPod, &gotHC} {
		if err := cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			t.Fatal(err)
		}
		obj.SetAnnotations(map[string]string{"touched": "yes"})
		if err := cl.Update(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	wantPod, wantHC = snapshot()
	scribblePod(&gotPod)
	scribbleHC(&gotHC)
	gotPod.Annotations["touched"] = "scribbled"
	gotHC.Annotations["touched"] = "scribbled"

	// A main-resource update: the stored spec is a copy of the request's
	// (the caller may keep what it put there), and the stored status stays
	// (both kinds have a status subresource).
	var upPod corev1.Pod
	var upHC handCopied
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), &upPod); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(hc), &upHC); err != nil {
		t.Fatal(err)
	}
	containers := []corev1.Container{{Name: "c", Image: "i2"}}
	upPod.Spec.Containers, upPod.Status.Conditions = containers, nil
	specItems := []string{"spec2"}
	upHC.Spec.Items, upHC.Status.Items = specItems, []string{"request status"}
	if err := cl.Update(ctx, &upPod); err != nil {
		t.Fatal(err)
	}
	if err := cl.Update(ctx, &upHC); err != nil {
		t.Fatal(err)
	}
	containers[0].Image = "scribbled"
	specItems[0] = "scribbled"
	p, h := snapshot()
	if p.Spec.Containers[0].Image != "i2" || len(p.Status.Conditions) != 1 {
		t.Errorf("after an update the stored pod has image %q and conditions %v, want i2 and the stored Ready condition", p.Spec.Containers[0].Image, p.Status.Conditions)
	}
	if h.Spec.Items[0] != "spec2" || len(h.Status.Items) != 1 || h.Status.Items[0] != "status" {
		t.Errorf("after an update the stored handCopied has spec %q and status %q, want [spec2] and [status]", h.Spec.Items, h.Status.Items)
	}
	wantPod, wantHC = p, h

	p, h = snapshot()
	if p.Labels["app"] != "a" || p.Spec.Containers[0].Image != "i2" || p.Status.Conditions[0].Type != corev1.PodReady || p.Annotations["touched"] != "yes" {
		t.Errorf("the stored pod changed when the caller scribbled on what it read: %+v", p)
	}
	if h.Labels["app"] != "a" || h.Spec.Items[0] != "spec2" || h.Status.Items[0] != "status" || h.Annotations["touched"] != "yes" {
		t.Errorf("the stored handCopied changed when the caller scribbled on what it read: %+v", h)
	}
	if p.ResourceVersion != wantPod.ResourceVersion || h.ResourceVersion != wantHC.ResourceVersion {
		t.Errorf("resourceVersions moved without a write: pod %s -> %s, handCopied %s -> %s", wantPod.ResourceVersion, p.ResourceVersion, wantHC.ResourceVersion, h.ResourceVersion)
	}
}

// TestSharedSchemeTablesFollowTheScheme: the RESTMapper is shared by every
// cluster over the same scheme and cluster-scoped kinds, and rebuilt when
// the scheme has registered more types since, or for another scope.
func TestSharedSchemeTablesFollowTheScheme(t *testing.T) {
	s := testScheme()
	gk := schema.GroupKind{Group: "test.opcheck.io", Kind: "handCopied"}
	first := NewCluster(s, ClusterOptions{}).Store.kinds.restMapper()
	if again := NewCluster(s, ClusterOptions{}).Store.kinds.restMapper(); again != first {
		t.Fatal("two clusters over the same scheme built two RESTMappers")
	}
	if _, err := first.RESTMapping(gk); err == nil {
		t.Fatal("the RESTMapper maps a kind the scheme does not register")
	}
	s.AddKnownTypes(schema.GroupVersion{Group: gk.Group, Version: "v1"}, &handCopied{}, &handCopiedList{})
	grown := NewCluster(s, ClusterOptions{}).Store.kinds.restMapper()
	m, err := grown.RESTMapping(gk)
	if err != nil {
		t.Fatalf("after the scheme registered %s, a new cluster's RESTMapper does not map it: %v", gk, err)
	}
	if m.Scope.Name() != meta.RESTScopeNameNamespace {
		t.Fatalf("%s is mapped %s, want namespaced", gk, m.Scope.Name())
	}
	scoped := NewCluster(s, ClusterOptions{StoreOptions: StoreOptions{ClusterScoped: []schema.GroupKind{gk}}}).Store.kinds.restMapper()
	if m, err := scoped.RESTMapping(gk); err != nil || m.Scope.Name() != meta.RESTScopeNameRoot {
		t.Fatalf("with %s declared cluster-scoped the mapping is %v, %v; want root scope", gk, m, err)
	}
}

// TestWriteBacksEqualTheStoredObject: after every kind of successful write
// the caller's object is the stored object (apiVersion/kind cleared, as a
// typed client decodes answers) and shares no pointer, slice or map with
// it: whether the write-back copied everything (defaults changed the spec,
// the store kept a status the request did not carry) or only the metadata
// (spec and status were already the stored ones).
func TestWriteBacksEqualTheStoredObject(t *testing.T) {
	gv := schema.GroupVersion{Group: "test.opcheck.io", Version: "v1"}
	s := testScheme()
	s.AddKnownTypes(gv, &handCopied{}, &handCopiedList{})
	c := NewCluster(s, ClusterOptions{})
	cl := c.Client("user", 1, true)
	ctx := context.Background()

	check := func(what string, obj client.Object) {
		t.Helper()
		k, err := c.Store.kinds.forObject(obj)
		if err != nil {
			t.Fatal(err)
		}
		stored, ok := c.Store.peek(k, objectKey(k, obj.GetNamespace(), obj.GetName()))
		if !ok {
			t.Fatalf("%s: %s is not stored", what, obj.GetName())
		}
		want := stored.DeepCopyObject().(client.Object)
		want.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
		if !reflect.DeepEqual(obj, want) {
			t.Errorf("%s: the caller's object differs from the stored one:\n got %+v\nwant %+v", what, obj, want)
		}
		if path := sharedMemory(reflect.ValueOf(obj).Elem(), reflect.ValueOf(stored).Elem(), "object"); path != "" {
			t.Errorf("%s: the caller's object shares %s with the stored one", what, path)
		}
	}

	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web", Labels: map[string]string{"app": "web"}},
		Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}},
		},
	}
	if err := cl.Create(ctx, sts); err != nil {
		t.Fatal(err)
	}
	check("create (defaults filled in)", sts)

	sts.Labels["tier"] = "front"
	if err := cl.Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	check("update of a label (spec and status unchanged)", sts)

	if err := cl.Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	check("no-op update", sts)

	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{}
	if err := cl.Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	if sts.Spec.UpdateStrategy.RollingUpdate == nil {
		t.Error("update clearing the update strategy: the caller's object did not get the defaulted strategy")
	}
	check("update that defaulting changed", sts)

	sts.Status.Replicas = 7
	sts.Labels["tier"] = "back"
	if err := cl.Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	if sts.Status.Replicas != 0 {
		t.Errorf("update carrying a status: the caller's object kept status.replicas %d, want the stored 0", sts.Status.Replicas)
	}
	check("update carrying a status the store ignores", sts)

	sts.Status.Replicas = 3
	if err := cl.Status().Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	check("status update", sts)

	replicas := int32(9)
	sts.Spec.Replicas = &replicas
	sts.Status.Replicas = 4
	if err := cl.Status().Update(ctx, sts); err != nil {
		t.Fatal(err)
	}
	if *sts.Spec.Replicas == 9 {
		t.Error("status update carrying a spec change: the caller's object kept spec.replicas 9, want the stored spec")
	}
	check("status update carrying a spec the store ignores", sts)

	before := sts.DeepCopy()
	sts.Annotations = map[string]string{"patched": "yes"}
	if err := cl.Patch(ctx, sts, client.MergeFrom(before)); err != nil {
		t.Fatal(err)
	}
	check("merge patch", sts)

	hc := &handCopied{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "h"}, Spec: handCopiedPart{Items: []string{"a"}}}
	if err := cl.Create(ctx, hc); err != nil {
		t.Fatal(err)
	}
	check("create of a kind without generated copies", hc)
	hc.Labels = map[string]string{"x": "y"}
	if err := cl.Update(ctx, hc); err != nil {
		t.Fatal(err)
	}
	check("update of a kind without generated copies", hc)
}

// sharedMemory returns the path of the first pointer, non-empty slice or
// map that a and b (two values of one type) share, or "". A time's
// *time.Location is shared by every copy (it is immutable).
func sharedMemory(a, b reflect.Value, path string) string {
	switch a.Kind() {
	case reflect.Pointer:
		if a.IsNil() || b.IsNil() || a.Type() == reflect.TypeFor[*time.Location]() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		return sharedMemory(a.Elem(), b.Elem(), path)
	case reflect.Interface:
		if a.IsNil() || b.IsNil() || a.Elem().Type() != b.Elem().Type() {
			return ""
		}
		return sharedMemory(a.Elem(), b.Elem(), path)
	case reflect.Slice:
		if a.Len() > 0 && b.Len() > 0 && a.Pointer() == b.Pointer() {
			return path
		}
		for i := 0; i < a.Len() && i < b.Len(); i++ {
			if p := sharedMemory(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Array:
		for i := 0; i < a.Len(); i++ {
			if p := sharedMemory(a.Index(i), b.Index(i), fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	case reflect.Map:
		if a.IsNil() || b.IsNil() {
			return ""
		}
		if a.Pointer() == b.Pointer() {
			return path
		}
		for _, key := range a.MapKeys() {
			if bv := b.MapIndex(key); bv.IsValid() {
				if p := sharedMemory(a.MapIndex(key), bv, fmt.Sprintf("%s[%v]", path, key)); p != "" {
					return p
				}
			}
		}
	case reflect.Struct:
		for i := 0; i < a.NumField(); i++ {
			if p := sharedMemory(a.Field(i), b.Field(i), path+"."+a.Type().Field(i).Name); p != "" {
				return p
			}
		}
	}
	return ""
}

// TestCopyBackCopiesOnlyOverEqualSpecAndStatus: copyBack takes the stored
// metadata into the caller's object only when the caller's spec and status
// equal the stored ones; any difference there leaves the object untouched
// for the full copy.
func TestCopyBackCopiesOnlyOverEqualSpecAndStatus(t *testing.T) {
	c := NewCluster(testScheme(), ClusterOptions{})
	k, err := c.Store.kinds.forObject(&corev1.Pod{})
	if err != nil {
		t.Fatal(err)
	}
	stored := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", ResourceVersion: "7", Labels: map[string]string{"a": "b"}},
		Spec:   corev1.PodSpec{NodeName: "n"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, tc := range []struct {
		name   string
		change func(*corev1.Pod)
		want   bool
	}{
		{"only metadata differs", func(p *corev1.Pod) { p.ResourceVersion = "6"; p.Labels = nil }, true},
		{"spec differs", func(p *corev1.Pod) { p.Spec.NodeName = "m" }, false},
		{"status differs", func(p *corev1.Pod) { p.Status.Phase = corev1.PodPending }, false},
	} {
		dst := stored.DeepCopy()
		tc.change(dst)
		before := dst.DeepCopy()
		if got := copyBack(k, dst, stored); got != tc.want {
			t.Errorf("%s: copyBack = %v, want %v", tc.name, got, tc.want)
		}
		switch {
		case tc.want && !reflect.DeepEqual(dst, stored):
			t.Errorf("%s: after copyBack the object is %+v, want the stored %+v", tc.name, dst, stored)
		case tc.want && sharedMemory(reflect.ValueOf(dst).Elem(), reflect.ValueOf(stored).Elem(), "pod") != "":
			t.Errorf("%s: after copyBack the object shares memory with the stored one", tc.name)
		case !tc.want && !reflect.DeepEqual(dst, before):
			t.Errorf("%s: a refused copyBack changed the object", tc.name)
		}
	}
}
