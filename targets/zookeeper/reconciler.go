package zookeeper

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Variant selects which version of the operator's logic runs.
type Variant string

// The variants of targets.md.
const (
	// Buggy is the upstream logic the stale-read bug was reported against.
	Buggy Variant = "buggy"
	// UpstreamFix adds the owner-rv staleness guard on the StatefulSet path
	// only, as the merged upstream fix does.
	UpstreamFix Variant = "upstream-fix"
	// Fixed guards the orphan-PVC cleanup as well, and confirms the CR is
	// current before a scale-down.
	Fixed Variant = "fixed"
)

// Variants lists every variant, in the order targets.md describes them.
func Variants() []Variant { return []Variant{Buggy, UpstreamFix, Fixed} }

// RequeueAfter is how long after a successful reconcile the operator looks
// at the cluster again.
const RequeueAfter = 30 * time.Second

// Options configures a Reconciler.
type Options struct {
	// Variant is Buggy, UpstreamFix or Fixed.
	Variant Variant
	// NewZookeeperClient returns a fresh, unconnected client; the reconciler
	// asks for one per connection, as upstream does.
	NewZookeeperClient func() ZookeeperClient
	// Now is the logical clock for condition timestamps; required, because
	// the reconciler must never read the wall clock.
	Now func() time.Time
}

// Reconciler is the zookeeper-operator's reconcile loop for
// ZookeeperClusters.
type Reconciler struct {
	client client.Client
	opts   Options
}

// NewReconciler returns a reconciler that talks to the cluster through c,
// whose scheme must know ZookeeperCluster (AddToScheme) and the built-in
// types. It panics on a misconfigured Options: that is a harness bug, not
// behaviour of the operator under test.
func NewReconciler(c client.Client, opts Options) *Reconciler {
	switch opts.Variant {
	case Buggy, UpstreamFix, Fixed:
	default:
		panic(fmt.Sprintf("zookeeper.NewReconciler: unknown variant %q; use one of %q, %q, %q", opts.Variant, Buggy, UpstreamFix, Fixed))
	}
	if opts.NewZookeeperClient == nil {
		panic("zookeeper.NewReconciler: Options.NewZookeeperClient is nil; pass a factory returning a ZookeeperClient for the simulated ensemble")
	}
	if opts.Now == nil {
		panic("zookeeper.NewReconciler: Options.Now is nil; pass the run's logical clock (e.g. model.Clock.Wall)")
	}
	if c == nil {
		panic("zookeeper.NewReconciler: client is nil")
	}
	return &Reconciler{client: c, opts: opts}
}

// StalenessError is what the upstream fix returns when the CR it read is
// older than the one that last wrote the StatefulSet.
type StalenessError struct {
	CRResourceVersion      int64
	LabeledResourceVersion int64
}

// Error keeps upstream's wording, capital letter included, so that traces
// read like the upstream operator's logs.
func (e *StalenessError) Error() string {
	return fmt.Sprintf("Staleness: cr.ResourceVersion %d is smaller than labeledRV %d", e.CRResourceVersion, e.LabeledResourceVersion)
}

// Reconcile brings the children of the ZookeeperCluster named in req to what
// its spec asks for. See targets.md: the API calls and their order are those
// of the upstream operator.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	logger := log.FromContext(ctx).WithValues("zookeepercluster", req.NamespacedName.String(), "variant", string(r.opts.Variant))
	cr := &ZookeeperCluster{}
	if err := r.client.Get(ctx, req.NamespacedName, cr); err != nil {
		if apierrors.IsNotFound(err) {
			return reconcile.Result{}, nil
		}
		return reconcile.Result{}, err
	}
	if cr.WithDefaults() {
		if err := r.client.Update(ctx, cr); err != nil {
			return reconcile.Result{}, err
		}
		// Upstream asks for an immediate rate-limited requeue here; keep it,
		// deprecated or not, because the requeue timing is part of the
		// behaviour under test.
		return reconcile.Result{Requeue: true}, nil
	}
	steps := []struct {
		name string
		run  func(context.Context, *ZookeeperCluster) error
	}{
		{"finalizers", r.reconcileFinalizers},
		{"configmap", r.reconcileConfigMap},
		{"statefulset", r.reconcileStatefulSet},
		{"client service", r.reconcileClientService},
		{"headless service", r.reconcileHeadlessService},
		{"admin-server service", r.reconcileAdminServerService},
		{"pod disruption budget", r.reconcilePDB},
		{"cluster status", r.reconcileClusterStatus},
	}
	for _, step := range steps {
		if err := step.run(ctx, cr); err != nil {
			// Returned unwrapped: the Staleness error must read exactly as
			// upstream's, and properties match on it.
			logger.Info("reconcile step failed", "step", step.name, "error", err.Error())
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: RequeueAfter}, nil
}

