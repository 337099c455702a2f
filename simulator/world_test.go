package simulator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
)

// The "web" operator: a CRD (WebApp) and a small reconciler written the way
// an operator author would, run unmodified in the world.

var webGV = schema.GroupVersion{Group: "web.opcheck.test", Version: "v1"}

type WebAppSpec struct {
	Replicas int32 `json:"replicas"`
}

type WebAppStatus struct {
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WebAppSpec   `json:"spec,omitempty"`
	Status            WebAppStatus `json:"status,omitempty"`
}

func (in *WebApp) DeepCopyObject() runtime.Object {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return &out
}

type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []WebApp `json:"items"`
}

func (in *WebAppList) DeepCopyObject() runtime.Object {
	out := &WebAppList{TypeMeta: in.TypeMeta, Items: copyItems(in.Items)}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	return out
}

// copyItems deep-copies a test list type's items with their own
// DeepCopyObject (the test kinds have no generated DeepCopyInto).
func copyItems[T any, PT interface {
	*T
	DeepCopyObject() runtime.Object
}](items []T) []T {
	var out []T
	for i := range items {
		out = append(out, *PT(&items[i]).DeepCopyObject().(PT))
	}
	return out
}

func newWebScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	s.AddKnownTypes(webGV, &WebApp{}, &WebAppList{})
	metav1.AddToGroupVersion(s, webGV)
	return s
}

var webScheme = newWebScheme()

const webNS = "default"

type webReconciler struct{ c client.Client }

func (r *webReconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var app WebApp
	if err := r.c.Get(ctx, req.NamespacedName, &app); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	var sts appsv1.StatefulSet
	err := r.c.Get(ctx, req.NamespacedName, &sts)
	switch {
	case apierrors.IsNotFound(err):
		if err := r.c.Create(ctx, webStatefulSet(&app)); err != nil {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
	case err != nil:
		return reconcile.Result{}, err
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != app.Spec.Replicas {
		n := app.Spec.Replicas
		sts.Spec.Replicas = &n
		if err := r.c.Update(ctx, &sts); err != nil {
			return reconcile.Result{}, err
		}
	}
	if app.Status.ReadyReplicas != sts.Status.ReadyReplicas {
		app.Status.ReadyReplicas = sts.Status.ReadyReplicas
		if err := r.c.Status().Update(ctx, &app); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: 10 * time.Second}, nil
}

func webStatefulSet(app *WebApp) *appsv1.StatefulSet {
	n := app.Spec.Replicas
	isController := true
	labels := map[string]string{"app": app.Name}
	return &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: app.Namespace, Name: app.Name, Labels: labels,
			OwnerReferences: []metav1.OwnerReference{{APIVersion: webGV.String(), Kind: "WebApp", Name: app.Name, UID: app.UID, Controller: &isController}},
		},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &n,
			ServiceName: app.Name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "web", Image: "nginx:1.27",
					VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}},
				},
			}},
		},
	}
}

func webController() simulator.ControllerSpec {
	return simulator.ControllerSpec{
		Name: "web",
		For:  &WebApp{},
		Owns: []client.Object{&appsv1.StatefulSet{}},
		New:  func(c client.Client) reconcile.Reconciler { return &webReconciler{c: c} },
	}
}

func createWeb(name string, replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, &WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: name}, Spec: WebAppSpec{Replicas: replicas}})
	}
}

func scaleWeb(name string, replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var app WebApp
		if err := c.Get(ctx, client.ObjectKey{Namespace: webNS, Name: name}, &app); err != nil {
			return err
		}
		app.Spec.Replicas = replicas
		return c.Update(ctx, &app)
	}
}

func podReady(p *corev1.Pod) bool {
	if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning {
		return false
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// webReady: the CR reports n ready replicas and n pods of it are ready.
func webReady(name string, n int32) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		var app WebApp
		if err := r.Get(ctx, client.ObjectKey{Namespace: webNS, Name: name}, &app); err != nil || app.Status.ReadyReplicas != n {
			return false
		}
		var pods corev1.PodList
		if err := r.List(ctx, &pods, client.InNamespace(webNS), client.MatchingLabels{"app": name}); err != nil {
			return false
		}
		var ready int32
		for i := range pods.Items {
			if podReady(&pods.Items[i]) {
				ready++
			}
		}
		return ready == n
	}
}

// webConverged: every WebApp reports as many ready replicas as it asks for.
func webConverged(s *properties.State) (bool, string) {
	for _, app := range properties.List[*WebApp](s, "", nil) {
		if app.Status.ReadyReplicas != app.Spec.Replicas {
			return false, fmt.Sprintf("WebApp %s: %d of %d ready", app.Name, app.Status.ReadyReplicas, app.Spec.Replicas)
		}
	}
	return true, ""
}

