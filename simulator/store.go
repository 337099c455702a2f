package simulator

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/opcheck/opcheck/model"
)

// Finalizers the store itself understands.
const (
	FinalizerForeground = metav1.FinalizerDeleteDependents // "foregroundDeletion"
	FinalizerOrphan     = metav1.FinalizerOrphanDependents // "orphan"
	// FinalizerPVCProtection keeps a claim in use by a pod from going away.
	FinalizerPVCProtection = "kubernetes.io/pvc-protection"
)

// DefaultPodGracePeriodSeconds is used when a pod deletion names no grace
// period and the pod spec has none.
const DefaultPodGracePeriodSeconds = 30

// Change is one write the store committed: one revision of its history.
// Object is the object as stored after the write (for a deletion, its last
// state, carrying the deletion's revision as resourceVersion). Objects held
// by the store are never mutated; readers get deep copies.
type Change struct {
	Rev    model.Revision
	Type   model.ChangeType
	Kind   *kindInfo
	Key    string // namespace/name, or name for cluster-scoped kinds
	Object client.Object
}

// KindName is the object kind of the change, e.g. "Pod".
func (c *Change) KindName() string { return c.Kind.gvk.Kind }

// kindData is the store's table for one kind.
type kindData struct {
	info    *kindInfo
	objects map[string]client.Object
	changes []*Change // every change of this kind, in revision order
}

// Store is an etcd-like store: one global revision bumped by every write, the
// latest object per key, and the full history of every change. It
// implements the apiserver's registry semantics (validation, resourceVersion
// preconditions, generation, status subresource, finalizers, graceful
// deletion) because every write in a real cluster meets them at the same
// linearization point, whichever apiserver it went through.
type Store struct {
	kinds   *kindRegistry
	crds    crdSchemas // StoreOptions.CRDs' schemas, for defaulting
	tables  map[*kindInfo]*kindData
	rev     model.Revision
	history []*Change
	clock   *model.Clock

	uidSeq  uint64
	nameSeq uint64
	// namespaces are the declared namespaces (see StoreOptions.Namespaces).
	namespaces map[string]bool
	// ipSeq and portSeq allocate service cluster IPs and node ports.
	ipSeq   uint64
	portSeq uint64

	// dryRun makes commit answer without storing: set for the duration of
	// one dry-run request (see DryRun).
	dryRun bool
	// slowWrites turns the write fast paths off; poisonDropped zeroes the
	// request of every write whose answer is dropped (see writePaths).
	slowWrites, poisonDropped bool
}

// The ways writes can go (see writePaths).
const (
	writesFast          int32 = iota // the fast paths
	writesSlow                       // none of them
	writesPoisonDropped              // the fast paths, dropped answers' requests zeroed
)

// writePaths, read when a store is built, is how its writes go. With
// writesSlow they take no fast path: no spare answer for a no-op update,
// no shortcut for a no-op status write, and built-in actors' answers
// copied back like anyone's. With writesPoisonDropped a write whose answer
// a built-in actor drops zeroes the actor's request once the call
// returns, so that an actor reading its request again would change its
// run. Only the tests that compare the fast paths with the slow ones set
// it.
var writePaths atomic.Int32

// DryRun runs one write with dryRun=All: it is validated and answered as
// the real write would be, and nothing is stored (no revision, no history,
// no counters advanced), as the apiserver's dry-run storage does.
func (s *Store) DryRun(write func()) {
	uid, name, ip, port := s.uidSeq, s.nameSeq, s.ipSeq, s.portSeq
	s.dryRun = true
	defer func() { s.dryRun, s.uidSeq, s.nameSeq, s.ipSeq, s.portSeq = false, uid, name, ip, port }()
	write()
}

// NewStore returns an empty store at revision 0 over the scheme's kinds.
func NewStore(scheme *runtime.Scheme, clock *model.Clock, opts StoreOptions) *Store {
	return newStore(scheme, clock, opts, nil)
}

// newStore is NewStore with the kinds of kinds (a checkpoint's, see
// kindRegistry.clone) when it is not nil.
func newStore(scheme *runtime.Scheme, clock *model.Clock, opts StoreOptions, kinds *kindRegistry) *Store {
	if clock == nil {
		clock = &model.Clock{}
	}
	if kinds == nil {
		kinds = newKindRegistry(scheme, opts.ClusterScoped, opts.NoStatusSubresource)
	}
	s := &Store{
		kinds:  kinds,
		tables: map[*kindInfo]*kindData{},
		clock:  clock,
	}
	switch writePaths.Load() {
	case writesSlow:
		s.slowWrites = true
	case writesPoisonDropped:
		s.poisonDropped = true
	}
	for _, ns := range append(slices.Clone(builtinNamespaces), opts.Namespaces...) {
		s.declareNamespace(ns)
	}
	crds, err := newCRDSchemas(opts.CRDs)
	if err != nil {
		panic(fmt.Errorf("simulator: %w", err))
	}
	s.crds = crds
	return s
}

// StoreOptions tunes the store's knowledge of kinds.
type StoreOptions struct {
	// ClusterScoped lists CRD kinds that are cluster-scoped (built-in ones
	// are known).
	ClusterScoped []schema.GroupKind
	// NoStatusSubresource lists kinds with a Status field whose API has no
	// status subresource (CRDs without `subresources: status`).
	NoStatusSubresource []schema.GroupKind
	// Namespaces are declared to exist (besides default, kube-system,
	// kube-public and kube-node-lease, and the namespaces of seeded
	// objects) without Namespace objects: a create elsewhere is 404 unless
	// a Namespace object was created first (namespaces.go).
	Namespaces []string
	// CRDs are the CustomResourceDefinitions of the scenario's custom
	// kinds: the store defaults objects of their served versions from
	// their OpenAPI schemas on every create and update, as the apiserver
	// does (crd.go). A kind without a CRD here is stored as sent. The
	// CRDs must not change once a store used them (their schemas are
	// built once and shared).
	CRDs []*apiextensionsv1.CustomResourceDefinition
}

