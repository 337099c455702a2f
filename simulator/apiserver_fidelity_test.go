package simulator

import (
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// The tests in this file each mirror one behaviour of a real kube-apiserver
// (issue 16); the comment on each says which, and docs/fidelity.md has a
// row per behaviour naming the test.

// lastEvent is the newest recorded history event.
func (e *semEnv) lastEvent() *model.Event {
	e.t.Helper()
	h := e.c.History.Events
	if len(h) == 0 {
		e.t.Fatal("empty history")
	}
	return &h[len(h)-1]
}

// wantDryRunEvent checks that the last event is a successful dry-run write
// that changed nothing.
func (e *semEnv) wantDryRunEvent(op model.Op) {
	e.t.Helper()
	ev := e.lastEvent()
	if ev.Op != op || ev.Err != "" || !strings.Contains(ev.Detail, "dryRun") || ev.Change != model.ChangeNone || ev.Object != nil {
		e.t.Fatalf("dry-run %s recorded as %s (change %v)", op, ev.Line(), ev.Change)
	}
}

// TestDryRun mirrors the apiserver's dryRun=All on every verb: the request
// is decoded, defaulted, validated and admitted, and answered with the
// object as it would be stored, but the dry-run storage writes nothing (no
// resourceVersion is consumed; a dry-run create answers with an empty
// resourceVersion). An unknown dryRun value is 422.
func TestDryRun(t *testing.T) {
	e := newSemEnv(t)
	dry := client.DryRunAll

	// Create: answered (name generated, UID set), nothing stored.
	g := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "dry-"}}
	e.must(e.cl.Create(e.ctx, g, dry))
	if g.Name == "" || g.UID == "" || g.ResourceVersion != "" {
		e.t.Fatalf("dry-run create answer: name %q uid %q rv %q", g.Name, g.UID, g.ResourceVersion)
	}
	e.wantHead(0)
	e.wantDryRunEvent(model.OpCreate)
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(g), &corev1.ConfigMap{}), apierrors.IsNotFound, "get after dry-run create")
	// A dry run is validated like the real write.
	e.want(e.cl.Create(e.ctx, semCM("ns", "Bad_Name", nil), dry), apierrors.IsInvalid, "dry-run create of a bad name")
	// And it consumes no counters: the real create gets the same identity.
	real := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "dry-"}}
	e.must(e.cl.Create(e.ctx, real))
	if real.Name != g.Name || real.UID != g.UID {
		e.t.Fatalf("dry run advanced the name/UID counters: real %s/%s, dry %s/%s", real.Name, real.UID, g.Name, g.UID)
	}
	e.wantHead(1)

	// Update and Patch: answered with the change, store unchanged.
	upd := real.DeepCopy()
	upd.Data = map[string]string{"k": "v"}
	e.must(e.cl.Update(e.ctx, upd, dry))
	if upd.Data["k"] != "v" || upd.ResourceVersion != "1" {
		e.t.Fatalf("dry-run update answer: %+v rv %s", upd.Data, upd.ResourceVersion)
	}
	e.wantDryRunEvent(model.OpUpdate)
	pat := real.DeepCopy()
	e.must(e.cl.Patch(e.ctx, pat, client.RawPatch(types.MergePatchType, []byte(`{"data":{"p":"q"}}`)), dry))
	if pat.Data["p"] != "q" {
		e.t.Fatalf("dry-run patch answer: %+v", pat.Data)
	}
	e.wantDryRunEvent(model.OpPatch)
	e.wantHead(1)
	var got corev1.ConfigMap
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(real), &got))
	if len(got.Data) != 0 {
		e.t.Fatalf("dry-run update or patch was stored: %+v", got.Data)
	}

	// Status update of a pod: answered, not stored.
	p := semPod("ns", "p")
	e.must(e.cl.Create(e.ctx, p))
	p.Status.Phase = corev1.PodRunning
	e.must(e.cl.Status().Update(e.ctx, p, client.DryRunAll))
	e.wantDryRunEvent(model.OpUpdateStatus)
	e.wantHead(2)

	// Delete: answered, the object stays; with a finalizer the answer
	// carries the deletionTimestamp it would get.
	fin := semCM("ns", "fin", nil)
	fin.Finalizers = []string{"example.com/keep"}
	e.must(e.cl.Create(e.ctx, fin))
	e.must(e.cl.Delete(e.ctx, real, dry))
	e.wantDryRunEvent(model.OpDelete)
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(real), &got))
	e.must(e.cl.Delete(e.ctx, fin, dry))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(fin), &got))
	if got.DeletionTimestamp != nil {
		e.t.Fatal("dry-run delete started the deletion")
	}
	e.wantHead(3)

	// DeleteAllOf: one dry-run delete per object, nothing deleted.
	e.must(e.cl.DeleteAllOf(e.ctx, &corev1.ConfigMap{}, client.InNamespace("ns"), dry))
	e.wantDryRunEvent(model.OpDelete)
	var l corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &l, client.InNamespace("ns")))
	if len(l.Items) != 2 {
		e.t.Fatalf("dry-run DeleteAllOf deleted: %d left, want 2", len(l.Items))
	}
	e.wantHead(3)

	// An unknown dryRun value is refused before anything runs.
	e.want(e.cl.Create(e.ctx, semCM("ns", "x", nil), &client.CreateOptions{DryRun: []string{"Some"}}), apierrors.IsInvalid, "dryRun=Some")
}

