package kuberay

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	rayv1 "github.com/ray-project/kuberay/ray-operator/apis/ray/v1"
	ray "github.com/ray-project/kuberay/ray-operator/controllers/ray"
	"github.com/ray-project/kuberay/ray-operator/controllers/ray/utils"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/opcheck/opcheck/explore"
	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/properties"
	"github.com/opcheck/opcheck/simulator"
	"github.com/opcheck/opcheck/traces"
)

// runNoFaults runs a variant without faults, fair progress, with the wall
// clock on the logical clock (inside a synctest bubble).
func runNoFaults(t *testing.T, v Variant) *simulator.Result {
	t.Helper()
	var res *simulator.Result
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario(v)
		sc.SyncWallClock = true
		var err error
		res, err = simulator.RunScript(sc, nil, simulator.RunOptions{Faults: &model.FaultBudget{}, KeepGoing: true})
		if err != nil {
			t.Fatal(err)
		}
	})
	return res
}

// Without faults, every workload step's condition holds and the run ends
// quiescent with no property violated.
func TestNoFaultRunsConverge(t *testing.T) {
	for _, v := range Variants() {
		res := runNoFaults(t, v)
		for _, viol := range res.Violations {
			t.Errorf("%s: %s", v, viol.String())
		}
		if !res.Quiescent {
			t.Errorf("%s: not quiescent after %d steps", v, res.Steps)
		}
		for _, e := range res.History.Events {
			if e.Op == model.OpWorkload && strings.HasPrefix(e.Detail, "gave up") {
				t.Errorf("%s: %s", v, e.Detail)
			}
		}
	}
}

// The reconciler running is KubeRay's own: the head pod, its service and
// the workers carry the names and labels KubeRay's code generates, and
// KubeRay's event recorder source names its events.
func TestReconcilerIsKubeRays(t *testing.T) {
	res := runNoFaults(t, Scale)
	r := res.World.Reader()
	ctx := context.Background()
	var pods corev1.PodList
	if err := r.List(ctx, &pods, client.InNamespace(Namespace), client.MatchingLabels{utils.RayNodeTypeLabelKey: string(rayv1.HeadNode)}); err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 {
		t.Fatalf("%d head pods", len(pods.Items))
	}
	head := pods.Items[0]
	// KubeRay names the head pod by generateName <cluster>-head- (the
	// apiserver adds the suffix).
	if prefix := utils.PodName(ClusterName, rayv1.HeadNode, true); head.GenerateName != prefix || !strings.HasPrefix(head.Name, prefix) || prefix != "raycluster-head-" {
		t.Errorf("head pod %q (generateName %q), want KubeRay's prefix %q", head.Name, head.GenerateName, prefix)
	}
	for k, want := range map[string]string{
		utils.RayClusterLabelKey:                ClusterName,
		utils.RayNodeTypeLabelKey:               "head",
		utils.RayNodeGroupLabelKey:              utils.RayNodeHeadGroupLabelValue,
		utils.RayNodeLabelKey:                   "yes",
		utils.KubernetesCreatedByLabelKey:       utils.ComponentName,
		utils.KubernetesApplicationNameLabelKey: utils.ApplicationName,
	} {
		if head.Labels[k] != want {
			t.Errorf("head pod label %s = %q, want %q", k, head.Labels[k], want)
		}
	}
	if len(head.Spec.Containers) == 0 || len(head.Spec.Containers[0].Args) == 0 || !strings.Contains(strings.Join(head.Spec.Containers[0].Args, " "), "ray start --head") {
		t.Errorf("head container does not run KubeRay's generated `ray start --head`: %v %v", head.Spec.Containers[0].Command, head.Spec.Containers[0].Args)
	}
	var svc corev1.Service
	if err := r.Get(ctx, client.ObjectKey{Namespace: Namespace, Name: "raycluster-head-svc"}, &svc); err != nil {
		t.Errorf("KubeRay's head service: %v", err)
	}
	sawEvent := false
	for _, e := range res.History.Events {
		if e.Op == model.OpRecordEvent && strings.HasPrefix(e.Detail, "raycluster-controller: Normal CreatedHeadPod: Created head Pod default/"+head.Name) {
			sawEvent = true
		}
	}
	if !sawEvent {
		t.Error("no CreatedHeadPod event from KubeRay's recorder source raycluster-controller")
	}
	var _ *ray.RayClusterReconciler // the type Controller's Setup builds
}

