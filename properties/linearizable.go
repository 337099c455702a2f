package properties

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/opcheck/opcheck/model"
)

// DefaultLinearizabilityTimeout bounds how long porcupine may search one
// partition (one object) before CheckLinearizable reports Unknown for it.
const DefaultLinearizabilityTimeout = 10 * time.Second

// StaleRead is a read that no linearizable store could have returned: when it
// ran, the store had already committed a different resourceVersion for the
// object (or had removed it, or not yet created it).
type StaleRead struct {
	Step  int
	Actor model.Actor
	Op    model.Op // Get or List
	// Key is "Kind namespace/name" of the object read.
	Key    string
	Server int // the apiserver that served the read
	// ReadRev is the revision of the watch cache that served the read,
	// HeadRev the store head when it ran.
	ReadRev, HeadRev model.Revision
	// SawRV is the resourceVersion the read returned (0 = absent: NotFound,
	// which a List cannot say); CommittedRV the object's resourceVersion
	// at HeadRev (0 = absent).
	SawRV, CommittedRV model.Revision
}

// String renders the read as one line, e.g. "step 57: controller/zk Get
// ZookeeperCluster default/zk saw rv=7 but rv=12 was committed (apiserver-2,
// cache at rev 9, head at rev 14)".
func (r StaleRead) String() string {
	return fmt.Sprintf("step %d: %s %s %s saw %s but %s was committed (%s, cache at rev %d, head at rev %d)",
		r.Step, r.Actor, r.Op, r.Key, rvText(r.SawRV), rvText(r.CommittedRV), apiserverName(r.Server), r.ReadRev, r.HeadRev)
}

func rvText(rv model.Revision) string {
	if rv == 0 {
		return "absent"
	}
	return "rv=" + rv.String()
}

// PartitionResult is porcupine's verdict on one object's operations.
type PartitionResult struct {
	Key    string // "Kind namespace/name"
	Result porcupine.CheckResult
	Ops    int // operations checked: reads of the chosen actors and every committed write
}

// LinearizabilityResult is the outcome of CheckLinearizable.
type LinearizabilityResult struct {
	// Result is porcupine's verdict over all objects: Illegal if any
	// partition is Illegal, else Unknown if any timed out, else Ok.
	Result porcupine.CheckResult
	// Partitions holds one verdict per object, sorted by Key.
	Partitions []PartitionResult
	// StaleReads lists every read that returned something other than the
	// committed value, in history order. It is computed by replaying the
	// writes, independently of porcupine: every API call is one step, a
	// point in time, so the replay decides linearizability exactly and
	// StaleReads is non-empty if and only if Result is Illegal (or
	// Unknown after a timeout).
	StaleReads []StaleRead
}

// regOp is the input of one porcupine operation on a per-object register.
type regOp struct {
	write bool
	rv    model.Revision // for a write: the value written
	key   string
	op    model.Op
	step  int
}

// registerModel is a register holding an object's resourceVersion (0 =
// absent). A write sets it; a read must return it.
func registerModel(partitioned bool) porcupine.Model {
	m := porcupine.Model{
		Init: func() interface{} { return model.Revision(0) },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			in := input.(regOp)
			if in.write {
				return true, in.rv
			}
			return output.(model.Revision) == state.(model.Revision), state
		},
		Hash: func(state interface{}) uint64 { return uint64(state.(model.Revision)) },
		DescribeOperation: func(input, output interface{}) string {
			in := input.(regOp)
			if in.write {
				return fmt.Sprintf("%s %s := %s (#%d)", in.op, in.key, rvText(in.rv), in.step)
			}
			return fmt.Sprintf("%s %s -> %s (#%d)", in.op, in.key, rvText(output.(model.Revision)), in.step)
		},
		DescribeState: func(state interface{}) string { return rvText(state.(model.Revision)) },
		DescribeOperationMetadata: func(info interface{}) string {
			if s, ok := info.(string); ok {
				return s
			}
			return ""
		},
	}
	if partitioned {
		m.Partition = func(ops []porcupine.Operation) [][]porcupine.Operation {
			byKey := make(map[string][]porcupine.Operation)
			var keys []string
			for _, op := range ops {
				k := op.Input.(regOp).key
				if _, ok := byKey[k]; !ok {
					keys = append(keys, k)
				}
				byKey[k] = append(byKey[k], op)
			}
			sort.Strings(keys)
			out := make([][]porcupine.Operation, len(keys))
			for i, k := range keys {
				out[i] = byKey[k]
			}
			return out
		}
	}
	return m
}

