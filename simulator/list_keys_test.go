package simulator

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// informerReads serves a client's reads from one informer, as a Host does.
type informerReads struct{ inf *informer }

func (r informerReads) read(_ *kindInfo, namespace, name string) (client.Object, model.Revision, bool, error) {
	return r.inf.read(namespace, name)
}

func (r informerReads) readList(_ *kindInfo, o *ListOptions) ([]client.Object, model.Revision, bool, error) {
	return r.inf.readList(o)
}

func (informerReads) informerCache() bool { return true }

// ownSelectionReads selects with options of its own, as a managed Host's
// indexedList does: the keys of the List's options stay unset.
type ownSelectionReads struct{ informerReads }

func (r ownSelectionReads) readList(k *kindInfo, o *ListOptions) ([]client.Object, model.Revision, bool, error) {
	return r.informerReads.readList(k, &ListOptions{Namespace: o.Namespace, Labels: o.Labels})
}

// TestListRecordsTheKeysOfWhatItLists: a List's event names, in order,
// exactly the objects it hands back (their keys as objectKey builds them),
// whether the keys come from the selection (the fast path) or are built
// again (slow writes): from the head, an apiserver's watch cache and an
// informer, with namespaces, label and field selectors, a limit, a
// continued page, for a namespaced and a cluster-scoped kind.
func TestListRecordsTheKeysOfWhatItLists(t *testing.T) {
	for _, slow := range []bool{false, true} {
		c := NewCluster(testScheme(), ClusterOptions{StoreOptions: StoreOptions{Namespaces: testNamespaces}})
		c.Store.slowWrites = slow
		ctx := context.Background()
		writer := c.Client("user", 1, true)
		for i, n := range []string{"e", "a", "d", "b", "c"} {
			for _, ns := range []string{"ns", "a"} {
				cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: n, Labels: map[string]string{"even": []string{"yes", "no"}[i%2]}}}
				if err := writer.Create(ctx, cm); err != nil {
					t.Fatal(err)
				}
			}
		}
		cmKind := c.kindOf(&corev1.ConfigMap{})
		inf := newInformer(cmKind, c.Server(1))
		readers := map[string]*Client{
			"quorum":   writer,
			"cache":    c.Client("cached", 1, false),
			"informer": {cluster: c, server: c.Server(1), actor: "informed", reads: informerReads{inf}},
		}
		lists := map[string][]client.ListOption{
			"all":        nil,
			"namespace":  {client.InNamespace("ns")},
			"labels":     {client.MatchingLabels{"even": "yes"}},
			"both":       {client.InNamespace("a"), client.MatchingLabels{"even": "no"}},
			"field":      {client.MatchingFields{"metadata.name": "c"}},
			"limit":      {client.InNamespace("ns"), client.Limit(3)},
			"none found": {client.InNamespace("other")},
		}
		checked := 0
		check := func(what string, cl *Client, list *corev1.ConfigMapList, opts ...client.ListOption) {
			t.Helper()
			if err := cl.List(ctx, list, opts...); err != nil {
				t.Fatalf("slow %v, %s: %v", slow, what, err)
			}
			e := c.History.Events[len(c.History.Events)-1]
			if e.Op != model.OpList || len(e.Versions) != len(list.Items) {
				t.Fatalf("slow %v, %s: last event %s names %d objects, the list has %d", slow, what, e.Line(), len(e.Versions), len(list.Items))
			}
			for i := range list.Items {
				if want := objectKey(cmKind, list.Items[i].Namespace, list.Items[i].Name); e.Versions[i].Name != want {
					t.Fatalf("slow %v, %s: the event's object %d is %q, the list's is %q", slow, what, i, e.Versions[i].Name, want)
				}
			}
			checked += len(list.Items)
		}
		for rname, cl := range readers {
			for lname, opts := range lists {
				var list corev1.ConfigMapList
				check(rname+" "+lname, cl, &list, opts...)
			}
		}
		// A reader that selects with options of its own, right after a
		// List whose selection had other keys.
		own := &Client{cluster: c, server: c.Server(1), actor: "indexed", reads: informerReads{inf}}
		var everything, inNS corev1.ConfigMapList
		check("own selection, before", own, &everything)
		own.reads = ownSelectionReads{informerReads{inf}}
		check("own selection", own, &inNS, client.InNamespace("ns"))
		// A continued page starts after the token's key.
		var page1, page2 corev1.ConfigMapList
		check("quorum first page", writer, &page1, client.Limit(3))
		if page1.Continue == "" {
			t.Fatal("a limited quorum list gave no continue token")
		}
		check("quorum continued page", writer, &page2, client.Limit(3), client.Continue(page1.Continue))
		// A cluster-scoped kind's key is its name.
		for _, n := range []string{"zz-extra", "aa-extra"} {
			if err := writer.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: n}}); err != nil {
				t.Fatal(err)
			}
		}
		var nss corev1.NamespaceList
		if err := writer.List(ctx, &nss); err != nil {
			t.Fatal(err)
		}
		e := c.History.Events[len(c.History.Events)-1]
		if len(nss.Items) < 2 || len(e.Versions) != len(nss.Items) || e.Versions[0].Name != nss.Items[0].Name || e.Versions[1].Name != nss.Items[1].Name {
			t.Fatalf("slow %v: a namespace list of %d records %v", slow, len(nss.Items), e.Versions)
		}
		if checked < 50 {
			t.Fatalf("slow %v: only %d listed objects checked: the readers listed too little", slow, checked)
		}
	}
}
