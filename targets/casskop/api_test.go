package casskop

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func stampAt(sec int) *metav1.Time {
	t := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, sec, 0, time.UTC))
	return &t
}

func fullCluster() *CassandraCluster {
	return &CassandraCluster{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "CassandraCluster"},
		ObjectMeta: metav1.ObjectMeta{Name: "cc", Namespace: "ns", Labels: map[string]string{"a": "b"}, Finalizers: []string{PVCToDeleteFinalizer}},
		Spec: CassandraClusterSpec{
			NodesPerRacks: 3, DeletePVC: true, Image: "img", DataCapacity: "1Gi",
			Topology: Topology{DC: []DC{{Name: "dc1", Rack: []Rack{{Name: "r1"}, {Name: "r2"}}}}},
		},
		Status: CassandraClusterStatus{
			Phase: PhaseRunning, LastClusterAction: ActionScaleDown, LastClusterActionStatus: StatusOngoing,
			CassandraRackStatus: map[string]*CassandraRackStatus{
				"dc1-r1": {
					Phase:               PhasePending,
					CassandraLastAction: CassandraLastAction{Name: ActionScaleDown, Status: StatusToDo, StartTime: stampAt(1), EndTime: stampAt(2)},
					PodLastOperation: PodLastOperation{Name: OperationDecommission, Status: StatusOngoing,
						Pods: []string{"p1"}, PodsOK: []string{"p2"}, PodsKO: []string{"p3"},
						StartTime: stampAt(3), EndTime: stampAt(4), OperatorName: "op"},
				},
			},
		},
	}
}

func TestDeepCopyIsDeep(t *testing.T) {
	orig := fullCluster()
	cp := orig.DeepCopy()
	require.Equal(t, orig, cp)

	rs := cp.Status.CassandraRackStatus["dc1-r1"]
	rs.Phase = "changed"
	rs.CassandraLastAction.StartTime.Time = rs.CassandraLastAction.StartTime.Add(time.Hour)
	rs.CassandraLastAction.EndTime.Time = rs.CassandraLastAction.EndTime.Add(time.Hour)
	rs.PodLastOperation.Pods[0] = "x"
	rs.PodLastOperation.PodsOK[0] = "x"
	rs.PodLastOperation.PodsKO[0] = "x"
	rs.PodLastOperation.StartTime.Time = rs.PodLastOperation.StartTime.Add(time.Hour)
	rs.PodLastOperation.EndTime.Time = rs.PodLastOperation.EndTime.Add(time.Hour)
	cp.Status.CassandraRackStatus["dc1-r2"] = &CassandraRackStatus{}
	cp.Spec.Topology.DC[0].Rack[1].Name = "x"
	cp.Spec.Topology.DC[0].Name = "x"
	cp.Labels["a"] = "x"
	cp.Finalizers[0] = "x"

	assert.Equal(t, fullCluster(), orig, "mutating the copy must leave the original alone")
}

func TestDeepCopyKeepsNilAndEmptyApart(t *testing.T) {
	var nilCluster *CassandraCluster
	assert.Nil(t, nilCluster.DeepCopy())
	var nilList *CassandraClusterList
	assert.Nil(t, nilList.DeepCopy())

	empty := &CassandraCluster{Status: CassandraClusterStatus{CassandraRackStatus: map[string]*CassandraRackStatus{}}}
	cp := empty.DeepCopy()
	assert.NotNil(t, cp.Status.CassandraRackStatus)
	assert.Nil(t, cp.Spec.Topology.DC)
	assert.Equal(t, empty, cp)
}

func TestListDeepCopyAndScheme(t *testing.T) {
	list := &CassandraClusterList{Items: []CassandraCluster{*fullCluster(), *fullCluster()}}
	obj := list.DeepCopyObject()
	cp, ok := obj.(*CassandraClusterList)
	require.True(t, ok)
	require.Equal(t, list, cp)
	cp.Items[1].Status.CassandraRackStatus["dc1-r1"].PodLastOperation.Pods[0] = "x"
	assert.Equal(t, "p1", list.Items[1].Status.CassandraRackStatus["dc1-r1"].PodLastOperation.Pods[0])

	_, ok = fullCluster().DeepCopyObject().(*CassandraCluster)
	assert.True(t, ok)

	s := runtime.NewScheme()
	require.NoError(t, AddToScheme(s))
	gvks, _, err := s.ObjectKinds(&CassandraCluster{})
	require.NoError(t, err)
	assert.Equal(t, "db.orange.com", gvks[0].Group)
	assert.Equal(t, "v1alpha1", gvks[0].Version)
	assert.Equal(t, "CassandraCluster", gvks[0].Kind)
	assert.True(t, s.Recognizes(GroupVersion.WithKind("CassandraClusterList")))
}

func TestNames(t *testing.T) {
	assert.Equal(t, "cc-dc1-rack1", StatefulSetName("cc", "dc1", "rack1"))
	assert.Equal(t, "cc-dc1-rack1-12", PodName("cc-dc1-rack1", 12))
	assert.Equal(t, "data-cc-dc1-rack1-0", PVCName("cc-dc1-rack1-0"))
	assert.Equal(t, "dc1-rack1", DCRackName("dc1", "rack1"))
}

// TestRackMembersAreTheNames checks the names converged looks up, built
// once per rack, against StatefulSetName, PodName and PVCName, with a
// rack asked for more ordinals than it was first built for and racks
// whose names run into each other.
func TestRackMembersAreTheNames(t *testing.T) {
	racks := []rackKey{{"cc", "dc1", "rack1"}, {"cc-dc1", "rack1", "x"}, {"cc", "dc1-rack1", "x"}, {"a", "b", "c"}}
	for _, n := range []int32{2, 5, 0, 20, 9, 40, 3} {
		for _, r := range racks {
			m := rackMembers(r.cluster, r.dc, r.rack, n)
			sts := StatefulSetName(r.cluster, r.dc, r.rack)
			if m.statefulSet != sts {
				t.Fatalf("%v: StatefulSet %q, want %q", r, m.statefulSet, sts)
			}
			if int32(len(m.pods)) < n || len(m.pvcs) != len(m.pods) {
				t.Fatalf("%v asked for %d ordinals: %d pods, %d PVCs", r, n, len(m.pods), len(m.pvcs))
			}
			for i := range m.pods {
				pod := PodName(sts, int32(i))
				if m.pods[i] != pod || m.pvcs[i] != PVCName(pod) {
					t.Fatalf("%v ordinal %d: pod %q PVC %q, want %q %q", r, i, m.pods[i], m.pvcs[i], pod, PVCName(pod))
				}
			}
		}
	}
}