func (r *Reconciler) timestamp() string { return r.opts.Now().UTC().Format(time.RFC3339) }

func childSelector(cr *ZookeeperCluster) []client.ListOption {
	return []client.ListOption{client.InNamespace(cr.Namespace), client.MatchingLabels(Labels(cr.Name))}
}

// ---- finalizers and PVC cleanup ----

func (r *Reconciler) reconcileFinalizers(ctx context.Context, cr *ZookeeperCluster) error {
	if cr.Spec.Persistence == nil || cr.Spec.Persistence.ReclaimPolicy != VolumeReclaimPolicyDelete {
		return nil
	}
	if cr.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(cr, PVCFinalizer) {
			controllerutil.AddFinalizer(cr, PVCFinalizer)
			if err := r.client.Update(ctx, cr); err != nil {
				return err
			}
		}
		return r.cleanupOrphanPVCs(ctx, cr)
	}
	if !controllerutil.ContainsFinalizer(cr, PVCFinalizer) {
		return nil
	}
	if err := r.deleteAllPVCs(ctx, cr); err != nil {
		return err
	}
	controllerutil.RemoveFinalizer(cr, PVCFinalizer)
	// As upstream, the reconcile goes on after this Update even though the
	// CR is now gone; the cluster-status write then fails with NotFound and
	// the next reconcile finds nothing to do.
	return r.client.Update(ctx, cr)
}

// deleteAllPVCs returns delete errors (unlike the orphan cleanup) so that the
// finalizer stays until every PVC is gone.
func (r *Reconciler) deleteAllPVCs(ctx context.Context, cr *ZookeeperCluster) error {
	pvcs, err := r.listPVCs(ctx, cr)
	if err != nil {
		return err
	}
	for i := range pvcs {
		if err := r.client.Delete(ctx, &pvcs[i]); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete PVC %s/%s of deleted ZookeeperCluster: %w; the finalizer stays until it is deleted", pvcs[i].Namespace, pvcs[i].Name, err)
		}
	}
	return nil
}

