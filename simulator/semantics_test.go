package simulator

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// semWidget is a small custom resource registered by the tests: it has a
// spec, a status (with a status subresource) and a list type.
type semWidget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              semWidgetSpec   `json:"spec,omitempty"`
	Status            semWidgetStatus `json:"status,omitempty"`
}

type semWidgetSpec struct {
	Size  int32             `json:"size,omitempty"`
	Owner string            `json:"owner,omitempty"`
	Tags  map[string]string `json:"tags,omitempty"`
}

type semWidgetStatus struct {
	Ready int32  `json:"ready,omitempty"`
	Phase string `json:"phase,omitempty"`
}

func (w *semWidget) DeepCopyObject() runtime.Object {
	if w == nil {
		return nil
	}
	out := new(semWidget)
	*out = *w
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if w.Spec.Tags != nil {
		out.Spec.Tags = make(map[string]string, len(w.Spec.Tags))
		for k, v := range w.Spec.Tags {
			out.Spec.Tags[k] = v
		}
	}
	return out
}

type semWidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []semWidget `json:"items"`
}

func (l *semWidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(semWidgetList)
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]semWidget, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopyObject().(*semWidget)
		}
	}
	return out
}

var semWidgetGV = schema.GroupVersion{Group: "example.opcheck.dev", Version: "v1"}

// semScheme is the built-in kinds plus semWidget.
func semScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypeWithName(semWidgetGV.WithKind("Widget"), &semWidget{})
	s.AddKnownTypeWithName(semWidgetGV.WithKind("WidgetList"), &semWidgetList{})
	metav1.AddToGroupVersion(s, semWidgetGV)
	return s
}

// testNamespaces are the namespaces the store tests declare: a create in
// any other (but default) is 404, as in a real cluster.
var testNamespaces = []string{"ns", "a", "b", "ignored", "other"}

// semEnv is one fresh cluster for one semantics case.
type semEnv struct {
	t   *testing.T
	ctx context.Context
	c   *Cluster
	cl  *Client // quorum reads through apiserver-1
}

func newSemEnv(t *testing.T) *semEnv {
	c := NewCluster(semScheme(), ClusterOptions{APIServers: 2, StoreOptions: StoreOptions{Namespaces: testNamespaces}})
	return &semEnv{t: t, ctx: context.Background(), c: c, cl: c.Client(model.ActorUser, 1, true)}
}

func (e *semEnv) must(err error) {
	e.t.Helper()
	if err != nil {
		e.t.Fatalf("unexpected error: %v", err)
	}
}

// want fails unless err satisfies the apimachinery predicate pred.
func (e *semEnv) want(err error, pred func(error) bool, what string) {
	e.t.Helper()
	if err == nil {
		e.t.Fatalf("%s: got no error", what)
	}
	if !pred(err) {
		e.t.Fatalf("%s: wrong error %T: %v", what, err, err)
	}
}

func (e *semEnv) head() model.Revision { return e.c.Store.Revision() }

func (e *semEnv) wantHead(want model.Revision) {
	e.t.Helper()
	if got := e.head(); got != want {
		e.t.Fatalf("store revision %d, want %d", got, want)
	}
}

func semCM(ns, name string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: data}
}

func newSemWidget(ns, name string, size int32) *semWidget {
	return &semWidget{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: semWidgetSpec{Size: size}}
}

// semSts is a valid StatefulSet: a selector that selects its template, one
// container.
func semSts(ns, name string) *appsv1.StatefulSet {
	l := map[string]string{"app": name}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: appsv1.StatefulSetSpec{
		Selector: &metav1.LabelSelector{MatchLabels: l}, ServiceName: name,
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: l}, Spec: semPodSpec()}}}
}

func semPodSpec() corev1.PodSpec {
	return corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox:1"}}}
}

// semPod is a pod bound to the node (spec.nodeName set), so that its
// deletion is graceful.
func semPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: corev1.PodSpec{NodeName: NodeName, Containers: []corev1.Container{{Name: "main", Image: "busybox:1"}}}}
}

func (e *semEnv) getWidget(ns, name string) *semWidget {
	e.t.Helper()
	w := &semWidget{}
	e.must(e.cl.Get(e.ctx, client.ObjectKey{Namespace: ns, Name: name}, w))
	return w
}

func (e *semEnv) lastChange() *Change {
	h := e.c.Store.History()
	if len(h) == 0 {
		e.t.Fatal("empty store history")
	}
	return h[len(h)-1]
}

func TestSemantics(t *testing.T) {
	for _, tc := range semanticsCases {
		t.Run(tc.name, func(t *testing.T) { tc.run(newSemEnv(t)) })
	}
}

var semanticsCases = []struct {
	name string
	run  func(e *semEnv)
}{
	{"GlobalRevisionAndHistory", semGlobalRevision},
	{"CreateGetListUpdateDeleteErrors", semCRUDErrors},
	{"Invalid", semInvalid},
	{"Generation", semGeneration},
	{"DeterministicIdentity", semIdentity},
	{"StatusSubresource", semStatus},
	{"FinalizersAndDeletionTimestamp", semFinalizers},
	{"PodGracefulDeletion", semPodGraceful},
	{"OwnerReferencesAndPropagation", semPropagation},
	{"ListSelectorsAndOrder", semList},
	{"TypedCRDUnstructuredAndCopies", semTypedAndCopies},
	{"Patch", semPatch},
	{"DeleteAllOf", semDeleteAllOf},
	{"ClientMetadata", semClientMetadata},
}

