package simulator

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Namespaces as the apiserver's NamespaceLifecycle admission and the
// namespace controller keep them.
//
// A namespace exists when a Namespace object is stored, or when it is
// declared: the namespaces every cluster starts with (default, kube-system,
// kube-public, kube-node-lease), those a scenario declares
// (StoreOptions.Namespaces) and those its seeded objects live in. Declared
// namespaces are not objects (so they add no revisions to a run's history):
// they cannot be read or deleted. A create in a namespace that does not
// exist is 404; in a namespace being deleted, 403. Deleting a Namespace
// object makes it Terminating: its "kubernetes" spec finalizer keeps it
// until the namespace controller (NamespaceController) has deleted its
// contents and finalized it.

// builtinNamespaces exist in every cluster.
var builtinNamespaces = []string{metav1.NamespaceDefault, metav1.NamespaceSystem, metav1.NamespacePublic, corev1.NamespaceNodeLease}

// protoNamespace resolves the Namespace kind; never written.
var protoNamespace = &corev1.Namespace{}

// namespaceFinalizer is the spec finalizer that keeps a Namespace until the
// namespace controller has emptied it.
const namespaceFinalizer = corev1.FinalizerKubernetes

func isNamespaceKind(k *kindInfo) bool { return k.gk.Group == "" && k.gk.Kind == "Namespace" }

// declareNamespace makes ns exist without an object.
func (s *Store) declareNamespace(ns string) {
	if s.namespaces == nil {
		s.namespaces = map[string]bool{}
	}
	s.namespaces[ns] = true
}

// namespaceObject returns the stored Namespace named ns, if any.
func (s *Store) namespaceObject(ns string) (*corev1.Namespace, bool) {
	k, err := s.kinds.forObject(protoNamespace)
	if err != nil {
		return nil, false
	}
	obj, ok := s.table(k).objects[ns]
	if !ok {
		return nil, false
	}
	return obj.(*corev1.Namespace), true
}

// admitNamespace is NamespaceLifecycle admission for a create in ns: 404
// if the namespace does not exist, 403 if it is being deleted.
func (s *Store) admitNamespace(k *kindInfo, obj client.Object) error {
	ns := obj.GetNamespace()
	if nsObj, ok := s.namespaceObject(ns); ok {
		if nsObj.DeletionTimestamp != nil || nsObj.Status.Phase == corev1.NamespaceTerminating {
			return apierrors.NewForbidden(k.gr, obj.GetName(), fmt.Errorf("unable to create new content in namespace %s because it is being terminated", ns))
		}
		return nil
	}
	if s.namespaces[ns] {
		return nil
	}
	return apierrors.NewNotFound(corev1.Resource("namespaces"), ns)
}

// prepareNamespace is the Namespace strategy on create: phase Active and
// the "kubernetes" spec finalizer.
func prepareNamespace(ns *corev1.Namespace) {
	ns.Status.Phase = corev1.NamespaceActive
	if !slices.Contains(ns.Spec.Finalizers, namespaceFinalizer) {
		ns.Spec.Finalizers = append(ns.Spec.Finalizers, namespaceFinalizer)
	}
}

// namespacePending: a Namespace being deleted stays while it has spec
// finalizers.
func namespacePending(k *kindInfo, obj client.Object) bool {
	return isNamespaceKind(k) && len(obj.(*corev1.Namespace).Spec.Finalizers) > 0
}

// FinalizeNamespace is the namespace's finalize subresource as the
// namespace controller calls it: the "kubernetes" spec finalizer goes, and
// with it the namespace, unless metadata finalizers remain.
func (s *Store) FinalizeNamespace(name string) (*Change, error) {
	k, err := s.kinds.forObject(protoNamespace)
	if err != nil {
		return nil, err
	}
	old, ok := s.table(k).objects[name]
	if !ok {
		return nil, apierrors.NewNotFound(k.gr, name)
	}
	ns := old.(*corev1.Namespace).DeepCopy()
	ns.Spec.Finalizers = slices.DeleteFunc(ns.Spec.Finalizers, func(f corev1.FinalizerName) bool { return f == namespaceFinalizer })
	c, _, err := s.writeChecked(k, name, ns, old, len(ns.Spec.Finalizers) == len(old.(*corev1.Namespace).Spec.Finalizers))
	return c, err
}