// registerHistory turns h into porcupine operations per object key (sorted
// keys), and finds the stale reads by replay. With lines, each operation's
// Metadata is its event's Line.
type registerHistory struct {
	keys    []string
	ops     map[string][]porcupine.Operation
	stale   []StaleRead
	clients []model.Actor // client id -> actor
}

func buildRegisterHistory(h *model.History, actorFilter func(model.Actor) bool, lines bool) *registerHistory {
	rh := &registerHistory{ops: make(map[string][]porcupine.Operation)}
	clients := make(map[model.Actor]int)
	committed := make(map[string]model.Revision)
	add := func(e *model.Event, in regOp, out model.Revision) {
		id, ok := clients[e.Actor]
		if !ok {
			id = len(rh.clients)
			clients[e.Actor] = id
			rh.clients = append(rh.clients, e.Actor)
		}
		if _, ok := rh.ops[in.key]; !ok {
			rh.keys = append(rh.keys, in.key)
		}
		op := porcupine.Operation{ClientId: id, Input: in, Output: out, Call: 2 * int64(e.Step), Return: 2*int64(e.Step) + 1}
		if lines {
			op.Metadata = e.Line()
		}
		rh.ops[in.key] = append(rh.ops[in.key], op)
	}
	read := func(e *model.Event, key string, saw model.Revision) {
		add(e, regOp{key: key, op: e.Op, step: e.Step}, saw)
		if c := committed[key]; c != saw {
			rh.stale = append(rh.stale, StaleRead{Step: e.Step, Actor: e.Actor, Op: e.Op, Key: key, Server: e.Server,
				ReadRev: e.ReadRev, HeadRev: e.HeadRev, SawRV: saw, CommittedRV: c})
		}
	}
	for i := range h.Events {
		e := &h.Events[i]
		switch {
		case e.Change != model.ChangeNone:
			key := e.Kind + " " + e.Key()
			rv := e.Rev
			if e.Change == model.ChangeDeleted {
				rv = 0
			}
			add(e, regOp{write: true, rv: rv, key: key, op: e.Op, step: e.Step}, 0)
			committed[key] = rv
		case actorFilter != nil && !actorFilter(e.Actor):
		case e.Op == model.OpGet && e.Err == "" && e.Rev > 0:
			read(e, e.Kind+" "+e.Key(), e.Rev)
		case e.Op == model.OpGet && strings.HasPrefix(e.Err, "NotFound"):
			read(e, e.Kind+" "+e.Key(), 0)
		case e.Op == model.OpList && e.Err == "":
			for _, v := range e.Versions {
				read(e, e.Kind+" "+v.Name, v.Rev)
			}
		}
	}
	sort.Strings(rh.keys)
	return rh
}

// CheckLinearizable checks with porcupine that the reads in h are
// linearizable, object by object, with DefaultLinearizabilityTimeout per
// object. See CheckLinearizableTimeout.
func CheckLinearizable(h *model.History, actorFilter func(model.Actor) bool) LinearizabilityResult {
	return CheckLinearizableTimeout(h, actorFilter, DefaultLinearizabilityTimeout)
}

// CheckLinearizableTimeout checks with porcupine that every object behaves as
// a linearizable register holding its resourceVersion (0 = absent).
//
// The history becomes one porcupine operation per API call, partitioned by
// object ("Kind namespace/name"), with Call = 2*step and Return = 2*step+1:
//   - every event that changed the store (of any actor, whatever the filter:
//     committed writes define the register) writes the new resourceVersion,
//     or 0 for a deletion;
//   - a successful Get by an actor the filter accepts (nil accepts all)
//     reads the resourceVersion it returned (a Get with Rev 0 is skipped);
//     a Get failing with NotFound reads 0;
//   - a successful List reads, for each object it returned, that object's
//     resourceVersion. Objects a List did not return are not checked: a List
//     says nothing about absence here.
//   - failed writes (Conflict and others) and writes that changed nothing
//     are ignored; other failed reads are ignored.
//
// The register starts at 0 for every object, so the history must record the
// creation of every object it reads (the simulator records every write).
//
// Each partition is searched with the given timeout (0: no bound); a
// partition that times out is Unknown, and so is the overall result unless
// another partition is Illegal. Because porcupine measures the timeout with
// the wall clock, only Unknown can differ between runs of the same history.
func CheckLinearizableTimeout(h *model.History, actorFilter func(model.Actor) bool, timeout time.Duration) LinearizabilityResult {
	rh := buildRegisterHistory(h, actorFilter, false)
	m := registerModel(false)
	res := LinearizabilityResult{Result: porcupine.Ok, StaleReads: rh.stale}
	unknown := false
	for _, k := range rh.keys {
		ops := rh.ops[k]
		r := porcupine.CheckOperationsTimeout(m, ops, timeout)
		res.Partitions = append(res.Partitions, PartitionResult{Key: k, Result: r, Ops: len(ops)})
		switch r {
		case porcupine.Illegal:
			res.Result = porcupine.Illegal
		case porcupine.Unknown:
			unknown = true
		}
	}
	if unknown && res.Result != porcupine.Illegal {
		res.Result = porcupine.Unknown
	}
	return res
}