func semGlobalRevision(e *semEnv) {
	a, b := semCM("ns", "a", nil), semCM("ns", "b", nil)
	e.must(e.cl.Create(e.ctx, a))
	e.must(e.cl.Create(e.ctx, b))
	w := newSemWidget("ns", "w", 1)
	e.must(e.cl.Create(e.ctx, w)) // another kind shares the same revision counter
	if a.ResourceVersion != "1" || b.ResourceVersion != "2" || w.ResourceVersion != "3" {
		e.t.Fatalf("resourceVersions %s %s %s, want 1 2 3", a.ResourceVersion, b.ResourceVersion, w.ResourceVersion)
	}
	a.Data = map[string]string{"k": "v"}
	e.must(e.cl.Update(e.ctx, a))
	if a.ResourceVersion != "4" {
		e.t.Fatalf("update rv %s, want 4", a.ResourceVersion)
	}
	// b's mod revision is still its creation revision.
	got := &corev1.ConfigMap{}
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(b), got))
	if got.ResourceVersion != "2" {
		e.t.Fatalf("b rv %s, want 2", got.ResourceVersion)
	}
	// A failed write is not a revision.
	stale := b.DeepCopy()
	stale.ResourceVersion = "1"
	stale.Data = map[string]string{"x": "y"}
	e.want(e.cl.Update(e.ctx, stale), apierrors.IsConflict, "stale update")
	e.wantHead(4)
	e.must(e.cl.Delete(e.ctx, b))
	e.wantHead(5)

	h := e.c.Store.History()
	want := []struct {
		rev  model.Revision
		typ  model.ChangeType
		kind string
		key  string
	}{
		{1, model.ChangeAdded, "ConfigMap", "ns/a"},
		{2, model.ChangeAdded, "ConfigMap", "ns/b"},
		{3, model.ChangeAdded, "Widget", "ns/w"},
		{4, model.ChangeModified, "ConfigMap", "ns/a"},
		{5, model.ChangeDeleted, "ConfigMap", "ns/b"},
	}
	if len(h) != len(want) {
		e.t.Fatalf("history has %d changes, want %d", len(h), len(want))
	}
	for i, w := range want {
		c := h[i]
		if c.Rev != w.rev || c.Type != w.typ || c.KindName() != w.kind || c.Key != w.key {
			e.t.Fatalf("change %d = {%d %v %s %s}, want %+v", i, c.Rev, c.Type, c.KindName(), c.Key, w)
		}
		if c.Object.GetResourceVersion() != w.rev.String() {
			e.t.Fatalf("change %d object rv %s, want %s", i, c.Object.GetResourceVersion(), w.rev)
		}
	}
	// History keeps the old state of a.
	if old := h[0].Object.(*corev1.ConfigMap); len(old.Data) != 0 {
		e.t.Fatalf("history rewrote the first state of a: %v", old.Data)
	}
	if cur := h[3].Object.(*corev1.ConfigMap); cur.Data["k"] != "v" {
		e.t.Fatalf("history lost the update of a: %v", cur.Data)
	}
	// The event log mirrors the writes (plus the Get and the failed update).
	if n := len(e.c.History.Events); n != 7 {
		e.t.Fatalf("%d history events, want 7:\n%s", n, e.c.History.Lines())
	}
	if ev := e.c.History.Events[5]; ev.Op != model.OpUpdate || !strings.HasPrefix(ev.Err, "Conflict") || ev.Change != model.ChangeNone {
		e.t.Fatalf("failed update event: %s", ev.Line())
	}
}

func semCRUDErrors(e *semEnv) {
	key := client.ObjectKey{Namespace: "ns", Name: "a"}
	e.want(e.cl.Get(e.ctx, key, &corev1.ConfigMap{}), apierrors.IsNotFound, "get missing")
	e.want(e.cl.Update(e.ctx, semCM("ns", "a", nil)), apierrors.IsNotFound, "update missing")
	e.want(e.cl.Delete(e.ctx, semCM("ns", "a", nil)), apierrors.IsNotFound, "delete missing")
	e.wantHead(0)

	a := semCM("ns", "a", map[string]string{"v": "1"})
	e.must(e.cl.Create(e.ctx, a))
	e.want(e.cl.Create(e.ctx, semCM("ns", "a", nil)), apierrors.IsAlreadyExists, "create twice")
	// The same name in another namespace is another object.
	e.must(e.cl.Create(e.ctx, semCM("other", "a", nil)))

	got := &corev1.ConfigMap{}
	e.must(e.cl.Get(e.ctx, key, got))
	if got.Data["v"] != "1" || got.UID != a.UID {
		e.t.Fatalf("get returned %+v", got)
	}
	stale := got.DeepCopy()
	got.Data["v"] = "2"
	e.must(e.cl.Update(e.ctx, got))
	stale.Data["v"] = "3"
	e.want(e.cl.Update(e.ctx, stale), apierrors.IsConflict, "update with stale resourceVersion")
	// Built-in kinds accept an unconditional update (no resourceVersion).
	stale.ResourceVersion = ""
	e.must(e.cl.Update(e.ctx, stale))
	if stale.Data["v"] != "3" {
		e.t.Fatalf("unconditional update lost: %v", stale.Data)
	}

	var list corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &list))
	if len(list.Items) != 2 || list.ResourceVersion != e.head().String() {
		e.t.Fatalf("list: %d items at rv %s", len(list.Items), list.ResourceVersion)
	}

	// Delete preconditions.
	wrongUID := types.UID("not-the-uid")
	e.want(e.cl.Delete(e.ctx, semCM("ns", "a", nil), client.Preconditions{UID: &wrongUID}), apierrors.IsConflict, "delete with wrong UID")
	oldRV := a.ResourceVersion
	e.want(e.cl.Delete(e.ctx, semCM("ns", "a", nil), client.Preconditions{ResourceVersion: &oldRV}), apierrors.IsConflict, "delete with stale resourceVersion")
	// A stale UID in the object of an update is a conflict too.
	byUID := stale.DeepCopy()
	byUID.UID = wrongUID
	e.want(e.cl.Update(e.ctx, byUID), apierrors.IsConflict, "update with wrong UID")

	uid, rv := stale.UID, stale.ResourceVersion
	before := e.head()
	e.must(e.cl.Delete(e.ctx, semCM("ns", "a", nil), client.Preconditions{UID: &uid, ResourceVersion: &rv}))
	e.wantHead(before + 1)
	e.want(e.cl.Get(e.ctx, key, &corev1.ConfigMap{}), apierrors.IsNotFound, "get deleted")
	// Creating it again gives a new object: new UID.
	again := semCM("ns", "a", nil)
	e.must(e.cl.Create(e.ctx, again))
	if again.UID == a.UID {
		e.t.Fatal("recreated object reused the UID")
	}
}

func semInvalid(e *semEnv) {
	e.want(e.cl.Create(e.ctx, semCM("ns", "Bad_Name", nil)), apierrors.IsInvalid, "bad name")
	e.want(e.cl.Create(e.ctx, semCM("", "a", nil)), apierrors.IsInvalid, "missing namespace")
	e.want(e.cl.Create(e.ctx, semCM("ns", "", nil)), apierrors.IsInvalid, "missing name")
	withRV := semCM("ns", "a", nil)
	withRV.ResourceVersion = "7"
	e.want(e.cl.Create(e.ctx, withRV), apierrors.IsBadRequest, "create with resourceVersion")
	e.wantHead(0)

	w := newSemWidget("ns", "w", 1)
	e.must(e.cl.Create(e.ctx, w))
	w.ResourceVersion = ""
	w.Spec.Size = 2
	e.want(e.cl.Update(e.ctx, w), apierrors.IsInvalid, "custom resource update without resourceVersion")
	w2 := newSemWidget("ns", "w", 3)
	e.want(e.c.Client("user", 1, true).Status().Update(e.ctx, w2), apierrors.IsInvalid, "custom resource status update without resourceVersion")
	garbage := e.getWidget("ns", "w")
	garbage.ResourceVersion = "abc"
	e.want(e.cl.Update(e.ctx, garbage), apierrors.IsBadRequest, "unparsable resourceVersion")
	e.wantHead(1)
	if got := e.getWidget("ns", "w"); got.Spec.Size != 1 {
		e.t.Fatalf("refused update changed the store: %+v", got.Spec)
	}
	// Adding a finalizer to an object being deleted: see
	// FinalizersAndDeletionTimestamp.
}

