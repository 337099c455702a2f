package simulator

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// sharedDefaultData is what the fast-writes tests' scheme defaults an empty
// ConfigMap's binaryData to: one map, shared by every object defaulted,
// as a defaulting function registered in a user's scheme may do.
var sharedDefaultData = map[string][]byte{"default": []byte("shared")}

// fastWritesScheme is the built-in kinds, handCopied (no generated copy
// methods), and a ConfigMap defaulting function that shares memory.
func fastWritesScheme() *runtime.Scheme {
	s := testScheme()
	s.AddKnownTypes(schema.GroupVersion{Group: "test.opcheck.io", Version: "v1"}, &handCopied{}, &handCopiedList{})
	s.AddTypeDefaultingFunc(&corev1.ConfigMap{}, func(o any) {
		if cm := o.(*corev1.ConfigMap); cm.BinaryData == nil {
			cm.BinaryData = sharedDefaultData
		}
	})
	return s
}

// fastWritesObject builds a random object of one of the kinds the write
// fast paths treat differently: with a status subresource and generated
// copies (StatefulSet, Pod, PersistentVolumeClaim), defaulting that reads
// the stored object (Service), a scheme defaulting function (ConfigMap),
// no generated copies (handCopied).
func fastWritesObject(r *rand.Rand, i int) client.Object {
	meta := metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("o%d", i)}
	if r.IntN(2) == 0 {
		meta.Labels = map[string]string{"app": "a", "n": fmt.Sprint(r.IntN(3))}
	}
	if r.IntN(3) == 0 {
		meta.Annotations = map[string]string{"note": "x"}
	}
	containers := func() []corev1.Container {
		cs := []corev1.Container{{Name: "c", Image: []string{"zk:3.9", "zk", "zk:latest"}[r.IntN(3)]}}
		if r.IntN(2) == 0 {
			cs[0].Ports = []corev1.ContainerPort{{Name: "client", ContainerPort: 2181}}
		}
		if r.IntN(2) == 0 {
			cs = append(cs, corev1.Container{Name: "side", Image: "side:1", ImagePullPolicy: corev1.PullNever})
		}
		return cs
	}
	switch r.IntN(6) {
	case 0:
		sts := &appsv1.StatefulSet{ObjectMeta: meta, Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "a"}},
				Spec: corev1.PodSpec{Containers: containers()}},
		}}
		if r.IntN(2) == 0 {
			n := int32(r.IntN(4))
			sts.Spec.Replicas = &n
		}
		if r.IntN(2) == 0 {
			sts.Spec.VolumeClaimTemplates = []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"},
				Spec: corev1.PersistentVolumeClaimSpec{AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}}
		}
		return sts
	case 1:
		pod := &corev1.Pod{ObjectMeta: meta, Spec: corev1.PodSpec{Containers: containers()}}
		if r.IntN(2) == 0 {
			pod.Spec.NodeName = "node-1" // bound: a delete is graceful, until confirmed
		}
		return pod
	case 2:
		return &corev1.PersistentVolumeClaim{ObjectMeta: meta, Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")}}}}
	case 3:
		svc := &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "a"},
			Ports: []corev1.ServicePort{{Name: "client", Port: 2181}}}}
		if r.IntN(2) == 0 {
			svc.Spec.Type = corev1.ServiceTypeNodePort
		}
		return svc
	case 4:
		cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"k": "v"}}
		if r.IntN(2) == 0 {
			cm.BinaryData = map[string][]byte{"own": []byte("b")}
		}
		return cm
	default:
		return &handCopied{ObjectMeta: meta, Spec: handCopiedPart{Items: []string{"a"}}}
	}
}