// listPVCs lists the CR's PVCs sorted by name, the order a real apiserver
// lists them in, so that the deletes happen in the same order upstream's do
// whatever the client's list order.
func (r *Reconciler) listPVCs(ctx context.Context, cr *ZookeeperCluster) ([]corev1.PersistentVolumeClaim, error) {
	list := &corev1.PersistentVolumeClaimList{}
	if err := r.client.List(ctx, list, childSelector(cr)...); err != nil {
		return nil, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	return list.Items, nil
}

// cleanupOrphanPVCs deletes the PVCs of members a scale-down removed. The
// buggy and upstream-fix variants trust the CR they read: with a stale CR
// (spec.replicas and status.readyReplicas both lower than the truth) they
// delete a live member's PVC.
func (r *Reconciler) cleanupOrphanPVCs(ctx context.Context, cr *ZookeeperCluster) error {
	logger := log.FromContext(ctx)
	if cr.Status.ReadyReplicas != cr.Spec.Replicas {
		return nil
	}
	pvcs, err := r.listPVCs(ctx, cr)
	if err != nil {
		return err
	}
	if len(pvcs) <= int(cr.Spec.Replicas) {
		return nil
	}
	if r.opts.Variant == Fixed {
		return r.cleanupOrphanPVCsGuarded(ctx, cr)
	}
	pvcs, err = r.listPVCs(ctx, cr)
	if err != nil {
		return err
	}
	for i := range pvcs {
		ordinal, ok := OrdinalOf(pvcs[i].Name)
		if !ok || ordinal < int(cr.Spec.Replicas) {
			continue
		}
		if err := r.client.Delete(ctx, &pvcs[i]); err != nil {
			logger.Info("could not delete orphan PVC; will retry on a later reconcile", "pvc", pvcs[i].Name, "error", err.Error())
		}
	}
	return nil
}

// cleanupOrphanPVCsGuarded is the Fixed variant's orphan cleanup. It deletes
// PVC data-<cr>-i only when all of these hold:
//
//  1. i >= spec.replicas and status.readyReplicas == spec.replicas (as
//     upstream);
//  2. the StatefulSet exists, its owner-rv label is not newer than the CR's
//     resourceVersion (else the StalenessError), and i >= its spec.replicas;
//  3. no listed pod of the cluster is named <cr>-i or mounts the PVC, and the
//     PVC is not already being deleted;
//  4. a fencing Update of that very StatefulSet copy (setting owner-rv to the
//     CR's resourceVersion) succeeds;
//  5. the Delete carries a UID precondition for the PVC copy we listed.
//
// Why this is complete. Pod <cr>-i is only ever created by the StatefulSet
// controller while the StatefulSet's spec.replicas > i, and only this
// reconciler writes that field, one reconcile at a time. Step 4 is a
// linearizable write: it fails with a conflict unless the StatefulSet we
// checked in step 2 is the current one, however stale the caches behind our
// reads are. So at the fence instant the StatefulSet asks for at most i
// members, and it cannot ask for more before this reconcile ends, so no pod
// <cr>-i can appear before our Delete. The owner-rv check in the same fenced
// copy proves no reconcile that wrote the StatefulSet saw a newer CR than
// ours, which is exactly the stale-CR case of the bug report: the CR read
// from a lagging apiserver is older than the one that scaled the StatefulSet
// up, and we refuse. A CR newer than every one the StatefulSet has seen is
// harmless here: it cannot have scaled anything yet. A pod <cr>-i that still
// exists at the fence is one being removed by the StatefulSet's own
// scale-down; step 3 leaves its PVC alone when the pod cache shows it, and
// otherwise deleting it is the orphan cleanup upstream intends. Step 5 makes
// sure a PVC recreated since our (possibly stale) list is never the one we
// delete. What this cannot exclude is a user scaling the CR up between the
// fence and the Delete; the StatefulSet still asks for <= i members then, so
// the PVC belongs to no live member, and the next reconcile's scale-up gets a
// fresh one, as after any orphan cleanup.
//
// The cost: the fence is one more StatefulSet write, made only when there is
// something to delete; with a lagging StatefulSet cache the statefulset step
// of the same reconcile may then conflict and the reconcile is retried.
func (r *Reconciler) cleanupOrphanPVCsGuarded(ctx context.Context, cr *ZookeeperCluster) error {
	logger := log.FromContext(ctx)
	sts := &appsv1.StatefulSet{}
	if err := r.client.Get(ctx, client.ObjectKey{Namespace: cr.Namespace, Name: StatefulSetName(cr.Name)}, sts); err != nil {
		if apierrors.IsNotFound(err) {
			// Without a StatefulSet nothing proves which members are gone;
			// the statefulset step creates it and a later reconcile cleans up.
			logger.Info("no StatefulSet yet; leaving PVCs alone")
			return nil
		}
		return err
	}
	crNewer, err := crNewerThanStatefulSet(cr, sts)
	if err != nil {
		return err
	}
	stsReplicas := statefulSetReplicas(sts)
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, childSelector(cr)...); err != nil {
		return err
	}
	inUse := map[string]bool{}
	for i := range pods.Items {
		if ordinal, ok := OrdinalOf(pods.Items[i].Name); ok {
			inUse[PVCName(cr.Name, ordinal)] = true
		}
		for _, v := range pods.Items[i].Spec.Volumes {
			if v.PersistentVolumeClaim != nil {
				inUse[v.PersistentVolumeClaim.ClaimName] = true
			}
		}
	}
	pvcs, err := r.listPVCs(ctx, cr)
	if err != nil {
		return err
	}
	var orphans []corev1.PersistentVolumeClaim
	for _, pvc := range pvcs {
		ordinal, ok := OrdinalOf(pvc.Name)
		if !ok || ordinal < int(cr.Spec.Replicas) || ordinal < int(stsReplicas) {
			continue
		}
		if inUse[pvc.Name] || pvc.DeletionTimestamp != nil {
			continue
		}
		orphans = append(orphans, pvc)
	}
	if len(orphans) == 0 {
		return nil
	}
	if crNewer {
		setOwnerRV(sts, cr.ResourceVersion)
	}
	if err := r.client.Update(ctx, sts); err != nil {
		return fmt.Errorf("fence StatefulSet %s/%s before deleting orphan PVCs: %w; the PVCs are left alone and the next reconcile retries", sts.Namespace, sts.Name, err)
	}
	for i := range orphans {
		uid := orphans[i].UID
		if err := r.client.Delete(ctx, &orphans[i], client.Preconditions{UID: &uid}); err != nil {
			logger.Info("could not delete orphan PVC; will retry on a later reconcile", "pvc", orphans[i].Name, "error", err.Error())
		}
	}
	return nil
}