func semGeneration(e *semEnv) {
	w := newSemWidget("ns", "w", 1)
	e.must(e.cl.Create(e.ctx, w))
	if w.Generation != 1 {
		e.t.Fatalf("generation on create %d", w.Generation)
	}
	w.Spec.Size = 2
	e.must(e.cl.Update(e.ctx, w))
	if w.Generation != 2 || w.ResourceVersion != "2" {
		e.t.Fatalf("spec change: generation %d rv %s, want 2 2", w.Generation, w.ResourceVersion)
	}
	w.Labels = map[string]string{"tier": "a"}
	e.must(e.cl.Update(e.ctx, w))
	if w.Generation != 2 || w.ResourceVersion != "3" {
		e.t.Fatalf("label change: generation %d rv %s, want 2 3", w.Generation, w.ResourceVersion)
	}
	w.Status.Ready = 5
	e.must(e.cl.Status().Update(e.ctx, w))
	if w.Generation != 2 || w.ResourceVersion != "4" || w.Status.Ready != 5 {
		e.t.Fatalf("status change: generation %d rv %s ready %d, want 2 4 5", w.Generation, w.ResourceVersion, w.Status.Ready)
	}
	// No-op updates, main resource and status: no revision, same rv.
	events := len(e.c.History.Events)
	e.must(e.cl.Update(e.ctx, w))
	e.must(e.cl.Status().Update(e.ctx, w))
	e.wantHead(4)
	if w.ResourceVersion != "4" || len(e.c.Store.History()) != 4 {
		e.t.Fatalf("no-op update wrote: rv %s, %d changes", w.ResourceVersion, len(e.c.Store.History()))
	}
	for _, ev := range e.c.History.Events[events:] {
		if ev.Change != model.ChangeNone || ev.Rev != 4 {
			e.t.Fatalf("no-op update recorded as a change: %s", ev.Line())
		}
	}
	// A spec change through a patch bumps it as well; a status patch does not.
	e.must(e.cl.Patch(e.ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"owner":"x"}}`))))
	if w.Generation != 3 {
		e.t.Fatalf("spec patch: generation %d, want 3", w.Generation)
	}
	e.must(e.cl.Status().Patch(e.ctx, w, client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Up"}}`))))
	if w.Generation != 3 || w.Status.Phase != "Up" {
		e.t.Fatalf("status patch: generation %d phase %q", w.Generation, w.Status.Phase)
	}
	// A ConfigMap has no generation at all: its registry strategy never
	// sets one, so it stays 0 (absent) through data changes.
	c := semCM("ns", "c", map[string]string{"a": "1"})
	e.must(e.cl.Create(e.ctx, c))
	c.Data["a"] = "2"
	e.must(e.cl.Update(e.ctx, c))
	if c.Generation != 0 {
		e.t.Fatalf("configmap data change: generation %d, want 0 (ConfigMaps have none)", c.Generation)
	}
}

func semIdentity(e *semEnv) {
	a := semCM("ns", "a", nil)
	e.must(e.cl.Create(e.ctx, a))
	if !a.CreationTimestamp.Time.Equal(model.Epoch) {
		e.t.Fatalf("creationTimestamp %v, want the epoch %v", a.CreationTimestamp, model.Epoch)
	}
	e.c.Clock.Advance(model.FromDuration(90 * time.Second))
	b := semCM("ns", "b", nil)
	e.must(e.cl.Create(e.ctx, b))
	if want := model.Epoch.Add(90 * time.Second); !b.CreationTimestamp.Time.Equal(want) {
		e.t.Fatalf("creationTimestamp %v, want %v", b.CreationTimestamp, want)
	}
	if a.UID == "" || a.UID == b.UID {
		e.t.Fatalf("UIDs %q %q", a.UID, b.UID)
	}
	g1 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}}
	g2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}}
	e.must(e.cl.Create(e.ctx, g1))
	e.must(e.cl.Create(e.ctx, g2))
	for _, g := range []*corev1.ConfigMap{g1, g2} {
		if !strings.HasPrefix(g.Name, "gen-") || len(g.Name) != len("gen-")+5 {
			e.t.Fatalf("generated name %q", g.Name)
		}
	}
	if g1.Name == g2.Name {
		e.t.Fatalf("generateName gave %q twice", g1.Name)
	}
	// The same calls on a fresh cluster give the same identities.
	f := newSemEnv(e.t)
	fa, fb := semCM("ns", "a", nil), semCM("ns", "b", nil)
	f.must(f.cl.Create(f.ctx, fa))
	f.c.Clock.Advance(model.FromDuration(90 * time.Second))
	f.must(f.cl.Create(f.ctx, fb))
	fg1 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}}
	fg2 := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}}
	f.must(f.cl.Create(f.ctx, fg1))
	f.must(f.cl.Create(f.ctx, fg2))
	if fa.UID != a.UID || fb.UID != b.UID || fg1.UID != g1.UID || fg1.Name != g1.Name || fg2.Name != g2.Name ||
		!fb.CreationTimestamp.Equal(&b.CreationTimestamp) {
		e.t.Fatalf("identities differ between runs: %s/%s %s/%s %s/%s %s/%s", fa.UID, a.UID, fb.UID, b.UID, fg1.Name, g1.Name, fg2.Name, g2.Name)
	}
	// A generated name that clashes with an existing one is retried with
	// the next suffix (the apiserver's RetryGenerateName), not an
	// overwrite and not an error; TestGenerateName covers the limit.
	clash := semCM("ns", g1.Name, nil)
	f2 := newSemEnv(e.t)
	f2.must(f2.cl.Create(f2.ctx, clash))
	retried := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", GenerateName: "gen-"}}
	f2.must(f2.cl.Create(f2.ctx, retried))
	if retried.Name == g1.Name || !strings.HasPrefix(retried.Name, "gen-") {
		e.t.Fatalf("generated name after a clash: %q (clashing name %q)", retried.Name, g1.Name)
	}
}

