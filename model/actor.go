package model

import (
	"strconv"
	"strings"
)

// ActorGroup says what kind of actor an Actor is. Actor names follow one
// scheme (the built-in constants, ControllerActor, APIServerActor, and any
// other name for a scenario's external system) and Group is its one reader:
// the explorer, the properties and the viewer ask Group instead of matching
// names. The groups are declared in the order the viewer draws their lanes.
type ActorGroup uint8

const (
	// GroupUser is the workload: the user's kubectl, in effect.
	GroupUser ActorGroup = iota + 1
	// GroupController is a controller under test (ControllerActor).
	GroupController
	// GroupAPIServer is an apiserver (APIServerActor) or ActorAPIServer.
	GroupAPIServer
	// GroupBuiltIn is a built-in controller of the simulated cluster:
	// StatefulSet controller, kubelet, garbage collector, PVC protection.
	GroupBuiltIn
	// GroupExternal is a scenario's external system (a ZooKeeper
	// ensemble, Cassandra nodes): any name of no other group.
	GroupExternal
	// GroupFault injects and heals faults and makes the settle decision.
	GroupFault
	// GroupClock advances the logical clock.
	GroupClock
)

var actorGroupNames = [...]string{
	GroupUser: "user", GroupController: "controller", GroupAPIServer: "apiserver",
	GroupBuiltIn: "builtin", GroupExternal: "external", GroupFault: "fault", GroupClock: "clock",
}

// String is the group's lower-case name, e.g. "controller".
func (g ActorGroup) String() string {
	if int(g) < len(actorGroupNames) && actorGroupNames[g] != "" {
		return actorGroupNames[g]
	}
	return "group" + strconv.Itoa(int(g))
}

const (
	controllerPrefix = "controller/"
	apiserverPrefix  = "apiserver-"
)

// ControllerActor is the actor name of a controller under test.
func ControllerActor(name string) Actor { return Actor(controllerPrefix + name) }

// APIServerActor is the name of apiserver n (1-based), as events and the
// viewer's lanes name it: "apiserver-2".
func APIServerActor(n int) Actor { return Actor(apiserverPrefix + strconv.Itoa(n)) }

// APIServerNumber is the inverse of APIServerActor: n and true for
// "apiserver-n", else false.
func APIServerNumber(a Actor) (int, bool) {
	rest, ok := strings.CutPrefix(string(a), apiserverPrefix)
	if !ok {
		return 0, false
	}
	n, err := strconv.Atoi(rest)
	return n, err == nil && n > 0
}

// IsController reports whether a is a controller under test: Group() ==
// GroupController, without Group's comparisons against every built-in
// name (no built-in actor's name starts with "controller/";
// TestActorGroup checks the two agree). Property monitors ask it of every
// event.
func (a Actor) IsController() bool { return strings.HasPrefix(string(a), controllerPrefix) }

// Group is the actor's group.
func (a Actor) Group() ActorGroup {
	switch a {
	case ActorUser:
		return GroupUser
	case ActorStatefulSet, ActorKubelet, ActorGC, ActorPVCProtection, ActorNamespace:
		return GroupBuiltIn
	case ActorFault:
		return GroupFault
	case ActorClock:
		return GroupClock
	case ActorAPIServer:
		return GroupAPIServer
	}
	if strings.HasPrefix(string(a), controllerPrefix) {
		return GroupController
	}
	if _, ok := APIServerNumber(a); ok {
		return GroupAPIServer
	}
	return GroupExternal
}

// StepClass says what an enabled step of the world does, so that strategies
// and the scheduler can tell steps apart without reading their labels
// (which are for people and for PCT's priorities).
type StepClass uint8

const (
	// StepActor is a built-in or external actor's step (the zero value:
	// actors need not set it).
	StepActor StepClass = iota
	// StepReconcile starts a controller's reconcile or runs it to its
	// next API call.
	StepReconcile
	// StepDeliver delivers a watch event to a controller's informer.
	StepDeliver
	// StepWorkload runs the user's next workload step.
	StepWorkload
	// StepFault injects a fault and spends budget (Step.Fault says which).
	StepFault
	// StepResume resumes a paused watch cache.
	StepResume
	// StepSettle ends the fault phase: caches resume, faults stop.
	StepSettle
	// StepClock advances the logical clock to the next timer.
	StepClock
)

var stepClassNames = [...]string{
	StepActor: "actor", StepReconcile: "reconcile", StepDeliver: "deliver", StepWorkload: "workload",
	StepFault: "fault", StepResume: "resume", StepSettle: "settle", StepClock: "clock",
}

// String is the class's lower-case name, e.g. "deliver".
func (c StepClass) String() string {
	if int(c) < len(stepClassNames) {
		return stepClassNames[c]
	}
	return "class" + strconv.Itoa(int(c))
}
