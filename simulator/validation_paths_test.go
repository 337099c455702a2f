package simulator

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// validationPathCases are objects that break every rule validateCreate and
// validateUpdate check, each rule at a path of its own.
func validationPathCases() []struct {
	name     string
	obj, old client.Object
} {
	badMeta := func() metav1.ObjectMeta {
		return metav1.ObjectMeta{Namespace: "default", Name: "x", Labels: map[string]string{"bad key!": "v"},
			Annotations: map[string]string{"bad key!": "v"}, Finalizers: []string{"no-slash"},
			OwnerReferences: []metav1.OwnerReference{{Name: "o"}}}
	}
	containers := func() []corev1.Container {
		return []corev1.Container{{}, {Name: "Bad_Name", Image: "i", Ports: []corev1.ContainerPort{{ContainerPort: 1}, {ContainerPort: 70000}}}, {Name: "c", Image: "i"}, {Name: "c", Image: "i"}}
	}
	podSpec := func() corev1.PodSpec {
		return corev1.PodSpec{InitContainers: []corev1.Container{{Name: "c", Image: "i"}}, Containers: containers(),
			Volumes: []corev1.Volume{{Name: "v"}, {}, {Name: "v"}}, RestartPolicy: "Sometimes"}
	}
	n := int32(-1)
	oldPod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}, Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "i"}}, RestartPolicy: corev1.RestartPolicyAlways}}
	return []struct {
		name     string
		obj, old client.Object
	}{
		{"pod", &corev1.Pod{ObjectMeta: badMeta(), Spec: podSpec()}, nil},
		{"pod without containers", &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}}, nil},
		{"pod update", &corev1.Pod{ObjectMeta: badMeta(), Spec: podSpec()}, oldPod},
		{"statefulset", &appsv1.StatefulSet{ObjectMeta: badMeta(), Spec: appsv1.StatefulSetSpec{Replicas: &n, PodManagementPolicy: "Sometimes",
			Template:             corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"bad key!": "v"}}, Spec: podSpec()},
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{}, {ObjectMeta: metav1.ObjectMeta{Name: "Bad_Name"}}}}}, nil},
		{"statefulset with a selector", &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}, Spec: appsv1.StatefulSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "a"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "b"}}, Spec: podSpec()}}}, nil},
		{"deployment", &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}, Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{}, Template: corev1.PodTemplateSpec{Spec: podSpec()}}}, nil},
		{"job", &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}, Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: podSpec()}}}, nil},
		{"claim", &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}}, nil},
		{"service", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}, Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeNodePort, ClusterIP: corev1.ClusterIPNone, Selector: map[string]string{"bad key!": "v"},
			Ports: []corev1.ServicePort{{Port: 1, Protocol: corev1.ProtocolTCP}, {Name: "Bad_Name", Port: 70000, Protocol: "Sometimes"}, {Name: "p", Port: 2, Protocol: corev1.ProtocolUDP}, {Name: "p", Port: 3, Protocol: corev1.ProtocolUDP}}}}, nil},
		{"service without ports", &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "x"}}, nil},
	}
}

// dumpValidation renders what validateCreate (old nil) or validateUpdate
// answers: every cause's type and field, in order.
func dumpValidation(t *testing.T) string {
	t.Helper()
	c := NewCluster(testScheme(), ClusterOptions{})
	var b strings.Builder
	for _, tc := range validationPathCases() {
		k, err := c.Store.kinds.forObject(tc.obj)
		if err != nil {
			t.Fatal(err)
		}
		if tc.old == nil {
			err = validateCreate(k, tc.obj)
		} else {
			err = validateUpdate(k, tc.obj, tc.old, false, false)
		}
		var st apierrors.APIStatus
		if !errors.As(err, &st) || st.Status().Details == nil {
			t.Fatalf("%s: %v, want an Invalid error with causes", tc.name, err)
		}
		fmt.Fprintf(&b, "%s:\n", tc.name)
		for _, cause := range st.Status().Details.Causes {
			fmt.Fprintf(&b, "  %s %s\n", cause.Type, cause.Field)
		}
	}
	return b.String()
}

// TestValidationErrorPaths pins the field path of every error the
// validation can answer (the paths are built lazily, on an error only, or
// shared: a wrong one would show here).
func TestValidationErrorPaths(t *testing.T) {
	if got := dumpValidation(t); got != wantValidationPaths {
		t.Errorf("validation errors:\n%s\nwant:\n%s", got, wantValidationPaths)
	}
}