func semStatus(e *semEnv) {
	p := semPod("ns", "p")
	p.Status.Phase = corev1.PodRunning
	e.must(e.cl.Create(e.ctx, p))
	// The request's status is dropped and the pod starts Pending.
	if p.Status.Phase != corev1.PodPending {
		e.t.Fatalf("pod status on create: %q, want Pending", p.Status.Phase)
	}
	ss := semSts("ns", "s")
	ss.Status = appsv1.StatefulSetStatus{Replicas: 3}
	e.must(e.cl.Create(e.ctx, ss))
	got := &appsv1.StatefulSet{}
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(ss), got))
	if got.Status.Replicas != 0 {
		e.t.Fatalf("statefulset status on create kept: %d", got.Status.Replicas)
	}

	// Status().Update changes status only.
	p.Status.Phase = corev1.PodRunning
	p.Labels = map[string]string{"ignored": "yes"}
	p.Spec.Containers[0].Image = "ignored:2"
	e.must(e.cl.Status().Update(e.ctx, p))
	sp := &corev1.Pod{}
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), sp))
	if sp.Status.Phase != corev1.PodRunning || sp.Labels != nil || sp.Spec.Containers[0].Image != "busybox:1" || sp.Generation != 1 {
		e.t.Fatalf("status update wrote more than status: %+v", sp)
	}
	// The returned object is the stored one: the ignored changes are gone.
	if p.Labels != nil || p.Spec.Containers[0].Image != "busybox:1" {
		e.t.Fatalf("status update returned the request, not the stored object: %+v", p.ObjectMeta)
	}

	// A main-resource update keeps the stored status.
	sp.Status.Phase = corev1.PodFailed
	sp.Labels = map[string]string{"app": "x"}
	e.must(e.cl.Update(e.ctx, sp))
	if sp.Status.Phase != corev1.PodRunning || sp.Labels["app"] != "x" {
		e.t.Fatalf("main update: phase %q labels %v", sp.Status.Phase, sp.Labels)
	}

	// ConfigMap has no status: its status subresource does not exist.
	c := semCM("ns", "c", nil)
	e.must(e.cl.Create(e.ctx, c))
	before := e.head()
	e.want(e.cl.Status().Update(e.ctx, c), apierrors.IsNotFound, "status update of a ConfigMap")
	e.want(e.cl.Status().Create(e.ctx, c, &corev1.ConfigMap{}), apierrors.IsMethodNotSupported, "status create")
	e.want(e.cl.SubResource("status").Create(e.ctx, p, &corev1.Pod{}), apierrors.IsMethodNotSupported, "status create via SubResource")
	if err := e.cl.SubResource("scale").Update(e.ctx, ss); err == nil {
		e.t.Fatal("scale subresource update succeeded")
	}
	e.wantHead(before)
	// Status of a missing object.
	e.want(e.cl.Status().Update(e.ctx, semPod("ns", "nope")), apierrors.IsNotFound, "status update of a missing pod")
}

func semFinalizers(e *semEnv) {
	w := newSemWidget("ns", "w", 1)
	w.Finalizers = []string{"example.opcheck.dev/cleanup"}
	e.must(e.cl.Create(e.ctx, w))
	e.c.Clock.Advance(model.FromDuration(5 * time.Second))
	e.must(e.cl.Delete(e.ctx, w))
	got := e.getWidget("ns", "w")
	if got.DeletionTimestamp == nil || !got.DeletionTimestamp.Time.Equal(model.Epoch.Add(5*time.Second)) {
		e.t.Fatalf("deletionTimestamp %v", got.DeletionTimestamp)
	}
	if got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != 0 {
		e.t.Fatalf("deletionGracePeriodSeconds %v", got.DeletionGracePeriodSeconds)
	}
	if e.lastChange().Type != model.ChangeModified {
		e.t.Fatalf("delete with finalizers recorded as %v", e.lastChange().Type)
	}
	// Deleting again changes nothing.
	rev := e.head()
	e.must(e.cl.Delete(e.ctx, got))
	e.wantHead(rev)
	// No new finalizers on an object being deleted.
	add := got.DeepCopy()
	add.Finalizers = append(add.Finalizers, "example.opcheck.dev/late")
	e.want(e.cl.Update(e.ctx, add), apierrors.IsInvalid, "adding a finalizer while deleting")
	e.wantHead(rev)
	// Other updates still work, and the deletionTimestamp cannot be cleared.
	got.Spec.Size = 9
	got.DeletionTimestamp = nil
	e.must(e.cl.Update(e.ctx, got))
	if got.DeletionTimestamp == nil {
		e.t.Fatal("update cleared deletionTimestamp")
	}
	// Removing the last finalizer deletes it.
	got.Finalizers = nil
	e.must(e.cl.Update(e.ctx, got))
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(w), &semWidget{}), apierrors.IsNotFound, "get after last finalizer removed")
	if c := e.lastChange(); c.Type != model.ChangeDeleted || c.Key != "ns/w" {
		e.t.Fatalf("last change %v %s", c.Type, c.Key)
	}
	// Finalizers on create are allowed, and set ones are kept by updates.
	w2 := newSemWidget("ns", "w2", 1)
	w2.Finalizers = []string{"a/b", "c/d"}
	e.must(e.cl.Create(e.ctx, w2))
	e.must(e.cl.Delete(e.ctx, w2))
	w2 = e.getWidget("ns", "w2")
	w2.Finalizers = []string{"c/d"}
	e.must(e.cl.Update(e.ctx, w2))
	if got := e.getWidget("ns", "w2"); len(got.Finalizers) != 1 || got.DeletionTimestamp == nil {
		e.t.Fatalf("after removing one of two finalizers: %+v", got.ObjectMeta)
	}
}