// fastWritesStatus gives obj a status with nested slices and pointers, for
// a status write.
func fastWritesStatus(r *rand.Rand, obj client.Object) {
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		o.Status.Replicas = int32(r.IntN(3))
		cc := int32(r.IntN(2))
		o.Status.CollisionCount = &cc
		o.Status.Conditions = []appsv1.StatefulSetCondition{{Type: "Ready", Status: corev1.ConditionStatus([]string{"True", "False"}[r.IntN(2)])}}
	case *corev1.Pod:
		o.Status.Phase = corev1.PodRunning
		o.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionStatus([]string{"True", "False"}[r.IntN(2)])}}
	case *corev1.PersistentVolumeClaim:
		o.Status.Phase = corev1.ClaimBound
		o.Status.Capacity = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse([]string{"1Gi", "2Gi"}[r.IntN(2)])}
	case *corev1.Service:
		o.Status.Conditions = []metav1.Condition{{Type: "T", Status: metav1.ConditionTrue, Reason: "R"}}
	case *handCopied:
		o.Status.Items = []string{fmt.Sprint(r.IntN(2))}
	}
}

// requestOtherQuantity writes a claim's storage request (a StatefulSet's
// claim templates') as 1024Mi: the same quantity as the 1Gi stored.
func requestOtherQuantity(obj client.Object) {
	switch o := obj.(type) {
	case *corev1.PersistentVolumeClaim:
		o.Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1024Mi")}
	case *appsv1.StatefulSet:
		for i := range o.Spec.VolumeClaimTemplates {
			o.Spec.VolumeClaimTemplates[i].Spec.Resources.Requests = corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1024Mi")}
		}
	}
}

// requestOtherLabel sets label n to a random value (often a new one).
func requestOtherLabel(r *rand.Rand, obj client.Object) {
	l := map[string]string{}
	for k, v := range obj.GetLabels() {
		l[k] = v
	}
	l["n"] = fmt.Sprint(r.IntN(3))
	obj.SetLabels(l)
}

// fastWritesMutation changes a request read from the store; most leave it
// semantically what was stored, so that the write is a no-op by a path the
// fast paths must agree on.
var fastWritesMutations = []struct {
	name   string
	change func(r *rand.Rand, obj client.Object)
}{
	{"none", func(*rand.Rand, client.Object) {}},
	{"strip defaults", func(_ *rand.Rand, obj client.Object) {
		switch o := obj.(type) {
		case *appsv1.StatefulSet:
			o.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{}
			o.Spec.RevisionHistoryLimit = nil
			o.Spec.PersistentVolumeClaimRetentionPolicy = nil
			for i := range o.Spec.Template.Spec.Containers {
				o.Spec.Template.Spec.Containers[i].TerminationMessagePath = ""
			}
			o.Spec.Template.Spec.SecurityContext = nil
		case *corev1.Pod:
			for i := range o.Spec.Containers {
				o.Spec.Containers[i].ImagePullPolicy = ""
			}
		case *corev1.Service:
			o.Spec.ClusterIP, o.Spec.ClusterIPs = "", nil
			o.Spec.IPFamilies = nil
		case *corev1.ConfigMap:
			o.BinaryData = nil
		}
	}},
	{"quantity written differently", func(_ *rand.Rand, obj client.Object) { requestOtherQuantity(obj) }},
	{"quantity written differently, and a label", func(r *rand.Rand, obj client.Object) {
		requestOtherQuantity(obj)
		requestOtherLabel(r, obj)
	}},
	{"empty labels for none", func(_ *rand.Rand, obj client.Object) {
		if len(obj.GetLabels()) == 0 {
			obj.SetLabels(map[string]string{})
		}
	}},
	{"no resourceVersion", func(_ *rand.Rand, obj client.Object) { obj.SetResourceVersion("") }},
	{"stale resourceVersion", func(_ *rand.Rand, obj client.Object) { obj.SetResourceVersion("1") }},
	{"label", requestOtherLabel},
	{"finalizer", func(_ *rand.Rand, obj client.Object) { obj.SetFinalizers([]string{"test.opcheck.io/hold"}) }},
	{"no finalizers", func(_ *rand.Rand, obj client.Object) { obj.SetFinalizers(nil) }},
	{"spec", func(r *rand.Rand, obj client.Object) {
		switch o := obj.(type) {
		case *appsv1.StatefulSet:
			n := int32(r.IntN(4))
			o.Spec.Replicas = &n
		case *corev1.Service:
			o.Spec.Selector = map[string]string{"app": fmt.Sprint(r.IntN(2))}
		case *corev1.ConfigMap:
			o.Data = map[string]string{"k": fmt.Sprint(r.IntN(2))}
		case *handCopied:
			o.Spec.Items = []string{fmt.Sprint(r.IntN(2))}
		}
	}},
	{"status", func(r *rand.Rand, obj client.Object) { fastWritesStatus(r, obj) }},
}

