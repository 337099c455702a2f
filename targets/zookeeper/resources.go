package zookeeper

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Ports of a ZooKeeper member. Ports carry an explicit protocol and target
// port so that what the apiserver would default is already there, and the
// "update when different" comparison does not see a difference on every
// reconcile.
const (
	quorumPort         = 2888
	leaderElectionPort = 3888
	adminServerPort    = 8080
	dataMountPath      = "/data"
	confMountPath      = "/conf"
	confVolumeName     = "conf"
	containerName      = "zookeeper"
)

func objectMeta(cr *ZookeeperCluster, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: cr.Namespace, Labels: Labels(cr.Name)}
}

func servicePort(name string, port int32) corev1.ServicePort {
	return corev1.ServicePort{Name: name, Protocol: corev1.ProtocolTCP, Port: port, TargetPort: intstr.FromInt32(port)}
}

// desiredStatefulSet is the StatefulSet the CR asks for, without owner
// reference (the reconciler sets it with the client's scheme).
func desiredStatefulSet(cr *ZookeeperCluster) *appsv1.StatefulSet {
	replicas := cr.Spec.Replicas
	return &appsv1.StatefulSet{
		ObjectMeta: objectMeta(cr, StatefulSetName(cr.Name)),
		Spec: appsv1.StatefulSetSpec{
			Replicas:            &replicas,
			ServiceName:         HeadlessServiceName(cr.Name),
			Selector:            &metav1.LabelSelector{MatchLabels: Labels(cr.Name)},
			PodManagementPolicy: appsv1.OrderedReadyPodManagement,
			UpdateStrategy:      appsv1.StatefulSetUpdateStrategy{Type: appsv1.RollingUpdateStatefulSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: Labels(cr.Name)},
				Spec: corev1.PodSpec{
					Containers: []corev1.Container{{
						Name:  containerName,
						Image: cr.Spec.Image,
						Ports: []corev1.ContainerPort{
							{Name: "client", ContainerPort: ClientPort, Protocol: corev1.ProtocolTCP},
							{Name: "quorum", ContainerPort: quorumPort, Protocol: corev1.ProtocolTCP},
							{Name: "leader-election", ContainerPort: leaderElectionPort, Protocol: corev1.ProtocolTCP},
							{Name: "admin-server", ContainerPort: adminServerPort, Protocol: corev1.ProtocolTCP},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: PVCTemplateName, MountPath: dataMountPath},
							{Name: confVolumeName, MountPath: confMountPath},
						},
					}},
					Volumes: []corev1.Volume{{
						Name: confVolumeName,
						VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
							LocalObjectReference: corev1.LocalObjectReference{Name: ConfigMapName(cr.Name)},
						}},
					}},
				},
			},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: PVCTemplateName, Labels: Labels(cr.Name)},
				Spec: corev1.PersistentVolumeClaimSpec{
					AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
					Resources: corev1.VolumeResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceStorage: cr.volumeSize()},
					},
				},
			}},
		},
	}
}

// desiredConfigMap holds the members' static configuration. It does not
// mention the ensemble size: members learn it from the CLUSTER_SIZE znode,
// which is why scaling writes to ZooKeeper and not to this ConfigMap.
func desiredConfigMap(cr *ZookeeperCluster) *corev1.ConfigMap {
	domain := fmt.Sprintf("%s.%s.svc.cluster.local", HeadlessServiceName(cr.Name), cr.Namespace)
	return &corev1.ConfigMap{
		ObjectMeta: objectMeta(cr, ConfigMapName(cr.Name)),
		Data: map[string]string{
			"zoo.cfg": fmt.Sprintf("dataDir=%s\nclientPort=%d\nstandaloneEnabled=false\nreconfigEnabled=true\nadmin.serverPort=%d\n",
				dataMountPath, ClientPort, adminServerPort),
			"env.sh": fmt.Sprintf("DOMAIN=%s\nQUORUM_PORT=%d\nLEADER_PORT=%d\nCLIENT_HOST=%s\nCLIENT_PORT=%d\nMETA_PATH=%s\n",
				domain, quorumPort, leaderElectionPort, ClientServiceName(cr.Name), ClientPort, MetaPath(cr.Name)),
		},
	}
}

func desiredClientService(cr *ZookeeperCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(cr, ClientServiceName(cr.Name)),
		Spec: corev1.ServiceSpec{
			Selector: Labels(cr.Name),
			Ports:    []corev1.ServicePort{servicePort("tcp-client", ClientPort)},
		},
	}
}

// desiredHeadlessService publishes not-ready members too: a joining member
// must resolve its peers before any of them is ready.
func desiredHeadlessService(cr *ZookeeperCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(cr, HeadlessServiceName(cr.Name)),
		Spec: corev1.ServiceSpec{
			ClusterIP:                corev1.ClusterIPNone,
			Selector:                 Labels(cr.Name),
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{
				servicePort("tcp-client", ClientPort),
				servicePort("tcp-quorum", quorumPort),
				servicePort("tcp-leader-election", leaderElectionPort),
			},
		},
	}
}

func desiredAdminServerService(cr *ZookeeperCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: objectMeta(cr, AdminServerServiceName(cr.Name)),
		Spec: corev1.ServiceSpec{
			Selector: Labels(cr.Name),
			Ports:    []corev1.ServicePort{servicePort("tcp-admin-server", adminServerPort)},
		},
	}
}

// desiredPDB lets at most one member be disrupted at a time, which keeps a
// quorum for every ensemble of three or more.
func desiredPDB(cr *ZookeeperCluster) *policyv1.PodDisruptionBudget {
	maxUnavailable := intstr.FromInt32(1)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: objectMeta(cr, PDBName(cr.Name)),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: Labels(cr.Name)},
		},
	}
}
