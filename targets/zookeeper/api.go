package zookeeper

import (
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupVersion is the API group and version of the ZookeeperCluster CRD.
var GroupVersion = schema.GroupVersion{Group: "zookeeper.pravega.io", Version: "v1beta1"}

// AddToScheme registers ZookeeperCluster and ZookeeperClusterList with s, so
// that a client built on s can read and write them and so that
// controllerutil.SetControllerReference can resolve the CR's kind.
func AddToScheme(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion, &ZookeeperCluster{}, &ZookeeperClusterList{})
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}

// Defaults the operator writes into a CR that leaves them unset.
const (
	DefaultReplicas int32 = 3
	DefaultImage          = "zookeeper:3.6.3"
	// DefaultVolumeSize is the storage request of each member's PVC.
	DefaultVolumeSize = "20Gi"
)

// VolumeReclaimPolicy says what happens to a member's PVC once the member is
// gone: kept (Retain) or deleted by the operator (Delete).
type VolumeReclaimPolicy string

// The two reclaim policies. Only Delete makes the operator delete PVCs, and
// so only Delete can lose data.
const (
	VolumeReclaimPolicyRetain VolumeReclaimPolicy = "Retain"
	VolumeReclaimPolicyDelete VolumeReclaimPolicy = "Delete"
)

// ZookeeperCluster is one ZooKeeper ensemble managed by the operator.
type ZookeeperCluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   ZookeeperClusterSpec   `json:"spec,omitempty"`
	Status ZookeeperClusterStatus `json:"status,omitempty"`
}

// ZookeeperClusterList is a list of ZookeeperClusters.
type ZookeeperClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []ZookeeperCluster `json:"items"`
}

// ZookeeperClusterSpec is what the user asks for.
type ZookeeperClusterSpec struct {
	// Replicas is the ensemble size. Zero means "not set" and is defaulted to
	// DefaultReplicas, as upstream does (an ensemble of zero is not a thing).
	Replicas int32 `json:"replicas,omitempty"`
	// Image is the container image of every member; defaulted to DefaultImage.
	Image string `json:"image,omitempty"`
	// Persistence says how members store data; defaulted when nil.
	Persistence *Persistence `json:"persistence,omitempty"`
}

// Persistence describes the members' volumes.
type Persistence struct {
	// ReclaimPolicy is Retain (default) or Delete.
	ReclaimPolicy VolumeReclaimPolicy `json:"reclaimPolicy,omitempty"`
	// VolumeSize is the storage request of each member's PVC; empty means
	// DefaultVolumeSize.
	VolumeSize string `json:"volumeSize,omitempty"`
}

// ZookeeperClusterStatus is what the operator last observed. Replicas and
// ReadyReplicas are copies of the StatefulSet's status taken during an earlier
// reconcile, which is exactly why a stale read of them is dangerous.
type ZookeeperClusterStatus struct {
	Replicas        int32         `json:"replicas"`
	ReadyReplicas   int32         `json:"readyReplicas"`
	Members         MembersStatus `json:"members"`
	MetaRootCreated bool          `json:"metaRootCreated"`
	// CurrentImage is the image every member ran when the last rolling
	// update finished; the upgrade step maintains it.
	CurrentImage string             `json:"currentImage,omitempty"`
	Conditions   []ClusterCondition `json:"conditions,omitempty"`
}

// MembersStatus lists member pod names by readiness, each sorted by name.
type MembersStatus struct {
	Ready   []string `json:"ready,omitempty"`
	Unready []string `json:"unready,omitempty"`
}

// ClusterConditionType names a condition of the cluster.
type ClusterConditionType string

// The conditions the operator maintains.
const (
	// ClusterConditionPodsReady is True when status.readyReplicas equals
	// spec.replicas.
	ClusterConditionPodsReady ClusterConditionType = "PodsReady"
	// ClusterConditionUpgrading is True while the StatefulSet rolls pods to
	// a new revision.
	ClusterConditionUpgrading ClusterConditionType = "Upgrading"
)

// ClusterCondition is one condition of the cluster. LastTransitionTime is an
// RFC 3339 timestamp from the reconciler's logical clock.
type ClusterCondition struct {
	Type               ClusterConditionType   `json:"type"`
	Status             corev1.ConditionStatus `json:"status"`
	Reason             string                 `json:"reason,omitempty"`
	Message            string                 `json:"message,omitempty"`
	LastTransitionTime string                 `json:"lastTransitionTime,omitempty"`
}