// cacheReads serves reads like an apiserver but says it is an informer
// cache, to check what the client does for a controller's cached reads.
type cacheReads struct{ serverReads }

func (cacheReads) informerCache() bool { return true }

// TestTypeMetaOfAnswers mirrors controller-runtime v0.25's clients: the
// typed client's decoder clears apiVersion/kind, so typed objects from
// Get, List and writes come back without them; the informer cache stamps
// them on what it returns; unstructured objects always keep theirs. The
// store (and the history) keeps them, as etcd does.
func TestTypeMetaOfAnswers(t *testing.T) {
	e := newSemEnv(t)
	cm := semCM("ns", "a", nil)
	e.must(e.cl.Create(e.ctx, cm))
	if !cm.GetObjectKind().GroupVersionKind().Empty() {
		e.t.Fatalf("typed create answer has %v", cm.GetObjectKind().GroupVersionKind())
	}
	if gvk := e.lastEvent().Object.GetObjectKind().GroupVersionKind(); gvk.Kind != "ConfigMap" || gvk.Version != "v1" {
		e.t.Fatalf("stored object has %v", gvk)
	}
	cm.APIVersion, cm.Kind = "v1", "ConfigMap"
	cm.Data = map[string]string{"x": "1"}
	e.must(e.cl.Update(e.ctx, cm))
	if cm.APIVersion != "" || cm.Kind != "" {
		e.t.Fatalf("typed update answer has %s/%s", cm.APIVersion, cm.Kind)
	}
	var got corev1.ConfigMap
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(cm), &got))
	var l corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &l, client.InNamespace("ns")))
	if got.Kind != "" || got.APIVersion != "" || len(l.Items) != 1 || l.Items[0].Kind != "" || l.Kind != "" {
		e.t.Fatalf("typed get/list answers carry TypeMeta: get %+v item %+v list %+v", got.TypeMeta, l.Items[0].TypeMeta, l.TypeMeta)
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(schema.GroupVersionKind{Version: "v1", Kind: "ConfigMap"})
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(cm), u))
	if u.GetKind() != "ConfigMap" || u.GetAPIVersion() != "v1" {
		e.t.Fatalf("unstructured get lost its kind: %s %s", u.GetAPIVersion(), u.GetKind())
	}
	// The informer cache's answers carry apiVersion/kind.
	cached := e.c.Client(model.ActorUser, 1, false)
	cached.reads = cacheReads{serverReads{server: e.c.Server(1)}}
	var cg corev1.ConfigMap
	e.must(cached.Get(e.ctx, client.ObjectKeyFromObject(cm), &cg))
	var cl corev1.ConfigMapList
	e.must(cached.List(e.ctx, &cl, client.InNamespace("ns")))
	if cg.Kind != "ConfigMap" || cg.APIVersion != "v1" || len(cl.Items) != 1 || cl.Items[0].Kind != "ConfigMap" {
		e.t.Fatalf("cached reads without TypeMeta: get %+v item %+v", cg.TypeMeta, cl.Items)
	}
}