// ---- statefulset ----

// statefulSetReplicas reads spec.replicas with the apiserver's default of 1.
func statefulSetReplicas(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

func setOwnerRV(sts *appsv1.StatefulSet, rv string) {
	if sts.Labels == nil {
		sts.Labels = map[string]string{}
	}
	sts.Labels[OwnerRVLabel] = rv
}

// crNewerThanStatefulSet compares the CR's resourceVersion with the
// StatefulSet's owner-rv label as integers, as the upstream fix does. A
// missing or unparsable label counts as "CR newer". A CR older than the label
// is a StalenessError.
func crNewerThanStatefulSet(cr *ZookeeperCluster, sts *appsv1.StatefulSet) (bool, error) {
	crRV, err := strconv.ParseInt(cr.ResourceVersion, 10, 64)
	if err != nil {
		return false, fmt.Errorf("cannot compare ZookeeperCluster %s/%s resourceVersion %q with the StatefulSet's %s label: not an integer; the staleness guard needs an apiserver that issues integer resourceVersions", cr.Namespace, cr.Name, cr.ResourceVersion, OwnerRVLabel)
	}
	labeled, err := strconv.ParseInt(sts.Labels[OwnerRVLabel], 10, 64)
	if err != nil {
		return true, nil
	}
	if crRV < labeled {
		return false, &StalenessError{CRResourceVersion: crRV, LabeledResourceVersion: labeled}
	}
	return crRV > labeled, nil
}

// reconcileStatefulSet creates the StatefulSet, or stores the new ensemble
// size in ZooKeeper and then updates it.
//
// The Update of an existing StatefulSet happens on every reconcile, not only
// when something differs, because upstream does so: besides replicas it
// copies the template and update strategy, and its Update response is where
// the CR's status.replicas/readyReplicas come from. A real apiserver turns an
// unchanged Update into a no-op, so the visible effect is that an Update from
// a stale StatefulSet copy fails with a conflict. In the fix variants the
// owner-rv label is raised in this same Update whenever the CR is newer,
// whether or not replicas change, so the label always records the newest CR
// that wrote the StatefulSet.
func (r *Reconciler) reconcileStatefulSet(ctx context.Context, cr *ZookeeperCluster) error {
	desired := desiredStatefulSet(cr)
	guarded := r.opts.Variant != Buggy
	if guarded {
		setOwnerRV(desired, cr.ResourceVersion)
	}
	if err := controllerutil.SetControllerReference(cr, desired, r.client.Scheme()); err != nil {
		return err
	}
	existing := &appsv1.StatefulSet{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return r.client.Create(ctx, desired)
	}
	if err != nil {
		return err
	}
	crNewer := false
	if guarded {
		if crNewer, err = crNewerThanStatefulSet(cr, existing); err != nil {
			return err
		}
	}
	if r.opts.Variant == Fixed && statefulSetReplicas(existing) > cr.Spec.Replicas {
		// A scale-down removes a member: make sure the CR copy that asks
		// for it is the current one. The owner-rv guard only catches a CR
		// older than the StatefulSet; an informer that has received the
		// user's scale-down but not yet a later scale-up (events arrive
		// one at a time, after a paused cache resumes, say) holds a CR
		// newer than the StatefulSet and still superseded. An empty merge
		// patch with an optimistic lock changes nothing and fails with
		// 409 unless this copy is current; the retry reads the newer CR.
		// cr itself is patched: a server may answer with a new
		// resourceVersion (a real apiserver does not for a no-op patch),
		// and the status write later in this reconcile needs it.
		if err := r.client.Patch(ctx, cr, client.MergeFromWithOptions(cr.DeepCopy(), client.MergeFromWithOptimisticLock{})); err != nil {
			return fmt.Errorf("confirm ZookeeperCluster %s/%s rv %s is current before scaling the StatefulSet down to %d: %w", cr.Namespace, cr.Name, cr.ResourceVersion, cr.Spec.Replicas, err)
		}
	}
	if statefulSetReplicas(existing) != cr.Spec.Replicas {
		if err := r.storeClusterSize(ctx, cr); err != nil {
			return err
		}
	}
	existing.Spec.Replicas = desired.Spec.Replicas
	existing.Spec.Template = desired.Spec.Template
	existing.Spec.UpdateStrategy = desired.Spec.UpdateStrategy
	if crNewer {
		setOwnerRV(existing, cr.ResourceVersion)
	}
	if err := r.client.Update(ctx, existing); err != nil {
		return err
	}
	cr.Status.Replicas = existing.Status.Replicas
	cr.Status.ReadyReplicas = existing.Status.ReadyReplicas
	return r.upgradeStatefulSet(ctx, cr, existing)
}

// storeClusterSize writes CLUSTER_SIZE=<spec.replicas> to the cluster's
// znode, where members read the ensemble size from when they start or leave.
func (r *Reconciler) storeClusterSize(ctx context.Context, cr *ZookeeperCluster) error {
	address := ClientServiceAddress(cr.Name, cr.Namespace)
	zk := r.opts.NewZookeeperClient()
	if err := zk.Connect(ctx, address); err != nil {
		return fmt.Errorf("store cluster size: connect to %s: %w; a member must be reachable before the ensemble can be resized, the reconcile retries", address, err)
	}
	defer zk.Close()
	path := MetaPath(cr.Name)
	data := clusterSizeData(cr.Spec.Replicas)
	version, err := zk.NodeExists(ctx, path)
	switch {
	case errors.Is(err, ErrNoNode):
		err = zk.CreateNode(ctx, path, data)
	case err != nil:
		return fmt.Errorf("store cluster size: check znode %s: %w", path, err)
	default:
		err = zk.UpdateNode(ctx, path, data, version)
	}
	if err != nil {
		return fmt.Errorf("store cluster size: write %q to znode %s: %w; the reconcile retries", data, path, err)
	}
	return nil
}

func clusterSizeData(replicas int32) string {
	return "CLUSTER_SIZE=" + strconv.Itoa(int(replicas))
}

// upgradeStatefulSet tracks rolling image upgrades in the Upgrading condition
// and status.currentImage, and always ends by writing the CR status, which
// carries the readyReplicas copied from the StatefulSet a moment ago.
func (r *Reconciler) upgradeStatefulSet(ctx context.Context, cr *ZookeeperCluster, sts *appsv1.StatefulSet) error {
	settled := sts.Status.ObservedGeneration >= sts.Generation && sts.Status.CurrentRevision == sts.Status.UpdateRevision
	switch {
	case settled:
		cr.Status.CurrentImage = cr.Spec.Image
		cr.Status.setCondition(ClusterConditionUpgrading, corev1.ConditionFalse, "", "", r.timestamp())
	case cr.Status.CurrentImage != cr.Spec.Image:
		cr.Status.setCondition(ClusterConditionUpgrading, corev1.ConditionTrue, "RollingUpdate",
			fmt.Sprintf("replacing members running %q with %q", cr.Status.CurrentImage, cr.Spec.Image), r.timestamp())
	default:
		// Rolling for a reason other than the image (a template change):
		// not an upgrade, leave the condition as it is.
	}
	return r.client.Status().Update(ctx, cr)
}

// ---- configmap, services, PDB: Get; create when missing; update when different ----

func (r *Reconciler) reconcileConfigMap(ctx context.Context, cr *ZookeeperCluster) error {
	desired := desiredConfigMap(cr)
	if err := controllerutil.SetControllerReference(cr, desired, r.client.Scheme()); err != nil {
		return err
	}
	existing := &corev1.ConfigMap{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return r.client.Create(ctx, desired)
	}
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(existing.Data, desired.Data) {
		return nil
	}
	existing.Data = desired.Data
	return r.client.Update(ctx, existing)
}

func (r *Reconciler) reconcileClientService(ctx context.Context, cr *ZookeeperCluster) error {
	return r.reconcileService(ctx, cr, desiredClientService(cr))
}

func (r *Reconciler) reconcileHeadlessService(ctx context.Context, cr *ZookeeperCluster) error {
	return r.reconcileService(ctx, cr, desiredHeadlessService(cr))
}

func (r *Reconciler) reconcileAdminServerService(ctx context.Context, cr *ZookeeperCluster) error {
	return r.reconcileService(ctx, cr, desiredAdminServerService(cr))
}

// reconcileService compares only the fields the operator owns; clusterIP is
// immutable and allocated by the apiserver, so it is set at creation only.
func (r *Reconciler) reconcileService(ctx context.Context, cr *ZookeeperCluster, desired *corev1.Service) error {
	if err := controllerutil.SetControllerReference(cr, desired, r.client.Scheme()); err != nil {
		return err
	}
	existing := &corev1.Service{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return r.client.Create(ctx, desired)
	}
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(existing.Spec.Ports, desired.Spec.Ports) &&
		equality.Semantic.DeepEqual(existing.Spec.Selector, desired.Spec.Selector) &&
		existing.Spec.PublishNotReadyAddresses == desired.Spec.PublishNotReadyAddresses {
		return nil
	}
	existing.Spec.Ports = desired.Spec.Ports
	existing.Spec.Selector = desired.Spec.Selector
	existing.Spec.PublishNotReadyAddresses = desired.Spec.PublishNotReadyAddresses
	return r.client.Update(ctx, existing)
}

func (r *Reconciler) reconcilePDB(ctx context.Context, cr *ZookeeperCluster) error {
	desired := desiredPDB(cr)
	if err := controllerutil.SetControllerReference(cr, desired, r.client.Scheme()); err != nil {
		return err
	}
	existing := &policyv1.PodDisruptionBudget{}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(desired), existing)
	if apierrors.IsNotFound(err) {
		return r.client.Create(ctx, desired)
	}
	if err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(existing.Spec.MaxUnavailable, desired.Spec.MaxUnavailable) &&
		equality.Semantic.DeepEqual(existing.Spec.Selector, desired.Spec.Selector) {
		return nil
	}
	existing.Spec.MaxUnavailable = desired.Spec.MaxUnavailable
	existing.Spec.Selector = desired.Spec.Selector
	return r.client.Update(ctx, existing)
}

