package simulator

import (
	"maps"
	"reflect"
	"slices"
	"sync"
	"unsafe"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/api/validation/path"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Validation as the apiserver's registry strategies do it, answered with 422
// Invalid and a field.ErrorList. Object metadata is checked with
// apimachinery's own validators (k8s.io/apimachinery/pkg/api/validation);
// the spec rules of the built-in kinds live in k8s.io/kubernetes, which
// opcheck does not import, so the handful that controllers run into are
// written here: a pod needs containers with names and images, a workload's
// selector must select its template, a claim needs access modes and a
// size, a service's ports must be valid, and the immutable fields of
// StatefulSets, Deployments, Jobs, claims, pods, Secrets and immutable
// ConfigMaps stay as they were. Everything else of a spec is accepted as
// sent; docs/fidelity.md says so.

var (
	metadataPath = field.NewPath("metadata")
	specPath     = field.NewPath("spec")
	// The paths every validation of their part names, built once: a
	// validator takes its path before it knows of any error, and errors
	// render their path into a string, so sharing one is safe.
	labelsPath             = metadataPath.Child("labels")
	annotationsPath        = metadataPath.Child("annotations")
	ownerReferencesPath    = metadataPath.Child("ownerReferences")
	finalizersPath         = metadataPath.Child("finalizers")
	specSelectorPath       = specPath.Child("selector")
	specTemplatePath       = specPath.Child("template")
	specTemplateLabelsPath = specTemplatePath.Child("metadata", "labels")
	specTemplateSpecPath   = specTemplatePath.Child("spec")
)

// nameValidator returns the name rule of kind gk: a Namespace name is a
// DNS-1123 label, a Service name a DNS-1035 label, RBAC names path
// segments, every other kind (custom resources included) a DNS-1123
// subdomain.
func nameValidator(gk schema.GroupKind) apivalidation.ValidateNameFunc {
	switch {
	case gk.Group == "" && gk.Kind == "Namespace":
		return apivalidation.NameIsDNSLabel
	case gk.Group == "" && gk.Kind == "Service":
		return apivalidation.NameIsDNS1035Label
	case gk.Group == "rbac.authorization.k8s.io":
		return path.ValidatePathSegmentName
	}
	return apivalidation.NameIsDNSSubdomain
}

func invalid(k *kindInfo, obj client.Object, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(k.gk, obj.GetName(), errs)
}

// validateCreate checks a new object (name already generated): what
// apimachinery's ValidateObjectMetaAccessor checks, part by part, skipping
// the parts the object leaves empty (each part's validator allocates its
// field paths even then, and this is the explorer's hot path), then the
// kind's spec rules.
func validateCreate(k *kindInfo, obj client.Object) error {
	var errs field.ErrorList
	if g := obj.GetGenerateName(); g != "" {
		for _, msg := range k.nameFn(g, true) {
			errs = append(errs, field.Invalid(metadataPath.Child("generateName"), g, msg))
		}
	}
	if name := obj.GetName(); name == "" {
		errs = append(errs, field.Required(metadataPath.Child("name"), "name or generateName is required"))
	} else {
		for _, msg := range k.nameFn(name, false) {
			errs = append(errs, field.Invalid(metadataPath.Child("name"), name, msg))
		}
	}
	if ns := obj.GetNamespace(); k.namespaced {
		for _, msg := range apivalidation.ValidateNamespaceName(ns, false) {
			errs = append(errs, field.Invalid(metadataPath.Child("namespace"), ns, msg))
		}
	} else if ns != "" {
		errs = append(errs, field.Forbidden(metadataPath.Child("namespace"), "not allowed on this type"))
	}
	if l := obj.GetLabels(); len(l) > 0 {
		errs = append(errs, validateLabels(l, labelsPath)...)
	}
	if a := obj.GetAnnotations(); len(a) > 0 {
		errs = append(errs, apivalidation.ValidateAnnotations(a, annotationsPath)...)
	}
	if refs := obj.GetOwnerReferences(); len(refs) > 0 {
		errs = append(errs, apivalidation.ValidateOwnerReferences(refs, ownerReferencesPath)...)
	}
	if f := obj.GetFinalizers(); len(f) > 0 {
		errs = append(errs, apivalidation.ValidateFinalizers(f, finalizersPath)...)
	}
	errs = append(errs, validateSpec(obj)...)
	return invalid(k, obj, errs)
}

// validateUpdate checks an update of old to obj: metadata rules (names,
// labels, annotations, owner references, finalizers, immutable identity
// and deletionTimestamp), the kind's spec rules and its immutable fields.
// The stored object passed them all, so what the update left as it was
// (metaSame: the metadata; specSame: every field but metadata and status)
// is not checked again: that keeps the explorer's hot write path cheap.
func validateUpdate(k *kindInfo, obj, old client.Object, metaSame, specSame bool) error {
	var errs field.ErrorList
	if !metaSame {
		errs = validateMetaUpdate(obj, old)
	}
	if !specSame {
		errs = append(errs, validateSpec(obj)...)
		errs = append(errs, validateImmutable(obj, old)...)
	}
	return invalid(k, obj, errs)
}

// validateMetaUpdate is apimachinery's ValidateObjectMetaAccessorUpdate
// plus finalizer names, run per part and only on the parts the update
// changed (the store already fixed name, namespace, UID, creation time,
// generation and resourceVersion to the stored ones).
func validateMetaUpdate(obj, old client.Object) field.ErrorList {
	var errs field.ErrorList
	if dt, was := obj.GetDeletionTimestamp(), old.GetDeletionTimestamp(); !dt.Equal(was) {
		errs = append(errs, apivalidation.ValidateImmutableField(dt, was, metadataPath.Child("deletionTimestamp"))...)
	}
	if g, was := obj.GetDeletionGracePeriodSeconds(), old.GetDeletionGracePeriodSeconds(); (g == nil) != (was == nil) || g != nil && *g != *was {
		errs = append(errs, apivalidation.ValidateImmutableField(g, was, metadataPath.Child("deletionGracePeriodSeconds"))...)
	}
	if !maps.Equal(obj.GetLabels(), old.GetLabels()) {
		errs = append(errs, validateLabels(obj.GetLabels(), labelsPath)...)
	}
	if !maps.Equal(obj.GetAnnotations(), old.GetAnnotations()) {
		errs = append(errs, apivalidation.ValidateAnnotations(obj.GetAnnotations(), annotationsPath)...)
	}
	if refs, oldRefs := obj.GetOwnerReferences(), old.GetOwnerReferences(); !sameValue(&refs, &oldRefs) {
		errs = append(errs, apivalidation.ValidateOwnerReferences(refs, ownerReferencesPath)...)
	}
	if f := obj.GetFinalizers(); !slices.Equal(f, old.GetFinalizers()) {
		errs = append(errs, apivalidation.ValidateFinalizers(f, finalizersPath)...)
		if old.GetDeletionTimestamp() != nil {
			errs = append(errs, apivalidation.ValidateNoNewFinalizers(f, old.GetFinalizers(), finalizersPath)...)
		}
	}
	return errs
}

// validateSpec is the spec rules of the built-in kinds controllers write.
func validateSpec(obj client.Object) field.ErrorList {
	spec := specPath
	switch o := obj.(type) {
	case *corev1.Pod:
		return validatePodSpec(&o.Spec, spec, false)
	case *appsv1.StatefulSet:
		errs := validateReplicas(o.Spec.Replicas, spec)
		errs = append(errs, validateTemplate(o.Spec.Selector, &o.Spec.Template, true)...)
		switch o.Spec.PodManagementPolicy {
		case "", appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement:
		default:
			errs = append(errs, field.NotSupported(spec.Child("podManagementPolicy"), o.Spec.PodManagementPolicy, []appsv1.PodManagementPolicyType{appsv1.OrderedReadyPodManagement, appsv1.ParallelPodManagement}))
		}
		for i := range o.Spec.VolumeClaimTemplates {
			t := &o.Spec.VolumeClaimTemplates[i]
			p := func() *field.Path { return spec.Child("volumeClaimTemplates").Index(i) }
			for _, msg := range validation.IsDNS1123Subdomain(t.Name) {
				errs = append(errs, field.Invalid(p().Child("metadata", "name"), t.Name, msg))
			}
			errs = append(errs, validateClaimSpec(&t.Spec, func() *field.Path { return p().Child("spec") })...)
		}
		return errs
	case *appsv1.Deployment:
		errs := validateReplicas(o.Spec.Replicas, spec)
		return append(errs, validateTemplate(o.Spec.Selector, &o.Spec.Template, true)...)
	case *appsv1.ReplicaSet:
		errs := validateReplicas(o.Spec.Replicas, spec)
		return append(errs, validateTemplate(o.Spec.Selector, &o.Spec.Template, true)...)
	case *appsv1.DaemonSet:
		return validateTemplate(o.Spec.Selector, &o.Spec.Template, true)
	case *batchv1.Job:
		errs := validatePodSpec(&o.Spec.Template.Spec, specTemplateSpecPath, false)
		if rp := o.Spec.Template.Spec.RestartPolicy; rp != corev1.RestartPolicyOnFailure && rp != corev1.RestartPolicyNever {
			errs = append(errs, field.NotSupported(spec.Child("template", "spec", "restartPolicy"), rp, []corev1.RestartPolicy{corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}))
		}
		return errs
	case *corev1.PersistentVolumeClaim:
		return validateClaimSpec(&o.Spec, func() *field.Path { return spec })
	case *corev1.Service:
		return validateServiceSpec(&o.Spec, spec)
	}
	return nil
}

func validateReplicas(r *int32, spec *field.Path) field.ErrorList {
	if r != nil && *r < 0 {
		return field.ErrorList{field.Invalid(spec.Child("replicas"), *r, "must be greater than or equal to 0")}
	}
	return nil
}

// validateTemplate: an apps/v1 workload's selector is required, not empty,
// valid, and selects the template's labels; the template is a valid pod
// whose restartPolicy is Always.
func validateTemplate(sel *metav1.LabelSelector, tpl *corev1.PodTemplateSpec, alwaysRestart bool) field.ErrorList {
	var errs field.ErrorList
	selPath := specSelectorPath
	if sel == nil {
		errs = append(errs, field.Required(selPath, ""))
	} else {
		errs = append(errs, metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, selPath)...)
		if len(sel.MatchLabels)+len(sel.MatchExpressions) == 0 {
			errs = append(errs, field.Invalid(selPath, sel, "empty selector is invalid for this kind"))
		}
	}
	errs = append(errs, validateLabels(tpl.Labels, specTemplateLabelsPath)...)
	if sel != nil && len(errs) == 0 {
		if s, err := metav1.LabelSelectorAsSelector(sel); err == nil && !s.Matches(labels.Set(tpl.Labels)) {
			errs = append(errs, field.Invalid(specTemplateLabelsPath, tpl.Labels, "`selector` does not match template `labels`"))
		}
	}
	errs = append(errs, validatePodSpec(&tpl.Spec, specTemplateSpecPath, alwaysRestart)...)
	return errs
}

