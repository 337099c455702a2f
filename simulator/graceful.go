package simulator

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// podDeleteGrace is the grace period of a pod deletion starting now, as the
// apiserver's pod strategy decides it: the delete option, else the pod's
// spec.terminationGracePeriodSeconds, else 30 s; but 0 (delete at once) for
// a pod no node runs (never scheduled, spec.nodeName empty) or that has
// already terminated (phase Succeeded or Failed): no kubelet would confirm.
func podDeleteGrace(obj client.Object, option *int64) int64 {
	if p, ok := obj.(*corev1.Pod); ok {
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			return 0
		}
	}
	if option != nil {
		if *option < 0 {
			return 0
		}
		return *option
	}
	if g := podSpecGrace(obj); g != nil {
		return *g
	}
	return DefaultPodGracePeriodSeconds
}

// shortenPodGrace applies a second delete's grace period to a pod already
// terminating: it can only shorten the period, and the deletionTimestamp
// moves with it (the deletion's start plus the new period). A period of 0
// is the kubelet's confirmation, or a force delete.
func shortenPodGrace(obj, old client.Object, grace int64) {
	if grace < 0 {
		grace = 0
	}
	cur := old.GetDeletionGracePeriodSeconds()
	if cur == nil || grace >= *cur {
		return
	}
	obj.SetDeletionGracePeriodSeconds(&grace)
	if dt := old.GetDeletionTimestamp(); dt != nil {
		at := metav1.NewTime(dt.Add(time.Duration(grace-*cur) * time.Second))
		obj.SetDeletionTimestamp(&at)
	}
}

// graceEnds is the logical time a terminating pod's grace period ends: its
// deletionTimestamp on the logical clock.
func graceEnds(p *corev1.Pod) model.Time {
	return model.FromDuration(p.DeletionTimestamp.Sub(model.Epoch))
}