// webScenario: create web with 2 replicas and wait until 2 are ready; scale
// to 3 and wait. No faults.
func webScenario() *simulator.Scenario {
	return &simulator.Scenario{
		Name:        "web",
		Scheme:      webScheme,
		Controllers: []simulator.ControllerSpec{webController()},
		Workload: []simulator.WorkloadStep{
			{Name: "create web with 2 replicas", Do: createWeb("web", 2), Until: webReady("web", 2)},
			{Name: "scale web to 3", Do: scaleWeb("web", 3), Until: webReady("web", 3)},
		},
		Properties: []properties.Property{
			properties.NoReconcilePanic(),
			properties.NoEndlessReconcile(),
			properties.EventuallyConverges("WebConverges", webConverged),
		},
	}
}

// runScripted runs sc under a ScriptChooser with script (nil: fair turns).
func runScripted(t testing.TB, sc *simulator.Scenario, script []simulator.ScriptStep, opts simulator.RunOptions) (*simulator.Result, *simulator.ScriptChooser) {
	t.Helper()
	ch := &simulator.ScriptChooser{Script: script}
	w, err := simulator.NewWorld(sc, ch, opts)
	if err != nil {
		t.Fatal(err)
	}
	ch.World = w
	res, err := w.Run()
	if err != nil {
		t.Fatalf("harness error: %v\n%s", err, res.History.Lines())
	}
	if !ch.Done() {
		t.Fatalf("the script did not run to its end; history:\n%s", res.History.Lines())
	}
	return res, ch
}

func TestWorldWebOperatorConverges(t *testing.T) {
	choosers := []struct {
		name string
		run  func(t *testing.T) *simulator.Result
	}{
		{"fair", func(t *testing.T) *simulator.Result {
			res, _ := runScripted(t, webScenario(), nil, simulator.RunOptions{})
			return res
		}},
		{"values", func(t *testing.T) *simulator.Result {
			res, err := simulator.Run(webScenario(), &model.Values{}, simulator.RunOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}},
	}
	for _, c := range choosers {
		t.Run(c.name, func(t *testing.T) {
			res := c.run(t)
			lines := res.History.Lines()
			if !res.Quiescent {
				t.Fatalf("not quiescent after %d steps:\n%s", res.Steps, lines)
			}
			if len(res.Violations) > 0 {
				t.Fatalf("violations: %v\n%s", res.Violations, lines)
			}
			for _, want := range []string{"done: create web with 2 replicas", "done: scale web to 3", "clock Quiescent"} {
				if !strings.Contains(lines, want) {
					t.Fatalf("history lacks %q:\n%s", want, lines)
				}
			}
			checkWebCluster(t, res.World, 3)
			checkOneRequeueTimer(t, res.History)
		})
	}
}

// checkWebCluster checks ground truth after convergence to n replicas.
func checkWebCluster(t *testing.T, w *simulator.World, n int32) {
	t.Helper()
	ctx := context.Background()
	r := w.Reader()
	var sts appsv1.StatefulSet
	if err := r.Get(ctx, client.ObjectKey{Namespace: webNS, Name: "web"}, &sts); err != nil {
		t.Fatal(err)
	}
	if sts.Spec.Replicas == nil || *sts.Spec.Replicas != n {
		t.Fatalf("StatefulSet spec.replicas = %v, want %d", sts.Spec.Replicas, n)
	}
	if sts.Status.Replicas != n || sts.Status.ReadyReplicas != n || sts.Status.ObservedGeneration != sts.Generation || sts.Generation != 2 {
		t.Fatalf("StatefulSet status %+v at generation %d, want %d replicas, %d ready, observed generation 2", sts.Status, sts.Generation, n, n)
	}
	var app WebApp
	if err := r.Get(ctx, client.ObjectKey{Namespace: webNS, Name: "web"}, &app); err != nil {
		t.Fatal(err)
	}
	if app.Status.ReadyReplicas != n {
		t.Fatalf("WebApp status.readyReplicas = %d, want %d", app.Status.ReadyReplicas, n)
	}
	pods := w.PeekList(&corev1.Pod{}, webNS)
	if len(pods) != int(n) {
		t.Fatalf("%d pods, want %d", len(pods), n)
	}
	for i, o := range pods {
		p := o.(*corev1.Pod)
		if want := fmt.Sprintf("web-%d", i); p.Name != want || !podReady(p) {
			t.Fatalf("pod %d is %s (phase %s), want %s running and ready", i, p.Name, p.Status.Phase, want)
		}
		if ref := metav1.GetControllerOf(p); ref == nil || ref.Kind != "StatefulSet" || ref.UID != sts.UID {
			t.Fatalf("pod %s is not controlled by the StatefulSet: %v", p.Name, p.OwnerReferences)
		}
	}
	claims := w.PeekList(&corev1.PersistentVolumeClaim{}, webNS)
	if len(claims) != int(n) {
		t.Fatalf("%d PVCs, want %d", len(claims), n)
	}
	for i, o := range claims {
		if want := fmt.Sprintf("data-web-%d", i); o.GetName() != want {
			t.Fatalf("PVC %d is %s, want %s", i, o.GetName(), want)
		}
	}
}

// checkOneRequeueTimer: once converged, the reconciler's RequeueAfter 10s
// is the only timer, so the last ticks are 10 s apart. (A request waits on
// at most one timer, as in client-go's delaying queue; were every AddAfter
// kept, the backoff retry of an earlier error would start a second chain of
// requeues a few milliseconds behind the first.)
func checkOneRequeueTimer(t *testing.T, h *model.History) {
	t.Helper()
	var ticks []model.Time
	for i := range h.Events {
		if h.Events[i].Op == model.OpTick {
			ticks = append(ticks, h.Events[i].Time)
		}
	}
	if len(ticks) < 3 {
		t.Fatalf("%d ticks, want the periodic requeues", len(ticks))
	}
	for _, d := range []model.Time{ticks[len(ticks)-1] - ticks[len(ticks)-2], ticks[len(ticks)-2] - ticks[len(ticks)-3]} {
		if d != 10*1000 {
			t.Fatalf("ticks %s apart at the end, want 10s (one requeue timer per request)", d)
		}
	}
}

// panicky reads its WebApp, then panics.
type panicky struct{ c client.Client }

func (r *panicky) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	var app WebApp
	if err := r.c.Get(ctx, req.NamespacedName, &app); err != nil {
		return reconcile.Result{}, err
	}
	var m map[string]int
	m[app.Name]++ // assignment to entry in nil map
	return reconcile.Result{}, nil
}

