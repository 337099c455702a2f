package simulator

import (
	"fmt"
	"reflect"
	"strings"
	"sync"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Defaulting as the apiserver applies it to every request body it decodes
// (create, update, patch). The kinds' defaulting functions (SetDefaults_*,
// SetObjectDefaults_*) live in k8s.io/kubernetes/pkg/apis/*/v1, not in
// k8s.io/api, and opcheck does not import k8s.io/kubernetes; so the
// defaults of the kinds the case studies and KubeRay write are set here,
// field by field, and any defaulting function registered in the
// scenario's scheme (scheme.AddTypeDefaultingFunc) runs first, as the
// apiserver runs its scheme's. Defaults not listed here are not applied;
// docs/fidelity.md lists the ones that are.

// Default values the apiserver gives.
const (
	defaultSchedulerName            = corev1.DefaultSchedulerName
	defaultTerminationMessagePath   = corev1.TerminationMessagePathDefault
	defaultRevisionHistoryLimit     = 10
	defaultProgressDeadlineSeconds  = 600
	defaultJobBackoffLimit          = 6
	defaultServiceClusterIPRangeFmt = "10.96.%d.%d"
	firstNodePort                   = 30000
)

// applyDefaults defaults obj; old is the stored object of an update (nil
// on create), whose allocated service addresses an update keeps.
func (s *Store) applyDefaults(obj, old client.Object) {
	s.kinds.scheme.Default(obj)
	switch o := obj.(type) {
	case *corev1.Pod:
		defaultPodSpec(&o.Spec)
	case *appsv1.StatefulSet:
		defaultReplicas(&o.Spec.Replicas)
		if o.Spec.PodManagementPolicy == "" {
			o.Spec.PodManagementPolicy = appsv1.OrderedReadyPodManagement
		}
		if o.Spec.UpdateStrategy.Type == "" {
			o.Spec.UpdateStrategy.Type = appsv1.RollingUpdateStatefulSetStrategyType
		}
		if o.Spec.UpdateStrategy.Type == appsv1.RollingUpdateStatefulSetStrategyType && o.Spec.UpdateStrategy.RollingUpdate == nil {
			var zero int32
			o.Spec.UpdateStrategy.RollingUpdate = &appsv1.RollingUpdateStatefulSetStrategy{Partition: &zero}
		}
		defaultInt32(&o.Spec.RevisionHistoryLimit, defaultRevisionHistoryLimit)
		if o.Spec.PersistentVolumeClaimRetentionPolicy == nil {
			o.Spec.PersistentVolumeClaimRetentionPolicy = &appsv1.StatefulSetPersistentVolumeClaimRetentionPolicy{}
		}
		if p := o.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenDeleted == "" {
			p.WhenDeleted = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
		}
		if p := o.Spec.PersistentVolumeClaimRetentionPolicy; p.WhenScaled == "" {
			p.WhenScaled = appsv1.RetainPersistentVolumeClaimRetentionPolicyType
		}
		for i := range o.Spec.VolumeClaimTemplates {
			defaultClaim(&o.Spec.VolumeClaimTemplates[i])
		}
		defaultPodSpec(&o.Spec.Template.Spec)
	case *appsv1.Deployment:
		defaultReplicas(&o.Spec.Replicas)
		if o.Spec.Strategy.Type == "" {
			o.Spec.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
		}
		if o.Spec.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
			if o.Spec.Strategy.RollingUpdate == nil {
				o.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
			}
			quarter := intstr.FromString("25%")
			if o.Spec.Strategy.RollingUpdate.MaxUnavailable == nil {
				o.Spec.Strategy.RollingUpdate.MaxUnavailable = &quarter
			}
			if o.Spec.Strategy.RollingUpdate.MaxSurge == nil {
				surge := quarter
				o.Spec.Strategy.RollingUpdate.MaxSurge = &surge
			}
		}
		defaultInt32(&o.Spec.RevisionHistoryLimit, defaultRevisionHistoryLimit)
		defaultInt32(&o.Spec.ProgressDeadlineSeconds, defaultProgressDeadlineSeconds)
		defaultPodSpec(&o.Spec.Template.Spec)
	case *appsv1.ReplicaSet:
		defaultReplicas(&o.Spec.Replicas)
		defaultPodSpec(&o.Spec.Template.Spec)
	case *appsv1.DaemonSet:
		defaultPodSpec(&o.Spec.Template.Spec)
	case *batchv1.Job:
		if o.Spec.Completions == nil && o.Spec.Parallelism == nil {
			defaultInt32(&o.Spec.Completions, 1)
		}
		defaultInt32(&o.Spec.Parallelism, 1)
		defaultInt32(&o.Spec.BackoffLimit, defaultJobBackoffLimit)
		defaultPodSpec(&o.Spec.Template.Spec)
	case *corev1.PersistentVolumeClaim:
		defaultClaim(o)
	case *corev1.Secret:
		if o.Type == "" {
			o.Type = corev1.SecretTypeOpaque
		}
	case *corev1.Service:
		var was *corev1.Service
		if old != nil {
			was = old.(*corev1.Service)
		}
		s.defaultService(o, was)
	}
}