var restartPolicies = []corev1.RestartPolicy{corev1.RestartPolicyAlways, corev1.RestartPolicyOnFailure, corev1.RestartPolicyNever}

// validatePodSpec: at least one container; containers and init containers
// have unique DNS-1123 label names and an image; ports are valid; volumes
// have unique names; restartPolicy is known (Always in a workload
// template).
func validatePodSpec(s *corev1.PodSpec, p *field.Path, alwaysRestart bool) field.ErrorList {
	var errs field.ErrorList
	if len(s.Containers) == 0 {
		errs = append(errs, field.Required(p.Child("containers"), "a pod needs at least one container"))
	}
	seen := map[string]bool{}
	check := func(cs []corev1.Container, list string) {
		for i := range cs {
			c := &cs[i]
			ip := func() *field.Path { return p.Child(list).Index(i) } // on an error only
			switch {
			case c.Name == "":
				errs = append(errs, field.Required(ip().Child("name"), ""))
			case seen[c.Name]:
				errs = append(errs, field.Duplicate(ip().Child("name"), c.Name))
			default:
				for _, msg := range validation.IsDNS1123Label(c.Name) {
					errs = append(errs, field.Invalid(ip().Child("name"), c.Name, msg))
				}
			}
			seen[c.Name] = true
			if c.Image == "" {
				errs = append(errs, field.Required(ip().Child("image"), ""))
			}
			for j, port := range c.Ports {
				for _, msg := range validation.IsValidPortNum(int(port.ContainerPort)) {
					errs = append(errs, field.Invalid(ip().Child("ports").Index(j).Child("containerPort"), port.ContainerPort, msg))
				}
			}
		}
	}
	check(s.InitContainers, "initContainers")
	check(s.Containers, "containers")
	volumes := map[string]bool{}
	for i, v := range s.Volumes {
		vp := func() *field.Path { return p.Child("volumes").Index(i).Child("name") } // on an error only
		if v.Name == "" {
			errs = append(errs, field.Required(vp(), ""))
		} else if volumes[v.Name] {
			errs = append(errs, field.Duplicate(vp(), v.Name))
		}
		volumes[v.Name] = true
	}
	switch {
	case alwaysRestart && s.RestartPolicy != corev1.RestartPolicyAlways:
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), s.RestartPolicy, []corev1.RestartPolicy{corev1.RestartPolicyAlways}))
	case !slices.Contains(restartPolicies, s.RestartPolicy):
		errs = append(errs, field.NotSupported(p.Child("restartPolicy"), s.RestartPolicy, restartPolicies))
	}
	return errs
}