// endless reads its WebApp forever.
type endless struct{ c client.Client }

func (r *endless) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	for {
		var app WebApp
		if err := r.c.Get(ctx, req.NamespacedName, &app); err != nil {
			return reconcile.Result{}, err
		}
	}
}

// misbehavingScenario seeds one WebApp, runs rec, and then has the user
// create a ConfigMap: a workload step after the finding shows the run goes
// on.
func misbehavingScenario(name string, rec func(c client.Client) reconcile.Reconciler, maxCalls int, props ...properties.Property) *simulator.Scenario {
	return &simulator.Scenario{
		Name:    name,
		Scheme:  webScheme,
		Objects: []client.Object{&WebApp{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "w"}, Spec: WebAppSpec{Replicas: 1}}},
		Controllers: []simulator.ControllerSpec{{
			Name: name, For: &WebApp{}, New: rec, MaxCallsPerReconcile: maxCalls,
		}},
		Workload: []simulator.WorkloadStep{
			{Name: "wait a minute", Do: func(context.Context, client.Client) error { return nil }, Until: func(context.Context, client.Reader) bool { return false }},
			{Name: "create cm", Do: func(ctx context.Context, c client.Client) error {
				return c.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: webNS, Name: "after"}})
			}},
		},
		Properties: props,
		MaxSteps:   2000,
	}
}

