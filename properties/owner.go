package properties

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// uidOf is the object's metadata.uid ("" when it has none or no metadata).
func uidOf(obj runtime.Object) types.UID {
	if obj == nil {
		return ""
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetUID()
}

// OwnedBy reports whether obj belongs to this instance of owner: one of its
// ownerReferences names owner's UID. Names are not enough: after a delete
// and a re-create under the same name, the old instance's dependents still
// name the owner by name (and kind) but carry the old UID, and they are not
// the new instance's. An owner without a UID owns nothing.
func OwnedBy(obj, owner runtime.Object) bool {
	uid, refs := ownerRefs(obj, owner)
	for _, ref := range refs {
		if ref.UID == uid {
			return true
		}
	}
	return false
}

// ControlledBy reports whether obj's controller reference (the owner
// reference with controller: true) names this instance of owner, by UID.
func ControlledBy(obj, owner runtime.Object) bool {
	uid, refs := ownerRefs(obj, owner)
	for _, ref := range refs {
		if ref.Controller != nil && *ref.Controller {
			return ref.UID == uid
		}
	}
	return false
}

// ownerRefs returns owner's UID and obj's owner references, or no
// references when either has none to compare (an owner without a UID owns
// nothing).
func ownerRefs(obj, owner runtime.Object) (types.UID, []metav1.OwnerReference) {
	uid := uidOf(owner)
	if uid == "" || obj == nil {
		return "", nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", nil
	}
	return uid, m.GetOwnerReferences()
}

// ListOwned returns the objects of Go type T in owner's namespace that this
// instance of owner owns (OwnedBy), sorted by name: "the new instance's
// StatefulSets", not every StatefulSet that carries the owner's name.
func ListOwned[T runtime.Object](s *State, owner runtime.Object) []T {
	m, err := meta.Accessor(owner)
	if err != nil {
		return nil
	}
	var out []T
	for _, obj := range List[T](s, m.GetNamespace(), nil) {
		if OwnedBy(obj, owner) {
			out = append(out, obj)
		}
	}
	return out
}