// validateClaimSpec: access modes and a storage request are required.
func validateClaimSpec(s *corev1.PersistentVolumeClaimSpec, p func() *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(s.AccessModes) == 0 {
		errs = append(errs, field.Required(p().Child("accessModes"), "at least 1 access mode is required"))
	}
	if _, ok := s.Resources.Requests[corev1.ResourceStorage]; !ok {
		errs = append(errs, field.Required(p().Child("resources").Key(string(corev1.ResourceStorage)), ""))
	}
	return errs
}

// validateServiceSpec: ports in range, named when there are several, with
// unique names and known protocols; headless only for ClusterIP.
func validateServiceSpec(s *corev1.ServiceSpec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Type != corev1.ServiceTypeExternalName && len(s.Ports) == 0 && s.ClusterIP != corev1.ClusterIPNone {
		errs = append(errs, field.Required(p.Child("ports"), ""))
	}
	names := map[string]bool{}
	for i, port := range s.Ports {
		pp := func() *field.Path { return p.Child("ports").Index(i) } // on an error only
		if len(s.Ports) > 1 && port.Name == "" {
			errs = append(errs, field.Required(pp().Child("name"), "when there is more than one port, every port needs a name"))
		} else if port.Name != "" {
			if names[port.Name] {
				errs = append(errs, field.Duplicate(pp().Child("name"), port.Name))
			}
			for _, msg := range validation.IsDNS1123Label(port.Name) {
				errs = append(errs, field.Invalid(pp().Child("name"), port.Name, msg))
			}
		}
		names[port.Name] = true
		for _, msg := range validation.IsValidPortNum(int(port.Port)) {
			errs = append(errs, field.Invalid(pp().Child("port"), port.Port, msg))
		}
		switch port.Protocol {
		case corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP:
		default:
			errs = append(errs, field.NotSupported(pp().Child("protocol"), port.Protocol, []corev1.Protocol{corev1.ProtocolTCP, corev1.ProtocolUDP, corev1.ProtocolSCTP}))
		}
	}
	selector := specSelectorPath
	if p != specPath {
		selector = p.Child("selector")
	}
	errs = append(errs, validateLabels(s.Selector, selector)...)
	if s.ClusterIP == corev1.ClusterIPNone && s.Type != corev1.ServiceTypeClusterIP {
		errs = append(errs, field.Invalid(p.Child("clusterIP"), s.ClusterIP, "may not be set to 'None' for "+string(s.Type)+" services"))
	}
	return errs
}

