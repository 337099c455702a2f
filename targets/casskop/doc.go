// Package casskop is opcheck's case study of the casskop Cassandra operator
// (Orange-OpenSource/casskop): the CassandraCluster CRD (db.orange.com,
// v1alpha1) and a re-implementation, written from the description in
// design/targets.md, of the reconcile path that scales a rack down and up.
//
// The bug it carries (casskop issue #370): a reconcile that sees a node
// DECOMMISSIONED sets podLastOperation to Finalizing in memory, scales the
// StatefulSet down in the same reconcile, and writes the status only in a
// deferred function at the end. A crash in between leaves the pod removed and
// Ongoing on record; every later reconcile fails on "Failed to get last pod",
// the PVC is never deleted and later spec changes are never served.
//
// What it models:
//   - Reconcile against controller-runtime's client.Client, in upstream's
//     order of API calls: Get the CR; defaults and the
//     kubernetes.io/pvc-to-delete finalizer, Update, requeue; PDB; a pod
//     state check (HostIDMap on a ready node, errors only logged); per rack
//     in topology order: Get or create the StatefulSet, compute the next
//     status, run the decommission state machine while scaling down, then
//     the headless service and the StatefulSet, one replica per reconcile.
//   - The deferred status write. Its condition is apiequality.Semantic; its
//     write is a full-object Update of the CR, not Status().Update, because
//     upstream's CRD had no status subresource and upstream wrote the whole
//     object: a concurrent spec change makes the status write conflict, and a
//     harness must not register CassandraCluster as having a status
//     subresource. The deferred function also runs while a panic unwinds, so
//     a harness that crashes the controller by panicking must refuse that
//     controller's later client calls.
//   - Three variants: Buggy (upstream at f87c8e05), UpstreamFix (b1a6a14f:
//     Finalizing is written to the CR before the same reconcile scales the
//     StatefulSet), and Fixed (ours: UpstreamFix plus the two crash windows
//     opcheck found in it closed; see reconciler.go's Fixed).
//   - The Cassandra nodes through NodeClient (Jolokia upstream). Upstream
//     starts a decommission from a goroutine; here Decommission is one
//     synchronous call that only starts it, and the simulated node moves
//     NORMAL -> LEAVING -> DECOMMISSIONED in later scheduled steps of its own.
//   - Time only through Options.Now: the 20 s delay before a scale action is
//     declared done, the 120 s retry of a decommission that did not start
//     (read from the pod's operation-start label, formatted in UTC at second
//     precision), and every status timestamp.
//   - Deletion of the CR: with the finalizer, every PVC labelled for the
//     cluster is deleted, then the finalizer is removed.
//
// Simplifications and choices of our own, where targets.md is silent:
//   - Initializing completes when the rack's StatefulSet is ready; a scale
//     action is only detected once it has.
//   - A ScaleUp completes, after the same 20 s delay, when the StatefulSet
//     reports nodesPerRacks replicas, all ready.
//   - Continue is not "in progress": from lastAction Continue a further
//     scale-down (3 -> 1, one node at a time) or a scale back up is detected
//     as a new action; after the delay, Continue with a persisted
//     {decommission, Done} closes the ScaleDown.
//   - In ToDo/Continue, when the StatefulSet already has no more replicas
//     than nodesPerRacks, podLastOperation becomes Done instead of
//     decommissioning the highest remaining ordinal, which the user keeps.
//     This guard keeps Finalizing's "Continue if the StatefulSet is not
//     ready" from decommissioning a node that must stay.
//   - The highest-ordinal pod is <sts>-<spec.replicas-1>, not found by
//     listing pods.
//   - The StatefulSet is compared and updated on replicas only; the service
//     and the PDB are created when missing and never updated.
//   - Cluster-level phase and lastClusterAction are derived from the racks
//     in topology order.
//
// What it knows it does not model: pod operations other than decommission
// (cleanup, rebuild, upgradesstables, remove), resource and image updates
// (ActionUpdateResources is never recorded), rolling restarts, seed lists and
// config maps, multi-DC specifics beyond iterating racks, the operator pod
// name (podLastOperation.operatorName stays empty), Jolokia authentication,
// and the wall clock.
package casskop