// fastWritesSide is one of the two clusters a differential case runs on.
type fastWritesSide struct {
	c  *Cluster
	cl *Client
}

// fastWritesOutcome is what one write left: its error, the caller's
// object, the event recorded, the stored object, and whether the caller's
// object shares memory with the store (the stored object, or the one the
// write recorded, a deleted object's last state) or with its own memory
// from before the call.
type fastWritesOutcome struct {
	err         string
	obj         client.Object
	event       model.Event
	stored      client.Object
	sharesStore string
	sharesOwn   bool
}

func (s *fastWritesSide) write(t *testing.T, op string, req client.Object, before client.Object) fastWritesOutcome {
	t.Helper()
	ctx := context.Background()
	prior := reflect.New(reflect.TypeOf(req).Elem())
	prior.Elem().Set(reflect.ValueOf(req).Elem()) // the request's own references, as they were
	var err error
	switch op {
	case "update":
		err = s.cl.Update(ctx, req)
	case "update dry-run":
		err = s.cl.Update(ctx, req, client.DryRunAll)
	case "status":
		err = s.cl.Status().Update(ctx, req)
	case "patch":
		err = s.cl.Patch(ctx, req, client.MergeFrom(before))
	case "delete":
		err = s.cl.Delete(ctx, req)
	case "delete now":
		// A kubelet's confirmation of a terminating pod's deletion.
		err = s.cl.Delete(ctx, req, client.GracePeriodSeconds(0))
	case "delete sooner":
		// A terminating pod's grace period shortened.
		err = s.cl.Delete(ctx, req, client.GracePeriodSeconds(5))
	case "delete foreground":
		err = s.cl.Delete(ctx, req, client.PropagationPolicy(metav1.DeletePropagationForeground))
	case "bind":
		// The scheduler's binding (a pod's only; other kinds' is NotFound).
		// The revision it replaces must stay unbound.
		k, _ := s.c.Store.kinds.forObject(req)
		unbound, _ := s.c.Store.peek(k, objectKey(k, req.GetNamespace(), req.GetName()))
		err = s.cl.Create(ctx, &corev1.Binding{ObjectMeta: metav1.ObjectMeta{Namespace: req.GetNamespace(), Name: req.GetName(), UID: req.GetUID()}, Target: corev1.ObjectReference{Kind: "Node", Name: "node-1"}})
		if p, ok := unbound.(*corev1.Pod); ok && err == nil && p.Spec.NodeName != "" {
			t.Fatalf("binding %s changed the revision it replaced: its nodeName is now %q", req.GetName(), p.Spec.NodeName)
		}
	}
	out := fastWritesOutcome{err: errString(err), obj: req, event: s.c.History.Events[len(s.c.History.Events)-1]}
	k, _ := s.c.Store.kinds.forObject(req)
	if stored, ok := s.c.Store.peek(k, objectKey(k, req.GetNamespace(), req.GetName())); ok {
		out.stored = stored
		out.sharesStore = sharedMemory(reflect.ValueOf(req).Elem(), reflect.ValueOf(stored).Elem(), "object")
	}
	if changed, ok := out.event.Object.(client.Object); ok && out.sharesStore == "" && reflect.TypeOf(changed) == reflect.TypeOf(req) {
		// The history's object of the write: a deleted object's last state.
		out.sharesStore = sharedMemory(reflect.ValueOf(req).Elem(), reflect.ValueOf(changed).Elem(), "object")
	}
	out.sharesOwn = sharedMemory(reflect.ValueOf(req).Elem(), prior.Elem(), "object") != ""
	return out
}