const immutableMsg = apivalidation.FieldImmutableErrorMsg

// validateImmutable checks the fields an update may not change.
func validateImmutable(obj, old client.Object) field.ErrorList {
	spec := specPath
	switch o := obj.(type) {
	case *appsv1.StatefulSet:
		// Only replicas, ordinals, template, updateStrategy,
		// revisionHistoryLimit, persistentVolumeClaimRetentionPolicy and
		// minReadySeconds may change.
		was := old.(*appsv1.StatefulSet).Spec // a shallow copy: only its top-level fields are reassigned
		was.Replicas, was.Ordinals, was.Template, was.UpdateStrategy = o.Spec.Replicas, o.Spec.Ordinals, o.Spec.Template, o.Spec.UpdateStrategy
		was.RevisionHistoryLimit, was.PersistentVolumeClaimRetentionPolicy, was.MinReadySeconds = o.Spec.RevisionHistoryLimit, o.Spec.PersistentVolumeClaimRetentionPolicy, o.Spec.MinReadySeconds
		if !sameValue(&was, &o.Spec) {
			return field.ErrorList{field.Forbidden(spec, "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden (selector, serviceName, podManagementPolicy and volumeClaimTemplates are immutable: delete and recreate the StatefulSet to change them)")}
		}
	case *corev1.Service:
		// The allocated cluster IP stays (an update that leaves it out
		// keeps it: see defaultService).
		if was := old.(*corev1.Service).Spec.ClusterIP; was != "" && o.Spec.Type != corev1.ServiceTypeExternalName {
			return apivalidation.ValidateImmutableField(o.Spec.ClusterIP, was, spec.Child("clusterIP"))
		}
	case *appsv1.Deployment:
		return apivalidation.ValidateImmutableField(o.Spec.Selector, old.(*appsv1.Deployment).Spec.Selector, spec.Child("selector"))
	case *batchv1.Job:
		was := old.(*batchv1.Job)
		errs := apivalidation.ValidateImmutableField(o.Spec.Selector, was.Spec.Selector, spec.Child("selector"))
		return append(errs, apivalidation.ValidateImmutableField(o.Spec.Template, was.Spec.Template, spec.Child("template"))...)
	case *corev1.PersistentVolumeClaim:
		// Immutable after creation, except that volumeName may be set once
		// and a bound claim's requests may change (expansion).
		prev := old.(*corev1.PersistentVolumeClaim)
		was := prev.Spec // shallow: only fields of the copy are reassigned
		if was.VolumeName == "" {
			was.VolumeName = o.Spec.VolumeName
		}
		if prev.Status.Phase == corev1.ClaimBound {
			was.Resources.Requests = o.Spec.Resources.Requests
			was.VolumeAttributesClassName = o.Spec.VolumeAttributesClassName
		}
		if !sameValue(&was, &o.Spec) {
			return field.ErrorList{field.Forbidden(spec, "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims")}
		}
	case *corev1.Pod:
		return validatePodUpdate(&o.Spec, &old.(*corev1.Pod).Spec, spec)
	case *corev1.Secret:
		was := old.(*corev1.Secret)
		errs := apivalidation.ValidateImmutableField(o.Type, was.Type, field.NewPath("type"))
		if was.Immutable != nil && *was.Immutable {
			errs = append(errs, immutableData(o.Immutable, o.Data, was.Data, nil, nil)...)
		}
		return errs
	case *corev1.ConfigMap:
		was := old.(*corev1.ConfigMap)
		if was.Immutable != nil && *was.Immutable {
			return immutableData(o.Immutable, o.Data, was.Data, o.BinaryData, was.BinaryData)
		}
	}
	return nil
}