// Revision returns the store's current (head) revision.
func (s *Store) Revision() model.Revision { return s.rev }

// History returns every change in revision order. The slice must not be
// modified.
func (s *Store) History() []*Change { return s.history }

// Clock returns the logical clock the store stamps objects with.
func (s *Store) Clock() *model.Clock { return s.clock }

// Scheme returns the scheme the store resolves kinds with.
func (s *Store) Scheme() *runtime.Scheme { return s.kinds.scheme }

func (s *Store) table(k *kindInfo) *kindData {
	t := s.tables[k]
	if t == nil {
		t = &kindData{info: k, objects: map[string]client.Object{}}
		s.tables[k] = t
	}
	return t
}

func objectKey(k *kindInfo, namespace, name string) string {
	if !k.namespaced {
		return name
	}
	return namespace + "/" + name
}

// commit records one change at the next revision. obj is owned by the store
// from here on.
func (s *Store) commit(k *kindInfo, key string, typ model.ChangeType, obj client.Object) *Change {
	if s.dryRun {
		// The answer of a dry-run write: the object as it would be stored,
		// with the resourceVersion it had (none, for a create).
		return &Change{Type: typ, Kind: k, Key: key, Object: obj}
	}
	s.rev++
	obj.SetResourceVersion(s.rev.String())
	c := &Change{Rev: s.rev, Type: typ, Kind: k, Key: key, Object: obj}
	s.history = append(s.history, c)
	t := s.table(k)
	t.changes = append(t.changes, c)
	if typ == model.ChangeDeleted {
		delete(t.objects, key)
	} else {
		t.objects[key] = obj
	}
	return c
}

// copyObject deep-copies a stored object for a caller.
func copyObject(obj client.Object) client.Object { return obj.DeepCopyObject().(client.Object) }

// setTypeMeta stamps apiVersion and kind, so stored objects (and history
// events) always say what they are.
func setTypeMeta(k *kindInfo, obj client.Object) {
	obj.GetObjectKind().SetGroupVersionKind(k.gvk)
}

func (s *Store) newUID() types.UID {
	s.uidSeq++
	return uidOf(s.uidSeq)
}

// uidPrefix starts every UID: a version-4 UUID's layout, counted in its
// last group.
const uidPrefix = "00000000-0000-4000-8000-"

// uidOf is the UID of the n-th object created: uidPrefix and n in at least
// 12 digits, zero-padded (fmt's %012d, without fmt on the create path).
func uidOf(n uint64) types.UID {
	var digits [20]byte
	d := strconv.AppendUint(digits[:0], n, 10)
	b := make([]byte, 0, len(uidPrefix)+max(12, len(d)))
	b = append(b, uidPrefix...)
	for i := len(d); i < 12; i++ {
		b = append(b, '0')
	}
	return types.UID(append(b, d...))
}

// nameSuffixAlphabet is the alphabet the apiserver uses for generateName
// suffixes (no vowels, no look-alike digits); the suffix itself comes from a
// counter so names are identical across runs.
const nameSuffixAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// generateNameAttempts is how many names the apiserver tries for one
// create with generateName before it answers AlreadyExists.
const generateNameAttempts = 8

// maxGeneratedNameLength is the longest generateName prefix kept: the
// apiserver cuts the prefix so that prefix + 5-character suffix fits in 63
// characters (a DNS-1123 label).
const maxGeneratedNameLength = validation.DNS1123LabelMaxLength - 5

// generateName is the apiserver's name generator with a counter in place of
// its random suffix.
func (s *Store) generateName(prefix string) string {
	if len(prefix) > maxGeneratedNameLength {
		prefix = prefix[:maxGeneratedNameLength]
	}
	return prefix + s.generateSuffix()
}

func (s *Store) generateSuffix() string {
	s.nameSeq++
	n := s.nameSeq
	var b [5]byte
	for i := len(b) - 1; i >= 0; i-- {
		b[i] = nameSuffixAlphabet[n%uint64(len(nameSuffixAlphabet))]
		n /= uint64(len(nameSuffixAlphabet))
	}
	return string(b[:])
}

func (s *Store) now() metav1.Time { return metav1.NewTime(s.clock.Wall()) }

// Get returns a deep copy of the latest object at key (a quorum read).
func (s *Store) Get(k *kindInfo, namespace, name string) (client.Object, error) {
	obj, ok := s.table(k).objects[objectKey(k, namespace, name)]
	if !ok {
		return nil, apierrors.NewNotFound(k.gr, name)
	}
	return copyObject(obj), nil
}

// peek returns the stored object itself, not a copy: for the simulator's own
// read-only use.
func (s *Store) peek(k *kindInfo, key string) (client.Object, bool) {
	obj, ok := s.table(k).objects[key]
	return obj, ok
}

// ListOptions selects objects in a list.
type ListOptions struct {
	Namespace string
	Labels    labels.Selector
	Fields    fields.Selector
	// keys are the keys of what the last selectSorted over these options
	// returned, in its order: a List records them (its event's Versions)
	// instead of building each object's key again. selectSorted reuses
	// the array.
	keys []string
	// objs is the array selectSorted returned last, handed back for it to
	// reuse: set only by a caller that drops what the selection returned
	// before it selects again (a client's List).
	objs []client.Object
}