// TestGenerationLifecycle mirrors how registry strategies keep
// metadata.generation: 1 on create and +1 per spec change for kinds that
// have one (Deployment, custom resources); +1 when deletion starts (the
// apiserver's BeforeDelete and markAsDeleting); +1 on status changes too
// for a custom resource without a status subresource; never for kinds
// that have none (ConfigMap, Secret).
func TestGenerationLifecycle(t *testing.T) {
	e := newSemEnv(t)
	one := int32(1)
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", Finalizers: []string{"example.com/keep"}},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "d"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "d"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "busybox:1"}}}}}}
	e.must(e.cl.Create(e.ctx, d))
	if d.Generation != 1 {
		e.t.Fatalf("deployment create: generation %d", d.Generation)
	}
	d.Labels = map[string]string{"x": "y"}
	e.must(e.cl.Update(e.ctx, d))
	two := int32(2)
	d.Spec.Replicas = &two
	e.must(e.cl.Update(e.ctx, d))
	if d.Generation != 2 {
		e.t.Fatalf("deployment after a label and a spec change: generation %d, want 2", d.Generation)
	}
	e.must(e.cl.Delete(e.ctx, d))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(d), d))
	if d.DeletionTimestamp == nil || d.Generation != 3 {
		e.t.Fatalf("deployment deletion started: generation %d, want 3", d.Generation)
	}

	cm := semCM("ns", "c", map[string]string{"a": "1"})
	cm.Finalizers = []string{"example.com/keep"}
	e.must(e.cl.Create(e.ctx, cm))
	cm.Data["a"] = "2"
	e.must(e.cl.Update(e.ctx, cm))
	e.must(e.cl.Delete(e.ctx, cm))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(cm), cm))
	if cm.Generation != 0 || e.lastChange().Object.GetGeneration() != 0 {
		e.t.Fatalf("configmap generation %d, want 0 (absent) throughout", cm.Generation)
	}

	// A custom resource with a status subresource: status writes do not
	// bump; without one (declared NoStatusSubresource) any change but
	// metadata does.
	w := newSemWidget("ns", "w", 1)
	e.must(e.cl.Create(e.ctx, w))
	w.Status.Phase = "Up"
	e.must(e.cl.Status().Update(e.ctx, w))
	if w.Generation != 1 {
		e.t.Fatalf("widget status update: generation %d, want 1", w.Generation)
	}
	c := NewCluster(semScheme(), ClusterOptions{StoreOptions: StoreOptions{NoStatusSubresource: []schema.GroupKind{semWidgetGV.WithKind("Widget").GroupKind()}}})
	cl := c.Client(model.ActorUser, 1, true)
	nw := newSemWidget("ns", "w", 1)
	e.must(cl.Create(e.ctx, nw))
	nw.Status.Phase = "Up"
	e.must(cl.Update(e.ctx, nw))
	if nw.Generation != 2 || nw.Status.Phase != "Up" {
		e.t.Fatalf("widget without status subresource, status change by update: generation %d phase %q, want 2 Up", nw.Generation, nw.Status.Phase)
	}
	nw.Labels = map[string]string{"l": "1"}
	e.must(cl.Update(e.ctx, nw))
	if nw.Generation != 2 {
		e.t.Fatalf("widget without status subresource, label change: generation %d, want 2", nw.Generation)
	}
}

// TestGenerateName mirrors the apiserver's name generation: the prefix is
// cut to 58 characters so that prefix + 5-character suffix fits in 63, and
// a create whose generated name is taken is retried with a new suffix, 8
// attempts in all (RetryGenerateName), then AlreadyExists.
func TestGenerateName(t *testing.T) {
	e := newSemEnv(t)
	long := strings.Repeat("a", 80) + "-"
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: long}}
	e.must(e.cl.Create(e.ctx, cm))
	if len(cm.Name) != validation.DNS1123LabelMaxLength || !strings.HasPrefix(cm.Name, strings.Repeat("a", 58)) {
		e.t.Fatalf("generated name %q (%d characters), want 58 of the prefix + 5", cm.Name, len(cm.Name))
	}

	// The names the next creates would get, from a twin store.
	names := func(skip, n int) []string {
		twin := NewStore(semScheme(), nil, StoreOptions{})
		var out []string
		for i := 0; i < skip+n; i++ {
			name := twin.generateName("gen-")
			if i >= skip {
				out = append(out, name)
			}
		}
		return out
	}
	// 7 taken: the 8th attempt succeeds.
	f := newSemEnv(t)
	for _, name := range names(0, 7) {
		f.must(f.c.Seed(semCM("ns", name, nil)))
	}
	g := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}}
	f.must(f.cl.Create(f.ctx, g))
	if want := names(7, 1)[0]; g.Name != want {
		f.t.Fatalf("after 7 clashes: name %q, want %q", g.Name, want)
	}
	// 8 taken: AlreadyExists.
	h := newSemEnv(t)
	for _, name := range names(0, 8) {
		h.must(h.c.Seed(semCM("ns", name, nil)))
	}
	h.want(h.cl.Create(h.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}}), apierrors.IsAlreadyExists, "8 clashes")
}