func semPodGraceful(e *semEnv) {
	p := semPod("ns", "p")
	e.must(e.cl.Create(e.ctx, p))
	e.must(e.cl.Delete(e.ctx, p))
	got := &corev1.Pod{}
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), got))
	if got.DeletionTimestamp == nil || got.DeletionGracePeriodSeconds == nil || *got.DeletionGracePeriodSeconds != DefaultPodGracePeriodSeconds {
		e.t.Fatalf("graceful delete: %v %v", got.DeletionTimestamp, got.DeletionGracePeriodSeconds)
	}
	// deletionTimestamp is when the grace period ends, as the apiserver
	// sets it.
	if want := e.c.Clock.Wall().Add(DefaultPodGracePeriodSeconds * time.Second); !got.DeletionTimestamp.Time.Equal(want) {
		e.t.Fatalf("deletionTimestamp %v, want now + 30s = %v", got.DeletionTimestamp, want)
	}
	// Updates do not remove a pod in graceful deletion.
	got.Labels = map[string]string{"x": "y"}
	e.must(e.cl.Update(e.ctx, got))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), got))
	// A longer grace period does not extend it.
	e.must(e.cl.Delete(e.ctx, got, client.GracePeriodSeconds(60)))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), got))
	if *got.DeletionGracePeriodSeconds != DefaultPodGracePeriodSeconds {
		e.t.Fatalf("grace extended to %d", *got.DeletionGracePeriodSeconds)
	}
	// A shorter one moves the deletionTimestamp with it.
	e.must(e.cl.Delete(e.ctx, got, client.GracePeriodSeconds(5)))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), got))
	if want := e.c.Clock.Wall().Add(5 * time.Second); *got.DeletionGracePeriodSeconds != 5 || !got.DeletionTimestamp.Time.Equal(want) {
		e.t.Fatalf("shortened grace: %d, deletionTimestamp %v, want 5 and %v", *got.DeletionGracePeriodSeconds, got.DeletionTimestamp, want)
	}
	// The kubelet's confirmation: grace period 0.
	e.must(e.cl.Delete(e.ctx, got, client.GracePeriodSeconds(0)))
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), &corev1.Pod{}), apierrors.IsNotFound, "pod after grace 0")

	// A pod never scheduled, or terminated, has no kubelet to confirm: it
	// is deleted at once, as the apiserver does.
	u := semPod("ns", "unscheduled")
	u.Spec.NodeName = ""
	e.must(e.cl.Create(e.ctx, u))
	e.must(e.cl.Delete(e.ctx, u))
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(u), &corev1.Pod{}), apierrors.IsNotFound, "unscheduled pod after delete")
	done := semPod("ns", "done")
	e.must(e.cl.Create(e.ctx, done))
	done.Status.Phase = corev1.PodSucceeded
	e.must(e.cl.Status().Update(e.ctx, done))
	e.must(e.cl.Delete(e.ctx, done))
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(done), &corev1.Pod{}), apierrors.IsNotFound, "succeeded pod after delete")

	// The pod spec's terminationGracePeriodSeconds is the default.
	q := semPod("ns", "q")
	ten := int64(10)
	q.Spec.TerminationGracePeriodSeconds = &ten
	e.must(e.cl.Create(e.ctx, q))
	e.must(e.cl.Delete(e.ctx, q))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(q), got))
	if *got.DeletionGracePeriodSeconds != 10 {
		e.t.Fatalf("spec grace: %d", *got.DeletionGracePeriodSeconds)
	}
	// Grace 0 at once deletes a pod without finalizers immediately.
	r := semPod("ns", "r")
	e.must(e.cl.Create(e.ctx, r))
	e.must(e.cl.Delete(e.ctx, r, client.GracePeriodSeconds(0)))
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(r), &corev1.Pod{}), apierrors.IsNotFound, "pod deleted with grace 0")
	// A pod with a finalizer and grace 0 waits for its finalizer.
	f := semPod("ns", "f")
	f.Finalizers = []string{"x/y"}
	e.must(e.cl.Create(e.ctx, f))
	e.must(e.cl.Delete(e.ctx, f, client.GracePeriodSeconds(0)))
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(f), got))
	got.Finalizers = nil
	e.must(e.cl.Update(e.ctx, got))
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(f), &corev1.Pod{}), apierrors.IsNotFound, "pod after finalizer removal")
}

func semPropagation(e *semEnv) {
	parent := newSemWidget("ns", "parent", 1)
	e.must(e.cl.Create(e.ctx, parent))
	ctrl := true
	child := semCM("ns", "child", nil)
	child.OwnerReferences = []metav1.OwnerReference{{APIVersion: semWidgetGV.String(), Kind: "Widget", Name: "parent", UID: parent.UID, Controller: &ctrl}}
	e.must(e.cl.Create(e.ctx, child))
	gotChild := &corev1.ConfigMap{}
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(child), gotChild))
	if len(gotChild.OwnerReferences) != 1 || gotChild.OwnerReferences[0].UID != parent.UID {
		e.t.Fatalf("ownerReferences not kept: %+v", gotChild.OwnerReferences)
	}

	for _, tc := range []struct {
		policy    client.PropagationPolicy
		finalizer string
	}{
		{client.PropagationPolicy(metav1.DeletePropagationForeground), FinalizerForeground},
		{client.PropagationPolicy(metav1.DeletePropagationOrphan), FinalizerOrphan},
	} {
		o := newSemWidget("ns", "o-"+strings.ToLower(string(tc.policy)), 1)
		e.must(e.cl.Create(e.ctx, o))
		e.must(e.cl.Delete(e.ctx, o, tc.policy))
		got := e.getWidget(o.Namespace, o.Name)
		if got.DeletionTimestamp == nil || len(got.Finalizers) != 1 || got.Finalizers[0] != tc.finalizer {
			e.t.Fatalf("%s: %+v", tc.policy, got.ObjectMeta)
		}
		// Deleting again with the same policy does not add it twice.
		e.must(e.cl.Delete(e.ctx, got, tc.policy))
		if again := e.getWidget(o.Namespace, o.Name); len(again.Finalizers) != 1 {
			e.t.Fatalf("%s twice: finalizers %v", tc.policy, again.Finalizers)
		}
	}
	e.want(e.cl.Delete(e.ctx, semCM("ns", "child", nil), client.PropagationPolicy("Sideways")), apierrors.IsBadRequest, "unknown propagation policy")

	// Background deletes the owner at once; the dependent stays for the
	// garbage collector.
	e.must(e.cl.Delete(e.ctx, parent, client.PropagationPolicy(metav1.DeletePropagationBackground)))
	e.want(e.cl.Get(e.ctx, client.ObjectKeyFromObject(parent), &semWidget{}), apierrors.IsNotFound, "background-deleted owner")
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(child), gotChild))
	if gotChild.DeletionTimestamp != nil {
		e.t.Fatal("the store itself deleted a dependent")
	}
}

