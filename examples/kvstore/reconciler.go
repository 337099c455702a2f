package kvstore

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Variant selects the PVC clean-up logic.
type Variant string

const (
	// Correct deletes a removed member's PVC only when the KVStore copy is
	// not older than the one that sized the StatefulSet, the ordinal is at
	// or above both replica counts, the member's pod is gone, a write of the
	// very StatefulSet copy it checked succeeds (so that copy is current),
	// and the PVC's UID still matches.
	Correct Variant = "correct"
	// Broken deletes every data-<name>-<i> with i >= the spec.replicas of
	// the KVStore copy it read, however stale that copy is.
	Broken Variant = "broken"
)

// Names and labels of a KVStore's children.
const (
	// LabelName carries the KVStore's name on its pods and PVCs.
	LabelName = "example.opcheck.dev/kvstore"
	// AnnotationGeneration on the StatefulSet is the KVStore generation
	// whose spec.replicas the StatefulSet was last sized for.
	AnnotationGeneration = "example.opcheck.dev/sized-for-generation"
	// VolumeName is the volumeClaimTemplate; PVCs are data-<name>-<i>.
	VolumeName = "data"
	// DefaultStorage is the volume size when spec.storage is empty.
	DefaultStorage = "1Gi"
	// Requeue is how often a KVStore is looked at without an event.
	Requeue = 10 * time.Second
)

// PodName is the name of member i's pod.
func PodName(kv string, i int) string { return kv + "-" + strconv.Itoa(i) }

// PVCName is the name of member i's volume claim.
func PVCName(kv string, i int) string { return VolumeName + "-" + PodName(kv, i) }

// Ordinal returns i for a PVC named data-<kv>-<i>.
func Ordinal(kv, pvcName string) (int, bool) {
	rest, ok := strings.CutPrefix(pvcName, VolumeName+"-"+kv+"-")
	if !ok {
		return 0, false
	}
	i, err := strconv.Atoi(rest)
	if err != nil || i < 0 || strconv.Itoa(i) != rest {
		return 0, false
	}
	return i, true
}

// Reconciler reconciles KVStores through a controller-runtime client.
type Reconciler struct {
	Client  client.Client
	Variant Variant
}

// New returns the reconciler of a variant; it panics on an unknown one.
func New(c client.Client, v Variant) *Reconciler {
	if v != Correct && v != Broken {
		panic(fmt.Sprintf("kvstore.New: unknown variant %q; use %q or %q", v, Correct, Broken))
	}
	return &Reconciler{Client: c, Variant: v}
}

// Reconcile: the headless Service, the StatefulSet (created if missing),
// the clean-up of removed members' PVCs, the StatefulSet's size, the status.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (reconcile.Result, error) {
	kv := &KVStore{}
	if err := r.Client.Get(ctx, req.NamespacedName, kv); err != nil {
		return reconcile.Result{}, client.IgnoreNotFound(err)
	}
	if kv.DeletionTimestamp != nil {
		return reconcile.Result{}, nil // the garbage collector removes the children
	}
	if err := r.ensureService(ctx, kv); err != nil {
		return reconcile.Result{}, err
	}
	sts := &appsv1.StatefulSet{}
	if err := r.Client.Get(ctx, req.NamespacedName, sts); err != nil {
		if !apierrors.IsNotFound(err) {
			return reconcile.Result{}, err
		}
		if err := r.Client.Create(ctx, statefulSet(kv)); err != nil && !apierrors.IsAlreadyExists(err) {
			return reconcile.Result{}, err
		}
		return reconcile.Result{RequeueAfter: Requeue}, nil
	}
	if !metav1.IsControlledBy(sts, kv) {
		return reconcile.Result{}, fmt.Errorf("StatefulSet %s/%s exists but is not controlled by KVStore %s (uid %s); delete it or rename the KVStore", sts.Namespace, sts.Name, kv.Name, kv.UID)
	}
	var err error
	if r.Variant == Broken {
		err = r.deleteRemovedPVCsBroken(ctx, kv)
	} else {
		err = r.deleteRemovedPVCs(ctx, kv, sts)
	}
	if err != nil {
		return reconcile.Result{}, err
	}
	if sizedFor(sts) > kv.Generation {
		// Our KVStore copy is older than one this operator already acted
		// on: the informer (or the apiserver behind it) lags. Act on
		// nothing until it catches up.
		return reconcile.Result{RequeueAfter: Requeue}, nil
	}
	if replicas(sts) != kv.Spec.Replicas || sizedFor(sts) != kv.Generation {
		n := kv.Spec.Replicas
		sts.Spec.Replicas = &n
		setSizedFor(sts, kv.Generation)
		if err := r.Client.Update(ctx, sts); err != nil {
			return reconcile.Result{}, err
		}
	}
	return reconcile.Result{RequeueAfter: Requeue}, r.updateStatus(ctx, kv, sts)
}

