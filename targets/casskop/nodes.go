package casskop

import (
	"context"
	"fmt"
	"hash"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// NodesActor is the actor name of the simulated Cassandra node agents.
const NodesActor model.Actor = "cassandra"

// Nodes simulates the Cassandra node behind every pod of the cluster, as
// reached through its Jolokia agent: its operation mode, a decommission that
// runs on its own (NORMAL -> LEAVING -> DECOMMISSIONED, each transition a
// scheduled step of this actor), and the ring's host ids. A node is tied to
// its pod's UID: a pod recreated under the same name is a fresh node in
// NORMAL mode. A node whose pod is gone, or not Running, refuses connections.
//
// Not modelled: streaming, token ownership, gossip delays beyond the two
// decommission transitions, nodes that fail to decommission.
type Nodes struct {
	world *simulator.World
	modes map[types.UID]string
	// decommissioning lists pods (by UID) whose decommission was started,
	// in start order, so transitions are enumerated deterministically.
	decommissioning []types.UID
	names           map[types.UID]string // namespace/name, for labels
}

// NewNodes returns the node agents of world w.
func NewNodes(w *simulator.World) *Nodes {
	return &Nodes{world: w, modes: map[types.UID]string{}, names: map[types.UID]string{}}
}

// Name implements simulator.Actor.
func (n *Nodes) Name() model.Actor { return NodesActor }

// Mode returns the mode of the node behind pod uid (NORMAL when never
// touched).
func (n *Nodes) Mode(uid types.UID) string {
	if m, ok := n.modes[uid]; ok {
		return m
	}
	return ModeNormal
}

// Steps implements simulator.Actor: each decommissioning node advances one
// mode per step, while its pod still exists.
func (n *Nodes) Steps(w *simulator.World, buf []simulator.Step) []simulator.Step {
	for _, uid := range n.decommissioning {
		uid := uid
		mode := n.Mode(uid)
		var next string
		switch mode {
		case ModeNormal:
			next = ModeLeaving
		case ModeLeaving:
			next = ModeDecommissioned
		default:
			continue
		}
		buf = append(buf, simulator.Step{Actor: NodesActor, Label: "node " + n.names[uid] + " " + mode + " -> " + next, Run: func() {
			n.modes[uid] = next
			n.world.Record(model.Event{Actor: NodesActor, Op: model.OpExternal, Kind: "CassandraNode", Name: n.names[uid], Detail: mode + " -> " + next, HeadRev: n.world.Store.Revision()})
		}})
	}
	return buf
}

// pod returns the running pod behind a node address.
func (n *Nodes) pod(namespace, name string) (*corev1.Pod, error) {
	obj, ok := n.world.Peek(podProto, namespace, name)
	if !ok {
		return nil, fmt.Errorf("jolokia %s/%s: dial tcp: lookup %s: no such host", namespace, name, name)
	}
	pod := obj.(*corev1.Pod)
	if pod.Status.Phase != corev1.PodRunning || pod.DeletionTimestamp != nil {
		return nil, fmt.Errorf("jolokia %s/%s: connection refused (pod is %s)", namespace, name, pod.Status.Phase)
	}
	return pod, nil
}

// podProto names the kind for Peek and PeekList, which read its type
// only: one shared value, never written, instead of a fresh Pod (a
// kilobyte) at every call of a node agent (7% of a schedule's bytes).
var podProto = &corev1.Pod{}

// Client returns the NodeClient the operator uses.
func (n *Nodes) Client() NodeClient { return nodeClient{n} }

type nodeClient struct{ n *Nodes }

func (c nodeClient) OperationMode(ctx context.Context, namespace, pod string) (string, error) {
	var mode string
	err := simulator.CallExternal(ctx, NodesActor, "OperationMode "+namespace+"/"+pod, func() (string, error) {
		p, err := c.n.pod(namespace, pod)
		if err != nil {
			return "", err
		}
		mode = c.n.Mode(p.UID)
		return mode, nil
	})
	return mode, err
}

func (c nodeClient) Decommission(ctx context.Context, namespace, pod string) error {
	return simulator.CallExternal(ctx, NodesActor, "Decommission "+namespace+"/"+pod, func() (string, error) {
		p, err := c.n.pod(namespace, pod)
		if err != nil {
			return "", err
		}
		if c.n.Mode(p.UID) != ModeNormal {
			return "", fmt.Errorf("jolokia %s/%s: decommission refused: node is %s", namespace, pod, c.n.Mode(p.UID))
		}
		if !slices.Contains(c.n.decommissioning, p.UID) {
			c.n.decommissioning = append(c.n.decommissioning, p.UID)
			c.n.names[p.UID] = namespace + "/" + pod
		}
		return "started", nil
	})
}

func (c nodeClient) HostIDMap(ctx context.Context, namespace, pod string) (map[string]string, error) {
	out := map[string]string{}
	err := simulator.CallExternal(ctx, NodesActor, "HostIdMap "+namespace+"/"+pod, func() (string, error) {
		if _, err := c.n.pod(namespace, pod); err != nil {
			return "", err
		}
		for _, obj := range c.n.world.PeekList(podProto, namespace) {
			p := obj.(*corev1.Pod)
			if p.Status.PodIP != "" && c.n.Mode(p.UID) != ModeDecommissioned {
				out[p.Status.PodIP] = string(p.UID)
			}
		}
		return fmt.Sprintf("%d hosts", len(out)), nil
	})
	return out, err
}

// HashState implements simulator.Hasher: each node's mode and whether its
// decommission started, in start order.
func (n *Nodes) HashState(h hash.Hash64) {
	uids := make([]string, 0, len(n.modes))
	for uid := range n.modes {
		uids = append(uids, string(uid))
	}
	slices.Sort(uids)
	for _, uid := range uids {
		fmt.Fprintf(h, "%s=%s;", uid, n.modes[types.UID(uid)])
	}
	for _, uid := range n.decommissioning {
		fmt.Fprintf(h, "d:%s;", uid)
	}
}

// nodesState is what Nodes.ForkState copies.
type nodesState struct {
	modes           map[types.UID]string
	decommissioning []types.UID
	names           map[types.UID]string
}

// ForkState implements simulator.Forkable: a copy of the nodes' modes,
// the decommissions started and the names.
func (n *Nodes) ForkState() any {
	return nodesState{modes: maps.Clone(n.modes), decommissioning: slices.Clone(n.decommissioning), names: maps.Clone(n.names)}
}

// ResumeState implements simulator.Forkable.
func (n *Nodes) ResumeState(state any) {
	s := state.(nodesState)
	n.modes, n.decommissioning, n.names = maps.Clone(s.modes), slices.Clone(s.decommissioning), maps.Clone(s.names)
}