// The RayCluster CRD as the module ships it declares the status
// subresource (and no scale subresource), which the simulated apiserver
// gives RayCluster; and every default its schema declares for a worker
// group is set explicitly by the scenarios' manifest, since the scenarios
// do not pass the CRD and so get none of its schema defaults.
func TestCRDFromModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/ray-project/kuberay/ray-operator").Output()
	if err != nil {
		t.Skipf("go list of the KubeRay module: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(strings.TrimSpace(string(out)), "config", "crd", "bases", "ray.io_rayclusters.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var crd apiextensionsv1.CustomResourceDefinition
	if err := yaml.Unmarshal(data, &crd); err != nil {
		t.Fatal(err)
	}
	var storage *apiextensionsv1.CustomResourceDefinitionVersion
	for i := range crd.Spec.Versions {
		if crd.Spec.Versions[i].Storage {
			storage = &crd.Spec.Versions[i]
		}
	}
	if storage == nil || storage.Name != "v1" || crd.Spec.Scope != apiextensionsv1.NamespaceScoped {
		t.Fatalf("storage version %+v, scope %s", storage, crd.Spec.Scope)
	}
	if storage.Subresources == nil || storage.Subresources.Status == nil || storage.Subresources.Scale != nil {
		t.Fatalf("subresources %+v: want status only", storage.Subresources)
	}
	// The simulated apiserver: a main-resource update keeps the stored
	// status; a status update changes only status.
	cl := simulator.NewCluster(Scheme(), simulator.ClusterOptions{}).Client("user", 1, true)
	ctx := context.Background()
	rc := NewRayCluster(2)
	rc.Status.State = rayv1.Ready //nolint:staticcheck // a status field, set to show it is dropped
	if err := cl.Create(ctx, rc); err != nil {
		t.Fatal(err)
	}
	if rc.Status.State != "" {
		t.Fatalf("status kept on create: %q", rc.Status.State)
	}
	rc.Status.DesiredWorkerReplicas = 7
	if err := cl.Status().Update(ctx, rc); err != nil {
		t.Fatal(err)
	}
	rc.Status.DesiredWorkerReplicas = 1
	rc.Spec.WorkerGroupSpecs[0].Replicas = ptrTo(int32(3))
	if err := cl.Update(ctx, rc); err != nil {
		t.Fatal(err)
	}
	if rc.Status.DesiredWorkerReplicas != 7 || *rc.Spec.WorkerGroupSpecs[0].Replicas != 3 {
		t.Fatalf("after main update: status %d, replicas %d", rc.Status.DesiredWorkerReplicas, *rc.Spec.WorkerGroupSpecs[0].Replicas)
	}
	// Defaults of a worker group in the schema, and what the manifest sets.
	wg := storage.Schema.OpenAPIV3Schema.Properties["spec"].Properties["workerGroupSpecs"].Items.Schema
	manifest, err := json.Marshal(NewRayCluster(2).Spec.WorkerGroupSpecs[0])
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(manifest, &fields); err != nil {
		t.Fatal(err)
	}
	for name, prop := range wg.Properties {
		if prop.Default == nil {
			continue
		}
		if _, set := fields[name]; !set {
			t.Errorf("the CRD defaults workerGroupSpecs[].%s to %s, but the scenarios' manifest leaves it unset (the scenarios do not pass the CRD, so opcheck applies none of its defaults)", name, prop.Default.Raw)
		}
	}

	// Given the module's CRD (StoreOptions.CRDs), the simulated apiserver
	// applies those defaults itself, with the real structural defaulting:
	// a worker group that leaves out minReplicas, maxReplicas, replicas
	// and numOfHosts is stored with the CRD's 0, 2147483647, 0 and 1.
	withCRD := simulator.NewCluster(Scheme(), simulator.ClusterOptions{StoreOptions: simulator.StoreOptions{CRDs: []*apiextensionsv1.CustomResourceDefinition{&crd}}}).Client("user", 1, true)
	bare := NewRayCluster(2)
	g := &bare.Spec.WorkerGroupSpecs[0]
	g.MinReplicas, g.MaxReplicas, g.Replicas, g.NumOfHosts = nil, nil, nil, 0
	if err := withCRD.Create(ctx, bare); err != nil {
		t.Fatal(err)
	}
	g = &bare.Spec.WorkerGroupSpecs[0]
	if g.MinReplicas == nil || *g.MinReplicas != 0 || g.MaxReplicas == nil || *g.MaxReplicas != 2147483647 || g.Replicas == nil || *g.Replicas != 0 || g.NumOfHosts != 1 {
		t.Fatalf("with the CRD, the worker group was stored as min %v max %v replicas %v numOfHosts %d; want the CRD's defaults 0, 2147483647, 0, 1", g.MinReplicas, g.MaxReplicas, g.Replicas, g.NumOfHosts)
	}
}

func ptrTo[T any](v T) *T { return &v }

// Run twice with the same choices, a faulted schedule performs the same
// writes (kind, object, revision, change), though cached reads may come in
// another order (KnownNondeterminism).
func TestSameChoicesSameWrites(t *testing.T) {
	writes := func() []string {
		res, err := simulator.Run(Scenario(Lifecycle), explore.Uniform(3), simulator.RunOptions{KeepGoing: true})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range res.History.Events {
			if e.Change != model.ChangeNone {
				out = append(out, string(e.Actor)+" "+string(e.Op)+" "+e.Kind+" "+e.Key()+" "+e.Rev.String()+" "+e.Change.String())
			}
		}
		return out
	}
	a, b := writes(), writes()
	if strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Fatalf("the same choices gave different writes:\n%s\n---\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
	if len(a) < 10 {
		t.Fatalf("only %d writes", len(a))
	}
}

// KubeRay's scale expectations expire after 30 s of wall-clock time. With
// time.Now outside opcheck's logical clock (SyncWallClock off) they never
// expire in a run, and a pod that vanishes before KubeRay's informer sees
// its creation (here an eviction) blocks its group for good: a liveness
// violation that a real cluster heals within 30 s. With SyncWallClock (the
// scenarios' setting) time.Now follows the logical clock, without the
// caller entering a synctest bubble, and the same schedule converges.
func TestExpectationTimeoutNeedsWallClockOnLogicalClock(t *testing.T) {
	sc := Scenario(Scale)
	sc.SyncWallClock = false
	plain, err := simulator.Run(sc, explore.Uniform(1), simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(plain.Violations) == 0 || plain.Violations[0].Property != "RayClusterConverges" {
		t.Fatalf("unsynced run: %v, want the RayClusterConverges artifact", plain.Violations)
	}
	res, err := simulator.Run(Scenario(Scale), explore.Uniform(1), simulator.RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Violations {
		t.Errorf("synced run: %s", v.String())
	}
}

// KubeRay's finding (docs/bugs.md, KubeRay): the controller restarts onto
// an apiserver whose pod cache is behind. Its scale expectations were in
// the memory of the old incarnation, so nothing tells the new one that two
// workers it cannot see exist: it creates workers for every replica its
// stale list lacks, and the group ends with more workers than replicas.
// The shrunk schedule (12 choices, testdata/excess-worker.min.trace) needs
// no wall clock: it happens at t=0.
func TestRestartOnStaleCacheCreatesExtraWorkers(t *testing.T) {
	for _, path := range []string{"testdata/excess-worker.min.trace", "testdata/excess-worker.trace"} {
		tr, err := traces.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		res, err := simulator.Run(Scenario(Scale), &model.Sequence{Choices: tr.Choices}, simulator.RunOptions{Faults: &tr.Faults})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Violations) == 0 || res.Violations[0].Property != "NoExcessWorkers" {
			t.Fatalf("%s: violations %v, want NoExcessWorkers", path, res.Violations)
		}
		var crash, paused bool
		for _, e := range res.History.Events[:res.Violations[0].Step] {
			crash = crash || e.Op == model.OpCrash
			paused = paused || (e.Op == model.OpPauseCache && e.Kind == "Pod")
		}
		if !paused || (!crash && strings.HasSuffix(path, ".min.trace")) {
			t.Fatalf("%s: crash %v, paused Pod cache %v before the violation", path, crash, paused)
		}
	}
}

// kuberay/lifecycle with the wall clock on the logical clock: random
// schedules within the default fault budget (one crash, one paused cache,
// one dropped event, one eviction) find nothing but the two documented
// findings.
func TestExploreLifecycleWithWallClockOnLogicalClock(t *testing.T) {
	schedules := 100
	if testing.Short() {
		schedules = 10
	}
	synctest.Test(t, func(t *testing.T) {
		sc := Scenario(Lifecycle)
		sc.SyncWallClock = true
		rep := explore.Explore(sc, explore.Options{Strategy: "random", Schedules: schedules, StopAtFirst: true})
		switch {
		case rep.Verdict == explore.VerdictError:
			t.Fatalf("%v", rep.Err)
		case rep.Verdict == explore.VerdictViolation && rep.Violation.Property != "NoExcessWorkers" && rep.Violation.Property != "WorkloadStuck" && rep.Violation.Property != "NoDeleteOfWantedPod" && rep.Violation.Property != "RayClusterConverges":
			// NoExcessWorkers (stale cache, 5), NoDeleteOfWantedPod
			// (a terminating worker counted, 8), and two head pods
			// (RayClusterConverges, or WorkloadStuck when the create's
			// wait runs out first, 7) are the documented findings
			// (docs/bugs.md); anything else is new.
			t.Fatalf("a new finding:\n%s", explore.Recipe(rep))
		}
		t.Logf("%s, %d schedules", rep.Verdict, rep.Schedules)
	})
}

// A withdrawn finding (docs/bugs.md, KubeRay, 6): before graceful pod
// deletion was modelled, a worker deleted by hand vanished at once, and a
// worker KubeRay had not yet seen was replaced only at its 300 s resync.
// With the pod Terminating for its grace period (as a real cluster keeps
// it), KubeRay sees it and, without faults, replaces it once it is gone:
// within the 30 s grace period in every schedule sampled here.
func TestWorkerReplacedWithinGracePeriodWithoutFaults(t *testing.T) {
	schedules := 200
	if testing.Short() {
		schedules = 30
	}
	replaced := 0
	for seed := uint64(1); seed <= uint64(schedules); seed++ {
		res, err := simulator.Run(Scenario(Lifecycle), explore.Random(seed), simulator.RunOptions{Faults: &model.FaultBudget{}})
		if err != nil {
			t.Fatal(err)
		}
		var deletedAt, replacedAt model.Time = -1, -1
		for _, e := range res.History.Events {
			if e.Actor == model.ActorUser && e.Op == model.OpDelete && e.Kind == "Pod" && deletedAt < 0 {
				deletedAt = e.Time
			}
			if deletedAt >= 0 && replacedAt < 0 && e.Op == model.OpCreate && e.Kind == "Pod" && e.Change == model.ChangeAdded && strings.Contains(e.Name, "-worker-") {
				replacedAt = e.Time
			}
		}
		if deletedAt < 0 || replacedAt < 0 {
			continue
		}
		replaced++
		if gap := replacedAt - deletedAt; gap > model.FromDuration(30*time.Second) {
			t.Fatalf("seed %d: the worker deleted at %s was replaced at %s, after more than its 30 s grace period", seed, deletedAt, replacedAt)
		}
	}
	if replaced < schedules/2 {
		t.Fatalf("a replacement was seen in only %d of %d schedules: the check says little", replaced, schedules)
	}
}

// KubeRay's finding 8 (docs/bugs.md, KubeRay): KubeRay v1.5.0 counts a
// Terminating worker (here an evicted one, within its grace period) as one
// of the group's workers. Scaled down to 1 while one of its two workers
// terminates, it deletes the other, healthy one: the group has no live
// worker until the next reconcile creates one. No fault but the eviction is
// needed; the recorded schedule is testdata/terminating-worker-counted.min.trace.
func TestTerminatingWorkerCountedDeletesHealthyOne(t *testing.T) {
	tr, err := traces.ReadFile("testdata/terminating-worker-counted.min.trace")
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulator.Run(Scenario(Scale), &model.Sequence{Choices: tr.Choices}, simulator.RunOptions{Faults: &tr.Faults})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 || res.Violations[0].Property != "NoDeleteOfWantedPod" {
		t.Fatalf("violations %v, want NoDeleteOfWantedPod", res.Violations)
	}
	// Just before the violating delete, another worker of the group was
	// Terminating in the store.
	v := res.Violations[0]
	terminating := false
	for _, p := range properties.List[*corev1.Pod](properties.Replay(res.History, v.Step-1), "default", nil) {
		if strings.Contains(p.Name, "-worker-") && p.DeletionTimestamp != nil && p.Name != v.Event.Name {
			terminating = true
		}
	}
	if !terminating {
		t.Fatalf("no other worker was Terminating when %s was deleted at step %d", v.Event.Name, v.Step)
	}
}

// KubeRay's third finding (docs/bugs.md, KubeRay, 7): once two head pods
// exist, v1.5.0 fails every reconcile with "2 head pods found" and never
// removes one, so the cluster never converges. The recorded schedule
// (testdata/two-heads.min.trace) gets the second head pod from a dropped
// watch event: the informer never saw the first head pod's creation, and
// the operator, restarted before it (so without expectations), creates
// another.
func TestStaleHeadListAndSatisfiedExpectationCreateSecondHead(t *testing.T) {
	tr, err := traces.ReadFile("testdata/two-heads.min.trace")
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulator.Run(Scenario(Scale), &model.Sequence{Choices: tr.Choices}, simulator.RunOptions{Faults: &tr.Faults})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) == 0 || res.Violations[0].Property != "RayClusterConverges" {
		t.Fatalf("violations %v, want RayClusterConverges", res.Violations)
	}
	var heads []string
	stuck := false
	for _, e := range res.History.Events {
		if e.Op == model.OpCreate && e.Kind == "Pod" && e.Change == model.ChangeAdded && strings.Contains(e.Name, "-head-") {
			heads = append(heads, e.Name)
		}
		if e.Op == model.OpReconcileDone && strings.Contains(e.Err, "2 head pods found") {
			stuck = true
		}
	}
	if len(heads) < 2 || !stuck {
		t.Fatalf("head pods created %v (want two), reconcile failing on two heads %v", heads, stuck)
	}
}

// A withdrawn finding (docs/bugs.md, KubeRay, 9): "a resumed cluster's
// pods deleted from a stale view of its suspend" is KubeRay's documented
// atomic suspension, not a deleted wanted pod. In the recorded schedule
// (testdata/committed-suspension.min.trace, random seed 43 of
// kuberay/lifecycle, shrunk) the operator persists the Suspending
// condition, a dropped watch event then leaves its cache on the version
// before that write (so its later status writes conflict and the user's
// wait for the suspension times out), and the user resumes. The operator
// then finishes the committed suspension: it deletes every pod. The store
// held Suspending=True at that delete, which NoDeleteOfWantedPod now
// honours.
func TestCommittedSuspensionTeardownIsNoFinding(t *testing.T) {
	tr, err := traces.ReadFile("testdata/committed-suspension.min.trace")
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulator.Run(Scenario(Lifecycle), &model.Sequence{Choices: tr.Choices}, simulator.RunOptions{Faults: &tr.Faults, KeepGoing: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range res.Violations {
		if v.Property == "NoDeleteOfWantedPod" {
			t.Fatalf("NoDeleteOfWantedPod flags the committed suspension's teardown:\n%s", v.String())
		}
	}
	// The schedule still does what the finding described: after the
	// user's resume, the operator deletes pods of the cluster, and at that
	// moment the store's RayCluster is resumed but Suspending.
	resumed, teardown := -1, -1
	dropped := false
	for i, e := range res.History.Events {
		switch {
		case e.Op == model.OpDropEvent && e.Kind == "RayCluster":
			dropped = true
		case e.Actor == model.ActorUser && e.Op == model.OpWorkload && e.Detail == "start: resume raycluster":
			resumed = i
		case resumed >= 0 && teardown < 0 && properties.IsController(e.Actor) && e.Op == model.OpDelete && e.Kind == "Pod" && e.Change != model.ChangeNone:
			teardown = i
		}
	}
	if !dropped || resumed < 0 || teardown < 0 {
		t.Fatalf("want a dropped RayCluster event, the resume, then the operator deleting pods (dropped %v, resume at %d, delete at %d):\n%s", dropped, resumed, teardown, res.History.Lines())
	}
	e := res.History.Events[teardown]
	rc, ok := properties.Get[*rayv1.RayCluster](properties.Replay(res.History, e.Step-1), Namespace, ClusterName)
	if !ok || (rc.Spec.Suspend != nil && *rc.Spec.Suspend) || !suspensionCommitted(rc) {
		t.Fatalf("at the teardown (%s) the RayCluster should be resumed with Suspending=True, got %+v", e.Line(), rc)
	}
}
