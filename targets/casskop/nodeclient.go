package casskop

import "context"

// Operation modes a Cassandra node reports through its agent.
const (
	ModeNormal         = "NORMAL"
	ModeLeaving        = "LEAVING"
	ModeDecommissioned = "DECOMMISSIONED"
	ModeUnknown        = "UNKNOWN"
)

// NodeClient is how the operator talks to one Cassandra node's agent (Jolokia
// over HTTP upstream). Every method takes the reconcile's ctx: the simulator
// uses it to make each call a scheduling point. A node whose pod is gone
// answers with an error.
type NodeClient interface {
	// OperationMode reports the node's mode: NORMAL, LEAVING,
	// DECOMMISSIONED or UNKNOWN.
	OperationMode(ctx context.Context, namespace, pod string) (string, error)
	// Decommission starts a decommission and returns; the node moves to
	// LEAVING and then DECOMMISSIONED on its own, later.
	Decommission(ctx context.Context, namespace, pod string) error
	// HostIDMap maps each ring member's address to its Cassandra host ID,
	// as the node sees the ring.
	HostIDMap(ctx context.Context, namespace, pod string) (map[string]string, error)
}
