package simulator

import (
	"reflect"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// typedCopier copies the objects of one built-in kind through its generated
// methods, called directly. Every read copies a stored object into the
// caller's, and reaching a generated DeepCopyInto through reflect.Value.Call
// costs a call frame laid out at run time and an argument slice per call;
// for a Go type known here at compile time a generic instance does the same
// copy as a plain call. A custom resource's package may register its own
// (RegisterCopier, RegisterStatusCopier); other kinds take the reflective
// path of kindInfo.copyIntoValue and statusOver, which copies the same.
type typedCopier struct {
	// copyInto deep-copies src into dst (two objects of the kind).
	copyInto func(dst, src client.Object)
	// statusOver makes dst a shallow copy of old, then deep-copies in's
	// status over dst's; nil for a kind without a status field.
	statusOver func(dst, in, old client.Object)
	// copyStatus deep-copies src's status into dst's; nil for a kind
	// without a status field.
	copyStatus func(dst, src client.Object)
}

// deepCopyable is a built-in kind's pointer type with its generated
// DeepCopyInto.
type deepCopyable[T any] interface {
	*T
	client.Object
	DeepCopyInto(*T)
}

// statusCopyable is a status type's pointer type.
type statusCopyable[S any] interface {
	*S
	DeepCopyInto(*S)
}

func copierOf[T any, PT deepCopyable[T]]() *typedCopier {
	return &typedCopier{copyInto: func(dst, src client.Object) { src.(PT).DeepCopyInto(dst.(PT)) }}
}

// statusCopierOf is copierOf for a kind with a status field, which status
// returns.
func statusCopierOf[T any, PT deepCopyable[T], S any, PS statusCopyable[S]](status func(PT) PS) *typedCopier {
	c := copierOf[T, PT]()
	c.statusOver = func(dst, in, old client.Object) {
		d := dst.(PT)
		*d = *old.(PT)
		status(in.(PT)).DeepCopyInto(status(d))
	}
	c.copyStatus = func(dst, src client.Object) { status(src.(PT)).DeepCopyInto(status(dst.(PT))) }
	return c
}

// builtinCopiers are the typed copiers of the built-in kinds, by struct
// type. Read only.
var builtinCopiers = map[reflect.Type]*typedCopier{
	reflect.TypeFor[corev1.Pod](): statusCopierOf(func(o *corev1.Pod) *corev1.PodStatus { return &o.Status }),
	reflect.TypeFor[corev1.PersistentVolumeClaim](): statusCopierOf(func(o *corev1.PersistentVolumeClaim) *corev1.PersistentVolumeClaimStatus {
		return &o.Status
	}),
	reflect.TypeFor[corev1.PersistentVolume](): statusCopierOf(func(o *corev1.PersistentVolume) *corev1.PersistentVolumeStatus { return &o.Status }),
	reflect.TypeFor[corev1.Service]():          statusCopierOf(func(o *corev1.Service) *corev1.ServiceStatus { return &o.Status }),
	reflect.TypeFor[corev1.Namespace]():        statusCopierOf(func(o *corev1.Namespace) *corev1.NamespaceStatus { return &o.Status }),
	reflect.TypeFor[corev1.Node]():             statusCopierOf(func(o *corev1.Node) *corev1.NodeStatus { return &o.Status }),
	reflect.TypeFor[corev1.ConfigMap]():        copierOf[corev1.ConfigMap](),
	reflect.TypeFor[corev1.Secret]():           copierOf[corev1.Secret](),
	reflect.TypeFor[corev1.ServiceAccount]():   copierOf[corev1.ServiceAccount](),
	reflect.TypeFor[corev1.Endpoints]():        copierOf[corev1.Endpoints](),
	reflect.TypeFor[corev1.Event]():            copierOf[corev1.Event](),
	reflect.TypeFor[appsv1.StatefulSet]():      statusCopierOf(func(o *appsv1.StatefulSet) *appsv1.StatefulSetStatus { return &o.Status }),
	reflect.TypeFor[appsv1.Deployment]():       statusCopierOf(func(o *appsv1.Deployment) *appsv1.DeploymentStatus { return &o.Status }),
	reflect.TypeFor[appsv1.ReplicaSet]():       statusCopierOf(func(o *appsv1.ReplicaSet) *appsv1.ReplicaSetStatus { return &o.Status }),
	reflect.TypeFor[appsv1.DaemonSet]():        statusCopierOf(func(o *appsv1.DaemonSet) *appsv1.DaemonSetStatus { return &o.Status }),
	reflect.TypeFor[batchv1.Job]():             statusCopierOf(func(o *batchv1.Job) *batchv1.JobStatus { return &o.Status }),
	reflect.TypeFor[policyv1.PodDisruptionBudget](): statusCopierOf(func(o *policyv1.PodDisruptionBudget) *policyv1.PodDisruptionBudgetStatus {
		return &o.Status
	}),
	reflect.TypeFor[networkingv1.Ingress](): statusCopierOf(func(o *networkingv1.Ingress) *networkingv1.IngressStatus { return &o.Status }),
	reflect.TypeFor[coordinationv1.Lease](): copierOf[coordinationv1.Lease](),
	reflect.TypeFor[rbacv1.Role]():          copierOf[rbacv1.Role](),
	reflect.TypeFor[rbacv1.RoleBinding]():   copierOf[rbacv1.RoleBinding](),
}

// registeredCopiers are the typed copiers registered for custom resource
// types (RegisterCopier, RegisterStatusCopier), by struct type.
var registeredCopiers sync.Map // reflect.Type -> *typedCopier

// RegisterCopier makes the simulator copy the objects of custom resource
// type T through its generated DeepCopyInto called directly, as it copies
// the built-in kinds, instead of through reflect.Value.Call: the same
// copies, without a call frame laid out at run time per read (a
// controller's reads of its own resource are most of what the reflective
// path costs). Register in the package that defines the scenario, before
// its first world is built (a package-level var or init): a kind whose
// type was already seen by a world keeps the reflective path in the worlds
// built before. For a type with a status field use RegisterStatusCopier.
func RegisterCopier[T any, PT deepCopyable[T]]() {
	registerCopier(reflect.TypeFor[T](), copierOf[T, PT]())
}

// RegisterStatusCopier is RegisterCopier for a custom resource type with
// a status field (named Status, as the simulator finds it), which status
// returns, so that status writes copy the status through its generated
// DeepCopyInto too.
func RegisterStatusCopier[T any, PT deepCopyable[T], S any, PS statusCopyable[S]](status func(PT) PS) {
	registerCopier(reflect.TypeFor[T](), statusCopierOf(status))
}

func registerCopier(st reflect.Type, c *typedCopier) {
	registeredCopiers.Store(st, c)
	// Worlds built from now on find the copier (factsOf looks it up).
	typeFactsCache.Delete(st)
}

// copierFor returns the typed copier of struct type st, built in or
// registered, or nil.
func copierFor(st reflect.Type) *typedCopier {
	if c, ok := builtinCopiers[st]; ok {
		return c
	}
	if c, ok := registeredCopiers.Load(st); ok {
		return c.(*typedCopier)
	}
	return nil
}