// matches reports whether obj passes the namespace, label and field
// selectors. Only metadata.name and metadata.namespace field selectors exist
// here; validateFieldSelector refuses the others up front.
func (o *ListOptions) matches(obj client.Object) bool {
	if o.Namespace != "" && obj.GetNamespace() != o.Namespace {
		return false
	}
	if o.Labels != nil && !o.Labels.Empty() && !o.Labels.Matches(labels.Set(obj.GetLabels())) {
		return false
	}
	if o.Fields != nil && !o.Fields.Empty() && !o.Fields.Matches(fields.Set{"metadata.name": obj.GetName(), "metadata.namespace": obj.GetNamespace()}) {
		return false
	}
	return true
}

func validateFieldSelector(sel fields.Selector) error {
	if sel == nil {
		return nil
	}
	for _, r := range sel.Requirements() {
		if r.Field != "metadata.name" && r.Field != "metadata.namespace" {
			return apierrors.NewBadRequest(fmt.Sprintf("field label not supported: %s (opcheck serves field selectors on metadata.name and metadata.namespace only; filter in your code or use a label)", r.Field))
		}
	}
	return nil
}

// selectSorted filters objects and sorts them by key, so every list is in
// the same order on every run (etcd returns lists in key order too).
func selectSorted(objects map[string]client.Object, o *ListOptions) []client.Object {
	keys := o.keys[:0] // a client's List hands its array of the last List
	if cap(keys) < len(objects) {
		keys = make([]string, 0, len(objects))
	}
	for key, obj := range objects {
		if o.matches(obj) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	out := o.objs[:0]
	if cap(out) < len(keys) {
		out = make([]client.Object, 0, len(keys))
	}
	for _, key := range keys {
		out = append(out, objects[key])
	}
	o.keys, o.objs = keys, out
	return out
}

// snapshot returns the kind's objects (not copies) as they were at revision
// rev, rebuilt from the kind's history (the store never compacts).
func (s *Store) snapshot(k *kindInfo, rev model.Revision) map[string]client.Object {
	out := map[string]client.Object{}
	for _, c := range s.table(k).changes {
		if c.Rev > rev {
			break
		}
		if c.Type == model.ChangeDeleted {
			delete(out, c.Key)
		} else {
			out[c.Key] = c.Object
		}
	}
	return out
}

// List returns the stored objects (not copies) matching o at the head, in
// key order.
func (s *Store) list(k *kindInfo, o *ListOptions) ([]client.Object, error) {
	if err := validateFieldSelector(o.Fields); err != nil {
		return nil, err
	}
	return selectSorted(s.table(k).objects, o), nil
}

// missingNamespace is the 422 of a namespaced write without a namespace.
func missingNamespace(k *kindInfo, obj client.Object) error {
	return apierrors.NewInvalid(k.gk, obj.GetName(), field.ErrorList{field.Required(field.NewPath("metadata", "namespace"), "namespaced kinds need a namespace (set it on the object or use client.InNamespace)")})
}

// Create stores a new object: name from generateName if needed, UID,
// creationTimestamp, generation 1, resourceVersion. For kinds with a status
// subresource the status of the request is dropped, as the apiserver does.
func (s *Store) Create(obj client.Object) (*Change, error) {
	k, err := s.kinds.forObject(obj)
	if err != nil {
		return nil, err
	}
	return s.create(k, obj, false)
}

// Seed stores an object as given, status included: for a scenario's initial
// objects, which a real cluster would have reached through many writes.
func (s *Store) Seed(obj client.Object) (*Change, error) {
	k, err := s.kinds.forObject(obj)
	if err != nil {
		return nil, err
	}
	return s.create(k, obj, true)
}

func (s *Store) create(k *kindInfo, in client.Object, keepStatus bool) (*Change, error) {
	if in.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	obj := copyObject(in)
	setTypeMeta(k, obj)
	if !k.namespaced {
		obj.SetNamespace("")
	}
	generated := obj.GetName() == "" && obj.GetGenerateName() != ""
	if generated {
		obj.SetName(s.generateName(obj.GetGenerateName()))
	}
	if k.namespaced && obj.GetNamespace() == "" {
		return nil, missingNamespace(k, obj)
	}
	if k.namespaced {
		if keepStatus {
			// A seeded object's namespace existed before the run.
			if _, ok := s.namespaceObject(obj.GetNamespace()); !ok {
				s.declareNamespace(obj.GetNamespace())
			}
		} else if err := s.admitNamespace(k, obj); err != nil {
			return nil, err
		}
	}
	if k.hasStatus && !keepStatus {
		zeroStatus(k, obj)
	}
	if isNamespaceKind(k) {
		prepareNamespace(obj.(*corev1.Namespace))
	}
	s.applyDefaults(obj, nil)
	if err := s.applyCRDDefaults(k, obj); err != nil {
		return nil, apierrors.NewInternalError(err)
	}
	if isPodKind(k) {
		if p := obj.(*corev1.Pod); p.Status.Phase == "" {
			p.Status.Phase = corev1.PodPending
		}
	}
	if err := validateCreate(k, obj); err != nil {
		return nil, err
	}
	key := objectKey(k, obj.GetNamespace(), obj.GetName())
	for attempt := 1; ; attempt++ {
		if _, exists := s.table(k).objects[key]; !exists {
			break
		}
		if !generated || attempt == generateNameAttempts {
			return nil, apierrors.NewAlreadyExists(k.gr, obj.GetName())
		}
		// The apiserver retries a create whose generated name is taken
		// with a fresh suffix (RetryGenerateName, 8 attempts in all).
		obj.SetName(s.generateName(obj.GetGenerateName()))
		key = objectKey(k, obj.GetNamespace(), obj.GetName())
	}
	if isPVCKind(k) && !keepStatus && !slices.Contains(obj.GetFinalizers(), FinalizerPVCProtection) {
		// The StorageObjectInUseProtection admission plugin adds the
		// finalizer to every new claim; the pvc-protection actor removes it
		// once no pod uses the claim.
		obj.SetFinalizers(append(obj.GetFinalizers(), FinalizerPVCProtection))
	}
	obj.SetUID(s.newUID())
	obj.SetCreationTimestamp(s.now())
	obj.SetGeneration(0)
	if k.generation {
		obj.SetGeneration(1)
	}
	obj.SetDeletionTimestamp(nil)
	obj.SetDeletionGracePeriodSeconds(nil)
	obj.SetManagedFields(nil)
	return s.commit(k, key, model.ChangeAdded, obj), nil
}

func zeroStatus(k *kindInfo, obj client.Object) {
	f := reflect.ValueOf(obj).Elem().Field(k.statusField)
	f.Set(reflect.Zero(f.Type()))
}

func copyStatus(k *kindInfo, dst, src client.Object) {
	reflect.ValueOf(dst).Elem().Field(k.statusField).Set(reflect.ValueOf(src).Elem().Field(k.statusField))
}

// specEqual compares every top-level field but metadata and status: a change
// there is a spec change and bumps metadata.generation. identical reports
// more: every such field is equal as reflect.DeepEqual says, not only
// semantically (found on the way, without a second walk).
func specEqual(k *kindInfo, a, b client.Object) (equal, identical bool) {
	identical = true
	for _, i := range k.specFields {
		eq, same := fieldCompare(k, a, b, i)
		if !eq {
			return false, false
		}
		identical = identical && same
	}
	return true, identical
}

// fieldEqual compares top-level struct field i of two objects of kind k
// semantically. It tries the field's equalFunc first (reflect.DeepEqual's
// answer, read in place: see deepequal.go): what it finds equal is
// semantically equal too. When it finds a difference, the field's
// differFunc (semdiffer.go) looks for one the semantic comparison would see
// as well (a changed string or number, a length); only when it finds none
// (nil against empty, quantities written differently) does the semantic
// comparison, several times slower, decide.
func fieldEqual(k *kindInfo, a, b client.Object, i int) bool {
	eq, _ := fieldCompare(k, a, b, i)
	return eq
}

// fieldCompare is fieldEqual that also reports whether the two fields are
// identical: equal as reflect.DeepEqual says (which implies equal).
func fieldCompare(k *kindInfo, a, b client.Object, i int) (equal, identical bool) {
	f := &k.fields[i]
	pa := unsafe.Add(reflect.ValueOf(a).UnsafePointer(), f.offset)
	pb := unsafe.Add(reflect.ValueOf(b).UnsafePointer(), f.offset)
	if equalAt(f.equal, pa, pb) {
		return true, true
	}
	if f.differ != nil && f.differ(pa, pb, 0) {
		return false, false
	}
	return equality.Semantic.DeepEqual(reflect.NewAt(f.typ, pa).Interface(), reflect.NewAt(f.typ, pb).Interface()), false
}

// fieldSame reports whether top-level field i of a and b (two objects of
// kind k) are equal as reflect.DeepEqual says: the same values, not only
// semantically equal ones.
func (k *kindInfo) fieldSame(a, b client.Object, i int) bool {
	f := &k.fields[i]
	return equalAt(f.equal, unsafe.Add(reflect.ValueOf(a).UnsafePointer(), f.offset), unsafe.Add(reflect.ValueOf(b).UnsafePointer(), f.offset))
}

// metaEqual compares object metadata semantically (nil and empty maps and
// slices are equal, timestamps compare as instants), field by field through
// the accessors: the cheap part of the no-op-write check.
func metaEqual(a, b client.Object) bool {
	if a.GetName() != b.GetName() || a.GetGenerateName() != b.GetGenerateName() || a.GetNamespace() != b.GetNamespace() ||
		a.GetSelfLink() != b.GetSelfLink() || a.GetUID() != b.GetUID() || a.GetResourceVersion() != b.GetResourceVersion() ||
		a.GetGeneration() != b.GetGeneration() {
		return false
	}
	ca, cb := a.GetCreationTimestamp(), b.GetCreationTimestamp()
	if !ca.Equal(&cb) || !a.GetDeletionTimestamp().Equal(b.GetDeletionTimestamp()) {
		return false
	}
	ga, gb := a.GetDeletionGracePeriodSeconds(), b.GetDeletionGracePeriodSeconds()
	if (ga == nil) != (gb == nil) || (ga != nil && *ga != *gb) {
		return false
	}
	if !maps.Equal(a.GetLabels(), b.GetLabels()) || !maps.Equal(a.GetAnnotations(), b.GetAnnotations()) ||
		!slices.Equal(a.GetFinalizers(), b.GetFinalizers()) {
		return false
	}
	if !ownerRefsEqual(a.GetOwnerReferences(), b.GetOwnerReferences()) {
		return false
	}
	ma, mb := a.GetManagedFields(), b.GetManagedFields()
	return len(ma) == len(mb) && (len(ma) == 0 || equality.Semantic.DeepEqual(ma, mb))
}

// ownerRefsEqual compares owner references semantically: field by field,
// the pointers by what they point to. An OwnerReference holds strings and
// *bool only, so that is reflect.DeepEqual's answer and the semantic
// comparison's, without the allocations of passing the slices on.
func ownerRefsEqual(a, b []metav1.OwnerReference) bool {
	if len(a) != len(b) {
		return false
	}
	boolsEqual := func(x, y *bool) bool { return x == y || x != nil && y != nil && *x == *y }
	for i := range a {
		x, y := &a[i], &b[i]
		if x.APIVersion != y.APIVersion || x.Kind != y.Kind || x.Name != y.Name || x.UID != y.UID ||
			!boolsEqual(x.Controller, y.Controller) || !boolsEqual(x.BlockOwnerDeletion, y.BlockOwnerDeletion) {
			return false
		}
	}
	return true
}

// isBuiltin reports whether the kind is a Kubernetes built-in (k8s.io/api);
// those allow unconditional updates, custom resources do not.
func (k *kindInfo) isBuiltin() bool { return strings.HasPrefix(k.typ.PkgPath(), "k8s.io/api/") }

func conflict(k *kindInfo, name, why string) error {
	return apierrors.NewConflict(k.gr, name, errors.New(why))
}

const conflictModified = "the object has been modified; please apply your changes to the latest version and try again"

// checkPreconditions applies the resourceVersion and UID preconditions of
// an update.
func (s *Store) checkPreconditions(k *kindInfo, in, old client.Object) error {
	rv := in.GetResourceVersion()
	if rv == "" {
		if !k.isBuiltin() {
			return apierrors.NewInvalid(k.gk, in.GetName(), field.ErrorList{field.Invalid(field.NewPath("metadata", "resourceVersion"), "", "must be specified for an update (read the object first and update what you read)")})
		}
	} else if rv != old.GetResourceVersion() {
		if _, err := strconv.ParseUint(rv, 10, 64); err != nil {
			return apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q: want the decimal resourceVersion of an object you read", rv))
		}
		return conflict(k, in.GetName(), conflictModified)
	}
	if uid := in.GetUID(); uid != "" && uid != old.GetUID() {
		return conflict(k, in.GetName(), fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, old.GetUID()))
	}
	return nil
}

