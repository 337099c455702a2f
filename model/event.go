package model

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"k8s.io/apimachinery/pkg/runtime"
)

// Revision is the store's global revision: one counter bumped by every write,
// as etcd's. An object's resourceVersion is the decimal form of the revision
// of its last write.
type Revision int64

// String renders the revision as a resourceVersion.
func (r Revision) String() string { return strconv.FormatInt(int64(r), 10) }

// Actor names who took a step. Actors are plain strings so that scenarios can
// add their own (external systems, extra controllers) without touching model.
type Actor string

// The built-in actors.
const (
	ActorUser          Actor = "user"
	ActorStatefulSet   Actor = "statefulset-controller"
	ActorKubelet       Actor = "kubelet"
	ActorGC            Actor = "garbage-collector"
	ActorPVCProtection Actor = "pvc-protection"
	ActorNamespace     Actor = "namespace-controller"
	ActorClock         Actor = "clock"
	ActorFault         Actor = "fault"
	ActorAPIServer     Actor = "apiserver"
)

// Op is what an event did.
type Op string

// API operations, as a client issues them.
const (
	OpGet          Op = "Get"
	OpList         Op = "List"
	OpCreate       Op = "Create"
	OpUpdate       Op = "Update"
	OpUpdateStatus Op = "UpdateStatus"
	OpPatch        Op = "Patch"
	OpPatchStatus  Op = "PatchStatus"
	OpDelete       Op = "Delete"
	OpDeleteAllOf  Op = "DeleteAllOf"
)

// Controller lifecycle and harness operations.
const (
	OpReconcile     Op = "Reconcile"     // a reconcile started for a request
	OpReconcileDone Op = "ReconcileDone" // it returned (Detail: result, Err: error)
	OpPanic         Op = "Panic"         // the reconciler panicked (Detail: stack)
	OpStepBudget    Op = "StepBudget"    // a reconcile exceeded its API-call budget
	OpDeliver       Op = "Deliver"       // an informer received a watch event
	OpSyncCache     Op = "SyncCache"     // an apiserver's watch cache advanced
	OpTick          Op = "Tick"          // the logical clock advanced
	OpExternal      Op = "External"      // a call to or a step of an external system
	OpWorkload      Op = "Workload"      // a workload step began or its wait was met
	OpSettle        Op = "Settle"        // workload and faults are over; the fair settle phase begins
	OpCaughtUp      Op = "CaughtUp"      // after Settle, every cache and informer reached the store's head once
	OpQuiescent     Op = "Quiescent"     // the settle phase ended: nothing left to do
	OpRecordEvent   Op = "RecordEvent"   // a controller emitted a Kubernetes event (Detail: source, type, reason, message)
)

// Fault operations.
const (
	OpCrash       Op = "Crash"
	OpRestart     Op = "Restart"
	OpPauseCache  Op = "PauseCache"
	OpResumeCache Op = "ResumeCache"
	OpDropEvent   Op = "DropEvent"
	OpExpireWatch Op = "ExpireWatch" // a controller's watch answered 410 Gone: its informer relists
	OpEvict       Op = "Evict"
)

// IsWrite reports whether op is an API call that may change the store.
func (op Op) IsWrite() bool {
	switch op {
	case OpCreate, OpUpdate, OpUpdateStatus, OpPatch, OpPatchStatus, OpDelete, OpDeleteAllOf:
		return true
	}
	return false
}

// IsRead reports whether op is an API read.
func (op Op) IsRead() bool { return op == OpGet || op == OpList }

// ChangeType is what a write did to the store.
type ChangeType uint8

const (
	ChangeNone ChangeType = iota
	ChangeAdded
	ChangeModified
	ChangeDeleted
)

var changeNames = [...]string{"", "added", "modified", "deleted"}

func (c ChangeType) String() string {
	if int(c) < len(changeNames) {
		return changeNames[c]
	}
	return "change" + strconv.Itoa(int(c))
}

// Version names one object as a read saw it.
type Version struct {
	Name string   // namespace/name
	Rev  Revision // its resourceVersion as read
}

// Event is one step of one actor: one line of history. Events of API calls
// carry where the call was served and what it saw; events of writes carry the
// object as the store holds it after the write, so that properties can
// rebuild ground truth at every revision from the history alone.
type Event struct {
	Step  int   // 1-based position in the history
	Time  Time  // logical clock when the step ran
	Actor Actor // who acted

	Op        Op
	Kind      string // object kind, e.g. "PersistentVolumeClaim"
	Namespace string
	Name      string

	// Server is the apiserver that served an API call (1-based; 0 for none).
	Server int
	// ReadRev is, for reads, the revision of the watch cache that served
	// them (equal to HeadRev for quorum reads).
	ReadRev Revision
	// HeadRev is the store's revision when the step ran (before a write).
	HeadRev Revision
	// Rev is, for a write, the revision it committed at; for a Get, the
	// resourceVersion of the object returned.
	Rev Revision
	// Stale marks a read served from a cache that had not yet seen a change
	// the store already held for what was read.
	Stale bool
	// Versions lists what a List returned.
	Versions []Version

	// Err is the error the call returned, "" for none. API errors start
	// with their reason: "Conflict: ...", "NotFound: ...".
	Err string
	// Detail is free text: a write's summary, a reconcile's result, a
	// panic's stack, a fault's target.
	Detail string

	// Change is what the event did to the store.
	Change ChangeType
	// Object is the stored object after a write (for a deletion, its last
	// state). Never mutated after the event is recorded.
	Object runtime.Object `json:"-"`
}