// immutableData: a ConfigMap or Secret marked immutable keeps its data and
// stays immutable.
func immutableData[D any](immutable *bool, data, oldData D, bin, oldBin map[string][]byte) field.ErrorList {
	var errs field.ErrorList
	if immutable == nil || !*immutable {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if !equality.Semantic.DeepEqual(data, oldData) {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	if !equality.Semantic.DeepEqual(bin, oldBin) {
		errs = append(errs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
	}
	return errs
}

// validatePodUpdate: a pod's spec is immutable except container and init
// container images, activeDeadlineSeconds, added tolerations and removed
// scheduling gates.
func validatePodUpdate(s, old *corev1.PodSpec, p *field.Path) field.ErrorList {
	// A shallow copy; the container lists are cloned before their images
	// are overwritten, so the stored pod is never changed.
	was := *old
	if len(was.Containers) == len(s.Containers) {
		was.Containers = slices.Clone(was.Containers)
		for i := range was.Containers {
			was.Containers[i].Image = s.Containers[i].Image
		}
	}
	if len(was.InitContainers) == len(s.InitContainers) {
		was.InitContainers = slices.Clone(was.InitContainers)
		for i := range was.InitContainers {
			was.InitContainers[i].Image = s.InitContainers[i].Image
		}
	}
	was.ActiveDeadlineSeconds = s.ActiveDeadlineSeconds
	if containsAll(s.Tolerations, old.Tolerations) {
		was.Tolerations = s.Tolerations
	}
	if containsAll(old.SchedulingGates, s.SchedulingGates) {
		was.SchedulingGates = s.SchedulingGates
	}
	if !sameValue(&was, s) {
		return field.ErrorList{field.Forbidden(p, "pod updates may not change fields other than `spec.containers[*].image`, `spec.initContainers[*].image`, `spec.activeDeadlineSeconds`, `spec.tolerations` (only additions to existing tolerations) and `spec.schedulingGates` (only removals)")}
	}
	return nil
}

// sameValue compares semantically, trying reflect.DeepEqual's answer first
// (with T's equalFunc, which is faster still: see deepequal.go): what it
// finds equal is semantically equal too; then T's differFunc, which settles
// most differences without the semantic comparison (see fieldEqual).
func sameValue[T any](a, b *T) bool {
	if deepEqual(a, b) {
		return true
	}
	if differ := semanticDifferOf(reflect.TypeFor[T]()); differ != nil && differ(unsafe.Pointer(a), unsafe.Pointer(b), 0) {
		return false
	}
	return equality.Semantic.DeepEqual(a, b)
}

func containsAll[T any](have, want []T) bool {
	for i := range want {
		if !slices.ContainsFunc(have, func(h T) bool { return equality.Semantic.DeepEqual(h, want[i]) }) {
			return false
		}
	}
	return true
}

// validLabelParts remembers the label keys and values apimachinery's
// ValidateLabels found valid. Its answer for a set of labels is its
// answers for each key and each value, one by one (ValidateLabelName,
// IsValidLabelValue), so a set whose every key and value was found valid
// before is valid, and is not checked again: every create and update of
// an object with labels asks, with the same few labels each time. Bounded,
// shared by every world of the process.
var validLabelParts struct {
	sync.RWMutex
	keys, values map[string]struct{}
}

// maxValidLabelParts bounds each of validLabelParts' sets.
const maxValidLabelParts = 4096

// validateLabels is metav1validation.ValidateLabels(l, path), which it
// skips when every key and value of l was found valid before.
func validateLabels(l map[string]string, path *field.Path) field.ErrorList {
	if len(l) == 0 {
		return nil
	}
	if labelsKnownValid(l) {
		return nil
	}
	errs := metav1validation.ValidateLabels(l, path)
	if len(errs) == 0 {
		v := &validLabelParts
		v.Lock()
		if v.keys == nil {
			v.keys, v.values = map[string]struct{}{}, map[string]struct{}{}
		}
		for k, val := range l {
			if len(v.keys) < maxValidLabelParts {
				v.keys[k] = struct{}{}
			}
			if len(v.values) < maxValidLabelParts {
				v.values[val] = struct{}{}
			}
		}
		v.Unlock()
	}
	return errs
}

func labelsKnownValid(l map[string]string) bool {
	v := &validLabelParts
	v.RLock()
	defer v.RUnlock()
	for k, val := range l {
		if _, ok := v.keys[k]; !ok {
			return false
		}
		if _, ok := v.values[val]; !ok {
			return false
		}
	}
	return true
}