// TestFastWritesAnswerAsTheSlowPaths is the write fast paths' differential
// test: random objects of every kind the paths treat differently go
// through random sequences of updates, status updates, patches and
// deletes, each request sent to two clusters, one with the fast paths
// (a no-op update's spare answer, the no-op status write's shortcut) and
// one without. Every write must answer the same error, record the same
// event, store the same object, and leave the caller the same object
// (reflect.DeepEqual, apiVersion/kind included), sharing no memory with
// the store either way and sharing its own previous memory only when the
// slow path's answer does too (a status write's copy-back keeps the
// caller's spec and status).
func TestFastWritesAnswerAsTheSlowPaths(t *testing.T) {
	r := rand.New(rand.NewPCG(14, 3))
	cases, steps := 300, 12
	if testing.Short() {
		cases = 60
	}
	ops := []string{"update", "update", "update", "status", "status", "patch", "update dry-run", "delete", "delete now", "delete sooner", "delete foreground", "bind", "bind", "bind"}
	spares, shortcuts, binds := 0, 0, 0
	for i := 0; i < cases; i++ {
		var sides [2]*fastWritesSide
		for k := range sides {
			c := NewCluster(fastWritesScheme(), ClusterOptions{})
			c.Store.slowWrites = k == 1
			sides[k] = &fastWritesSide{c: c, cl: c.Client(model.ActorUser, 1, true)}
		}
		proto := fastWritesObject(r, i)
		for _, s := range sides {
			if err := s.cl.Create(context.Background(), proto.DeepCopyObject().(client.Object)); err != nil {
				t.Fatalf("case %d: create %T: %v", i, proto, err)
			}
		}
		for step := 0; step < steps; step++ {
			op := ops[r.IntN(len(ops))]
			m := fastWritesMutations[r.IntN(len(fastWritesMutations))]
			seed := r.Uint64()
			var outs [2]fastWritesOutcome
			for k, s := range sides {
				req := proto.DeepCopyObject().(client.Object)
				if err := s.cl.Get(context.Background(), client.ObjectKeyFromObject(proto), req); err != nil {
					outs[k].err = "gone"
					continue
				}
				before := req.DeepCopyObject().(client.Object)
				m.change(rand.New(rand.NewPCG(seed, 1)), req)
				outs[k] = s.write(t, op, req, before)
			}
			what := fmt.Sprintf("case %d (%T) step %d: %s after %q", i, proto, step, op, m.name)
			fast, slow := outs[0], outs[1]
			if fast.err != slow.err {
				t.Fatalf("%s: error %q, the slow path's %q", what, fast.err, slow.err)
			}
			if fast.err == "gone" {
				break
			}
			if !reflect.DeepEqual(fast.obj, slow.obj) {
				t.Fatalf("%s: the caller's object differs from the slow path's:\n fast %+v\n slow %+v", what, fast.obj, slow.obj)
			}
			if !reflect.DeepEqual(fast.event, slow.event) {
				t.Fatalf("%s: event %+v, the slow path's %+v", what, fast.event, slow.event)
			}
			if !reflect.DeepEqual(fast.stored, slow.stored) {
				t.Fatalf("%s: stored %+v, the slow path's %+v", what, fast.stored, slow.stored)
			}
			if fast.sharesStore != "" || slow.sharesStore != "" {
				t.Fatalf("%s: the caller's object shares %q (fast) / %q (slow) with the stored one", what, fast.sharesStore, slow.sharesStore)
			}
			if fast.sharesOwn != slow.sharesOwn {
				t.Fatalf("%s: the caller's object keeps its own memory: %v, on the slow path: %v", what, fast.sharesOwn, slow.sharesOwn)
			}
			if op == "bind" && fast.err == "" {
				binds++
			}
			if fast.err == "" && fast.event.Change == model.ChangeNone {
				switch op {
				case "update", "patch", "update dry-run":
					spares++
				case "status":
					shortcuts++
				}
			}
		}
	}
	// The cases reach the fast paths, not only the writes that change
	// something.
	if spares < cases/4 || shortcuts < cases/8 || binds < cases/30 {
		t.Fatalf("only %d no-op updates, %d no-op status writes and %d bindings in %d cases: the generator misses the fast paths", spares, shortcuts, binds, cases)
	}
}

