package kvstore_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/opcheck/opcheck/examples/kvstore"
	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/traces"
)

// Step 1: register your types: client-go's scheme plus your CRD types.
func scheme() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		panic(err)
	}
	if err := kvstore.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}

// Step 2 and 3: the reconciler factory and the watches, as your manager's
// builder wires them: For the KVStore, Owns its StatefulSet and Service,
// Watches its pods through their label.
func controller(v kvstore.Variant) simulator.ControllerSpec {
	return simulator.ControllerSpec{
		Name: "kvstore-operator",
		For:  &kvstore.KVStore{},
		Owns: []client.Object{&appsv1.StatefulSet{}, &corev1.Service{}},
		Watches: []simulator.Watch{{
			Type: &corev1.Pod{},
			Map: func(obj client.Object) []reconcile.Request {
				name := obj.GetLabels()[kvstore.LabelName]
				if name == "" {
					return nil
				}
				return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: name}}}
			},
		}},
		// Called at start and after every crash: each incarnation starts
		// with empty memory, as a restarted operator pod does.
		New: func(c client.Client) reconcile.Reconciler { return kvstore.New(c, v) },
	}
}

const (
	ns   = "default"
	name = "kv"
)

var key = client.ObjectKey{Namespace: ns, Name: name}

// Step 4: a workload with wait conditions. Do is one user action; the
// workload moves on once Until holds on ground truth.
func workload() []simulator.WorkloadStep {
	return []simulator.WorkloadStep{
		{Name: "create kv with 2 replicas", Do: create(2), Until: ready(2)},
		{Name: "scale kv to 1", Do: scale(1), Until: memberGone(1)},
		{Name: "scale kv to 3", Do: scale(3), Until: ready(3)},
	}
}

func create(replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		return c.Create(ctx, &kvstore.KVStore{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec:       kvstore.KVStoreSpec{Replicas: replicas, Storage: "1Gi"},
		})
	}
}

// scale does what `kubectl scale` does: read the latest, write replicas. A
// conflict is retried by the workload at a later step.
func scale(replicas int32) func(context.Context, client.Client) error {
	return func(ctx context.Context, c client.Client) error {
		var kv kvstore.KVStore
		if err := c.Get(ctx, key, &kv); err != nil {
			return err
		}
		kv.Spec.Replicas = replicas
		return c.Update(ctx, &kv)
	}
}

// ready: the KVStore reports phase Ready with n ready replicas.
func ready(n int32) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		var kv kvstore.KVStore
		if err := r.Get(ctx, key, &kv); err != nil {
			return false
		}
		return kv.Status.Phase == kvstore.PhaseReady && kv.Status.ReadyReplicas == n
	}
}

// memberGone: member i's pod and PVC no longer exist.
func memberGone(i int) func(context.Context, client.Reader) bool {
	return func(ctx context.Context, r client.Reader) bool {
		err1 := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: kvstore.PodName(name, i)}, &corev1.Pod{})
		err2 := r.Get(ctx, client.ObjectKey{Namespace: ns, Name: kvstore.PVCName(name, i)}, &corev1.PersistentVolumeClaim{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2)
	}
}

// Step 5: properties. Ground truth (properties.State) is rebuilt from the
// history; a property reads it, never a cache.
const (
	propNoDelete = "NoDeleteOfLive(member PVC)"
	propConverge = "EventuallyConverges(members match spec)"
)

// committed is the KVStore the store holds: what the user asked for.
// Objects are looked up by Go type: a misspelt type does not compile.
func committed(s *properties.State, namespace, kvName string) (*kvstore.KVStore, bool) {
	kv, ok := properties.Get[*kvstore.KVStore](s, namespace, kvName)
	if !ok {
		return nil, false
	}
	return kv, kv.DeletionTimestamp == nil
}

