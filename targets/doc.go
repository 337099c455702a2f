// Package targets is the registry of the shipped scenarios: the case
// studies in targets/zookeeper and targets/casskop, each variant a
// scenario named "<operator>/<variant>", and KubeRay's own RayCluster
// controller in targets/kuberay (kuberay/scale, kuberay/lifecycle), in the
// order `explore list` prints them.
//
// What it models: nothing itself; each case study's package says what its
// re-implementation models (the upstream reconcile paths, in our own code)
// or, for kuberay, how the unmodified upstream controller is wired, and
// what it leaves out. It knows only the shipped scenarios: a user's own
// scenario runs from go test with explore.Check.
package targets
