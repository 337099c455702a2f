package casskop

import (
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of CassandraCluster, the same as
// upstream's so that traces read like the bug report.
var GroupVersion = schema.GroupVersion{Group: "db.orange.com", Version: "v1alpha1"}

// AddToScheme registers CassandraCluster and CassandraClusterList with the
// scheme, plus the meta types (ListOptions, ...) every group version needs.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &CassandraCluster{}, &CassandraClusterList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Status values shared by cassandraLastAction, podLastOperation and the
// cluster-level lastClusterActionStatus.
const (
	StatusToDo       = "ToDo"
	StatusOngoing    = "Ongoing"
	StatusContinue   = "Continue"
	StatusFinalizing = "Finalizing"
	StatusDone       = "Done"
)

// Action names recorded in cassandraLastAction and lastClusterAction.
const (
	ActionInitializing = "Initializing"
	ActionScaleUp      = "ScaleUp"
	ActionScaleDown    = "ScaleDown"
	// ActionUpdateResources is upstream vocabulary for a change of the pod
	// template. This reconciler never records it (see doc.go); it is here so
	// that a status written by another tool still parses into known names.
	ActionUpdateResources = "UpdateResources"
)

// OperationDecommission is the podLastOperation name of a node decommission.
const OperationDecommission = "decommission"

// Phases of a rack and of the cluster.
const (
	PhaseInitializing = "Initializing"
	PhaseRunning      = "Running"
	PhasePending      = "Pending"
)

// PVCToDeleteFinalizer is put on a CassandraCluster with spec.deletePVC so
// that the cluster's PVCs are deleted before the CR goes away.
const PVCToDeleteFinalizer = "kubernetes.io/pvc-to-delete"

// DataVolumeClaimTemplate is the name of the StatefulSet's
// volumeClaimTemplate; the StatefulSet controller names PVCs after it.
const DataVolumeClaimTemplate = "data"

// StatefulSetName is the StatefulSet of one rack: <cc>-<dc>-<rack>.
func StatefulSetName(cluster, dc, rack string) string { return cluster + "-" + dc + "-" + rack }

// PodName is the pod the StatefulSet controller creates at an ordinal.
func PodName(statefulSet string, ordinal int32) string {
	return statefulSet + "-" + strconv.FormatInt(int64(ordinal), 10)
}

// PVCName is the data PVC of a pod, as the StatefulSet controller names it
// from the volumeClaimTemplate "data".
func PVCName(pod string) string { return DataVolumeClaimTemplate + "-" + pod }

// DCRackName is the key of a rack in status.cassandraRackStatus: <dc>-<rack>.
func DCRackName(dc, rack string) string { return dc + "-" + rack }

// ServiceName is the headless service the StatefulSets use for pod DNS; one
// per cluster, named after the CR.
func ServiceName(cluster string) string { return cluster }

// PodDisruptionBudgetName is the cluster's PodDisruptionBudget, named after
// the CR.
func PodDisruptionBudgetName(cluster string) string { return cluster }

// CassandraCluster is a Cassandra cluster laid out as datacenters of racks,
// each rack one StatefulSet of spec.nodesPerRacks nodes.
type CassandraCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   CassandraClusterSpec   `json:"spec,omitempty"`
	Status CassandraClusterStatus `json:"status,omitempty"`
}

// CassandraClusterList is a list of CassandraClusters.
type CassandraClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []CassandraCluster `json:"items"`
}

// CassandraClusterSpec is what the user asks for.
type CassandraClusterSpec struct {
	// NodesPerRacks is the number of Cassandra nodes in every rack.
	NodesPerRacks int32 `json:"nodesPerRacks,omitempty"`
	// DeletePVC asks the operator to delete a node's PVC once the node is
	// decommissioned, and every PVC of the cluster when the CR is deleted.
	DeletePVC bool     `json:"deletePVC,omitempty"`
	Topology  Topology `json:"topology,omitempty"`
	// Image is the Cassandra container image; defaulted on first sight.
	Image string `json:"image,omitempty"`
	// DataCapacity is the size of each node's data PVC, a resource quantity
	// such as "3Gi"; defaulted on first sight.
	DataCapacity string `json:"dataCapacity,omitempty"`
}

// Topology lists the datacenters of the cluster, in the order racks are
// reconciled.
type Topology struct {
	DC []DC `json:"dc,omitempty"`
}

// DC is one Cassandra datacenter.
type DC struct {
	Name string `json:"name"`
	Rack []Rack `json:"rack,omitempty"`
}

// Rack is one Cassandra rack, backed by one StatefulSet.
type Rack struct {
	Name string `json:"name"`
}

// CassandraClusterStatus is what the operator remembers between reconciles.
// It lives in the CR itself, so anything the operator has not written back
// is forgotten by a crash.
type CassandraClusterStatus struct {
	Phase                   string `json:"phase,omitempty"`
	LastClusterAction       string `json:"lastClusterAction,omitempty"`
	LastClusterActionStatus string `json:"lastClusterActionStatus,omitempty"`
	// CassandraRackStatus is keyed by DCRackName(dc, rack).
	CassandraRackStatus map[string]*CassandraRackStatus `json:"cassandraRackStatus,omitempty"`
}

// CassandraRackStatus is the progress of the last action on one rack.
type CassandraRackStatus struct {
	Phase               string              `json:"phase,omitempty"`
	CassandraLastAction CassandraLastAction `json:"cassandraLastAction,omitempty"`
	PodLastOperation    PodLastOperation    `json:"podLastOperation,omitempty"`
}