func (r *Reconciler) ensureService(ctx context.Context, kv *KVStore) error {
	svc := &corev1.Service{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: kv.Namespace, Name: kv.Name}, svc)
	if !apierrors.IsNotFound(err) {
		return err
	}
	svc = &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: kv.Namespace, Name: kv.Name, Labels: labels(kv), OwnerReferences: ownerRefs(kv)},
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 labels(kv),
			PublishNotReadyAddresses: true,
			Ports:                    []corev1.ServicePort{{Name: "client", Port: 7379}, {Name: "peer", Port: 7380}},
		},
	}
	if err := r.Client.Create(ctx, svc); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}

// deleteRemovedPVCs is Correct's clean-up. Why each guard:
//
//   - sizedFor(sts) > kv.Generation: a KVStore copy older than the one that
//     sized the StatefulSet may ask for fewer members than the user does
//     now; deleting by it deletes wanted members' disks.
//   - ordinal >= both spec.replicas and the StatefulSet's replicas, and no
//     pod of that ordinal in the pod cache: the member is really gone, not
//     just not yet scaled.
//   - the fence (an Update of the StatefulSet copy we checked, changing
//     nothing) fails with 409 unless that copy is the current one, so the
//     checks above held at a real instant, however stale our caches are:
//     the StatefulSet then asks for no member at that ordinal, and only this
//     reconciler, one reconcile at a time, changes that.
//   - the KVStore fence (an empty merge patch with an optimistic lock)
//     fails with 409 unless the KVStore copy is current: the user does not
//     want that member back at that instant.
//   - the UID precondition: never delete a PVC recreated since our list.
func (r *Reconciler) deleteRemovedPVCs(ctx context.Context, kv *KVStore, sts *appsv1.StatefulSet) error {
	if sizedFor(sts) > kv.Generation {
		return nil
	}
	pvcs, err := r.memberPVCs(ctx, kv)
	if err != nil {
		return err
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(kv.Namespace), client.MatchingLabels(labels(kv))); err != nil {
		return err
	}
	podExists := map[string]bool{}
	for i := range pods.Items {
		podExists[pods.Items[i].Name] = true
	}
	var removed []*corev1.PersistentVolumeClaim
	for i := range pvcs {
		ord, _ := Ordinal(kv.Name, pvcs[i].Name)
		if int32(ord) < kv.Spec.Replicas || int32(ord) < replicas(sts) || podExists[PodName(kv.Name, ord)] || pvcs[i].DeletionTimestamp != nil {
			continue
		}
		removed = append(removed, &pvcs[i])
	}
	if len(removed) == 0 {
		return nil
	}
	// The KVStore copy must be current too: an informer that has the
	// user's scale-down but not yet a later scale-up (watch events arrive
	// one at a time) holds a copy that passes the generation guard and is
	// still superseded. An empty merge patch with an optimistic lock changes
	// nothing and fails with 409 unless this copy is the current one.
	if err := r.Client.Patch(ctx, kv, client.MergeFromWithOptions(kv.DeepCopy(), client.MergeFromWithOptimisticLock{})); err != nil {
		return fmt.Errorf("confirm KVStore %s/%s rv %s is current before deleting removed members' PVCs: %w; nothing deleted, the next reconcile retries", kv.Namespace, kv.Name, kv.ResourceVersion, err)
	}
	if err := r.Client.Update(ctx, sts); err != nil {
		return fmt.Errorf("fence StatefulSet %s/%s before deleting removed members' PVCs: %w; nothing deleted, the next reconcile retries", sts.Namespace, sts.Name, err)
	}
	for _, pvc := range removed {
		uid := pvc.UID
		if err := r.Client.Delete(ctx, pvc, client.Preconditions{UID: &uid}); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("delete PVC %s/%s of a removed member: %w", pvc.Namespace, pvc.Name, err)
		}
	}
	return nil
}