// schemeDefaulters is the index of runtime.Scheme's unexported
// defaulterFuncs field (map[reflect.Type]func(interface{})), found once;
// -1 when this apimachinery has no such field.
var schemeDefaulters = sync.OnceValue(func() int {
	f, ok := reflect.TypeFor[runtime.Scheme]().FieldByName("defaulterFuncs")
	if !ok || f.Type.Kind() != reflect.Map || f.Type.Key() != reflect.TypeFor[reflect.Type]() || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
})

// schemeDefaults reports whether scheme.Default(obj) may run a defaulting
// function (one was registered for obj's type with
// AddTypeDefaultingFunc). The scheme does not say so in its API; its
// table is read through reflection, and when that fails the answer is
// yes, the safe one for every caller.
func schemeDefaults(scheme *runtime.Scheme, obj runtime.Object) bool {
	i := schemeDefaulters()
	if i < 0 {
		return true
	}
	m := reflect.ValueOf(scheme).Elem().Field(i)
	return m.MapIndex(reflect.ValueOf(reflect.TypeOf(obj))).IsValid()
}

func defaultReplicas(r **int32) { defaultInt32(r, 1) }

func defaultInt32(p **int32, v int32) {
	if *p == nil {
		*p = &v
	}
}

// defaultPodSpec sets the pod spec defaults: restartPolicy Always,
// terminationGracePeriodSeconds 30, dnsPolicy ClusterFirst, the default
// scheduler, an empty security context, service links on, and per
// container the termination message path and policy, the image pull
// policy (Always for :latest or no tag, else IfNotPresent) and TCP ports.
func defaultPodSpec(s *corev1.PodSpec) {
	if s.RestartPolicy == "" {
		s.RestartPolicy = corev1.RestartPolicyAlways
	}
	if s.TerminationGracePeriodSeconds == nil {
		g := int64(corev1.DefaultTerminationGracePeriodSeconds)
		s.TerminationGracePeriodSeconds = &g
	}
	if s.DNSPolicy == "" {
		s.DNSPolicy = corev1.DNSClusterFirst
	}
	if s.SchedulerName == "" {
		s.SchedulerName = defaultSchedulerName
	}
	if s.SecurityContext == nil {
		s.SecurityContext = &corev1.PodSecurityContext{}
	}
	if s.EnableServiceLinks == nil {
		on := corev1.DefaultEnableServiceLinks
		s.EnableServiceLinks = &on
	}
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			c := &cs[i]
			if c.TerminationMessagePath == "" {
				c.TerminationMessagePath = defaultTerminationMessagePath
			}
			if c.TerminationMessagePolicy == "" {
				c.TerminationMessagePolicy = corev1.TerminationMessageReadFile
			}
			if c.ImagePullPolicy == "" {
				c.ImagePullPolicy = defaultPullPolicy(c.Image)
			}
			for j := range c.Ports {
				if c.Ports[j].Protocol == "" {
					c.Ports[j].Protocol = corev1.ProtocolTCP
				}
			}
		}
	}
}