// CassandraLastAction is the last rack-level action (scale up, scale down,
// initializing) and where it stands.
type CassandraLastAction struct {
	Name      string       `json:"name,omitempty"`
	Status    string       `json:"status,omitempty"`
	StartTime *metav1.Time `json:"startTime,omitempty"`
	EndTime   *metav1.Time `json:"endTime,omitempty"`
}

// PodLastOperation is the last node-level operation (a decommission) and the
// pods it concerns.
type PodLastOperation struct {
	Name      string       `json:"name,omitempty"`
	Status    string       `json:"status,omitempty"`
	Pods      []string     `json:"pods,omitempty"`
	PodsOK    []string     `json:"podsOK,omitempty"`
	PodsKO    []string     `json:"podsKO,omitempty"`
	StartTime *metav1.Time `json:"startTime,omitempty"`
	EndTime   *metav1.Time `json:"endTime,omitempty"`
	// OperatorName is the operator pod that started the operation.
	OperatorName string `json:"operatorName,omitempty"`
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *CassandraCluster) DeepCopyInto(out *CassandraCluster) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	in.Spec.DeepCopyInto(&out.Spec)
	in.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *CassandraCluster) DeepCopy() *CassandraCluster {
	if in == nil {
		return nil
	}
	out := new(CassandraCluster)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *CassandraCluster) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *CassandraClusterList) DeepCopyInto(out *CassandraClusterList) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]CassandraCluster, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *CassandraClusterList) DeepCopy() *CassandraClusterList {
	if in == nil {
		return nil
	}
	out := new(CassandraClusterList)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (in *CassandraClusterList) DeepCopyObject() runtime.Object {
	if c := in.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *CassandraClusterSpec) DeepCopyInto(out *CassandraClusterSpec) {
	*out = *in
	in.Topology.DeepCopyInto(&out.Topology)
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *CassandraClusterSpec) DeepCopy() *CassandraClusterSpec {
	if in == nil {
		return nil
	}
	out := new(CassandraClusterSpec)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *Topology) DeepCopyInto(out *Topology) {
	*out = *in
	if in.DC != nil {
		out.DC = make([]DC, len(in.DC))
		for i := range in.DC {
			in.DC[i].DeepCopyInto(&out.DC[i])
		}
	}
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *Topology) DeepCopy() *Topology {
	if in == nil {
		return nil
	}
	out := new(Topology)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *DC) DeepCopyInto(out *DC) {
	*out = *in
	if in.Rack != nil {
		out.Rack = make([]Rack, len(in.Rack))
		copy(out.Rack, in.Rack)
	}
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *DC) DeepCopy() *DC {
	if in == nil {
		return nil
	}
	out := new(DC)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *Rack) DeepCopyInto(out *Rack) { *out = *in }

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *Rack) DeepCopy() *Rack {
	if in == nil {
		return nil
	}
	out := new(Rack)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *CassandraClusterStatus) DeepCopyInto(out *CassandraClusterStatus) {
	*out = *in
	if in.CassandraRackStatus != nil {
		out.CassandraRackStatus = make(map[string]*CassandraRackStatus, len(in.CassandraRackStatus))
		for k, v := range in.CassandraRackStatus {
			out.CassandraRackStatus[k] = v.DeepCopy()
		}
	}
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *CassandraClusterStatus) DeepCopy() *CassandraClusterStatus {
	if in == nil {
		return nil
	}
	out := new(CassandraClusterStatus)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *CassandraRackStatus) DeepCopyInto(out *CassandraRackStatus) {
	*out = *in
	in.CassandraLastAction.DeepCopyInto(&out.CassandraLastAction)
	in.PodLastOperation.DeepCopyInto(&out.PodLastOperation)
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *CassandraRackStatus) DeepCopy() *CassandraRackStatus {
	if in == nil {
		return nil
	}
	out := new(CassandraRackStatus)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *CassandraLastAction) DeepCopyInto(out *CassandraLastAction) {
	*out = *in
	out.StartTime = copyTime(in.StartTime)
	out.EndTime = copyTime(in.EndTime)
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *CassandraLastAction) DeepCopy() *CassandraLastAction {
	if in == nil {
		return nil
	}
	out := new(CassandraLastAction)
	in.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies the receiver into out; in must be non-nil.
func (in *PodLastOperation) DeepCopyInto(out *PodLastOperation) {
	*out = *in
	out.Pods = copyStrings(in.Pods)
	out.PodsOK = copyStrings(in.PodsOK)
	out.PodsKO = copyStrings(in.PodsKO)
	out.StartTime = copyTime(in.StartTime)
	out.EndTime = copyTime(in.EndTime)
}

// DeepCopy returns a deep copy, or nil for a nil receiver.
func (in *PodLastOperation) DeepCopy() *PodLastOperation {
	if in == nil {
		return nil
	}
	out := new(PodLastOperation)
	in.DeepCopyInto(out)
	return out
}

func copyTime(t *metav1.Time) *metav1.Time {
	if t == nil {
		return nil
	}
	return t.DeepCopy()
}

// copyStrings keeps nil and empty apart, so that a copy compares equal to
// its original under reflect.DeepEqual.
func copyStrings(s []string) []string {
	if s == nil {
		return nil
	}
	out := make([]string, len(s))
	copy(out, s)
	return out
}