// statefulSetOf is this KVStore instance's StatefulSet: owned by its UID, so
// after a delete and a re-create under the same name the old instance's
// StatefulSet (still there until the garbage collector removes it) is not
// taken for the new one's.
func statefulSetOf(s *properties.State, kv *kvstore.KVStore) (*appsv1.StatefulSet, bool) {
	sts, ok := properties.Get[*appsv1.StatefulSet](s, kv.Namespace, kv.Name)
	if !ok || !properties.OwnedBy(sts, kv) {
		return nil, false
	}
	return sts, true
}

func props() []properties.Property {
	return []properties.Property{
		// A member's disk is live while the committed KVStore still wants
		// that member, whether or not its pod runs right now.
		properties.NoDeleteOfLive(propNoDelete,
			func(obj runtime.Object) bool {
				pvc, ok := obj.(*corev1.PersistentVolumeClaim)
				return ok && pvc.Labels[kvstore.LabelName] != "" && strings.HasPrefix(pvc.Name, kvstore.VolumeName+"-")
			},
			func(s *properties.State, obj runtime.Object) (bool, string) {
				pvc := obj.(*corev1.PersistentVolumeClaim)
				kv, ok := committed(s, pvc.Namespace, pvc.Labels[kvstore.LabelName])
				if !ok {
					return false, ""
				}
				ord, ok := kvstore.Ordinal(kv.Name, pvc.Name)
				if !ok || int32(ord) >= kv.Spec.Replicas {
					return false, ""
				}
				return true, fmt.Sprintf("member %d is wanted: the committed KVStore %s/%s has spec.replicas=%d at rev %s", ord, kv.Namespace, kv.Name, kv.Spec.Replicas, kv.ResourceVersion)
			}),
		properties.EventuallyConverges(propConverge, converged),
		properties.NoReconcilePanic(),
		properties.NoEndlessReconcile(),
	}
}