// Update writes the main resource: spec and metadata. The stored status is
// kept for kinds with a status subresource; generation is bumped on spec
// changes; an update that changes nothing is not a write (no new revision),
// as in a real apiserver. Removing the last finalizer of an object being
// deleted deletes it.
func (s *Store) Update(in client.Object) (*Change, client.Object, error) {
	ch, stored, _, err := s.update(in, false)
	return ch, stored, err
}

// update is Update that, when the caller wants the stored result
// (wantAnswer), may also return spare: an object equal to stored as
// reflect.DeepEqual says, apart from its TypeMeta, that shares no memory
// with the store, with in, or with anything else, so a client may hand it
// to its caller in place of a deep copy of stored (see spareOf and
// answerOf). spare is nil whenever that is not certain.
func (s *Store) update(in client.Object, wantAnswer bool) (ch *Change, stored, spare client.Object, err error) {
	k, err := s.kinds.forObject(in)
	if err != nil {
		return nil, nil, nil, err
	}
	if k.namespaced && in.GetNamespace() == "" {
		return nil, nil, nil, missingNamespace(k, in)
	}
	// The key, looked up in place, is not built on the heap unless the
	// write commits (writeChecked below).
	old, ok := s.table(k).objects[objectKey(k, in.GetNamespace(), in.GetName())]
	if !ok {
		if !k.createOnUpdate {
			return nil, nil, nil, apierrors.NewNotFound(k.gr, in.GetName())
		}
		// The kind's strategy allows create-on-update: the update creates
		// the object, whatever resourceVersion the request carried.
		obj := copyObject(in)
		obj.SetResourceVersion("")
		ch, err := s.create(k, obj, false)
		if err != nil {
			return nil, nil, nil, err
		}
		return ch, ch.Object, nil, nil
	}
	if err := s.checkPreconditions(k, in, old); err != nil {
		return nil, nil, nil, err
	}
	obj := copyObject(in)
	setTypeMeta(k, obj)
	if !k.namespaced {
		obj.SetNamespace("")
	}
	obj.SetUID(old.GetUID())
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	// An update can never remove or change a deletionTimestamp (the stored
	// one is kept), nor set one: validateUpdate answers 422 for that.
	if old.GetDeletionTimestamp() != nil {
		obj.SetDeletionTimestamp(old.GetDeletionTimestamp())
	}
	if old.GetDeletionGracePeriodSeconds() != nil && obj.GetDeletionGracePeriodSeconds() == nil {
		obj.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	}
	obj.SetGeneration(old.GetGeneration())
	obj.SetResourceVersion(old.GetResourceVersion())
	obj.SetManagedFields(nil)
	if k.hasStatus {
		copyStatus(k, obj, old)
	}
	s.applyDefaults(obj, old)
	if err := s.applyCRDDefaults(k, obj); err != nil {
		return nil, nil, nil, apierrors.NewInternalError(err)
	}
	specSame, specIdentical := specEqual(k, obj, old)
	metaSame := metaEqual(obj, old)
	if err := validateUpdate(k, obj, old, metaSame, specSame); err != nil {
		return nil, nil, nil, err
	}
	if k.generation && (!specSame || k.generationOnStatus && !fieldEqual(k, obj, old, k.statusField)) {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
	// TypeMeta is the kind's on both; with a status subresource the status
	// was just copied from old.
	statusSame, statusIdentical := true, true
	if !k.hasStatus && k.statusField >= 0 {
		statusSame, statusIdentical = fieldCompare(k, obj, old, k.statusField)
	}
	same := specSame && metaSame && statusSame
	// With a spec (and status) identical to old's, the object stored can
	// take them from old, immutable and shared, and the request's private
	// copy obj becomes the caller's answer: one deep copy of the request
	// instead of two, whether the write changes the metadata or nothing.
	answer := wantAnswer && specIdentical && statusIdentical && !s.slowWrites && s.mayAnswer(k, obj)
	toStore := obj
	if answer && (!same || deletesOnWrite(k, obj)) {
		toStore = overOld(k, obj, old)
	}
	if same && !deletesOnWrite(k, toStore) {
		ch, stored = nil, old // writeChecked's answer for a write that changes nothing
	} else {
		ch, stored, err = s.writeChecked(k, objectKey(k, in.GetNamespace(), in.GetName()), toStore, old, same)
	}
	if answer && err == nil {
		if ch == nil {
			spare = spareOf(k, obj, old)
		} else {
			spare = answerOf(k, obj, ch.Object, old)
		}
	}
	return ch, stored, spare, err
}

// overOld returns a new object with obj's TypeMeta and ObjectMeta (moved,
// not copied: obj gives them up) and every other top-level field of old
// (shared: stored objects are never mutated).
func overOld(k *kindInfo, obj, old client.Object) client.Object {
	out := k.newObject()
	dst, src := reflect.ValueOf(out).Elem(), reflect.ValueOf(old).Elem()
	dst.Set(reflect.ValueOf(obj).Elem())
	for _, i := range k.specFields {
		dst.Field(i).Set(src.Field(i))
	}
	if k.statusField >= 0 {
		dst.Field(k.statusField).Set(src.Field(k.statusField))
	}
	return out
}

// answerOf turns obj, the store's own copy of an update request whose
// metadata went into the committed object stored (see overOld), into the
// caller's answer: a deep copy of stored's metadata, old's status deep-copied
// with a status subresource (the request's own, identical to old's,
// otherwise), and its own spec, identical to old's.
func answerOf(k *kindInfo, obj, stored, old client.Object) client.Object {
	if k.hasStatus {
		k.copyStatusInto(obj, old)
	}
	sm, _ := objectMeta(stored)
	dm, _ := objectMeta(obj)
	sm.DeepCopyInto(dm)
	return obj
}

// mayAnswer reports whether the store may answer an update of kind k with
// its own copy of the request, obj (see update): obj shares nothing with
// anyone, its spec being a deep copy of the request, defaulted, unless a
// defaulting step shared memory. Kinds whose defaulting may do so are
// refused: a kind with a defaulting function in the scheme (it may set
// anything), with a CRD schema, or a Service (an update keeps the stored
// cluster IPs, the stored slice). So is a kind whose metadata or status
// cannot be copied without reflection over unknown types.
func (s *Store) mayAnswer(k *kindInfo, obj client.Object) bool {
	if isServiceKind(k) || s.crds[k.gvk] != nil || k.schemeDefaults == 2 {
		return false
	}
	if _, ok := objectMeta(obj); !ok {
		return false
	}
	return !k.hasStatus || (k.typed != nil && k.typed.copyStatus != nil) || k.statusCopyInto.IsValid()
}

// spareOf turns obj, the store's own copy of an update request that
// changed nothing, into the caller's answer (see update): its spec fields
// (and status, without a status subresource) are identical to old's; its
// status, with a status subresource, is replaced by a deep copy of old's
// (the update shared it), and so is its metadata unless identical to
// old's and sharing nothing with it.
func spareOf(k *kindInfo, obj, old client.Object) client.Object {
	if k.hasStatus {
		k.copyStatusInto(obj, old)
	}
	om, _ := objectMeta(old)
	dm, _ := objectMeta(obj)
	// The request's metadata, once the update set its identity from old,
	// is most often identical to old's and then kept: it shares nothing
	// unless the update took old's deletionTimestamp or grace period.
	if old.GetDeletionTimestamp() != nil || old.GetDeletionGracePeriodSeconds() != nil || !deepEqual(dm, om) {
		om.DeepCopyInto(dm)
	}
	return obj
}

// objectMeta returns the object's embedded ObjectMeta.
func objectMeta(obj client.Object) (*metav1.ObjectMeta, bool) {
	acc, ok := obj.(metav1.ObjectMetaAccessor)
	if !ok {
		return nil, false
	}
	m, ok := acc.GetObjectMeta().(*metav1.ObjectMeta)
	return m, ok
}

func isServiceKind(k *kindInfo) bool { return k.gk.Group == "" && k.gk.Kind == "Service" }

// write commits obj over old unless nothing changed; an object being deleted
// whose finalizers are all gone is deleted.
func (s *Store) write(k *kindInfo, key string, obj, old client.Object) (*Change, client.Object, error) {
	return s.writeChecked(k, key, obj, old, equality.Semantic.DeepEqual(obj, old))
}

// writeChecked is write for a caller that already knows whether obj is
// semantically equal to old (same).
func (s *Store) writeChecked(k *kindInfo, key string, obj, old client.Object, same bool) (*Change, client.Object, error) {
	if deletesOnWrite(k, obj) {
		return s.commit(k, key, model.ChangeDeleted, obj), obj, nil
	}
	if same {
		return nil, old, nil
	}
	return s.commit(k, key, model.ChangeModified, obj), obj, nil
}

// deletesOnWrite reports whether writing obj deletes it: it is being
// deleted, its finalizers are all gone, and neither a pod's grace period
// nor a namespace's spec finalizers keep it.
func deletesOnWrite(k *kindInfo, obj client.Object) bool {
	return obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0 && !isGracefulPending(k, obj) && !namespacePending(k, obj)
}

// isGracefulPending: a pod in graceful deletion stays until the kubelet
// confirms (deletes it again with grace period 0), finalizers or not.
func isGracefulPending(k *kindInfo, obj client.Object) bool {
	if !isPodKind(k) {
		return false
	}
	g := obj.GetDeletionGracePeriodSeconds()
	return g != nil && *g > 0
}

func isPodKind(k *kindInfo) bool { return k.gk.Group == "" && k.gk.Kind == "Pod" }

func isBindingKind(k *kindInfo) bool { return k.gk.Group == "" && k.gk.Kind == "Binding" }

// Bind is the create-only Binding resource: it assigns a pod to a node
// (sets spec.nodeName) and stores nothing of its own. A pod already
// assigned, or being deleted, is a Conflict. The change is the pod's.
func (s *Store) Bind(b *corev1.Binding) (*Change, error) {
	pods, err := s.kinds.forObject(&corev1.Pod{})
	if err != nil {
		return nil, err
	}
	bk, _ := s.kinds.forObject(b)
	var errs field.ErrorList
	if b.Target.Kind != "" && b.Target.Kind != "Node" {
		errs = append(errs, field.NotSupported(field.NewPath("target", "kind"), b.Target.Kind, []string{"Node", ""}))
	}
	if b.Target.Name == "" {
		errs = append(errs, field.Required(field.NewPath("target", "name"), ""))
	}
	if len(errs) > 0 {
		return nil, invalid(bk, b, errs)
	}
	key := objectKey(pods, b.Namespace, b.Name)
	old, ok := s.table(pods).objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(pods.gr, b.Name)
	}
	if uid := b.UID; uid != "" && uid != old.GetUID() {
		return nil, conflict(pods, b.Name, fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", uid, old.GetUID()))
	}
	pod := old.(*corev1.Pod)
	if pod.DeletionTimestamp != nil {
		return nil, conflict(pods, b.Name, fmt.Sprintf("pod %s is being deleted, cannot be assigned to a host", b.Name))
	}
	if pod.Spec.NodeName != "" {
		return nil, conflict(pods, b.Name, fmt.Sprintf("pod %s is already assigned to node %q", b.Name, pod.Spec.NodeName))
	}
	// The bound pod shares all but its metadata with the unbound one
	// (metadataCopy; stored revisions are never mutated): spec.nodeName is
	// a string in the new revision's own PodSpec value, so setting it
	// leaves the old revision as it was. A full copy was 3% of a
	// kuberay/lifecycle schedule's bytes.
	obj, _ := s.metadataCopy(pods, old)
	np := obj.(*corev1.Pod)
	np.Spec.NodeName = b.Target.Name
	return s.commit(pods, key, model.ChangeModified, np), nil
}

func isPVCKind(k *kindInfo) bool { return k.gk.Group == "" && k.gk.Kind == "PersistentVolumeClaim" }

// UpdateStatus writes the status subresource: only status changes; metadata
// and spec of the request are ignored; generation is not bumped.
func (s *Store) UpdateStatus(in client.Object) (*Change, client.Object, error) {
	k, err := s.kinds.forObject(in)
	if err != nil {
		return nil, nil, err
	}
	if !k.hasStatus {
		return nil, nil, apierrors.NewNotFound(schema.GroupResource{Group: k.gr.Group, Resource: k.gr.Resource + "/status"}, in.GetName())
	}
	old, ok := s.table(k).objects[objectKey(k, in.GetNamespace(), in.GetName())]
	if !ok {
		return nil, nil, apierrors.NewNotFound(k.gr, in.GetName())
	}
	if err := s.checkPreconditions(k, in, old); err != nil {
		return nil, nil, err
	}
	// A request whose status equals the stored one changes nothing, and
	// the object it would build (old's metadata and spec, the request's
	// status) is not needed to know it: writeChecked would answer old,
	// old's deletionTimestamp being unset.
	if !s.slowWrites && old.GetDeletionTimestamp() == nil && fieldEqual(k, in, old, k.statusField) {
		return nil, old, nil
	}
	// The request's status, deep-copied, with every other top-level field
	// (TypeMeta, ObjectMeta, spec) taken from old. Stored objects are never
	// mutated, so sharing their nested maps and slices is safe.
	obj := statusOver(k, in, old)
	return s.writeChecked(k, objectKey(k, in.GetNamespace(), in.GetName()), obj, old, fieldEqual(k, obj, old, k.statusField))
}

// statusOver returns a new object with in's status (a deep copy) and every
// other top-level field of old (shared, not copied). With the status type's
// generated DeepCopyInto only the status is copied; without one, the whole
// request is and its other fields are then replaced.
func statusOver(k *kindInfo, in, old client.Object) client.Object {
	var obj client.Object
	if k.typed != nil && k.typed.statusOver != nil {
		obj = k.newObject()
		k.typed.statusOver(obj, in, old)
		return obj
	}
	if k.statusCopyInto.IsValid() {
		obj = k.newObject()
		k.statusCopyInto.Call([]reflect.Value{
			reflect.ValueOf(in).Elem().Field(k.statusField).Addr(),
			reflect.ValueOf(obj).Elem().Field(k.statusField).Addr(),
		})
	} else {
		obj = copyObject(in)
	}
	dst, src := reflect.ValueOf(obj).Elem(), reflect.ValueOf(old).Elem()
	for i := 0; i < dst.NumField(); i++ {
		if i != k.statusField {
			dst.Field(i).Set(src.Field(i))
		}
	}
	return obj
}

// DeleteOptions are the options of one delete.
type DeleteOptions struct {
	Preconditions      *metav1.Preconditions
	PropagationPolicy  *metav1.DeletionPropagation
	GracePeriodSeconds *int64
}

// Delete deletes an object, or starts its deletion: objects with finalizers
// (including the foregroundDeletion and orphan finalizers that the
// propagation policy adds) and pods in graceful deletion get a
// deletionTimestamp and stay until the last finalizer is removed (and, for
// pods, the kubelet confirms). Deleting an object already being deleted
// changes nothing.
func (s *Store) Delete(k *kindInfo, namespace, name string, opts DeleteOptions) (*Change, error) {
	key := objectKey(k, namespace, name)
	old, ok := s.table(k).objects[key]
	if !ok {
		return nil, apierrors.NewNotFound(k.gr, name)
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != old.GetUID() {
			return nil, conflict(k, name, fmt.Sprintf("Precondition failed: UID in precondition: %s, UID in object meta: %s", *p.UID, old.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != old.GetResourceVersion() {
			return nil, conflict(k, name, fmt.Sprintf("Precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *p.ResourceVersion, old.GetResourceVersion()))
		}
	}
	// A delete changes only metadata (and a namespace's status phase, a
	// field of the object's own struct): the object it stores shares the
	// rest with old, as statusOver and overOld do, instead of copying the
	// whole object.
	obj, shared := s.metadataCopy(k, old)
	finalizers := obj.GetFinalizers()
	if opts.PropagationPolicy != nil {
		switch *opts.PropagationPolicy {
		case metav1.DeletePropagationForeground:
			if !slices.Contains(finalizers, FinalizerForeground) {
				finalizers = append(finalizers, FinalizerForeground)
			}
		case metav1.DeletePropagationOrphan:
			if !slices.Contains(finalizers, FinalizerOrphan) {
				finalizers = append(finalizers, FinalizerOrphan)
			}
		case metav1.DeletePropagationBackground:
		default:
			return nil, apierrors.NewBadRequest(fmt.Sprintf("unknown propagationPolicy %q (want Foreground, Background or Orphan)", *opts.PropagationPolicy))
		}
	}
	if old.GetDeletionTimestamp() != nil {
		// Already terminating: a pod's grace period can only shorten, and a
		// grace period of 0 is the kubelet's confirmation.
		if isPodKind(k) && opts.GracePeriodSeconds != nil {
			shortenPodGrace(obj, old, *opts.GracePeriodSeconds)
		}
		obj.SetFinalizers(finalizers)
		if shared {
			// TypeMeta and every field but the metadata are old's own:
			// write's comparison of the whole objects is that of the
			// metadata and the rest, found equal in place.
			c, _, err := s.writeChecked(k, key, obj, old, metaEqual(obj, old) && restEqual(k, obj, old))
			return c, err
		}
		c, _, err := s.write(k, key, obj, old)
		return c, err
	}
	var grace int64
	if isPodKind(k) {
		grace = podDeleteGrace(obj, opts.GracePeriodSeconds)
	}
	if len(finalizers) == 0 && grace == 0 && !namespacePending(k, obj) {
		return s.commit(k, key, model.ChangeDeleted, obj), nil
	}
	if isNamespaceKind(k) {
		obj.(*corev1.Namespace).Status.Phase = corev1.NamespaceTerminating
	}
	if obj.GetGeneration() > 0 {
		// The apiserver bumps generation when deletion starts, so that a
		// controller sees the deletion as a new generation to observe.
		obj.SetGeneration(obj.GetGeneration() + 1)
	}
	// deletionTimestamp is when the grace period ends (now for other
	// kinds), as the apiserver sets it.
	at := s.now()
	if grace > 0 {
		at = metav1.NewTime(at.Add(time.Duration(grace) * time.Second))
	}
	obj.SetDeletionTimestamp(&at)
	obj.SetDeletionGracePeriodSeconds(&grace)
	obj.SetFinalizers(finalizers)
	return s.commit(k, key, model.ChangeModified, obj), nil
}

// metadataCopy returns a new object of kind k with a deep copy of old's
// metadata and every other top-level field of old, shared (stored objects
// are never mutated), and true; with the write fast paths off, or for a
// type whose metadata it cannot find, a deep copy of old and false.
func (s *Store) metadataCopy(k *kindInfo, old client.Object) (client.Object, bool) {
	om, ok := objectMeta(old)
	if s.slowWrites || !ok {
		return copyObject(old), false
	}
	obj := k.newObject()
	reflect.ValueOf(obj).Elem().Set(reflect.ValueOf(old).Elem())
	dm, _ := objectMeta(obj)
	om.DeepCopyInto(dm)
	return obj, true
}

// restEqual reports whether every top-level field of a and b (two objects
// of kind k) but TypeMeta and metadata is semantically equal, as
// equality.Semantic.DeepEqual says: with metaEqual and equal TypeMeta,
// its answer for the whole objects (as update's no-op check finds it).
// What a shares with b compares in place, without a walk.
func restEqual(k *kindInfo, a, b client.Object) bool {
	for _, i := range k.specFields {
		if !fieldEqual(k, a, b, i) {
			return false
		}
	}
	return k.statusField < 0 || fieldEqual(k, a, b, k.statusField)
}

// podSpecGrace reads spec.terminationGracePeriodSeconds of a pod without
// importing core types into the generic path.
func podSpecGrace(obj client.Object) *int64 {
	v := reflect.ValueOf(obj).Elem().FieldByName("Spec")
	if !v.IsValid() {
		return nil
	}
	g := v.FieldByName("TerminationGracePeriodSeconds")
	if !g.IsValid() || g.IsNil() {
		return nil
	}
	return g.Interface().(*int64)
}
