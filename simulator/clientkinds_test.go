package simulator

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// notInScheme is a typed object no scheme knows.
type notInScheme struct {
	metav1.TypeMeta
	metav1.ObjectMeta
}

func (n *notInScheme) DeepCopyObject() runtime.Object { c := *n; return &c }

// The client's behaviour on kinds outside the scheme and on Unstructured
// and PartialObjectMetadata objects follows controller-runtime's client.
func TestClientKindsAsControllerRuntime(t *testing.T) {
	ctx := context.Background()
	cl := NewCluster(NewScheme(), ClusterOptions{StoreOptions: StoreOptions{Namespaces: testNamespaces}}).Client("user", 1, true)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p", Labels: map[string]string{"a": "1"}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}}}
	if err := cl.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}

	// A Go type the scheme does not register: the scheme's own error.
	if err := cl.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "x"}, &notInScheme{}); !runtime.IsNotRegisteredError(err) {
		t.Fatalf("unregistered type: %v, want a not-registered error", err)
	}
	// An unknown GVK: no REST mapping.
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Nope"})
	if err := cl.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "x"}, u); !meta.IsNoMatchError(err) {
		t.Fatalf("unknown GVK: %v, want a no-match error", err)
	}

	// Unstructured reads of a known kind.
	u = &unstructured.Unstructured{}
	u.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), u); err != nil || u.GetLabels()["a"] != "1" {
		t.Fatalf("unstructured get: %v %v", err, u.GetLabels())
	}

	// PartialObjectMetadata: read, list, patch and delete; no create or update.
	pm := &metav1.PartialObjectMetadata{}
	pm.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Pod"))
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), pm); err != nil || pm.Labels["a"] != "1" || pm.Kind != "Pod" || pm.UID == "" {
		t.Fatalf("metadata get: %v %+v", err, pm)
	}
	pl := &metav1.PartialObjectMetadataList{}
	pl.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("PodList"))
	if err := cl.List(ctx, pl, client.InNamespace("ns")); err != nil || len(pl.Items) != 1 || pl.Items[0].Name != "p" || pl.Items[0].Kind != "Pod" {
		t.Fatalf("metadata list: %v %+v", err, pl.Items)
	}
	before := pm.DeepCopy()
	pm.Labels["b"] = "2"
	if err := cl.Patch(ctx, pm, client.MergeFrom(before)); err != nil {
		t.Fatalf("metadata patch: %v", err)
	}
	got := &corev1.Pod{}
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil || got.Labels["b"] != "2" || len(got.Spec.Containers) != 1 {
		t.Fatalf("after metadata patch: %v %v %v", err, got.Labels, got.Spec.Containers)
	}
	for name, err := range map[string]error{"create": cl.Create(ctx, pm.DeepCopy()), "update": cl.Update(ctx, pm)} {
		if err == nil || !strings.Contains(err.Error(), "PartialObjectMetadata holds only metadata") {
			t.Fatalf("metadata %s: %v", name, err)
		}
	}
	if err := cl.Delete(ctx, pm, client.GracePeriodSeconds(0)); err != nil {
		t.Fatalf("metadata delete: %v", err)
	}
}