// deleteRemovedPVCsBroken is Broken's clean-up: it trusts the KVStore copy
// from the informer cache. After a restart against a lagging apiserver that
// copy can be from before the last scale-up, and the PVCs of running
// members are deleted.
func (r *Reconciler) deleteRemovedPVCsBroken(ctx context.Context, kv *KVStore) error {
	pvcs, err := r.memberPVCs(ctx, kv)
	if err != nil {
		return err
	}
	for i := range pvcs {
		if ord, _ := Ordinal(kv.Name, pvcs[i].Name); int32(ord) >= kv.Spec.Replicas && pvcs[i].DeletionTimestamp == nil {
			if err := r.Client.Delete(ctx, &pvcs[i]); client.IgnoreNotFound(err) != nil {
				return err
			}
		}
	}
	return nil
}

// memberPVCs lists the KVStore's data-<name>-<i> PVCs in ordinal order.
func (r *Reconciler) memberPVCs(ctx context.Context, kv *KVStore) ([]corev1.PersistentVolumeClaim, error) {
	list := &corev1.PersistentVolumeClaimList{}
	if err := r.Client.List(ctx, list, client.InNamespace(kv.Namespace), client.MatchingLabels(labels(kv))); err != nil {
		return nil, err
	}
	var out []corev1.PersistentVolumeClaim
	for _, pvc := range list.Items {
		if _, ok := Ordinal(kv.Name, pvc.Name); ok {
			out = append(out, pvc)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, _ := Ordinal(kv.Name, out[i].Name)
		b, _ := Ordinal(kv.Name, out[j].Name)
		return a < b
	})
	return out, nil
}

func (r *Reconciler) updateStatus(ctx context.Context, kv *KVStore, sts *appsv1.StatefulSet) error {
	st := KVStoreStatus{ReadyReplicas: sts.Status.ReadyReplicas, Phase: PhaseScaling}
	if replicas(sts) == kv.Spec.Replicas && sts.Status.Replicas == kv.Spec.Replicas && sts.Status.ReadyReplicas == kv.Spec.Replicas && sts.Status.ObservedGeneration == sts.Generation {
		st.Phase = PhaseReady
	}
	if kv.Status == st {
		return nil
	}
	kv.Status = st
	return r.Client.Status().Update(ctx, kv)
}

func statefulSet(kv *KVStore) *appsv1.StatefulSet {
	n := kv.Spec.Replicas
	storage := kv.Spec.Storage
	if storage == "" {
		storage = DefaultStorage
	}
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: kv.Namespace, Name: kv.Name, Labels: labels(kv), OwnerReferences: ownerRefs(kv)},
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &n,
			ServiceName: kv.Name,
			Selector:    &metav1.LabelSelector{MatchLabels: labels(kv)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels(kv)},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{
					Name: "kvstore", Image: "example.opcheck.dev/kvstore:0.1",
					Ports:        []corev1.ContainerPort{{Name: "client", ContainerPort: 7379}, {Name: "peer", ContainerPort: 7380}},
					VolumeMounts: []corev1.VolumeMount{{Name: VolumeName, MountPath: "/var/lib/kvstore"}},
				}}},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: VolumeName},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(storage)}},
				},
			}},
		},
	}
	setSizedFor(sts, kv.Generation)
	return sts
}

func labels(kv *KVStore) map[string]string { return map[string]string{LabelName: kv.Name} }

func ownerRefs(kv *KVStore) []metav1.OwnerReference {
	yes := true
	return []metav1.OwnerReference{{APIVersion: GroupVersion.String(), Kind: "KVStore", Name: kv.Name, UID: kv.UID, Controller: &yes, BlockOwnerDeletion: &yes}}
}

func replicas(sts *appsv1.StatefulSet) int32 {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return *sts.Spec.Replicas
}

// sizedFor is the StatefulSet's AnnotationGeneration (0 when absent).
func sizedFor(sts *appsv1.StatefulSet) int64 {
	g, _ := strconv.ParseInt(sts.Annotations[AnnotationGeneration], 10, 64)
	return g
}

func setSizedFor(sts *appsv1.StatefulSet, gen int64) {
	if sts.Annotations == nil {
		sts.Annotations = map[string]string{}
	}
	sts.Annotations[AnnotationGeneration] = strconv.FormatInt(gen, 10)
}
