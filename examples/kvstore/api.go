package kvstore

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of KVStore.
var GroupVersion = schema.GroupVersion{Group: "example.opcheck.dev", Version: "v1alpha1"}

// Phases reported in status.phase.
const (
	// PhaseScaling: the StatefulSet or its pods do not match spec yet.
	PhaseScaling = "Scaling"
	// PhaseReady: spec.replicas members are ready.
	PhaseReady = "Ready"
)

// KVStoreSpec is what the user asks for.
type KVStoreSpec struct {
	// Replicas is the number of members.
	Replicas int32 `json:"replicas"`
	// Storage is the size of each member's volume, e.g. "1Gi".
	Storage string `json:"storage,omitempty"`
}

// KVStoreStatus is what the operator reports.
type KVStoreStatus struct {
	ReadyReplicas int32  `json:"readyReplicas,omitempty"`
	Phase         string `json:"phase,omitempty"`
}

// KVStore is a replicated key-value store run as a StatefulSet.
type KVStore struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              KVStoreSpec   `json:"spec,omitempty"`
	Status            KVStoreStatus `json:"status,omitempty"`
}

// KVStoreList is a list of KVStores.
type KVStoreList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KVStore `json:"items"`
}

// DeepCopyInto copies in into out.
func (in *KVStoreStatus) DeepCopyInto(out *KVStoreStatus) { *out = *in }

// DeepCopyInto copies in into out.
func (in *KVStore) DeepCopyInto(out *KVStore) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
}

// DeepCopy returns a copy of in.
func (in *KVStore) DeepCopy() *KVStore {
	if in == nil {
		return nil
	}
	out := new(KVStore)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *KVStore) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *KVStoreList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := &KVStoreList{TypeMeta: in.TypeMeta}
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]KVStore, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// AddToScheme registers KVStore and KVStoreList, as a kubebuilder project's
// generated AddToScheme does.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &KVStore{}, &KVStoreList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
