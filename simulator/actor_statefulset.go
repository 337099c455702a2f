package simulator

import (
	"context"
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// LabelStatefulSetPodName is the label the StatefulSet controller puts on
// every pod it creates, naming the pod.
const LabelStatefulSetPodName = appsv1.StatefulSetPodNameLabel // "statefulset.kubernetes.io/pod-name"

// LabelStatefulSetPodIndex is the label carrying the pod's ordinal.
const LabelStatefulSetPodIndex = appsv1.PodIndexLabel // "apps.kubernetes.io/pod-index"

// protoStatefulSet resolves the StatefulSet kind; never written.
var protoStatefulSet = &appsv1.StatefulSet{}

func controllerUID(obj metav1.Object) (types.UID, bool) {
	refs := obj.GetOwnerReferences()
	for i := range refs {
		if refs[i].Controller != nil && *refs[i].Controller {
			return refs[i].UID, true
		}
	}
	return "", false
}

// StatefulSetController is the built-in StatefulSet controller: it creates
// claims and pods `<sts>-<i>` from the set's templates, scales down highest
// ordinal first, replaces failed pods and writes the set's status. Each step
// is one write; per set at most one step is enabled at a time, the next
// write the real controller would make.
type StatefulSetController struct {
	memo stepMemo
	pods []setPod // scratch: the pods of the set being examined
}

type setPod struct {
	ord int
	pod *corev1.Pod
}

// NewStatefulSetController returns the built-in StatefulSet controller.
func NewStatefulSetController() Actor { return &StatefulSetController{} }

// Name implements Actor.
func (c *StatefulSetController) Name() model.Actor { return model.ActorStatefulSet }

// Steps implements Actor.
func (c *StatefulSetController) Steps(w *World, buf []Step) []Step {
	if !w.kinds.stsTried {
		// Pods and claims must be known only once a set exists (next); a
		// scheme without them keys on the sets alone.
		w.kinds.stsTried = true
		w.kinds.sts = w.kindOf(protoStatefulSet)
		w.kinds.pod, _ = w.Store.kinds.forObject(protoPod)
		w.kinds.claim, _ = w.Store.kinds.forObject(protoClaim)
	}
	stsKind := w.kinds.sts
	key := tablesKey(w, nil, stsKind, w.kinds.pod, w.kinds.claim)
	if out, ok := c.memo.lookup(key, buf); ok {
		return out
	}
	from := len(buf)
	for _, o := range storedList(w, stsKind, "") {
		sts := o.(*appsv1.StatefulSet)
		if beingDeleted(sts) {
			continue
		}
		if st, ok := c.next(w, sts); ok {
			buf = append(buf, st)
		}
	}
	c.memo.save(key, buf, from)
	return buf
}

// parseOrdinal returns i when podName is `<setName>-<i>` with i written in
// canonical decimal form.
func parseOrdinal(setName, podName string) (int, bool) {
	n := len(setName)
	if len(podName) < n+2 || podName[:n] != setName || podName[n] != '-' {
		return 0, false
	}
	digits := podName[n+1:]
	if len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		return 0, false
	}
	v := 0
	for i := 0; i < len(digits); i++ {
		d := digits[i]
		if d < '0' || d > '9' {
			return 0, false
		}
		v = v*10 + int(d-'0')
	}
	return v, true
}

func setReplicas(sts *appsv1.StatefulSet) int {
	if sts.Spec.Replicas == nil {
		return 1
	}
	return int(*sts.Spec.Replicas)
}

func setStart(sts *appsv1.StatefulSet) int {
	if sts.Spec.Ordinals == nil {
		return 0
	}
	return int(sts.Spec.Ordinals.Start)
}

func setPodName(sts *appsv1.StatefulSet, ord int) string { return sts.Name + "-" + strconv.Itoa(ord) }

func setClaimName(t *corev1.PersistentVolumeClaim, sts *appsv1.StatefulSet, ord int) string {
	return t.Name + "-" + setPodName(sts, ord)
}

