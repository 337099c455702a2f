package zookeeper

import (
	"context"
	"fmt"
	"hash"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/opcheck/opcheck/model"
	"github.com/opcheck/opcheck/simulator"
)

// EnsembleActor is the actor name of the simulated ZooKeeper ensemble.
const EnsembleActor model.Actor = "zookeeper"

// Ensemble is a simulated ZooKeeper ensemble: the znodes the operator
// writes, with ZooKeeper's data versions. The operator reaches it through
// the client service, so it is reachable only while at least one member pod
// of the cluster is Running and Ready. Each call is a step of the
// controller (simulator.CallExternal): other actors interleave between them
// and a crash can strike before any of them.
//
// Not modelled: quorum loss, sessions and watches, simZnode ACLs; membership
// follows the pods, not ZooKeeper's own reconfiguration protocol.
type Ensemble struct {
	world  *simulator.World
	znodes map[string]*simZnode
}

type simZnode struct {
	data    string
	version int32
}

// NewEnsemble returns an empty ensemble living in world w.
func NewEnsemble(w *simulator.World) *Ensemble {
	return &Ensemble{world: w, znodes: map[string]*simZnode{}}
}

// Name implements simulator.Actor.
func (e *Ensemble) Name() model.Actor { return EnsembleActor }

// Steps implements simulator.Actor: the ensemble only answers calls.
func (e *Ensemble) Steps(_ *simulator.World, buf []simulator.Step) []simulator.Step { return buf }

// Data returns a simZnode's data and version.
func (e *Ensemble) Data(path string) (string, int32, bool) {
	z, ok := e.znodes[path]
	if !ok {
		return "", 0, false
	}
	return z.data, z.version, true
}

// reachable reports whether a member of the cluster behind address
// ("<cr>-client.<ns>.svc...") is ready to serve.
func (e *Ensemble) reachable(address string) bool {
	svc, rest, _ := strings.Cut(address, ".")
	ns, _, _ := strings.Cut(rest, ".")
	cr := strings.TrimSuffix(svc, "-client")
	for _, obj := range e.world.PeekList(podProto, ns) {
		pod := obj.(*corev1.Pod)
		if pod.Labels[AppLabel] == cr && simulator.PodServing(pod) {
			return true
		}
	}
	return false
}

// podProto names the Pod kind for PeekList, which reads its type only:
// one shared value, never written, instead of a fresh Pod per call.
var podProto = &corev1.Pod{}

// NewClient returns a client of this ensemble for one reconciler.
func (e *Ensemble) NewClient() ZookeeperClient { return &ensembleClient{e: e} }

type ensembleClient struct {
	e         *Ensemble
	connected bool
}

func (c *ensembleClient) Connect(ctx context.Context, address string) error {
	return simulator.CallExternal(ctx, EnsembleActor, "Connect "+address, func() (string, error) {
		if !c.e.reachable(address) {
			return "", fmt.Errorf("zookeeper: no member behind %s is ready: connection refused", address)
		}
		c.connected = true
		return "", nil
	})
}

func (c *ensembleClient) session() error {
	if !c.connected {
		return fmt.Errorf("zookeeper: not connected (call Connect first)")
	}
	return nil
}

func (c *ensembleClient) CreateNode(ctx context.Context, path, data string) error {
	return simulator.CallExternal(ctx, EnsembleActor, "CreateNode "+path+" "+strconv.Quote(data), func() (string, error) {
		if err := c.session(); err != nil {
			return "", err
		}
		if _, ok := c.e.znodes[path]; ok {
			return "", fmt.Errorf("%s: %w", path, ErrNodeExists)
		}
		// Parents are created empty, as the operator's helper does.
		for i := 1; i < len(path); i++ {
			if path[i] == '/' {
				if _, ok := c.e.znodes[path[:i]]; !ok {
					c.e.znodes[path[:i]] = &simZnode{}
				}
			}
		}
		c.e.znodes[path] = &simZnode{data: data}
		return "version=0", nil
	})
}

func (c *ensembleClient) NodeExists(ctx context.Context, path string) (int32, error) {
	var version int32
	err := simulator.CallExternal(ctx, EnsembleActor, "NodeExists "+path, func() (string, error) {
		if err := c.session(); err != nil {
			return "", err
		}
		z, ok := c.e.znodes[path]
		if !ok {
			return "", fmt.Errorf("%s: %w", path, ErrNoNode)
		}
		version = z.version
		return "version=" + strconv.Itoa(int(z.version)), nil
	})
	return version, err
}

func (c *ensembleClient) UpdateNode(ctx context.Context, path, data string, version int32) error {
	return simulator.CallExternal(ctx, EnsembleActor, "UpdateNode "+path+" "+strconv.Quote(data)+" version="+strconv.Itoa(int(version)), func() (string, error) {
		if err := c.session(); err != nil {
			return "", err
		}
		z, ok := c.e.znodes[path]
		if !ok {
			return "", fmt.Errorf("%s: %w", path, ErrNoNode)
		}
		if z.version != version {
			return "", fmt.Errorf("%s at version %d, not %d: %w", path, z.version, version, ErrBadVersion)
		}
		z.data = data
		z.version++
		return "version=" + strconv.Itoa(int(z.version)), nil
	})
}

func (c *ensembleClient) Close() { c.connected = false }

// HashState implements simulator.Hasher: the znodes in path order.
func (e *Ensemble) HashState(h hash.Hash64) {
	paths := make([]string, 0, len(e.znodes))
	for p := range e.znodes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		z := e.znodes[p]
		fmt.Fprintf(h, "%s=%q@%d;", p, z.data, z.version)
	}
}

// ForkState implements simulator.Forkable: a copy of the znodes.
func (e *Ensemble) ForkState() any { return copyZnodes(e.znodes) }

// ResumeState implements simulator.Forkable.
func (e *Ensemble) ResumeState(state any) { e.znodes = copyZnodes(state.(map[string]*simZnode)) }

// copyZnodes copies the znodes, each one too: UpdateNode changes a znode
// in place.
func copyZnodes(znodes map[string]*simZnode) map[string]*simZnode {
	out := make(map[string]*simZnode, len(znodes))
	for p, z := range znodes {
		c := *z
		out[p] = &c
	}
	return out
}