func semList(e *semEnv) {
	for _, x := range []struct{ ns, name, app string }{
		{"b", "z", "web"}, {"a", "y", "db"}, {"b", "a", "web"}, {"a", "x", "web"}, {"a", "m", ""},
	} {
		c := semCM(x.ns, x.name, nil)
		if x.app != "" {
			c.Labels = map[string]string{"app": x.app}
		}
		e.must(e.cl.Create(e.ctx, c))
	}
	names := func(l *corev1.ConfigMapList) string {
		var s []string
		for _, it := range l.Items {
			s = append(s, it.Namespace+"/"+it.Name)
		}
		return strings.Join(s, ",")
	}
	sel, err := labels.Parse("app in (web,db)")
	e.must(err)
	for _, tc := range []struct {
		name string
		opts []client.ListOption
		want string
	}{
		{"all", nil, "a/m,a/x,a/y,b/a,b/z"},
		{"namespace", []client.ListOption{client.InNamespace("b")}, "b/a,b/z"},
		{"labels", []client.ListOption{client.MatchingLabels{"app": "web"}}, "a/x,b/a,b/z"},
		{"labels in namespace", []client.ListOption{client.InNamespace("a"), client.MatchingLabels{"app": "web"}}, "a/x"},
		{"label selector", []client.ListOption{client.MatchingLabelsSelector{Selector: sel}}, "a/x,a/y,b/a,b/z"},
		{"has label", []client.ListOption{client.HasLabels{"app"}}, "a/x,a/y,b/a,b/z"},
		{"field name", []client.ListOption{client.MatchingFields{"metadata.name": "a"}}, "b/a"},
		{"field namespace", []client.ListOption{client.MatchingFields{"metadata.namespace": "a"}}, "a/m,a/x,a/y"},
		{"fields and labels", []client.ListOption{client.MatchingFields{"metadata.namespace": "b"}, client.MatchingLabels{"app": "web"}}, "b/a,b/z"},
		{"no match", []client.ListOption{client.MatchingLabels{"app": "none"}}, ""},
	} {
		var l corev1.ConfigMapList
		e.must(e.cl.List(e.ctx, &l, tc.opts...))
		if got := names(&l); got != tc.want {
			e.t.Fatalf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
	// The same from a watch cache of apiserver-2.
	var cached corev1.ConfigMapList
	e.must(e.c.Client("user", 2, false).List(e.ctx, &cached, client.MatchingLabels{"app": "web"}))
	if got := names(&cached); got != "a/x,b/a,b/z" {
		e.t.Fatalf("cached list %q", got)
	}
	var l corev1.ConfigMapList
	e.want(e.cl.List(e.ctx, &l, client.MatchingFields{"status.phase": "Running"}), apierrors.IsBadRequest, "unsupported field selector")
	e.want(e.c.Client("user", 2, false).List(e.ctx, &l, client.MatchingFields{"data.x": "1"}), apierrors.IsBadRequest, "unsupported field selector (cached)")
}

func semTypedAndCopies(e *semEnv) {
	// A CRD type through the scheme: create, get, list.
	w := newSemWidget("ns", "w", 3)
	w.Spec.Tags = map[string]string{"k": "v"}
	e.must(e.cl.Create(e.ctx, w))
	// controller-runtime's typed client answers with empty apiVersion and
	// kind (its decoder clears them); the stored object keeps them.
	if w.APIVersion != "" || w.Kind != "" {
		e.t.Fatalf("typemeta of a typed create answer: %+v, want empty", w.TypeMeta)
	}
	if got := e.c.History.Events[len(e.c.History.Events)-1].Object.GetObjectKind().GroupVersionKind(); got != semWidgetGV.WithKind("Widget") {
		e.t.Fatalf("stored object's kind %v, want Widget", got)
	}
	var wl semWidgetList
	e.must(e.cl.List(e.ctx, &wl, client.InNamespace("ns")))
	if len(wl.Items) != 1 || wl.Items[0].Spec.Size != 3 {
		e.t.Fatalf("widget list %+v", wl.Items)
	}
	// Mutating after Create does not change the store.
	w.Spec.Tags["k"] = "mutated"
	w.Spec.Size = 100
	got := e.getWidget("ns", "w")
	if got.Spec.Tags["k"] != "v" || got.Spec.Size != 3 {
		e.t.Fatalf("store shares the created object: %+v", got.Spec)
	}
	// Mutating after Get does not either.
	got.Spec.Tags["k"] = "mutated"
	got.Labels = map[string]string{"x": "y"}
	if again := e.getWidget("ns", "w"); again.Spec.Tags["k"] != "v" || again.Labels != nil {
		e.t.Fatalf("store shares the read object: %+v", again)
	}
	// Nor mutating a listed item, nor the object after Update.
	wl.Items[0].Spec.Tags["k"] = "mutated"
	upd := e.getWidget("ns", "w")
	upd.Spec.Size = 4
	e.must(e.cl.Update(e.ctx, upd))
	upd.Spec.Tags["k"] = "mutated"
	if again := e.getWidget("ns", "w"); again.Spec.Tags["k"] != "v" || again.Spec.Size != 4 {
		e.t.Fatalf("store shares list items or the updated object: %+v", again.Spec)
	}
	// Nor are history objects touched by later reads and writes.
	if first := e.c.Store.History()[0].Object.(*semWidget); first.Spec.Size != 3 || first.Spec.Tags["k"] != "v" {
		e.t.Fatalf("history object changed: %+v", first.Spec)
	}

	// Unstructured Create (of the CRD) and Get (of a built-in).
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(semWidgetGV.String())
	u.SetKind("Widget")
	u.SetNamespace("ns")
	u.SetName("u")
	e.must(unstructured.SetNestedField(u.Object, int64(7), "spec", "size"))
	e.must(e.cl.Create(e.ctx, u))
	if u.GetUID() == "" || u.GetResourceVersion() == "" {
		e.t.Fatalf("unstructured create not filled back: %v", u.Object)
	}
	if tw := e.getWidget("ns", "u"); tw.Spec.Size != 7 || tw.UID != u.GetUID() {
		e.t.Fatalf("unstructured create stored %+v", tw)
	}
	e.must(e.cl.Create(e.ctx, semPod("ns", "p")))
	up := &unstructured.Unstructured{}
	up.SetAPIVersion("v1")
	up.SetKind("Pod")
	e.must(e.cl.Get(e.ctx, client.ObjectKey{Namespace: "ns", Name: "p"}, up))
	img, _, err := unstructured.NestedSlice(up.Object, "spec", "containers")
	e.must(err)
	if len(img) != 1 || up.GetKind() != "Pod" || up.GetName() != "p" {
		e.t.Fatalf("unstructured get: %v", up.Object)
	}
	e.want(e.cl.Get(e.ctx, client.ObjectKey{Namespace: "ns", Name: "missing"}, up), apierrors.IsNotFound, "unstructured get missing")
	ul := &unstructured.UnstructuredList{}
	ul.SetAPIVersion(semWidgetGV.String())
	ul.SetKind("WidgetList")
	e.must(e.cl.List(e.ctx, ul))
	if len(ul.Items) != 2 || ul.Items[0].GetName() != "u" || ul.Items[1].GetName() != "w" {
		e.t.Fatalf("unstructured list %d items", len(ul.Items))
	}
	// A type the scheme does not know is refused.
	type unknown struct{ corev1.ConfigMap }
	if err := e.cl.Create(e.ctx, &unknown{}); err == nil {
		e.t.Fatal("create of an unregistered type succeeded")
	}
}

func semPatch(e *semEnv) {
	w := newSemWidget("ns", "w", 1)
	w.Spec.Tags = map[string]string{"a": "1", "b": "2"}
	e.must(e.cl.Create(e.ctx, w))

	// Merge patch from a diff.
	orig := w.DeepCopy()
	w.Spec.Owner = "me"
	delete(w.Spec.Tags, "a")
	e.must(e.cl.Patch(e.ctx, w, client.MergeFrom(orig)))
	got := e.getWidget("ns", "w")
	if got.Spec.Owner != "me" || got.Spec.Tags["a"] != "" || got.Spec.Tags["b"] != "2" || got.ResourceVersion != "2" {
		e.t.Fatalf("merge patch: %+v rv %s", got.Spec, got.ResourceVersion)
	}
	// A plain merge patch built from a stale object still applies (no lock).
	stale := orig.DeepCopy()
	stale.Spec.Size = 5
	e.must(e.cl.Patch(e.ctx, stale, client.MergeFrom(orig)))
	if got := e.getWidget("ns", "w"); got.Spec.Size != 5 || got.Spec.Owner != "me" {
		e.t.Fatalf("unlocked merge patch: %+v", got.Spec)
	}
	// With the optimistic lock it is a conflict.
	stale2 := orig.DeepCopy()
	stale2.Spec.Size = 6
	rev := e.head()
	e.want(e.cl.Patch(e.ctx, stale2, client.MergeFromWithOptions(orig, client.MergeFromWithOptimisticLock{})), apierrors.IsConflict, "optimistic-lock merge patch from a stale object")
	e.wantHead(rev)
	// ...and succeeds from a fresh one.
	fresh := e.getWidget("ns", "w")
	base := fresh.DeepCopy()
	fresh.Spec.Size = 6
	e.must(e.cl.Patch(e.ctx, fresh, client.MergeFromWithOptions(base, client.MergeFromWithOptimisticLock{})))
	if fresh.Spec.Size != 6 || fresh.ResourceVersion != (rev+1).String() {
		e.t.Fatalf("locked merge patch: size %d rv %s", fresh.Spec.Size, fresh.ResourceVersion)
	}

	// JSON patch.
	e.must(e.cl.Patch(e.ctx, fresh, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"replace","path":"/spec/size","value":8},{"op":"add","path":"/metadata/labels","value":{"l":"v"}}]`))))
	if got := e.getWidget("ns", "w"); got.Spec.Size != 8 || got.Labels["l"] != "v" {
		e.t.Fatalf("json patch: %+v", got)
	}
	e.want(e.cl.Patch(e.ctx, fresh, client.RawPatch(types.JSONPatchType, []byte(`[{"op":"test","path":"/spec/size","value":1}]`))), apierrors.IsBadRequest, "failing JSON patch test op")

	// Strategic merge patch: built-ins only. Containers merge by name (in a
	// Deployment's pod template: a pod's own container list is immutable).
	one := int32(1)
	p := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}, Spec: appsv1.DeploymentSpec{Replicas: &one,
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "p"}},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "p"}}, Spec: semPod("ns", "p").Spec}}}
	e.must(e.cl.Create(e.ctx, p))
	e.must(e.cl.Patch(e.ctx, p, client.RawPatch(types.StrategicMergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"side:1"}]}}}}`))))
	images := func(p *appsv1.Deployment) string {
		var s []string
		for _, c := range p.Spec.Template.Spec.Containers {
			s = append(s, c.Name+"="+c.Image)
		}
		slices.Sort(s)
		return strings.Join(s, ",")
	}
	if got := images(p); got != "main=busybox:1,side=side:1" {
		e.t.Fatalf("strategic merge patch: %s", got)
	}
	porig := p.DeepCopy()
	for i := range p.Spec.Template.Spec.Containers {
		if p.Spec.Template.Spec.Containers[i].Name == "main" {
			p.Spec.Template.Spec.Containers[i].Image = "busybox:2"
		}
	}
	e.must(e.cl.Patch(e.ctx, p, client.StrategicMergeFrom(porig)))
	gp := &appsv1.Deployment{}
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(p), gp))
	if got := images(gp); got != "main=busybox:2,side=side:1" {
		e.t.Fatalf("StrategicMergeFrom: %s", got)
	}
	// The same strategic patch as a merge patch replaces the list.
	e.must(e.cl.Patch(e.ctx, p, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"only","image":"only:1"}]}}}}`))))
	if len(p.Spec.Template.Spec.Containers) != 1 || p.Spec.Template.Spec.Containers[0].Name != "only" {
		e.t.Fatalf("merge patch of a list: %+v", p.Spec.Template.Spec.Containers)
	}
	werr := e.cl.Patch(e.ctx, fresh, client.StrategicMergeFrom(fresh.DeepCopy()))
	e.want(werr, apierrors.IsUnsupportedMediaType, "strategic merge patch of a custom resource")
	if apierrors.ReasonForError(werr) != metav1.StatusReasonUnsupportedMediaType || errStatusCode(werr) != http.StatusUnsupportedMediaType {
		e.t.Fatalf("strategic merge refusal: %v", werr)
	}

	// Patch of a missing object.
	e.want(e.cl.Patch(e.ctx, newSemWidget("ns", "missing", 1), client.RawPatch(types.MergePatchType, []byte(`{"spec":{"size":1}}`))), apierrors.IsNotFound, "patch missing")

	// Server-side apply is refused.
	if err := e.cl.Patch(e.ctx, fresh, client.RawPatch(types.ApplyPatchType, []byte(`{}`))); !errors.Is(err, ErrApplyNotSupported) {
		e.t.Fatalf("apply patch: %v", err)
	}
	if err := e.cl.Apply(e.ctx, nil); !errors.Is(err, ErrApplyNotSupported) {
		e.t.Fatalf("Apply: %v", err)
	}
	if err := e.cl.Status().Apply(e.ctx, nil); !errors.Is(err, ErrApplyNotSupported) {
		e.t.Fatalf("Status().Apply: %v", err)
	}

	// Status().Patch changes only status.
	pp := semPod("ns", "sp")
	e.must(e.cl.Create(e.ctx, pp))
	e.must(e.cl.Status().Patch(e.ctx, pp, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"ignored":"y"}},"status":{"phase":"Running"}}`))))
	gpod := &corev1.Pod{}
	e.must(e.cl.Get(e.ctx, client.ObjectKeyFromObject(pp), gpod))
	if gp := gpod; gp.Status.Phase != corev1.PodRunning || gp.Labels != nil {
		e.t.Fatalf("status patch: phase %q labels %v", gp.Status.Phase, gp.Labels)
	}
	// A merge patch of the main resource cannot change status.
	e.must(e.cl.Patch(e.ctx, gpod, client.RawPatch(types.MergePatchType, []byte(`{"status":{"phase":"Failed"}}`))))
	if gpod.Status.Phase != corev1.PodRunning {
		e.t.Fatalf("main-resource patch changed status to %q", gpod.Status.Phase)
	}
}

