// Package kuberay checks KubeRay's real RayCluster controller
// (github.com/ray-project/kuberay/ray-operator v1.5.0, package
// controllers/ray), imported as a module and run unmodified.
//
// What is here: the wiring (Controller builds the reconciler with KubeRay's
// own ray.NewReconciler and registers it with KubeRay's own
// SetupWithManager, against opcheck's simulator.Manager, with the options
// KubeRay's main builds from its default configuration), the scheme (the
// module's apis/ray/v1 types), the workloads a RayCluster user runs and the
// properties a RayCluster user cares about. Nothing of KubeRay's reconcile
// logic is re-implemented: pod names, labels, services, scale decisions,
// expectations and status all come from KubeRay's code.
//
// What it models: one RayCluster with a head group and one worker group,
// the built-in kubelet (pods become Running, then Ready) and garbage
// collector (pods and services of a deleted cluster go), crashes, a stale
// apiserver, dropped watch events and pod evictions.
//
// What it does not model: the Ray autoscaler (replicas and workersToDelete
// are written by the workload, as a user or the autoscaler would), GCS fault
// tolerance and its Redis cleanup job, ingress/route, batch schedulers other
// than the default, multi-host worker groups, metrics. KubeRay reads the
// wall clock (time.Now) for status timestamps and for its 30 s
// scale-expectation timeout; opcheck's clock is logical and cannot redirect
// it, so those timestamps are wall time and that timeout never expires
// within a run (docs/case-studies.md, KubeRay).
package kuberay
