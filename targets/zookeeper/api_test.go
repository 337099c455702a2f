package zookeeper

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

func fullCR() *ZookeeperCluster {
	return &ZookeeperCluster{
		TypeMeta: metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "ZookeeperCluster"},
		ObjectMeta: metav1.ObjectMeta{
			Name: "zk", Namespace: "ns", ResourceVersion: "7",
			Labels: map[string]string{"a": "b"}, Finalizers: []string{PVCFinalizer},
		},
		Spec: ZookeeperClusterSpec{
			Replicas: 3, Image: "img:1",
			Persistence: &Persistence{ReclaimPolicy: VolumeReclaimPolicyDelete, VolumeSize: "1Gi"},
		},
		Status: ZookeeperClusterStatus{
			Replicas: 3, ReadyReplicas: 2, MetaRootCreated: true, CurrentImage: "img:0",
			Members:    MembersStatus{Ready: []string{"zk-0", "zk-1"}, Unready: []string{"zk-2"}},
			Conditions: []ClusterCondition{{Type: ClusterConditionPodsReady, Status: corev1.ConditionFalse, Reason: "r", Message: "m", LastTransitionTime: "t"}},
		},
	}
}

func TestDeepCopyDoesNotAlias(t *testing.T) {
	orig := fullCR()
	cp := orig.DeepCopy()
	require.Equal(t, orig, cp)

	cp.Labels["a"] = "changed"
	cp.Finalizers[0] = "changed"
	cp.Spec.Persistence.ReclaimPolicy = VolumeReclaimPolicyRetain
	cp.Status.Members.Ready[0] = "changed"
	cp.Status.Members.Unready[0] = "changed"
	cp.Status.Conditions[0].Reason = "changed"

	assert.Equal(t, fullCR(), orig, "mutating the copy must leave the original alone")
}

func TestDeepCopyKeepsNilAndEmptyApart(t *testing.T) {
	orig := &ZookeeperCluster{Status: ZookeeperClusterStatus{Members: MembersStatus{Ready: []string{}}}}
	cp := orig.DeepCopy()
	assert.NotNil(t, cp.Status.Members.Ready)
	assert.Nil(t, cp.Status.Members.Unready)
	assert.Nil(t, cp.Spec.Persistence)
	assert.Nil(t, (*ZookeeperCluster)(nil).DeepCopy())
}

func TestListDeepCopyDoesNotAlias(t *testing.T) {
	orig := &ZookeeperClusterList{ListMeta: metav1.ListMeta{ResourceVersion: "9"}, Items: []ZookeeperCluster{*fullCR(), *fullCR()}}
	obj := orig.DeepCopyObject()
	cp, ok := obj.(*ZookeeperClusterList)
	require.True(t, ok, "DeepCopyObject returns a *ZookeeperClusterList, got %T", obj)
	require.Equal(t, orig, cp)
	cp.Items[1].Spec.Persistence.VolumeSize = "changed"
	cp.Items[0].Status.Members.Ready[1] = "changed"
	cp.Items = append(cp.Items[:1], ZookeeperCluster{})
	assert.Equal(t, "1Gi", orig.Items[1].Spec.Persistence.VolumeSize)
	assert.Equal(t, "zk-1", orig.Items[0].Status.Members.Ready[1])
	assert.Equal(t, "zk", orig.Items[1].Name)
}

func TestDeepCopyObjectOfCR(t *testing.T) {
	orig := fullCR()
	cp, ok := orig.DeepCopyObject().(*ZookeeperCluster)
	require.True(t, ok)
	cp.Spec.Persistence.VolumeSize = "changed"
	assert.Equal(t, "1Gi", orig.Spec.Persistence.VolumeSize)
}

func TestAddToSchemeRegistersBothKinds(t *testing.T) {
	s := runtime.NewScheme()
	require.NoError(t, AddToScheme(s))
	for _, tc := range []struct {
		obj  runtime.Object
		kind string
	}{{&ZookeeperCluster{}, "ZookeeperCluster"}, {&ZookeeperClusterList{}, "ZookeeperClusterList"}} {
		gvks, _, err := s.ObjectKinds(tc.obj)
		require.NoError(t, err)
		require.Len(t, gvks, 1)
		assert.Equal(t, "zookeeper.pravega.io", gvks[0].Group)
		assert.Equal(t, "v1beta1", gvks[0].Version)
		assert.Equal(t, tc.kind, gvks[0].Kind)
	}
	assert.True(t, s.Recognizes(GroupVersion.WithKind("ListOptions")), "metav1 types are added to the group version")
}

func TestNames(t *testing.T) {
	assert.Equal(t, "zk", StatefulSetName("zk"))
	assert.Equal(t, "zk-2", PodName("zk", 2))
	assert.Equal(t, "data-zk-2", PVCName("zk", 2))
	assert.Equal(t, "zk-client", ClientServiceName("zk"))
	assert.Equal(t, "zk-headless", HeadlessServiceName("zk"))
	assert.Equal(t, "zk-admin-server", AdminServerServiceName("zk"))
	assert.Equal(t, "zk-configmap", ConfigMapName("zk"))
	assert.Equal(t, "zk", PDBName("zk"))
	assert.Equal(t, map[string]string{"app": "zk"}, Labels("zk"))
	assert.Equal(t, "zk-client.ns.svc.cluster.local:2181", ClientServiceAddress("zk", "ns"))
	assert.Equal(t, "/zookeeper-operator/zk", MetaPath("zk"))
}

func TestOrdinalOf(t *testing.T) {
	cases := []struct {
		name    string
		ordinal int
		ok      bool
	}{
		{"data-zk-0", 0, true},
		{"data-my-zk-12", 12, true},
		{"zk-3", 3, true},
		{"zk", 0, false},
		{"zk-", 0, false},
		{"zk-x", 0, false},
		{"zk-1a", 0, false},
		{"zk--1", 1, true}, // the number after the last "-"
	}
	for _, tc := range cases {
		ordinal, ok := OrdinalOf(tc.name)
		assert.Equal(t, tc.ok, ok, tc.name)
		assert.Equal(t, tc.ordinal, ordinal, tc.name)
	}
}

func TestWithDefaults(t *testing.T) {
	cr := &ZookeeperCluster{}
	assert.True(t, cr.WithDefaults())
	assert.Equal(t, ZookeeperClusterSpec{
		Replicas: DefaultReplicas, Image: DefaultImage,
		Persistence: &Persistence{ReclaimPolicy: VolumeReclaimPolicyRetain, VolumeSize: DefaultVolumeSize},
	}, cr.Spec)
	assert.False(t, cr.WithDefaults(), "defaults are idempotent")

	set := &ZookeeperCluster{Spec: ZookeeperClusterSpec{Replicas: 1, Image: "x", Persistence: &Persistence{ReclaimPolicy: VolumeReclaimPolicyDelete, VolumeSize: "1Gi"}}}
	assert.False(t, set.WithDefaults())
	assert.Equal(t, VolumeReclaimPolicyDelete, set.Spec.Persistence.ReclaimPolicy)
}