// wantValidationPaths is what the validation answered before its paths
// were built lazily (dumpValidation at e4a9ae0's validation.go).
const wantValidationPaths = `pod:
  FieldValueInvalid metadata.labels
  FieldValueInvalid metadata.annotations
  FieldValueRequired metadata.ownerReferences[0].apiVersion
  FieldValueRequired metadata.ownerReferences[0].kind
  FieldValueRequired metadata.ownerReferences[0].uid
  FieldValueRequired spec.containers[0].name
  FieldValueRequired spec.containers[0].image
  FieldValueInvalid spec.containers[1].name
  FieldValueInvalid spec.containers[1].ports[1].containerPort
  FieldValueDuplicate spec.containers[2].name
  FieldValueDuplicate spec.containers[3].name
  FieldValueRequired spec.volumes[1].name
  FieldValueDuplicate spec.volumes[2].name
  FieldValueNotSupported spec.restartPolicy
pod without containers:
  FieldValueRequired spec.containers
  FieldValueNotSupported spec.restartPolicy
pod update:
  FieldValueInvalid metadata.labels
  FieldValueInvalid metadata.annotations
  FieldValueRequired metadata.ownerReferences[0].apiVersion
  FieldValueRequired metadata.ownerReferences[0].kind
  FieldValueRequired metadata.ownerReferences[0].uid
  FieldValueRequired spec.containers[0].name
  FieldValueRequired spec.containers[0].image
  FieldValueInvalid spec.containers[1].name
  FieldValueInvalid spec.containers[1].ports[1].containerPort
  FieldValueDuplicate spec.containers[2].name
  FieldValueDuplicate spec.containers[3].name
  FieldValueRequired spec.volumes[1].name
  FieldValueDuplicate spec.volumes[2].name
  FieldValueNotSupported spec.restartPolicy
  FieldValueForbidden spec
statefulset:
  FieldValueInvalid metadata.labels
  FieldValueInvalid metadata.annotations
  FieldValueRequired metadata.ownerReferences[0].apiVersion
  FieldValueRequired metadata.ownerReferences[0].kind
  FieldValueRequired metadata.ownerReferences[0].uid
  FieldValueInvalid spec.replicas
  FieldValueRequired spec.selector
  FieldValueInvalid spec.template.metadata.labels
  FieldValueRequired spec.template.spec.containers[0].name
  FieldValueRequired spec.template.spec.containers[0].image
  FieldValueInvalid spec.template.spec.containers[1].name
  FieldValueInvalid spec.template.spec.containers[1].ports[1].containerPort
  FieldValueDuplicate spec.template.spec.containers[2].name
  FieldValueDuplicate spec.template.spec.containers[3].name
  FieldValueRequired spec.template.spec.volumes[1].name
  FieldValueDuplicate spec.template.spec.volumes[2].name
  FieldValueNotSupported spec.template.spec.restartPolicy
  FieldValueNotSupported spec.podManagementPolicy
  FieldValueInvalid spec.volumeClaimTemplates[0].metadata.name
  FieldValueRequired spec.volumeClaimTemplates[0].spec.accessModes
  FieldValueRequired spec.volumeClaimTemplates[0].spec.resources[storage]
  FieldValueInvalid spec.volumeClaimTemplates[1].metadata.name
  FieldValueRequired spec.volumeClaimTemplates[1].spec.accessModes
  FieldValueRequired spec.volumeClaimTemplates[1].spec.resources[storage]
statefulset with a selector:
  FieldValueInvalid spec.template.metadata.labels
  FieldValueRequired spec.template.spec.containers[0].name
  FieldValueRequired spec.template.spec.containers[0].image
  FieldValueInvalid spec.template.spec.containers[1].name
  FieldValueInvalid spec.template.spec.containers[1].ports[1].containerPort
  FieldValueDuplicate spec.template.spec.containers[2].name
  FieldValueDuplicate spec.template.spec.containers[3].name
  FieldValueRequired spec.template.spec.volumes[1].name
  FieldValueDuplicate spec.template.spec.volumes[2].name
  FieldValueNotSupported spec.template.spec.restartPolicy
deployment:
  FieldValueInvalid spec.selector
  FieldValueRequired spec.template.spec.containers[0].name
  FieldValueRequired spec.template.spec.containers[0].image
  FieldValueInvalid spec.template.spec.containers[1].name
  FieldValueInvalid spec.template.spec.containers[1].ports[1].containerPort
  FieldValueDuplicate spec.template.spec.containers[2].name
  FieldValueDuplicate spec.template.spec.containers[3].name
  FieldValueRequired spec.template.spec.volumes[1].name
  FieldValueDuplicate spec.template.spec.volumes[2].name
  FieldValueNotSupported spec.template.spec.restartPolicy
job:
  FieldValueRequired spec.template.spec.containers[0].name
  FieldValueRequired spec.template.spec.containers[0].image
  FieldValueInvalid spec.template.spec.containers[1].name
  FieldValueInvalid spec.template.spec.containers[1].ports[1].containerPort
  FieldValueDuplicate spec.template.spec.containers[2].name
  FieldValueDuplicate spec.template.spec.containers[3].name
  FieldValueRequired spec.template.spec.volumes[1].name
  FieldValueDuplicate spec.template.spec.volumes[2].name
  FieldValueNotSupported spec.template.spec.restartPolicy
  FieldValueNotSupported spec.template.spec.restartPolicy
claim:
  FieldValueRequired spec.accessModes
  FieldValueRequired spec.resources[storage]
service:
  FieldValueRequired spec.ports[0].name
  FieldValueInvalid spec.ports[1].name
  FieldValueInvalid spec.ports[1].port
  FieldValueNotSupported spec.ports[1].protocol
  FieldValueDuplicate spec.ports[3].name
  FieldValueInvalid spec.selector
  FieldValueInvalid spec.clusterIP
service without ports:
  FieldValueRequired spec.ports
`