// next returns the one write the controller would make next for sts.
func (c *StatefulSetController) next(w *World, sts *appsv1.StatefulSet) (Step, bool) {
	podKind, claimKind := w.podKind(), w.claimKind()
	// The pods of the set: controlled by it and named after an ordinal,
	// sorted by ordinal.
	c.pods = c.pods[:0]
	for _, o := range storedList(w, podKind, sts.Namespace) {
		p := o.(*corev1.Pod)
		ord, ok := parseOrdinal(sts.Name, p.Name)
		if !ok {
			continue
		}
		if uid, ok := controllerUID(p); !ok || uid != sts.UID {
			continue
		}
		c.pods = append(c.pods, setPod{ord, p})
	}
	slices.SortFunc(c.pods, func(a, b setPod) int { return a.ord - b.ord })
	pods := c.pods
	find := func(ord int) *corev1.Pod {
		for i := range pods {
			if pods[i].ord == ord {
				return pods[i].pod
			}
		}
		return nil
	}

	ordered := sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement
	replicas, start := setReplicas(sts), setStart(sts)
	healthy := true // every pod examined so far is Running, Ready and not being deleted
	for ord := start; ord < start+replicas; ord++ {
		p := find(ord)
		if p == nil {
			// In OrderedReady mode the loop only gets here when every
			// lower ordinal is healthy.
			name := setPodName(sts, ord)
			if other, exists := storedGet(w, podKind, sts.Namespace, name); exists {
				// A pod of that name the set does not control.
				if st, ok := c.adopt(w, sts, other.(*corev1.Pod)); ok {
					return st, true
				}
				healthy = false
				if ordered {
					break
				}
				continue
			}
			for i := range sts.Spec.VolumeClaimTemplates {
				t := &sts.Spec.VolumeClaimTemplates[i]
				cn := setClaimName(t, sts, ord)
				if _, exists := storedGet(w, claimKind, sts.Namespace, cn); !exists {
					return c.createClaimStep(w, sts, t, cn), true
				}
			}
			return c.createPodStep(w, sts, ord), true
		}
		if podTerminated(p) && !beingDeleted(p) {
			return c.deletePodStep(w, p, "delete terminated pod "), true
		}
		if !beingDeleted(p) && podPending(p) {
			// A pending pod whose claim is gone (deleted while the pod
			// waited) gets the claim re-created, as the real controller
			// does for pending pods; otherwise it could never be
			// scheduled.
			for i := range sts.Spec.VolumeClaimTemplates {
				t := &sts.Spec.VolumeClaimTemplates[i]
				cn := setClaimName(t, sts, ord)
				if _, exists := storedGet(w, claimKind, sts.Namespace, cn); !exists {
					return c.createClaimStep(w, sts, t, cn), true
				}
			}
		}
		if beingDeleted(p) || !podRunningAndReady(p) {
			healthy = false
			if ordered {
				break
			}
		}
	}

	if !(ordered && !healthy) {
		if st, ok := c.scaleDown(w, sts, ordered); ok {
			return st, true
		}
		if st, ok := c.deleteScaledClaims(w, sts); ok {
			return st, true
		}
	}
	return c.statusStep(w, sts)
}

// condemned reports whether ord is outside the set's ordinal range.
func condemned(sts *appsv1.StatefulSet, ord int) bool {
	start := setStart(sts)
	return ord < start || ord >= start+setReplicas(sts)
}

// scaleDown deletes the highest condemned pod: in OrderedReady mode one at a
// time, only when no pod of the set is being deleted and every pod with a
// lower ordinal is Running and Ready.
func (c *StatefulSetController) scaleDown(w *World, sts *appsv1.StatefulSet, ordered bool) (Step, bool) {
	pods := c.pods
	if ordered {
		for i := range pods {
			if beingDeleted(pods[i].pod) {
				return Step{}, false
			}
		}
	}
	for i := len(pods) - 1; i >= 0; i-- {
		p := pods[i]
		if !condemned(sts, p.ord) || beingDeleted(p.pod) {
			continue
		}
		if ordered {
			for j := 0; j < i; j++ {
				if !podRunningAndReady(pods[j].pod) {
					return Step{}, false
				}
			}
		}
		return c.deletePodStep(w, p.pod, "delete pod "), true
	}
	return Step{}, false
}

