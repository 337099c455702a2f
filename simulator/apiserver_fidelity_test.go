package simulator

import (
	"context"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
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
	c := NewCluster(semScheme(), ClusterOptions{StoreOptions: StoreOptions{Namespaces: testNamespaces, NoStatusSubresource: []schema.GroupKind{semWidgetGV.WithKind("Widget").GroupKind()}}})
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

// wantInvalid fails unless err is a 422 Invalid whose causes include one on
// field fieldPath.
func (e *semEnv) wantInvalid(err error, fieldPath, what string) {
	e.t.Helper()
	e.want(err, apierrors.IsInvalid, what)
	st, ok := err.(apierrors.APIStatus)
	if !ok || st.Status().Details == nil {
		e.t.Fatalf("%s: no details in %v", what, err)
	}
	for _, c := range st.Status().Details.Causes {
		if c.Field == fieldPath {
			return
		}
	}
	e.t.Fatalf("%s: no cause on %s in %v", what, fieldPath, err)
}

// TestValidationCreate mirrors the apiserver's create validation with
// apimachinery's own rules for metadata (ValidateObjectMetaAccessor: label
// values of at most 63 characters from the label charset, qualified
// annotation keys, owner references with apiVersion, kind, name and uid and
// at most one controller, qualified finalizer names, never both orphan and
// foregroundDeletion), the kind's name rule (a Service name is a DNS-1035
// label, a Namespace name a DNS-1123 label, other kinds DNS-1123
// subdomains), and the spec rules of the core validation that controllers
// meet (a pod needs containers; a workload's selector must select its
// template; a claim needs access modes and a size). Each answer is 422.
func TestValidationCreate(t *testing.T) {
	e := newSemEnv(t)
	bad := func(mut func(cm *corev1.ConfigMap), fieldPath, what string) {
		e.t.Helper()
		cm := semCM("ns", "c", nil)
		mut(cm)
		e.wantInvalid(e.cl.Create(e.ctx, cm), fieldPath, what)
	}
	bad(func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"app": strings.Repeat("x", 64)} }, "metadata.labels", "label value of 64 characters")
	bad(func(cm *corev1.ConfigMap) { cm.Labels = map[string]string{"app": "a b"} }, "metadata.labels", "label value with a space")
	bad(func(cm *corev1.ConfigMap) { cm.Annotations = map[string]string{"not a key": "v"} }, "metadata.annotations", "annotation key with spaces")
	bad(func(cm *corev1.ConfigMap) { cm.Finalizers = []string{"bad finalizer!"} }, "metadata.finalizers", "finalizer name")
	bad(func(cm *corev1.ConfigMap) {
		cm.Finalizers = []string{metav1.FinalizerOrphanDependents, metav1.FinalizerDeleteDependents}
	}, "metadata.finalizers", "orphan and foregroundDeletion together")
	bad(func(cm *corev1.ConfigMap) {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: "o"}}
	}, "metadata.ownerReferences[0].uid", "owner reference without uid")
	bad(func(cm *corev1.ConfigMap) {
		cm.OwnerReferences = []metav1.OwnerReference{{Kind: "ConfigMap", Name: "o", UID: "u"}}
	}, "metadata.ownerReferences[0].apiVersion", "owner reference without apiVersion")
	bad(func(cm *corev1.ConfigMap) {
		cm.OwnerReferences = []metav1.OwnerReference{{APIVersion: "v1", Name: "o", UID: "u"}}
	}, "metadata.ownerReferences[0].kind", "owner reference without kind")
	yes := true
	bad(func(cm *corev1.ConfigMap) {
		cm.OwnerReferences = []metav1.OwnerReference{
			{APIVersion: "v1", Kind: "ConfigMap", Name: "a", UID: "1", Controller: &yes},
			{APIVersion: "v1", Kind: "ConfigMap", Name: "b", UID: "2", Controller: &yes}}
	}, "metadata.ownerReferences", "two controllers")

	// Names per kind: "a.b" is a fine ConfigMap name but not a Service
	// (DNS-1035 label) or Namespace (DNS-1123 label) name; "1svc" is a
	// DNS-1123 label but not a DNS-1035 one.
	e.must(e.cl.Create(e.ctx, semCM("ns", "a.b", nil)))
	svc := func(name string) *corev1.Service {
		return &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	}
	e.wantInvalid(e.cl.Create(e.ctx, svc("a.b")), "metadata.name", "service name with a dot")
	e.wantInvalid(e.cl.Create(e.ctx, svc("1svc")), "metadata.name", "service name starting with a digit")
	e.wantInvalid(e.cl.Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a.b"}}), "metadata.name", "namespace name with a dot")

	// Specs.
	e.wantInvalid(e.cl.Create(e.ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}), "spec.containers", "pod without containers")
	noImage := semPod("ns", "p")
	noImage.Spec.Containers[0].Image = ""
	e.wantInvalid(e.cl.Create(e.ctx, noImage), "spec.containers[0].image", "container without image")
	sts := semSts("ns", "s")
	sts.Spec.Selector.MatchLabels = map[string]string{"app": "other"}
	e.wantInvalid(e.cl.Create(e.ctx, sts), "spec.template.metadata.labels", "selector that does not select the template")
	sts = semSts("ns", "s")
	sts.Spec.Selector = nil
	e.wantInvalid(e.cl.Create(e.ctx, sts), "spec.selector", "statefulset without selector")
	e.wantInvalid(e.cl.Create(e.ctx, &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}), "spec.accessModes", "claim without access modes")
	two := svc("two")
	two.Spec.Ports = append(two.Spec.Ports, corev1.ServicePort{Port: 81})
	e.wantInvalid(e.cl.Create(e.ctx, two), "spec.ports[0].name", "two unnamed service ports")
	e.wantHead(1)
}