// Key returns "namespace/name" (or "name" for cluster-scoped objects).
func (e *Event) Key() string {
	if e.Namespace == "" || e.Name == "" {
		if e.Name == "" {
			return e.Namespace
		}
		return e.Name
	}
	return e.Namespace + "/" + e.Name
}

// KeyIs reports whether e.Key() == s, without building the key: the
// property monitors compare the request of every reconcile with the one
// they hold.
func (e *Event) KeyIs(s string) bool {
	if e.Namespace == "" || e.Name == "" {
		if e.Name == "" {
			return s == e.Namespace
		}
		return s == e.Name
	}
	n := len(e.Namespace)
	return len(s) == n+1+len(e.Name) && s[:n] == e.Namespace && s[n] == '/' && s[n+1:] == e.Name
}

// Line renders the event as one Go-call-like line, e.g.
//
//	controller/zk Get ZookeeperCluster default/zk -> rv=12 (apiserver-2, cache at rev 9, stale) t=3s #57
//	fault Crash - controller/zk detail="mid-reconcile" -> ok t=4s #58
//
// The grammar is
//
//	ACTOR OP [KIND [KEY]] [detail="…"] -> RESULT [CHANGE] [(apiserver-N[, cache at rev R[, stale]])] t=TIME #STEP
//
// where RESULT is err="…", [NAME@REV …] for a List, rv=REV for other API
// calls, or ok. Detail and Err are Go-quoted (strconv.Quote), so a line
// never contains a line break whatever they hold. ACTOR, KIND, KEY and List
// names are written bare unless they are empty or hold a space, a quote, a
// backslash, a non-printable character (or, for List names, '@', '[' or
// ']'), in which case they are Go-quoted too. A key without a kind is
// written after the placeholder kind "-". Every line is therefore parseable
// back into its fields (see package traces).
//
// Line is deterministic: it is what determinism tests compare and what
// trace files store.
func (e *Event) Line() string {
	var b strings.Builder
	b.Grow(96)
	b.WriteString(lineToken(string(e.Actor), ""))
	b.WriteByte(' ')
	b.WriteString(lineToken(string(e.Op), ""))
	key := e.Key()
	if e.Kind != "" || key != "" {
		b.WriteByte(' ')
		if e.Kind == "" {
			b.WriteByte('-')
		} else {
			b.WriteString(lineToken(e.Kind, ""))
		}
	}
	if key != "" {
		b.WriteByte(' ')
		b.WriteString(lineToken(key, ""))
	}
	if e.Detail != "" {
		b.WriteString(" detail=")
		b.WriteString(strconv.Quote(e.Detail))
	}
	b.WriteString(" ->")
	switch {
	case e.Err != "":
		b.WriteString(" err=")
		b.WriteString(strconv.Quote(e.Err))
	case e.Op == OpList:
		b.WriteString(" [")
		for i, v := range e.Versions {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(lineToken(v.Name, "@[]"))
			b.WriteString("@")
			b.WriteString(v.Rev.String())
		}
		b.WriteString("]")
	case e.Op.IsWrite() || e.Op.IsRead():
		b.WriteString(" rv=")
		b.WriteString(e.Rev.String())
	default:
		b.WriteString(" ok")
	}
	if e.Change != ChangeNone {
		b.WriteByte(' ')
		b.WriteString(e.Change.String())
	}
	if e.Server > 0 {
		b.WriteString(" (apiserver-")
		b.WriteString(strconv.Itoa(e.Server))
		if e.Op.IsRead() {
			b.WriteString(", cache at rev ")
			b.WriteString(e.ReadRev.String())
			if e.Stale {
				b.WriteString(", stale")
			}
		}
		b.WriteByte(')')
	}
	b.WriteString(" t=")
	b.WriteString(e.Time.String())
	b.WriteString(" #")
	b.WriteString(strconv.Itoa(e.Step))
	return b.String()
}

// lineToken returns s bare when it can be read back as one token of a Line,
// else Go-quoted. A token needs quoting when it is empty, is "-" or "->",
// starts a detail (detail=), or holds a space, a quote, a backslash, a
// non-printable rune or one of extra.
func lineToken(s, extra string) string {
	if s == "" || s == "-" || s == "->" || strings.HasPrefix(s, "detail=") {
		return strconv.Quote(s)
	}
	for _, r := range s {
		if r == ' ' || r == '"' || r == '\\' || r == utf8.RuneError || !unicode.IsPrint(r) || strings.ContainsRune(extra, r) {
			return strconv.Quote(s)
		}
	}
	return s
}

// History is the sequence of events of one run.
type History struct {
	Events []Event
}

// Lines renders every event with Line, one per line.
func (h *History) Lines() string {
	var b strings.Builder
	for i := range h.Events {
		b.WriteString(h.Events[i].Line())
		b.WriteByte('\n')
	}
	return b.String()
}