// deleteScaledClaims implements persistentVolumeClaimRetentionPolicy
// whenScaled: Delete: a claim of a condemned ordinal whose pod is gone is
// deleted.
func (c *StatefulSetController) deleteScaledClaims(w *World, sts *appsv1.StatefulSet) (Step, bool) {
	pol := sts.Spec.PersistentVolumeClaimRetentionPolicy
	if pol == nil || pol.WhenScaled != appsv1.DeletePersistentVolumeClaimRetentionPolicyType || len(sts.Spec.VolumeClaimTemplates) == 0 {
		return Step{}, false
	}
	podKind, claimKind := w.podKind(), w.claimKind()
	for _, o := range storedList(w, claimKind, sts.Namespace) {
		pvc := o.(*corev1.PersistentVolumeClaim)
		if beingDeleted(pvc) {
			continue
		}
		for i := range sts.Spec.VolumeClaimTemplates {
			t := &sts.Spec.VolumeClaimTemplates[i]
			if len(pvc.Name) <= len(t.Name)+1 || pvc.Name[:len(t.Name)] != t.Name || pvc.Name[len(t.Name)] != '-' {
				continue
			}
			ord, ok := parseOrdinal(sts.Name, pvc.Name[len(t.Name)+1:])
			if !ok || !condemned(sts, ord) {
				continue
			}
			if _, exists := storedGet(w, podKind, sts.Namespace, setPodName(sts, ord)); exists {
				continue
			}
			uid := pvc.UID
			ns, name := pvc.Namespace, pvc.Name
			return Step{Actor: model.ActorStatefulSet, Label: "delete scaled-down pvc " + nsKey(ns, name), Run: func() {
				obj := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
				_ = w.ActorClient(model.ActorStatefulSet).Delete(context.Background(), obj, client.Preconditions{UID: &uid})
			}}, true
		}
	}
	return Step{}, false
}

// adopt takes over an orphan pod with the set's name and labels, as the
// real controller's ref manager does.
func (c *StatefulSetController) adopt(w *World, sts *appsv1.StatefulSet, p *corev1.Pod) (Step, bool) {
	if beingDeleted(p) {
		return Step{}, false
	}
	if _, owned := controllerUID(p); owned {
		return Step{}, false
	}
	sel, err := metav1.LabelSelectorAsSelector(sts.Spec.Selector)
	if err != nil || sel.Empty() || !sel.Matches(labels.Set(p.Labels)) {
		return Step{}, false
	}
	return Step{Actor: model.ActorStatefulSet, Label: "adopt pod " + nsKey(p.Namespace, p.Name), Run: func() {
		np := p.DeepCopy()
		np.OwnerReferences = append(np.OwnerReferences, setOwnerRef(sts))
		_ = w.ActorClient(model.ActorStatefulSet).Update(context.Background(), np)
	}}, true
}

func setOwnerRef(sts *appsv1.StatefulSet) metav1.OwnerReference {
	t := true
	return metav1.OwnerReference{APIVersion: "apps/v1", Kind: "StatefulSet", Name: sts.Name, UID: sts.UID, Controller: &t, BlockOwnerDeletion: &t}
}

func (c *StatefulSetController) createClaimStep(w *World, sts *appsv1.StatefulSet, t *corev1.PersistentVolumeClaim, name string) Step {
	return Step{Actor: model.ActorStatefulSet, Label: "create pvc " + nsKey(sts.Namespace, name), Run: func() {
		_ = w.ActorClient(model.ActorStatefulSet).Create(context.Background(), newSetClaim(sts, t, name))
	}}
}

// newSetClaim builds claim name from template t of sts.
func newSetClaim(sts *appsv1.StatefulSet, t *corev1.PersistentVolumeClaim, name string) *corev1.PersistentVolumeClaim {
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: sts.Namespace, Name: name, Labels: map[string]string{}},
		Spec:       *t.Spec.DeepCopy(),
	}
	for k, v := range t.Labels {
		pvc.Labels[k] = v
	}
	if sts.Spec.Selector != nil {
		for k, v := range sts.Spec.Selector.MatchLabels {
			pvc.Labels[k] = v
		}
	}
	if len(t.Annotations) > 0 {
		pvc.Annotations = map[string]string{}
		for k, v := range t.Annotations {
			pvc.Annotations[k] = v
		}
	}
	if pol := sts.Spec.PersistentVolumeClaimRetentionPolicy; pol != nil && pol.WhenDeleted == appsv1.DeletePersistentVolumeClaimRetentionPolicyType {
		// whenDeleted: Delete makes the set an owner of the claim, so the
		// garbage collector removes it with the set.
		ref := setOwnerRef(sts)
		ref.Controller = nil
		pvc.OwnerReferences = []metav1.OwnerReference{ref}
	}
	return pvc
}