// TestImmutability mirrors the apiserver's update validation: a
// StatefulSet's selector, serviceName, podManagementPolicy and
// volumeClaimTemplates, a Deployment's selector, a Job's template, a
// claim's spec (volumeName once; requests only when bound), a Secret's
// type, the data of immutable ConfigMaps and Secrets, a pod's spec beyond
// images, activeDeadlineSeconds, tolerations and scheduling gates, and a
// deletionTimestamp set by Update or Patch: each is 422. The allowed
// changes go through.
func TestImmutability(t *testing.T) {
	e := newSemEnv(t)
	sts := semSts("ns", "s")
	e.must(e.cl.Create(e.ctx, sts))
	for what, mut := range map[string]func(s *appsv1.StatefulSet){
		"selector":            func(s *appsv1.StatefulSet) { s.Spec.Selector.MatchLabels["x"] = "y"; s.Spec.Template.Labels["x"] = "y" },
		"serviceName":         func(s *appsv1.StatefulSet) { s.Spec.ServiceName = "other" },
		"podManagementPolicy": func(s *appsv1.StatefulSet) { s.Spec.PodManagementPolicy = appsv1.ParallelPodManagement },
		"volumeClaimTemplates": func(s *appsv1.StatefulSet) {
			s.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{*semClaim("ns", "data")}
		},
	} {
		c := sts.DeepCopy()
		mut(c)
		e.wantInvalid(e.cl.Update(e.ctx, c), "spec", "statefulset "+what)
	}
	three := int32(3)
	ok := sts.DeepCopy()
	ok.Spec.Replicas = &three
	ok.Spec.Template.Spec.Containers[0].Image = "busybox:2"
	e.must(e.cl.Update(e.ctx, ok))

	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: sts.Spec.Selector.DeepCopy(), Template: *sts.Spec.Template.DeepCopy()}}
	e.must(e.cl.Create(e.ctx, d))
	d.Spec.Selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpExists}}
	e.wantInvalid(e.cl.Update(e.ctx, d), "spec.selector", "deployment selector")

	claim := semClaim("ns", "c")
	e.must(e.cl.Create(e.ctx, claim))
	claim.Spec.VolumeName = "pv-1" // set once: allowed
	e.must(e.cl.Update(e.ctx, claim))
	grown := claim.DeepCopy()
	grown.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	e.wantInvalid(e.cl.Update(e.ctx, grown), "spec", "requests of an unbound claim")
	claim.Status.Phase = corev1.ClaimBound
	e.must(e.cl.Status().Update(e.ctx, claim))
	grown = claim.DeepCopy()
	grown.Spec.Resources.Requests[corev1.ResourceStorage] = resource.MustParse("2Gi")
	e.must(e.cl.Update(e.ctx, grown)) // expansion of a bound claim
	grown.Spec.AccessModes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}
	e.wantInvalid(e.cl.Update(e.ctx, grown), "spec", "access modes of a bound claim")

	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "sec"}, StringData: nil, Data: map[string][]byte{"k": []byte("v")}}
	e.must(e.cl.Create(e.ctx, sec))
	if sec.Type != corev1.SecretTypeOpaque {
		e.t.Fatalf("secret type defaulted to %q, want Opaque", sec.Type)
	}
	sec.Type = corev1.SecretTypeTLS
	e.wantInvalid(e.cl.Update(e.ctx, sec), "type", "secret type")
	yes := true
	frozen := semCM("ns", "frozen", map[string]string{"k": "v"})
	frozen.Immutable = &yes
	e.must(e.cl.Create(e.ctx, frozen))
	frozen.Data["k"] = "w"
	e.wantInvalid(e.cl.Update(e.ctx, frozen), "data", "data of an immutable configmap")
	frozen.Data["k"] = "v"
	frozen.Labels = map[string]string{"metadata": "may-change"}
	e.must(e.cl.Update(e.ctx, frozen))

	p := semPod("ns", "p")
	e.must(e.cl.Create(e.ctx, p))
	p.Spec.Containers[0].Image = "busybox:2"
	p.Spec.Tolerations = []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists}}
	e.must(e.cl.Update(e.ctx, p))
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "side", Image: "side:1"})
	e.wantInvalid(e.cl.Update(e.ctx, p), "spec", "pod containers")

	// deletionTimestamp cannot be set by an update or a patch.
	cm := semCM("ns", "del", nil)
	e.must(e.cl.Create(e.ctx, cm))
	now := metav1.NewTime(model.Epoch)
	cm.DeletionTimestamp = &now
	e.wantInvalid(e.cl.Update(e.ctx, cm), "metadata.deletionTimestamp", "deletionTimestamp by update")
	e.wantInvalid(e.cl.Patch(e.ctx, semCM("ns", "del", nil), client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"deletionTimestamp":"2026-01-01T00:00:00Z"}}`))), "metadata.deletionTimestamp", "deletionTimestamp by patch")
}

func semClaim(ns, name string) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
}

// TestDefaulting mirrors the defaults the apiserver gives the built-in
// kinds controllers write: Service type ClusterIP, TCP ports with
// targetPort = port, an allocated cluster IP that an update leaving it out
// keeps; Deployment and StatefulSet replicas 1 and their rolling update
// strategies; pod restartPolicy Always, terminationGracePeriodSeconds 30,
// dnsPolicy ClusterFirst, pull policy by tag, and phase Pending on create.
func TestDefaulting(t *testing.T) {
	e := newSemEnv(t)
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web"}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	e.must(e.cl.Create(e.ctx, svc))
	sp := svc.Spec
	if sp.Type != corev1.ServiceTypeClusterIP || sp.Ports[0].Protocol != corev1.ProtocolTCP || sp.Ports[0].TargetPort.IntValue() != 80 ||
		sp.ClusterIP == "" || len(sp.ClusterIPs) != 1 || sp.SessionAffinity != corev1.ServiceAffinityNone {
		e.t.Fatalf("service defaults: %+v", sp)
	}
	ip := sp.ClusterIP
	// A controller's desired Service without the allocated IP: the update
	// keeps the IP and changes nothing else.
	desired := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", ResourceVersion: svc.ResourceVersion}, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}
	e.must(e.cl.Update(e.ctx, desired))
	if desired.Spec.ClusterIP != ip || e.lastEvent().Change != model.ChangeNone {
		e.t.Fatalf("update without clusterIP: ip %q (was %q), change %v", desired.Spec.ClusterIP, ip, e.lastEvent().Change)
	}
	desired.Spec.ClusterIP = "10.0.0.99"
	e.wantInvalid(e.cl.Update(e.ctx, desired), "spec.clusterIP", "changing the cluster IP")
	headless := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "hl"}, Spec: corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone}}
	e.must(e.cl.Create(e.ctx, headless))
	if headless.Spec.ClusterIP != corev1.ClusterIPNone {
		e.t.Fatalf("headless service got cluster IP %q", headless.Spec.ClusterIP)
	}

	sts := semSts("ns", "s")
	e.must(e.cl.Create(e.ctx, sts))
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != 1 || sts.Spec.PodManagementPolicy != appsv1.OrderedReadyPodManagement ||
		sts.Spec.UpdateStrategy.Type != appsv1.RollingUpdateStatefulSetStrategyType || sts.Spec.UpdateStrategy.RollingUpdate == nil ||
		*sts.Spec.RevisionHistoryLimit != 10 || sts.Spec.PersistentVolumeClaimRetentionPolicy.WhenDeleted != appsv1.RetainPersistentVolumeClaimRetentionPolicyType {
		e.t.Fatalf("statefulset defaults: %+v", sts.Spec)
	}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d"}, Spec: appsv1.DeploymentSpec{
		Selector: sts.Spec.Selector.DeepCopy(), Template: *semSts("ns", "s").Spec.Template.DeepCopy()}}
	e.must(e.cl.Create(e.ctx, d))
	if *d.Spec.Replicas != 1 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || d.Spec.Strategy.RollingUpdate.MaxSurge.String() != "25%" ||
		*d.Spec.ProgressDeadlineSeconds != 600 {
		e.t.Fatalf("deployment defaults: %+v", d.Spec)
	}
	if ps := d.Spec.Template.Spec; ps.RestartPolicy != corev1.RestartPolicyAlways || *ps.TerminationGracePeriodSeconds != 30 {
		e.t.Fatalf("template defaults: %+v", ps)
	}

	p := semPod("ns", "p")
	p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: "latest", Image: "repo/app"})
	e.must(e.cl.Create(e.ctx, p))
	ps := p.Spec
	if p.Status.Phase != corev1.PodPending || ps.RestartPolicy != corev1.RestartPolicyAlways || ps.TerminationGracePeriodSeconds == nil ||
		*ps.TerminationGracePeriodSeconds != 30 || ps.DNSPolicy != corev1.DNSClusterFirst || ps.SchedulerName != corev1.DefaultSchedulerName ||
		ps.Containers[0].ImagePullPolicy != corev1.PullIfNotPresent || ps.Containers[1].ImagePullPolicy != corev1.PullAlways ||
		ps.Containers[0].TerminationMessagePath != corev1.TerminationMessagePathDefault {
		e.t.Fatalf("pod defaults: phase %q spec %+v", p.Status.Phase, ps)
	}
	claim := semClaim("ns", "c")
	e.must(e.cl.Create(e.ctx, claim))
	if claim.Spec.VolumeMode == nil || *claim.Spec.VolumeMode != corev1.PersistentVolumeFilesystem || claim.Status.Phase != corev1.ClaimPending {
		e.t.Fatalf("claim defaults: %+v %+v", claim.Spec, claim.Status)
	}
}

// TestBindingIsCreateOnly mirrors the create-only Binding resource: a
// create assigns the pod to the node (once; a second binding is a
// Conflict) and stores no Binding; get, update, patch and delete are
// 405 MethodNotSupported.
func TestBindingIsCreateOnly(t *testing.T) {
	e := newSemEnv(t)
	p := semPod("ns", "p")
	p.Spec.NodeName = "" // not scheduled yet
	e.must(e.cl.Create(e.ctx, p))
	b := &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}}
	e.must(e.cl.Create(e.ctx, b))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), p))
	if p.Spec.NodeName != "node-1" {
		e.t.Fatalf("bound pod on node %q", p.Spec.NodeName)
	}
	e.want(e.cl.Create(e.ctx, b.DeepCopy()), apierrors.IsConflict, "second binding")
	e.want(e.cl.Update(e.ctx, b), apierrors.IsMethodNotSupported, "update of a binding")
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(b), &corev1.Binding{}), apierrors.IsMethodNotSupported, "get of a binding")
	e.want(e.cl.Delete(e.ctx, b), apierrors.IsMethodNotSupported, "delete of a binding")
	e.want(e.cl.Patch(e.ctx, b, client.RawPatch(types.MergePatchType, []byte(`{}`))), apierrors.IsMethodNotSupported, "patch of a binding")
	e.wantHead(2)
}

// TestNamespaceLifecycle mirrors NamespaceLifecycle admission and the
// namespace controller: a create in a namespace that does not exist is 404
// (default exists in every cluster); a new Namespace is Active with the
// "kubernetes" spec finalizer; a deleted Namespace stays Terminating, with
// creates in it refused 403, while the namespace controller deletes its
// contents (waiting for objects that hold finalizers), and goes once it is
// empty and finalized.
func TestNamespaceLifecycle(t *testing.T) {
	w, user := newActorTestWorld()
	ctx := context.Background()
	err := user.Create(ctx, semCM("team", "c", nil))
	if !apierrors.IsNotFound(err) || !strings.Contains(err.Error(), `namespaces "team" not found`) {
		t.Fatalf("create in a missing namespace: %v, want 404 for the namespace", err)
	}
	if err := user.Create(ctx, semCM("default", "c", nil)); err != nil {
		t.Fatalf("create in default: %v", err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team"}}
	if err := user.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if ns.Status.Phase != corev1.NamespaceActive || len(ns.Spec.Finalizers) != 1 || ns.Spec.Finalizers[0] != corev1.FinalizerKubernetes {
		t.Fatalf("new namespace: phase %q finalizers %v", ns.Status.Phase, ns.Spec.Finalizers)
	}
	held := semCM("team", "held", nil)
	held.Finalizers = []string{"example.com/hold"}
	for _, obj := range []client.Object{semCM("team", "c", nil), held, semPod("team", "p")} {
		if err := user.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := user.Delete(ctx, ns); err != nil {
		t.Fatal(err)
	}
	if err := user.Get(ctx, client.ObjectKey{Name: "team"}, ns); err != nil || ns.Status.Phase != corev1.NamespaceTerminating || ns.DeletionTimestamp == nil {
		t.Fatalf("deleted namespace: %v phase %q", err, ns.Status.Phase)
	}
	if err := user.Create(ctx, semCM("team", "new", nil)); !apierrors.IsForbidden(err) {
		t.Fatalf("create in a terminating namespace: %v, want 403", err)
	}

	// The namespace controller deletes what it can; the pod waits for the
	// kubelet, the held ConfigMap for its finalizer.
	nsc := []Actor{NewNamespaceController(), NewKubelet()}
	labels := settleActors(t, w, nsc)
	want := []string{"delete ConfigMap team/c", "delete ConfigMap team/held", "delete Pod team/p"}
	for _, l := range want {
		if !slices.Contains(labels, l) {
			t.Fatalf("namespace controller steps %v, want %v among them", labels, want)
		}
	}
	if slices.ContainsFunc(labels, func(l string) bool { return strings.HasPrefix(l, "finalize") }) {
		t.Fatalf("namespace finalized while an object held a finalizer: %v", labels)
	}
	if err := user.Get(ctx, client.ObjectKey{Name: "team"}, ns); err != nil {
		t.Fatalf("namespace gone before it was empty: %v", err)
	}
	if err := user.Get(ctx, client.ObjectKeyFromObject(held), held); err != nil {
		t.Fatal(err)
	}
	held.Finalizers = nil
	if err := user.Update(ctx, held); err != nil {
		t.Fatal(err)
	}
	labels = settleActors(t, w, nsc)
	if len(labels) != 1 || labels[0] != "finalize namespace team" {
		t.Fatalf("after the last object went: steps %v, want the finalize", labels)
	}
	if err := user.Get(ctx, client.ObjectKey{Name: "team"}, ns); !apierrors.IsNotFound(err) {
		t.Fatalf("finalized namespace: %v, want gone", err)
	}
	if err := user.Create(ctx, semCM("team", "c", nil)); !apierrors.IsNotFound(err) {
		t.Fatalf("create after the namespace went: %v, want 404", err)
	}
}