// defaultPullPolicy: Always for an image tagged :latest or untagged,
// IfNotPresent otherwise (a digest counts as a tag).
func defaultPullPolicy(image string) corev1.PullPolicy {
	if strings.Contains(image, "@") {
		return corev1.PullIfNotPresent
	}
	name := image[strings.LastIndex(image, "/")+1:]
	tag, ok := "", false
	if i := strings.LastIndex(name, ":"); i >= 0 {
		tag, ok = name[i+1:], true
	}
	if !ok || tag == "latest" {
		return corev1.PullAlways
	}
	return corev1.PullIfNotPresent
}

// defaultClaim: volumeMode Filesystem, phase Pending.
func defaultClaim(c *corev1.PersistentVolumeClaim) {
	if c.Spec.VolumeMode == nil {
		fs := corev1.PersistentVolumeFilesystem
		c.Spec.VolumeMode = &fs
	}
	if c.Status.Phase == "" {
		c.Status.Phase = corev1.ClaimPending
	}
}

// defaultService: type ClusterIP, session affinity None, TCP ports whose
// targetPort defaults to the port, internal traffic policy Cluster, and a
// cluster IP (and node ports for NodePort and LoadBalancer services)
// allocated from counters, so the same run gets the same addresses. An
// update that leaves the allocated values out keeps the stored ones, as
// the apiserver does.
func (s *Store) defaultService(svc, old *corev1.Service) {
	sp := &svc.Spec
	if sp.Type == "" {
		sp.Type = corev1.ServiceTypeClusterIP
	}
	if sp.SessionAffinity == "" {
		sp.SessionAffinity = corev1.ServiceAffinityNone
	}
	for i := range sp.Ports {
		p := &sp.Ports[i]
		if p.Protocol == "" {
			p.Protocol = corev1.ProtocolTCP
		}
		if p.TargetPort == (intstr.IntOrString{}) {
			p.TargetPort = intstr.FromInt32(p.Port)
		}
	}
	if sp.Type == corev1.ServiceTypeExternalName {
		return
	}
	if sp.InternalTrafficPolicy == nil {
		cluster := corev1.ServiceInternalTrafficPolicyCluster
		sp.InternalTrafficPolicy = &cluster
	}
	if old != nil && old.Spec.Type != corev1.ServiceTypeExternalName {
		if sp.ClusterIP == "" && len(sp.ClusterIPs) == 0 {
			sp.ClusterIP, sp.ClusterIPs = old.Spec.ClusterIP, old.Spec.ClusterIPs
		}
		for i := range sp.Ports {
			for _, op := range old.Spec.Ports {
				if sp.Ports[i].NodePort == 0 && op.Name == sp.Ports[i].Name && op.Port == sp.Ports[i].Port {
					sp.Ports[i].NodePort = op.NodePort
				}
			}
		}
	}
	if sp.ClusterIP == "" && len(sp.ClusterIPs) > 0 {
		sp.ClusterIP = sp.ClusterIPs[0]
	}
	if sp.ClusterIP == "" {
		s.ipSeq++
		sp.ClusterIP = fmt.Sprintf(defaultServiceClusterIPRangeFmt, s.ipSeq/250, s.ipSeq%250+1)
	}
	if len(sp.ClusterIPs) == 0 {
		sp.ClusterIPs = []string{sp.ClusterIP}
	}
	if sp.IPFamilyPolicy == nil {
		single := corev1.IPFamilyPolicySingleStack
		sp.IPFamilyPolicy = &single
	}
	if len(sp.IPFamilies) == 0 {
		sp.IPFamilies = []corev1.IPFamily{corev1.IPv4Protocol}
	}
	if sp.Type == corev1.ServiceTypeNodePort || sp.Type == corev1.ServiceTypeLoadBalancer {
		for i := range sp.Ports {
			if sp.Ports[i].NodePort == 0 {
				sp.Ports[i].NodePort = firstNodePort + int32(s.portSeq)
				s.portSeq++
			}
		}
	}
}