// TestSchemeDefaultsReadsTheSchemesTable: schemeDefaults finds the
// defaulting function registered for a type and none for the others. If
// apimachinery's Scheme stopped holding its table where schemeDefaults
// reads it, the answer would be yes for every type: the spare answer
// (its one user) would never be given, safe but slow, and this test fails.
func TestSchemeDefaultsReadsTheSchemesTable(t *testing.T) {
	s := fastWritesScheme()
	if !schemeDefaults(s, &corev1.ConfigMap{}) {
		t.Error("schemeDefaults(ConfigMap) = false, want true: the scheme has a defaulting function for it")
	}
	for _, obj := range []runtime.Object{&corev1.Pod{}, &appsv1.StatefulSet{}, &handCopied{}} {
		if schemeDefaults(s, obj) {
			t.Errorf("schemeDefaults(%T) = true, want false: no defaulting function is registered for it", obj)
		}
	}
}

// TestOwnerRefsEqualIsTheSemanticComparison: ownerRefsEqual answers what
// equality.Semantic.DeepEqual answers for random pairs of owner reference
// lists (nil and empty, shared and separate *bool, every field changed),
// and knows every field of OwnerReference: a field added by a new
// apimachinery fails the test until ownerRefsEqual compares it.
func TestOwnerRefsEqualIsTheSemanticComparison(t *testing.T) {
	if n := reflect.TypeFor[metav1.OwnerReference]().NumField(); n != 6 {
		t.Fatalf("metav1.OwnerReference has %d fields; ownerRefsEqual compares 6", n)
	}
	r := rand.New(rand.NewPCG(14, 7))
	yes, no := true, false
	boolPtr := func() *bool {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return &yes
		case 2:
			return &no
		}
		v := r.IntN(2) == 0
		return &v
	}
	ref := func() metav1.OwnerReference {
		pick := func(s ...string) string { return s[r.IntN(len(s))] }
		return metav1.OwnerReference{APIVersion: pick("v1", "apps/v1"), Kind: pick("A", "B"), Name: pick("a", "b"),
			UID: types.UID(pick("1", "2")), Controller: boolPtr(), BlockOwnerDeletion: boolPtr()}
	}
	list := func() []metav1.OwnerReference {
		switch r.IntN(5) {
		case 0:
			return nil
		case 1:
			return []metav1.OwnerReference{}
		}
		out := make([]metav1.OwnerReference, 1+r.IntN(2))
		for i := range out {
			out[i] = ref()
		}
		return out
	}
	equalSeen := 0
	for i := 0; i < 5000; i++ {
		a := list()
		b := list()
		if r.IntN(3) == 0 { // a near copy, so that equal pairs occur
			b = append([]metav1.OwnerReference(nil), a...)
			if len(b) > 0 && r.IntN(2) == 0 {
				b[r.IntN(len(b))].Controller = boolPtr()
			}
		}
		want := equality.Semantic.DeepEqual(a, b)
		if got := ownerRefsEqual(a, b); got != want {
			t.Fatalf("ownerRefsEqual(%+v, %+v) = %v, the semantic comparison says %v", a, b, got, want)
		}
		if want {
			equalSeen++
		}
	}
	if equalSeen < 500 {
		t.Fatalf("only %d equal pairs of 5000: the generator does not test the equal side", equalSeen)
	}
}