// converged: every KVStore has spec.replicas ready pods, as many live
// member PVCs, a StatefulSet asking for spec.replicas, and says so in its
// status.
func converged(s *properties.State) (bool, string) {
	for _, kv := range properties.List[*kvstore.KVStore](s, "", nil) {
		if kv.DeletionTimestamp != nil {
			continue
		}
		want := kv.Spec.Replicas
		var ready, pvcs int32
		sts, ok := statefulSetOf(s, kv)
		for _, p := range properties.List[*corev1.Pod](s, kv.Namespace, nil) {
			if ok && properties.OwnedBy(p, sts) && podReady(p) {
				ready++
			}
		}
		for _, p := range properties.List[*corev1.PersistentVolumeClaim](s, kv.Namespace, nil) {
			if p.Labels[kvstore.LabelName] == kv.Name && p.DeletionTimestamp == nil {
				pvcs++
			}
		}
		stsReplicas := int32(-1)
		if ok && sts.Spec.Replicas != nil {
			stsReplicas = *sts.Spec.Replicas
		}
		if ready != want || pvcs != want || stsReplicas != want || kv.Status.ReadyReplicas != want || kv.Status.Phase != kvstore.PhaseReady {
			return false, fmt.Sprintf("%s/%s wants %d members: %d ready pods, %d live PVCs, StatefulSet replicas %d, status %d ready, phase %q",
				kv.Namespace, kv.Name, want, ready, pvcs, stsReplicas, kv.Status.ReadyReplicas, kv.Status.Phase)
		}
	}
	return true, ""
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

// The scenario: two apiservers whose KVStore caches can lag, one crash,
// one paused watch cache, one pod eviction.
func scenario(v kvstore.Variant) *simulator.Scenario {
	return &simulator.Scenario{
		Name:        "kvstore/" + string(v),
		Description: "kvstore (" + string(v) + "): scale 2 -> 1 -> 3 with a stale apiserver, a crash and an eviction",
		Scheme:      scheme(),
		APIServers:  2,
		Controllers: []simulator.ControllerSpec{controller(v)},
		Workload:    workload(),
		Faults:      model.FaultBudget{Crashes: 1, Stale: 1, Evictions: 1},
		Properties:  props(),
	}
}

// Step 6: explore. Check fails the test with the violation and the recipe
// that replays it. Its default strategy is the exhaustive search of the
// scenario's bounded space, so a correct operator is verified.
func TestKVStore(t *testing.T) {
	rep := explore.Check(t, scenario(kvstore.Correct))
	if rep.Verdict != explore.VerdictVerified {
		t.Fatalf("want the bounded space verified, got verdict %s after %d schedules", rep.Verdict, rep.Schedules)
	}
	t.Logf("verified: %d schedules, %d states, %s", rep.Schedules, rep.States, rep.Elapsed)
}

// The broken variant must be caught: a test that opcheck still finds the bug
// it was built to find.
func TestKVStoreBrokenIsCaught(t *testing.T) {
	rep := explore.Explore(scenario(kvstore.Broken), explore.DefaultOptions())
	if rep.Verdict != explore.VerdictViolation {
		t.Fatalf("broken variant: want verdict %q, got %q after %d schedules (err %v)", explore.VerdictViolation, rep.Verdict, rep.Schedules, rep.Err)
	}
	if rep.Violation.Property != propNoDelete {
		t.Fatalf("broken variant: want %s violated, got %s", propNoDelete, explore.Recipe(rep))
	}
	t.Logf("caught after %d schedules:\n%s", rep.Schedules, explore.Recipe(rep))
	// The recipe replays: the recorded choices give the same violation.
	res, err := explore.Replay(scenario(kvstore.Broken), rep.Choices, &rep.Faults)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 || res.Violations[0].Property != propNoDelete {
		t.Fatalf("replay of the recorded choices: want %s violated, got %v", propNoDelete, res.Violations)
	}
}

// Step 7: commit a violation as a regression fixture. The trace replays
// byte for byte as long as the reconciler and the scenario behave the
// same; regenerate it with
//
//	go test ./examples/kvstore/ -run TestBrokenFixture -rewrite
var rewrite = flag.Bool("rewrite", false, "rewrite testdata/broken.trace from a fresh exploration")

const fixture = "testdata/broken.trace"

func TestBrokenFixture(t *testing.T) {
	sc := scenario(kvstore.Broken)
	if *rewrite {
		rep := explore.Explore(sc, explore.DefaultOptions())
		if rep.Violation == nil {
			t.Fatalf("no violation to record: %s", rep.Verdict)
		}
		tr := traces.FromRun(sc.Name, rep.Faults, rep.Choices, rep.History, rep.Violation)
		if err := os.MkdirAll(filepath.Dir(fixture), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := traces.WriteFile(fixture, tr); err != nil {
			t.Fatal(err)
		}
	}
	tr, err := traces.ReadFile(fixture)
	if err != nil {
		t.Fatalf("%v (regenerate with -rewrite)", err)
	}
	if tr.Violation == nil || tr.Violation.Property != propNoDelete {
		t.Fatalf("%s records %v, want a %s violation", fixture, tr.Violation, propNoDelete)
	}
	res, err := explore.Replay(sc, tr.Choices, &tr.Faults)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 || res.Violations[0].Property != propNoDelete || res.Violations[0].Step != tr.Violation.Step {
		t.Fatalf("replaying %s: got %v, want %s at step %d", fixture, res.Violations, propNoDelete, tr.Violation.Step)
	}
	// Against the correct operator the same recorded schedule either
	// diverges (the operator makes other calls) or runs without violation.
	if res, err := explore.Replay(scenario(kvstore.Correct), tr.Choices, &tr.Faults); err == nil && len(res.Violations) > 0 {
		t.Fatalf("the broken variant's schedule breaks the correct one too: %v", res.Violations[0].String())
	}
}

// Step 8: fuzz. Plain go test runs the seed corpus; go test -fuzz=FuzzKVStore
// ./examples/kvstore/ searches.
func FuzzKVStore(f *testing.F) { explore.Fuzz(f, scenario(kvstore.Correct)) }