// Condition returns the condition of type t, or nil when there is none.
func (s *ZookeeperClusterStatus) Condition(t ClusterConditionType) *ClusterCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// setCondition sets the condition of type t. LastTransitionTime moves only
// when the status flips, so that a steady cluster writes an identical status
// on every reconcile.
func (s *ZookeeperClusterStatus) setCondition(t ClusterConditionType, status corev1.ConditionStatus, reason, message, now string) {
	c := s.Condition(t)
	if c == nil {
		s.Conditions = append(s.Conditions, ClusterCondition{Type: t})
		c = &s.Conditions[len(s.Conditions)-1]
	}
	if c.Status != status {
		c.LastTransitionTime = now
	}
	c.Status = status
	c.Reason = reason
	c.Message = message
}

// WithDefaults fills every unset field with its default and reports whether
// it changed anything.
func (z *ZookeeperCluster) WithDefaults() (changed bool) {
	if z.Spec.Replicas == 0 {
		z.Spec.Replicas = DefaultReplicas
		changed = true
	}
	if z.Spec.Image == "" {
		z.Spec.Image = DefaultImage
		changed = true
	}
	if z.Spec.Persistence == nil {
		z.Spec.Persistence = &Persistence{}
		changed = true
	}
	if z.Spec.Persistence.ReclaimPolicy == "" {
		z.Spec.Persistence.ReclaimPolicy = VolumeReclaimPolicyRetain
		changed = true
	}
	if z.Spec.Persistence.VolumeSize == "" {
		z.Spec.Persistence.VolumeSize = DefaultVolumeSize
		changed = true
	}
	return changed
}

// volumeSize parses the PVC request, falling back to the default when the
// user's string is not a quantity: a bad size must not stop the operator from
// serving the ensemble, and the default is what an unset size means anyway.
func (z *ZookeeperCluster) volumeSize() resource.Quantity {
	if z.Spec.Persistence != nil {
		if q, err := resource.ParseQuantity(z.Spec.Persistence.VolumeSize); err == nil {
			return q
		}
	}
	return resource.MustParse(DefaultVolumeSize)
}

// Names and labels of everything the operator creates for a CR named cr.
const (
	// AppLabel is the label key every child object carries, with the CR's
	// name as value.
	AppLabel = "app"
	// PVCTemplateName is the StatefulSet's volumeClaimTemplate name, so the
	// StatefulSet controller names member i's PVC "data-<cr>-<i>".
	PVCTemplateName = "data"
	// PVCFinalizer keeps a CR with reclaimPolicy Delete around until the
	// operator has deleted its PVCs.
	PVCFinalizer = "cleanUpZookeeperPVC"
	// OwnerRVLabel is the StatefulSet label the upstream fix uses to record
	// the resourceVersion of the newest CR that wrote the StatefulSet.
	OwnerRVLabel = "owner-rv"
	// ClientPort is the port clients (and the operator) reach ZooKeeper on.
	ClientPort = 2181
	// MetaRootPrefix is the znode under which the operator keeps one node
	// per cluster.
	MetaRootPrefix = "/zookeeper-operator"
)

// Labels returns the labels of every child object of CR cr.
func Labels(cr string) map[string]string { return map[string]string{AppLabel: cr} }

// StatefulSetName is the name of CR cr's StatefulSet.
func StatefulSetName(cr string) string { return cr }

// PodName is the name of member ordinal of CR cr.
func PodName(cr string, ordinal int) string { return cr + "-" + strconv.Itoa(ordinal) }

// PVCName is the name of member ordinal's PVC of CR cr.
func PVCName(cr string, ordinal int) string { return PVCTemplateName + "-" + PodName(cr, ordinal) }

// ClientServiceName is the name of CR cr's client service.
func ClientServiceName(cr string) string { return cr + "-client" }

// HeadlessServiceName is the name of CR cr's headless (peer) service.
func HeadlessServiceName(cr string) string { return cr + "-headless" }

// AdminServerServiceName is the name of CR cr's admin-server service.
func AdminServerServiceName(cr string) string { return cr + "-admin-server" }

// ConfigMapName is the name of CR cr's ConfigMap.
func ConfigMapName(cr string) string { return cr + "-configmap" }

// PDBName is the name of CR cr's PodDisruptionBudget.
func PDBName(cr string) string { return cr }

// ClientServiceAddress is the address the operator connects to the ensemble
// of CR cr in namespace ns at.
func ClientServiceAddress(cr, ns string) string {
	return ClientServiceName(cr) + "." + ns + ".svc.cluster.local:" + strconv.Itoa(ClientPort)
}