func semDeleteAllOf(e *semEnv) {
	for _, x := range []struct{ ns, name, app string }{
		{"a", "p1", "web"}, {"a", "p2", "web"}, {"a", "p3", "db"}, {"b", "p4", "web"},
	} {
		c := semCM(x.ns, x.name, nil)
		c.Labels = map[string]string{"app": x.app}
		e.must(e.cl.Create(e.ctx, c))
	}
	e.must(e.cl.DeleteAllOf(e.ctx, &corev1.ConfigMap{}, client.InNamespace("a"), client.MatchingLabels{"app": "web"}))
	var l corev1.ConfigMapList
	e.must(e.cl.List(e.ctx, &l))
	var left []string
	for _, it := range l.Items {
		left = append(left, it.Namespace+"/"+it.Name)
	}
	if strings.Join(left, ",") != "a/p3,b/p4" {
		e.t.Fatalf("after DeleteAllOf: %v", left)
	}
	e.wantHead(6)
	e.want(e.cl.DeleteAllOf(e.ctx, &corev1.ConfigMap{}), apierrors.IsBadRequest, "DeleteAllOf of a namespaced kind without a namespace")
	e.want(e.cl.DeleteAllOf(e.ctx, &corev1.ConfigMap{}, client.InNamespace("a"), client.MatchingFields{"data.x": "y"}), apierrors.IsBadRequest, "DeleteAllOf with an unsupported field selector")
	// Pods: graceful unless grace 0.
	e.must(e.cl.Create(e.ctx, semPod("a", "x")))
	e.must(e.cl.Create(e.ctx, semPod("a", "y")))
	e.must(e.cl.DeleteAllOf(e.ctx, &corev1.Pod{}, client.InNamespace("a")))
	var pl corev1.PodList
	e.must(e.cl.List(e.ctx, &pl))
	if len(pl.Items) != 2 || pl.Items[0].DeletionTimestamp == nil || pl.Items[1].DeletionTimestamp == nil {
		e.t.Fatalf("graceful DeleteAllOf: %d pods", len(pl.Items))
	}
	e.must(e.cl.DeleteAllOf(e.ctx, &corev1.Pod{}, client.InNamespace("a"), client.GracePeriodSeconds(0)))
	e.must(e.cl.List(e.ctx, &pl))
	if len(pl.Items) != 0 {
		e.t.Fatalf("DeleteAllOf with grace 0 left %d pods", len(pl.Items))
	}
}