func (c *StatefulSetController) createPodStep(w *World, sts *appsv1.StatefulSet, ord int) Step {
	name := setPodName(sts, ord)
	return Step{Actor: model.ActorStatefulSet, Label: "create pod " + nsKey(sts.Namespace, name), Run: func() {
		_ = w.ActorClient(model.ActorStatefulSet).Create(context.Background(), newSetPod(sts, ord))
	}}
}

// newSetPod builds pod ord of sts from its template.
func newSetPod(sts *appsv1.StatefulSet, ord int) *corev1.Pod {
	name := setPodName(sts, ord)
	tpl := &sts.Spec.Template
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       sts.Namespace,
			Name:            name,
			Labels:          map[string]string{},
			OwnerReferences: []metav1.OwnerReference{setOwnerRef(sts)},
		},
		Spec: *tpl.Spec.DeepCopy(),
	}
	for k, v := range tpl.Labels {
		p.Labels[k] = v
	}
	p.Labels[LabelStatefulSetPodName] = name
	p.Labels[LabelStatefulSetPodIndex] = strconv.Itoa(ord)
	if len(tpl.Annotations) > 0 {
		p.Annotations = map[string]string{}
		for k, v := range tpl.Annotations {
			p.Annotations[k] = v
		}
	}
	p.Spec.Hostname = name
	p.Spec.Subdomain = sts.Spec.ServiceName
	for i := range sts.Spec.VolumeClaimTemplates {
		t := &sts.Spec.VolumeClaimTemplates[i]
		src := corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: setClaimName(t, sts, ord)}}
		replaced := false
		for j := range p.Spec.Volumes {
			if p.Spec.Volumes[j].Name == t.Name {
				p.Spec.Volumes[j].VolumeSource = src
				replaced = true
			}
		}
		if !replaced {
			p.Spec.Volumes = append(p.Spec.Volumes, corev1.Volume{Name: t.Name, VolumeSource: src})
		}
	}
	return p
}

func (c *StatefulSetController) deletePodStep(w *World, p *corev1.Pod, what string) Step {
	ns, name, uid := p.Namespace, p.Name, p.UID
	return Step{Actor: model.ActorStatefulSet, Label: what + nsKey(ns, name), Run: func() {
		obj := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
		_ = w.ActorClient(model.ActorStatefulSet).Delete(context.Background(), obj, client.Preconditions{UID: &uid})
	}}
}

// statusStep writes the set's status when it differs from what the pods
// say.
func (c *StatefulSetController) statusStep(w *World, sts *appsv1.StatefulSet) (Step, bool) {
	var replicas, ready int32
	for _, sp := range c.pods {
		replicas++
		if PodServing(sp.pod) {
			ready++
		}
	}
	s := &sts.Status
	if s.Replicas == replicas && s.ReadyReplicas == ready && s.AvailableReplicas == ready &&
		s.CurrentReplicas == replicas && s.UpdatedReplicas == replicas && s.ObservedGeneration == sts.Generation {
		return Step{}, false
	}
	return Step{Actor: model.ActorStatefulSet, Label: "status " + nsKey(sts.Namespace, sts.Name), Run: func() {
		// A status update: the store takes only the status (and the
		// preconditions) from the request, so the rest is shared with
		// the stored set, read only, and the request is dropped after.
		ns := &appsv1.StatefulSet{TypeMeta: sts.TypeMeta, ObjectMeta: sts.ObjectMeta, Spec: sts.Spec}
		sts.Status.DeepCopyInto(&ns.Status)
		ns.Status.Replicas = replicas
		ns.Status.ReadyReplicas = ready
		ns.Status.AvailableReplicas = ready
		ns.Status.CurrentReplicas = replicas
		ns.Status.UpdatedReplicas = replicas
		ns.Status.ObservedGeneration = sts.Generation
		_ = w.ActorClient(model.ActorStatefulSet).Status().Update(context.Background(), ns)
	}}, true
}
