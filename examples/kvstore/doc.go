// Package kvstore is a small, realistic operator written to show how to
// check your own controller with opcheck; it is not one of the case studies.
//
// A KVStore (group example.opcheck.dev, version v1alpha1) asks for
// spec.replicas members with spec.storage of disk each. The reconciler, an
// ordinary controller-runtime reconciler over client.Client, creates a
// headless Service and a StatefulSet with the volumeClaimTemplate "data",
// scales the StatefulSet to spec.replicas, reports status.readyReplicas and
// status.phase, and after a scale-down deletes the PVCs of the removed
// members (data-<name>-<i> for i >= spec.replicas), so that a later scale-up
// starts those members empty instead of with stale data.
//
// Two variants: Correct guards the PVC deletion against stale reads;
// Broken deletes by comparing the ordinal with the KVStore's spec.replicas
// only, which deletes the disks of live members when the KVStore copy it
// reads is stale. kvstore_test.go is the walk-through docs/user-guide.md
// follows: it proves Correct within its budget and shows opcheck catching
// Broken.
package kvstore
