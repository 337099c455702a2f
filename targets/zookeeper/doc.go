// Package zookeeper is opcheck's case study of the pravega zookeeper-operator:
// the ZookeeperCluster CRD (zookeeper.pravega.io/v1beta1) and a re-written
// reconciler that makes the same API calls, in the same order and under the
// same conditions, as the upstream operator's reconcile path, in three
// variants (see Variant):
//
//   - Buggy: the logic the stale-read bug was reported against. A CR read
//     from a lagging apiserver (spec.replicas == status.readyReplicas == 1
//     while the truth is 2) makes cleanupOrphanPVCs delete a live member's
//     PVC and the statefulset step scale the StatefulSet back down.
//   - UpstreamFix: the merged fix. The StatefulSet carries the label
//     owner-rv=<resourceVersion of the newest CR that wrote it>; a CR older
//     than the label gets StalenessError before any ZooKeeper or StatefulSet
//     write. The orphan-PVC cleanup, which runs earlier, is not guarded.
//   - Fixed: UpstreamFix plus a guarded orphan-PVC cleanup; the comment on
//     cleanupOrphanPVCsGuarded argues why the guard is complete.
//
// What it models: the reconcile of a ZookeeperCluster against a
// controller-runtime client.Client (finalizer and PVC cleanup, ConfigMap,
// StatefulSet with its volumeClaimTemplate "data", the client, headless and
// admin-server Services, the PodDisruptionBudget, the cluster status), and
// the operator's writes to the ensemble (the CLUSTER_SIZE znode) through the
// small ZookeeperClient interface, one new client per connection. Condition
// timestamps come from Options.Now, the run's logical clock.
//
// What it does not model: the simulated ensemble itself, the scenarios and
// the watches that trigger reconciles (they belong to the simulation wiring
// that drives this reconciler); the content of the members' configuration
// beyond what a scale changes; upstream's upgrade timeout handling (the
// upgrade step only tracks the Upgrading condition and status.currentImage,
// and ends, as upstream's does, with the CR status write); metrics, events
// and leader election. Two choices where the upstream behaviour is not
// pinned down by targets.md: the meta-root znode counts as created when it
// already exists (so a crash between its creation and the status write does
// not wedge the operator), and a NodeExists error other than ErrNoNode stops
// the scale instead of being treated as "missing". The Fixed variant guards
// only the scale-down cleanup; the deletion path (delete every PVC of a CR
// being deleted) is unguarded in every variant, which matters only if a CR
// is deleted and recreated under the same name while a cache still shows the
// old one.
package zookeeper