func semClientMetadata(e *semEnv) {
	if e.cl.Scheme() == nil || !e.cl.Scheme().Recognizes(semWidgetGV.WithKind("Widget")) {
		e.t.Fatal("Scheme() does not know the CRD")
	}
	m := e.cl.RESTMapper()
	pm, err := m.RESTMapping(schema.GroupKind{Kind: "Pod"}, "v1")
	e.must(err)
	if pm.Resource != corev1.SchemeGroupVersion.WithResource("pods") || pm.Scope.Name() != "namespace" {
		e.t.Fatalf("pod mapping %+v scope %s", pm.Resource, pm.Scope.Name())
	}
	wm, err := m.RESTMapping(schema.GroupKind{Group: semWidgetGV.Group, Kind: "Widget"})
	e.must(err)
	if wm.Resource != semWidgetGV.WithResource("widgets") || wm.GroupVersionKind != semWidgetGV.WithKind("Widget") {
		e.t.Fatalf("widget mapping %+v", wm)
	}
	nm, err := m.RESTMapping(schema.GroupKind{Kind: "Namespace"}, "v1")
	e.must(err)
	if nm.Scope.Name() != "root" {
		e.t.Fatalf("namespace scope %s", nm.Scope.Name())
	}
	if _, err := m.RESTMapping(schema.GroupKind{Group: "nope.example", Kind: "Nope"}); err == nil {
		e.t.Fatal("mapping of an unknown kind")
	}

	gvk, err := e.cl.GroupVersionKindFor(&semWidget{})
	e.must(err)
	if gvk != semWidgetGV.WithKind("Widget") {
		e.t.Fatalf("GVK %v", gvk)
	}
	gvk, err = e.cl.GroupVersionKindFor(&appsv1.StatefulSet{})
	e.must(err)
	if gvk != appsv1.SchemeGroupVersion.WithKind("StatefulSet") {
		e.t.Fatalf("GVK %v", gvk)
	}
	for _, tc := range []struct {
		obj  runtime.Object
		want bool
	}{
		{&corev1.Pod{}, true}, {&semWidget{}, true}, {&corev1.Namespace{}, false}, {&corev1.PersistentVolume{}, false},
	} {
		got, err := e.cl.IsObjectNamespaced(tc.obj)
		e.must(err)
		if got != tc.want {
			e.t.Fatalf("IsObjectNamespaced(%T) = %v", tc.obj, got)
		}
	}
	type unknown struct{ corev1.Pod }
	if _, err := e.cl.GroupVersionKindFor(&unknown{}); err == nil {
		e.t.Fatal("GVK of an unregistered type")
	}
	// Cluster-scoped objects: the namespace is dropped and keys are names.
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "ignored"}}
	e.must(e.cl.Create(e.ctx, ns))
	if ns.Namespace != "" || e.lastChange().Key != "team" {
		e.t.Fatalf("cluster-scoped create: ns %q key %q", ns.Namespace, e.lastChange().Key)
	}
	e.must(e.cl.Get(e.ctx, client.ObjectKey{Name: "team"}, &corev1.Namespace{}))
}

func errStatusCode(err error) int32 {
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return 0
}

// DeepCopy is a typed copy helper for the tests.
func (w *semWidget) DeepCopy() *semWidget { return w.DeepCopyObject().(*semWidget) }
