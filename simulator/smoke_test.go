package simulator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

func testScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	return s
}

func TestSmoke(t *testing.T) {
	c := NewCluster(testScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	cl := c.Client("user", 1, true)
	ctx := context.Background()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}, Data: map[string]string{"x": "1"}}
	if err := cl.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	if cm.ResourceVersion != "1" || cm.UID == "" {
		t.Fatalf("got %+v", cm.ObjectMeta)
	}
	stale := cm.DeepCopy()
	cm.Data["x"] = "2"
	if err := cl.Update(ctx, cm); err != nil {
		t.Fatal(err)
	}
	stale.Data["x"] = "3"
	if err := cl.Update(ctx, stale); !apierrors.IsConflict(err) {
		t.Fatalf("want conflict, got %v", err)
	}
	var list corev1.ConfigMapList
	if err := cl.List(ctx, &list, client.InNamespace("default")); err != nil || len(list.Items) != 1 {
		t.Fatalf("list: %v %d", err, len(list.Items))
	}
	t.Log(c.History.Lines())
}