// MetaPath is the znode holding CR cr's CLUSTER_SIZE.
func MetaPath(cr string) string { return MetaRootPrefix + "/" + cr }

// OrdinalOf returns the number after the last "-" in name, as the operator
// reads a member's ordinal from a pod or PVC name; false when there is none.
func OrdinalOf(name string) (int, bool) {
	i := strings.LastIndex(name, "-")
	if i < 0 || i == len(name)-1 {
		return 0, false
	}
	n, err := strconv.Atoi(name[i+1:])
	if err != nil || n < 0 {
		return 0, false
	}
	return n, true
}

// DeepCopyInto copies z into out; nothing of out aliases z afterwards.
func (z *ZookeeperCluster) DeepCopyInto(out *ZookeeperCluster) {
	*out = *z
	out.TypeMeta = z.TypeMeta
	z.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	z.Spec.DeepCopyInto(&out.Spec)
	z.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of z that shares no memory with it.
func (z *ZookeeperCluster) DeepCopy() *ZookeeperCluster {
	if z == nil {
		return nil
	}
	out := new(ZookeeperCluster)
	z.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (z *ZookeeperCluster) DeepCopyObject() runtime.Object {
	if c := z.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies l into out; nothing of out aliases l afterwards.
func (l *ZookeeperClusterList) DeepCopyInto(out *ZookeeperClusterList) {
	*out = *l
	out.TypeMeta = l.TypeMeta
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]ZookeeperCluster, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l that shares no memory with it.
func (l *ZookeeperClusterList) DeepCopy() *ZookeeperClusterList {
	if l == nil {
		return nil
	}
	out := new(ZookeeperClusterList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *ZookeeperClusterList) DeepCopyObject() runtime.Object {
	if c := l.DeepCopy(); c != nil {
		return c
	}
	return nil
}

// DeepCopyInto copies s into out; nothing of out aliases s afterwards.
func (s *ZookeeperClusterSpec) DeepCopyInto(out *ZookeeperClusterSpec) {
	*out = *s
	if s.Persistence != nil {
		out.Persistence = s.Persistence.DeepCopy()
	}
}

// DeepCopy returns a copy of s that shares no memory with it.
func (s *ZookeeperClusterSpec) DeepCopy() *ZookeeperClusterSpec {
	if s == nil {
		return nil
	}
	out := new(ZookeeperClusterSpec)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies p into out.
func (p *Persistence) DeepCopyInto(out *Persistence) { *out = *p }

// DeepCopy returns a copy of p that shares no memory with it.
func (p *Persistence) DeepCopy() *Persistence {
	if p == nil {
		return nil
	}
	out := new(Persistence)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies s into out; nothing of out aliases s afterwards.
func (s *ZookeeperClusterStatus) DeepCopyInto(out *ZookeeperClusterStatus) {
	*out = *s
	s.Members.DeepCopyInto(&out.Members)
	if s.Conditions != nil {
		out.Conditions = make([]ClusterCondition, len(s.Conditions))
		copy(out.Conditions, s.Conditions)
	}
}

// DeepCopy returns a copy of s that shares no memory with it.
func (s *ZookeeperClusterStatus) DeepCopy() *ZookeeperClusterStatus {
	if s == nil {
		return nil
	}
	out := new(ZookeeperClusterStatus)
	s.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies m into out; nothing of out aliases m afterwards.
func (m *MembersStatus) DeepCopyInto(out *MembersStatus) {
	*out = *m
	if m.Ready != nil {
		out.Ready = make([]string, len(m.Ready))
		copy(out.Ready, m.Ready)
	}
	if m.Unready != nil {
		out.Unready = make([]string, len(m.Unready))
		copy(out.Unready, m.Unready)
	}
}

// DeepCopy returns a copy of m that shares no memory with it.
func (m *MembersStatus) DeepCopy() *MembersStatus {
	if m == nil {
		return nil
	}
	out := new(MembersStatus)
	m.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies c into out; ClusterCondition holds only values.
func (c *ClusterCondition) DeepCopyInto(out *ClusterCondition) { *out = *c }

// DeepCopy returns a copy of c.
func (c *ClusterCondition) DeepCopy() *ClusterCondition {
	if c == nil {
		return nil
	}
	out := new(ClusterCondition)
	c.DeepCopyInto(out)
	return out
}