// Linearizable is the safety property "every read of the chosen actors
// returns what the store had committed": CheckLinearizable, run at Finish
// (porcupine wants the whole history). It is violated when porcupine finds
// the history Illegal; the violation is at the first stale read, the
// explanation lists every stale read and Related the steps of the others. An Unknown verdict (timeout) is
// not reported as a violation: call CheckLinearizable to see it.
//
// This is a property of the reads a controller is served, not of the
// controller: controller-runtime's cached client is not linearizable by
// design, so a violation here explains other violations rather than being a
// bug by itself.
func Linearizable(name string, actorFilter func(model.Actor) bool) Property {
	return Property{
		Name:      name,
		Statement: "every read returns the resourceVersion the store had committed when the read ran",
		Kind:      Safety,
		NewMonitor: func() Monitor {
			return wholeHistoryMonitor{monitorFuncs{finish: func(s *State, h *model.History) *Violation {
				res := CheckLinearizable(h, actorFilter)
				if res.Result != porcupine.Illegal {
					return nil
				}
				var b strings.Builder
				illegal := 0
				for _, p := range res.Partitions {
					if p.Result == porcupine.Illegal {
						illegal++
					}
				}
				fmt.Fprintf(&b, "porcupine: %d of %d objects are not linearizable registers; %d stale read(s):\n", illegal, len(res.Partitions), len(res.StaleReads))
				v := &Violation{}
				if len(res.StaleReads) > 0 {
					v.Step = res.StaleReads[0].Step
				} else if n := len(h.Events); n > 0 {
					v.Step = h.Events[n-1].Step
				}
				for i := range h.Events {
					if h.Events[i].Step == v.Step {
						v.Event = h.Events[i]
						break
					}
				}
				for _, r := range res.StaleReads {
					b.WriteString(r.String())
					b.WriteByte('\n')
					if n := len(v.Related); r.Step != v.Step && (n == 0 || v.Related[n-1] != r.Step) {
						v.Related = append(v.Related, r.Step)
					}
				}
				v.Explanation = b.String()
				return v
			}}}
		},
	}
}

// annotatedOps are the events shown as annotations in the visualization.
var annotatedOps = map[model.Op]string{
	model.OpCrash:       "faults",
	model.OpRestart:     "faults",
	model.OpPauseCache:  "faults",
	model.OpResumeCache: "faults",
	model.OpDropEvent:   "faults",
	model.OpExpireWatch: "faults",
	model.OpEvict:       "faults",
	model.OpSettle:      "harness",
	model.OpQuiescent:   "harness",
}

// WriteVisualization writes porcupine's HTML visualization of the register
// history CheckLinearizable checks: one partition per object, one client row
// per actor, each operation described with its object key and its event's
// line. With annotations, fault events (Crash, Restart, PauseCache,
// ResumeCache, DropEvent, Evict) are drawn on a "faults" row and Settle and
// Quiescent on a "harness" row, at their steps.
//
// The check behind it runs with DefaultLinearizabilityTimeout. Porcupine
// orders equally long partial linearizations of an Illegal history as it
// finds them, so the HTML of an Illegal history is not byte-for-byte
// reproducible; its content is.
func WriteVisualization(w io.Writer, h *model.History, actorFilter func(model.Actor) bool, annotations bool) error {
	rh := buildRegisterHistory(h, actorFilter, true)
	var all []porcupine.Operation
	for _, k := range rh.keys {
		all = append(all, rh.ops[k]...)
	}
	m := registerModel(true)
	_, info := porcupine.CheckOperationsVerbose(m, all, DefaultLinearizabilityTimeout)
	if annotations {
		var as []porcupine.Annotation
		for i := range h.Events {
			e := &h.Events[i]
			tag, ok := annotatedOps[e.Op]
			if !ok {
				continue
			}
			desc := string(e.Op)
			if e.Detail != "" && !strings.Contains(e.Detail, "\n") {
				desc += " " + e.Detail
			}
			as = append(as, porcupine.Annotation{
				Tag:         tag,
				Start:       2 * int64(e.Step),
				Description: desc,
				Details:     e.Line() + " (step " + strconv.Itoa(e.Step) + ")",
			})
		}
		info.AddAnnotations(as)
	}
	return porcupine.Visualize(m, info, w)
}