// TestListPaging mirrors paginated lists: Limit returns that many items and
// a continue token; the next pages show the snapshot of the first page's
// resourceVersion, whatever was written in between (etcd serves them at
// that revision); remainingItemCount is set for unfiltered lists; a bad
// token is 400. controller-runtime's cache truncates at Limit without a
// token and refuses Continue.
func TestListPaging(t *testing.T) {
	e := newSemEnv(t)
	for _, n := range []string{"a", "b", "c", "d", "e"} {
		e.must(e.cl.Create(e.ctx, semCM("ns", n, nil)))
	}
	var p1 corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &p1, client.InNamespace("ns"), client.Limit(2)))
	if names := cmNames(p1.Items); names != "a,b" || p1.Continue == "" || p1.RemainingItemCount == nil || *p1.RemainingItemCount != 3 {
		e.t.Fatalf("page 1: %s continue %q remaining %v", names, p1.Continue, p1.RemainingItemCount)
	}
	// Writes between pages do not show: a new object, a deletion.
	e.must(e.cl.Create(e.ctx, semCM("ns", "bb", nil)))
	e.must(e.cl.Delete(e.ctx, semCM("ns", "e", nil)))
	var p2 corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &p2, client.InNamespace("ns"), client.Limit(2), client.Continue(p1.Continue)))
	if names := cmNames(p2.Items); names != "c,d" || p2.Continue == "" || p2.ResourceVersion != p1.ResourceVersion {
		e.t.Fatalf("page 2: %s continue %q rv %s (page 1 rv %s)", names, p2.Continue, p2.ResourceVersion, p1.ResourceVersion)
	}
	if ev := e.lastEvent(); !ev.Stale || ev.ReadRev != 5 {
		e.t.Fatalf("page 2 event: %s, want a stale read at rev 5", ev.Line())
	}
	var p3 corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &p3, client.InNamespace("ns"), client.Limit(2), client.Continue(p2.Continue)))
	if names := cmNames(p3.Items); names != "e" || p3.Continue != "" || p3.RemainingItemCount != nil {
		e.t.Fatalf("page 3: %s continue %q", names, p3.Continue)
	}
	// A label-selected list pages too, without a remaining count.
	var sel corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &sel, client.InNamespace("ns"), client.Limit(1), client.HasLabels{}))
	e.want(e.cl.List(e.ctx, &p3, client.Continue("not-a-token")), apierrors.IsBadRequest, "bad continue token")

	cached := e.c.Client(model.ActorUser, 1, false)
	cached.reads = cacheReads{serverReads{server: e.c.Server(1)}}
	var c1 corev1.ConfigMapList
	e.must(cached.List(e.ctx, &c1, client.InNamespace("ns"), client.Limit(2)))
	if names := cmNames(c1.Items); names != "a,b" || c1.Continue != "" {
		e.t.Fatalf("cached list with limit: %s continue %q", names, c1.Continue)
	}
	if err := cached.List(e.ctx, &c1, client.Continue(p1.Continue)); err == nil || !strings.Contains(err.Error(), "continue list option is not supported by the cache") {
		e.t.Fatalf("cached list with continue: %v", err)
	}
}

func cmNames(items []corev1.ConfigMap) string {
	var out []string
	for _, i := range items {
		out = append(out, i.Name)
	}
	return strings.Join(out, ",")
}

// TestCreateOnUpdate mirrors AllowCreateOnUpdate of the registry
// strategies: an Update of a missing Service or Lease creates it (201);
// for a ConfigMap it is NotFound; a Patch never creates.
func TestCreateOnUpdate(t *testing.T) {
	e := newSemEnv(t)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	e.must(e.cl.Update(e.ctx, svc))
	if ev := e.lastEvent(); ev.Op != model.OpUpdate || ev.Change != model.ChangeAdded || svc.UID == "" || svc.ResourceVersion != "1" {
		e.t.Fatalf("update of a missing service: %s uid %q", ev.Line(), svc.UID)
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "leader", ResourceVersion: "42"}}
	e.must(e.cl.Update(e.ctx, lease))
	if lease.ResourceVersion != "2" {
		e.t.Fatalf("lease created on update: rv %q, want 2", lease.ResourceVersion)
	}
	e.want(e.cl.Update(e.ctx, semCM("ns", "missing", nil)), apierrors.IsNotFound, "update of a missing configmap")
	e.want(e.cl.Patch(e.ctx, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "other"}}, client.RawPatch(types.MergePatchType, []byte(`{}`))), apierrors.IsNotFound, "patch of a missing service")
	e.wantHead(2)
}