func TestReconcilerPanic(t *testing.T) {
	sc := misbehavingScenario("panicky", func(c client.Client) reconcile.Reconciler { return &panicky{c: c} }, 0)
	res, _ := runScripted(t, sc, nil, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	first := findEvent(h, 0, eventIs("controller/panicky", model.OpPanic, "WebApp", "default/w"))
	if first < 1 {
		t.Fatalf("no Panic event:\n%s", lines)
	}
	ev := h.Events[first]
	if ev.Step != first+1 {
		t.Fatalf("Panic event has step %d at position %d", ev.Step, first+1)
	}
	if prev := h.Events[first-1]; prev.Actor != "controller/panicky" || prev.Op != model.OpGet {
		t.Fatalf("the panic should follow the reconciler's one Get, follows %q", prev.Line())
	}
	if !strings.HasPrefix(ev.Err, "panic: assignment to entry in nil map") || strings.Contains(ev.Err, "\n") {
		t.Fatalf("Panic Err = %q", ev.Err)
	}
	if !strings.Contains(ev.Detail, "simulator_test.(*panicky).Reconcile(...)") || !strings.Contains(ev.Detail, "\tsimulator/world_test.go:") {
		t.Fatalf("Panic Detail does not name the reconciler's frame:\n%s", ev.Detail)
	}
	// The stack is cleaned so that the history is deterministic.
	if strings.Contains(ev.Detail, "goroutine ") || strings.Contains(ev.Detail, "+0x") || strings.Contains(ev.Detail, "/work/") {
		t.Fatalf("Panic Detail holds goroutine ids, offsets or absolute paths:\n%s", ev.Detail)
	}
	// Nor does it hold opcheck's own frames (their line numbers change with
	// opcheck, and would make a recorded trace stale) or the runtime's.
	if strings.Contains(ev.Detail, "opcheck/simulator.") || strings.Contains(ev.Detail, "simulator/host.go") || strings.Contains(ev.Detail, "runtime") {
		t.Fatalf("Panic Detail holds opcheck's or the runtime's frames:\n%s", ev.Detail)
	}
	// The run goes on: the request is retried with backoff (and panics
	// again), the workload proceeds, and the run ends without a harness
	// error.
	if again := findEvent(h, first+1, eventIs("controller/panicky", model.OpPanic, "WebApp", "default/w")); again < 0 || h.Events[again].Time <= ev.Time {
		t.Fatalf("the panicked request was not retried later:\n%s", lines)
	}
	if !strings.Contains(lines, "user Create ConfigMap default/after") {
		t.Fatalf("the workload did not go on after the panic:\n%s", lines)
	}
	if res.World.Hosts()[0].InFlight() {
		t.Fatal("a reconcile is still in flight after the run")
	}
	if !res.Quiescent {
		t.Fatalf("the run did not end quiescent after %d steps", res.Steps)
	}
	// The same schedule again gives the same history, stack included (no
	// argument words: they are addresses).
	sc = misbehavingScenario("panicky", func(c client.Client) reconcile.Reconciler { return &panicky{c: c} }, 0)
	if again, _ := runScripted(t, sc, nil, simulator.RunOptions{}); again.History.Lines() != lines {
		t.Fatalf("a panicking run is not deterministic:\n%s\n---\n%s", lines, again.History.Lines())
	}
	if testing.Verbose() {
		t.Log(ev.Detail)
	}

	// With the property, the panic is the finding.
	sc = misbehavingScenario("panicky", func(c client.Client) reconcile.Reconciler { return &panicky{c: c} }, 0, properties.NoReconcilePanic())
	res, _ = runScripted(t, sc, nil, simulator.RunOptions{})
	if len(res.Violations) != 1 || res.Violations[0].Property != "NoReconcilePanic" || res.Violations[0].Step != first+1 {
		t.Fatalf("want one NoReconcilePanic violation at step %d, got %v", first+1, res.Violations)
	}
	if !strings.Contains(res.Violations[0].Explanation, "(*panicky).Reconcile") {
		t.Fatalf("the violation does not carry the stack:\n%s", res.Violations[0].String())
	}
}

func TestEndlessReconcile(t *testing.T) {
	const budget = 40
	sc := misbehavingScenario("endless", func(c client.Client) reconcile.Reconciler { return &endless{c: c} }, budget)
	res, _ := runScripted(t, sc, nil, simulator.RunOptions{})
	h := res.History
	lines := h.Lines()
	over := findEvent(h, 0, eventIs("controller/endless", model.OpStepBudget, "WebApp", "default/w"))
	if over < 0 {
		t.Fatalf("no StepBudget event:\n%s", lines)
	}
	start := -1
	for i := over - 1; i >= 0; i-- {
		if h.Events[i].Actor == "controller/endless" && h.Events[i].Op == model.OpReconcile {
			start = i
			break
		}
	}
	gets := 0
	for i := start + 1; i < over; i++ {
		if e := h.Events[i]; e.Actor == "controller/endless" && e.Op == model.OpGet {
			gets++
		}
	}
	if gets != budget {
		t.Fatalf("%d Gets recorded before the StepBudget event, want the budget %d:\n%s", gets, budget, lines)
	}
	if !strings.Contains(h.Events[over].Detail, "more than 40 API calls") {
		t.Fatalf("StepBudget detail %q", h.Events[over].Detail)
	}
	if !strings.Contains(lines, "user Create ConfigMap default/after") || res.World.Hosts()[0].InFlight() {
		t.Fatalf("the run did not go on normally after the endless reconcile:\n%s", lines)
	}

	sc = misbehavingScenario("endless", func(c client.Client) reconcile.Reconciler { return &endless{c: c} }, budget, properties.NoEndlessReconcile())
	res, _ = runScripted(t, sc, nil, simulator.RunOptions{})
	if len(res.Violations) != 1 || res.Violations[0].Property != "NoEndlessReconcile" || res.Violations[0].Step != over+1 {
		t.Fatalf("want one NoEndlessReconcile violation at step %d, got %v", over+1, res.Violations)
	}
}
