package zookeeper

import (
	"context"
	"errors"
)

// ZookeeperClient is how the operator talks to the ensemble; every method
// takes the reconcile's ctx (the simulator uses it to make each call a
// scheduling point).
//
// Implementations report a missing znode with an error wrapping ErrNoNode and
// an existing one (on create) with an error wrapping ErrNodeExists; the
// reconciler branches on those two and treats any other error as "the
// ensemble is unreachable or refused", which stops the reconcile.
type ZookeeperClient interface {
	// Connect opens a session to the ensemble behind address, which is
	// ClientServiceAddress(cr, ns). It fails when no member is reachable.
	Connect(ctx context.Context, address string) error
	// CreateNode creates path, and any missing parents, holding data. It
	// fails with ErrNodeExists when path already exists.
	CreateNode(ctx context.Context, path string, data string) error
	// NodeExists returns path's data version, or ErrNoNode when it is missing.
	NodeExists(ctx context.Context, path string) (version int32, err error)
	// UpdateNode sets path's data if its version still equals version, as
	// ZooKeeper's conditional setData does, and fails otherwise.
	UpdateNode(ctx context.Context, path string, data string, version int32) error
	// Close ends the session. It is not an interaction with the ensemble
	// worth scheduling, hence no ctx.
	Close()
}

// Sentinel errors implementations of ZookeeperClient wrap.
var (
	// ErrNoNode: the znode does not exist.
	ErrNoNode = errors.New("zookeeper: node does not exist")
	// ErrNodeExists: the znode to create already exists.
	ErrNodeExists = errors.New("zookeeper: node already exists")
	// ErrBadVersion: a conditional update named a version the znode no
	// longer has.
	ErrBadVersion = errors.New("zookeeper: version conflict")
)