// ---- cluster status ----

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// reconcileClusterStatus records which members are ready, creates the
// cluster's znode once the ensemble first reaches its size, and writes the
// status. Note that readiness of the cluster is judged from
// status.readyReplicas, the copy of the StatefulSet's status, not from the
// pods just listed, as upstream does.
func (r *Reconciler) reconcileClusterStatus(ctx context.Context, cr *ZookeeperCluster) error {
	pods := &corev1.PodList{}
	if err := r.client.List(ctx, pods, childSelector(cr)...); err != nil {
		return err
	}
	sort.Slice(pods.Items, func(i, j int) bool { return pods.Items[i].Name < pods.Items[j].Name })
	var ready, unready []string
	for i := range pods.Items {
		if podReady(&pods.Items[i]) {
			ready = append(ready, pods.Items[i].Name)
		} else {
			unready = append(unready, pods.Items[i].Name)
		}
	}
	cr.Status.Members = MembersStatus{Ready: ready, Unready: unready}
	if cr.Spec.Replicas == cr.Status.ReadyReplicas && !cr.Status.MetaRootCreated {
		if err := r.createMetaRoot(ctx, cr); err != nil {
			return err
		}
		cr.Status.MetaRootCreated = true
	}
	if cr.Status.ReadyReplicas == cr.Spec.Replicas {
		cr.Status.setCondition(ClusterConditionPodsReady, corev1.ConditionTrue, "", "", r.timestamp())
	} else {
		cr.Status.setCondition(ClusterConditionPodsReady, corev1.ConditionFalse, "MembersNotReady",
			fmt.Sprintf("%d of %d members ready", cr.Status.ReadyReplicas, cr.Spec.Replicas), r.timestamp())
	}
	return r.client.Status().Update(ctx, cr)
}

// createMetaRoot creates the cluster's znode. A node that already exists
// counts as created: a crash between the create and the status write would
// otherwise fail every later reconcile, a liveness failure unrelated to the
// bug this case study is about (see doc.go).
func (r *Reconciler) createMetaRoot(ctx context.Context, cr *ZookeeperCluster) error {
	address := ClientServiceAddress(cr.Name, cr.Namespace)
	zk := r.opts.NewZookeeperClient()
	if err := zk.Connect(ctx, address); err != nil {
		return fmt.Errorf("create cluster metadata: connect to %s: %w; the reconcile retries once a member is reachable", address, err)
	}
	defer zk.Close()
	path := MetaPath(cr.Name)
	if err := zk.CreateNode(ctx, path, clusterSizeData(cr.Spec.Replicas)); err != nil && !errors.Is(err, ErrNodeExists) {
		return fmt.Errorf("create cluster metadata znode %s: %w; the reconcile retries", path, err)
	}
	return nil
}
