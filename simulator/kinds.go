package simulator

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// clusterScopedKinds are the built-in kinds that live outside namespaces.
// A user's cluster-scoped CRD kinds are declared with Options.ClusterScoped.
var clusterScopedKinds = map[schema.GroupKind]bool{
	{Kind: "Namespace"}:                                               true,
	{Kind: "Node"}:                                                    true,
	{Kind: "PersistentVolume"}:                                        true,
	{Group: "storage.k8s.io", Kind: "StorageClass"}:                   true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:         true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}:  true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
	{Group: "scheduling.k8s.io", Kind: "PriorityClass"}:               true,
}

// generationKinds are the built-in kinds whose registry strategy keeps
// metadata.generation (1 on create, bumped on spec changes and when deletion
// starts). Every other built-in kind (ConfigMap, Secret, Service, PVC,
// Namespace, ...) has none: its generation stays 0, absent in JSON. Custom
// resources always have one.
var generationKinds = map[schema.GroupKind]bool{
	{Kind: "Pod"}:                                                     true,
	{Kind: "ReplicationController"}:                                   true,
	{Group: "apps", Kind: "Deployment"}:                               true,
	{Group: "apps", Kind: "StatefulSet"}:                              true,
	{Group: "apps", Kind: "DaemonSet"}:                                true,
	{Group: "apps", Kind: "ReplicaSet"}:                               true,
	{Group: "batch", Kind: "Job"}:                                     true,
	{Group: "batch", Kind: "CronJob"}:                                 true,
	{Group: "networking.k8s.io", Kind: "Ingress"}:                     true,
	{Group: "networking.k8s.io", Kind: "NetworkPolicy"}:               true,
	{Group: "policy", Kind: "PodDisruptionBudget"}:                    true,
	{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}: true,
}

// createOnUpdateKinds are the built-in kinds whose update strategy allows
// create-on-update (AllowCreateOnUpdate): an Update of a missing object
// creates it. For every other kind it is NotFound.
var createOnUpdateKinds = map[schema.GroupKind]bool{
	{Kind: "Service"}:                                                true,
	{Kind: "Endpoints"}:                                              true,
	{Kind: "Event"}:                                                  true,
	{Kind: "LimitRange"}:                                             true,
	{Group: "events.k8s.io", Kind: "Event"}:                          true,
	{Group: "coordination.k8s.io", Kind: "Lease"}:                    true,
	{Group: "rbac.authorization.k8s.io", Kind: "Role"}:               true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "RoleBinding"}:        true,
	{Group: "rbac.authorization.k8s.io", Kind: "ClusterRoleBinding"}: true,
}

// kindInfo is what the store knows about one resource type. It is built once
// per kind, on first use, so the hot path never reflects over the scheme.
type kindInfo struct {
	gvk        schema.GroupVersionKind
	gk         schema.GroupKind
	gr         schema.GroupResource
	namespaced bool
	// hasStatus: the kind has a status subresource, so main-resource writes
	// keep the stored status and status writes change only status.
	hasStatus bool
	// generation: the kind keeps metadata.generation (see generationKinds);
	// generationOnStatus: a status change bumps it too (a custom resource
	// without a status subresource).
	generation         bool
	generationOnStatus bool
	// createOnUpdate: an Update of a missing object creates it.
	createOnUpdate bool
	// nameFn is the kind's name rule (see nameValidator).
	nameFn apivalidation.ValidateNameFunc
	// statusField and metaField are struct field indexes used to copy status
	// and compare spec without reflection by name on every write.
	statusField int
	specFields  []int // every field except TypeMeta, ObjectMeta and Status
	// fields are the top-level fields' offsets, types and equalFuncs, by
	// field index.
	fields []fieldFacts
	typ    reflect.Type
	order  int // first-use order: deterministic tie breaks between kinds
	// deepCopyInto is the kind's generated (*T).DeepCopyInto and
	// statusCopyInto its status type's (*S).DeepCopyInto, as method
	// expressions called through reflection; invalid when the type has
	// none. Copying into the caller's object saves the whole-object
	// allocation (and its write barriers) a DeepCopyObject and a struct
	// assignment would cost on every read.
	deepCopyInto   reflect.Value
	statusCopyInto reflect.Value
	// typed copies a built-in kind's objects without reflection
	// (copiers.go); nil for other kinds.
	typed *typedCopier
	// schemeDefaults is whether the scheme has a defaulting function for
	// the kind's type (see schemeDefaults): 1 no, 2 yes. A scheme is not
	// changed while a world uses it.
	schemeDefaults uint8
}

func (k *kindInfo) String() string { return k.gvk.Kind }

// copyInto deep-copies src into dst, two objects of this kind (dst's
// previous contents are overwritten, as a generated DeepCopyInto does).
func (k *kindInfo) copyInto(dst, src client.Object) {
	if k.typed != nil {
		k.typed.copyInto(dst, src)
		return
	}
	k.copyIntoValue(reflect.ValueOf(dst), src)
}

// copyIntoValue is copyInto for a destination given as a reflect.Value of
// a *T (a list item's address).
func (k *kindInfo) copyIntoValue(dst reflect.Value, src client.Object) {
	if k.typed != nil {
		k.typed.copyInto(dst.Interface().(client.Object), src)
		return
	}
	if k.deepCopyInto.IsValid() {
		k.deepCopyInto.Call([]reflect.Value{reflect.ValueOf(src), dst})
		return
	}
	dst.Elem().Set(reflect.ValueOf(src.DeepCopyObject()).Elem())
}

// copyStatusInto deep-copies src's status into dst's, two objects of this
// kind with a status field, and reports whether it could: false, having
// done nothing, when the status type has no generated DeepCopyInto.
func (k *kindInfo) copyStatusInto(dst, src client.Object) bool {
	if k.typed != nil && k.typed.copyStatus != nil {
		k.typed.copyStatus(dst, src)
		return true
	}
	if !k.statusCopyInto.IsValid() {
		return false
	}
	k.statusCopyInto.Call([]reflect.Value{
		reflect.ValueOf(src).Elem().Field(k.statusField).Addr(),
		reflect.ValueOf(dst).Elem().Field(k.statusField).Addr(),
	})
	return true
}

// copyIntoMethod returns the method expression (*T).DeepCopyInto of a
// pointer type pt, if it has the generated signature.
func copyIntoMethod(pt reflect.Type) reflect.Value {
	m, ok := pt.MethodByName("DeepCopyInto")
	if !ok || m.Type.NumIn() != 2 || m.Type.In(1) != pt || m.Type.NumOut() != 0 {
		return reflect.Value{}
	}
	return m.Func
}

// newObject returns a fresh zero object of this kind.
func (k *kindInfo) newObject() client.Object {
	return reflect.New(k.typ).Interface().(client.Object)
}

// kindRegistry maps Go types and GVKs to kindInfo.
type kindRegistry struct {
	scheme        *runtime.Scheme
	byType        map[reflect.Type]*kindInfo
	byGK          map[schema.GroupKind]*kindInfo
	ordered       []*kindInfo
	clusterScoped map[schema.GroupKind]bool
	noStatus      map[schema.GroupKind]bool

	mapperOnce sync.Once
	mapper     meta.RESTMapper
}

func newKindRegistry(scheme *runtime.Scheme, clusterScoped, noStatus []schema.GroupKind) *kindRegistry {
	r := &kindRegistry{
		scheme:        scheme,
		byType:        map[reflect.Type]*kindInfo{},
		byGK:          map[schema.GroupKind]*kindInfo{},
		clusterScoped: map[schema.GroupKind]bool{},
		noStatus:      map[schema.GroupKind]bool{},
	}
	for gk := range clusterScopedKinds {
		r.clusterScoped[gk] = true
	}
	for _, gk := range clusterScoped {
		r.clusterScoped[gk] = true
	}
	for _, gk := range noStatus {
		r.noStatus[gk] = true
	}
	return r
}

// clone returns a registry that knows the kinds r knows, as the same
// kindInfo values (they are never written after they are built), and
// registers the kinds it meets later on its own: the registry of a world
// resumed from a checkpoint, whose tables and caches are keyed by the
// checkpointed world's kinds.
func (r *kindRegistry) clone() *kindRegistry {
	return &kindRegistry{
		scheme:        r.scheme,
		byType:        maps.Clone(r.byType),
		byGK:          maps.Clone(r.byGK),
		ordered:       slices.Clone(r.ordered),
		clusterScoped: r.clusterScoped, // set when built, then only read
		noStatus:      r.noStatus,
	}
}

// forObject returns the kind of a typed object. Unstructured objects are
// resolved through their apiVersion/kind.
// forType is forObject for an object of pointer type t, without one once
// the type is known.
func (r *kindRegistry) forType(t reflect.Type) (*kindInfo, error) {
	if k, ok := r.byType[t]; ok {
		return k, nil
	}
	obj, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
	if !ok {
		return nil, fmt.Errorf("opcheck: %s is not an API object type", t)
	}
	return r.forObject(obj)
}

func (r *kindRegistry) forObject(obj runtime.Object) (*kindInfo, error) {
	t := reflect.TypeOf(obj)
	if k, ok := r.byType[t]; ok {
		return k, nil
	}
	gvk, err := apiutil.GVKForObject(obj, r.scheme)
	if err != nil {
		// As controller-runtime's client: the scheme's own error, for
		// which runtime.IsNotRegisteredError holds. World.kindOf adds
		// what to do when a scenario names such a type.
		return nil, err
	}
	if strings.HasSuffix(gvk.Kind, "List") && meta.IsListType(obj) {
		k, err := r.forListGVK(gvk)
		// Remember typed lists ([]T items of the kind's type), so the next
		// List of that type does not ask the scheme again.
		if err == nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
			if f, ok := t.Elem().FieldByName("Items"); ok && f.Type.Kind() == reflect.Slice && f.Type.Elem() == k.typ {
				r.byType[t] = k
			}
		}
		return k, err
	}
	k, err := r.forGVK(gvk)
	if err != nil {
		return nil, err
	}
	if t.Kind() == reflect.Pointer && t.Elem() == k.typ {
		r.byType[t] = k
	}
	return k, nil
}

func (r *kindRegistry) forListGVK(listGVK schema.GroupVersionKind) (*kindInfo, error) {
	gvk := listGVK
	gvk.Kind = strings.TrimSuffix(gvk.Kind, "List")
	return r.forGVK(gvk)
}

// forGVK returns the kind for a GVK, building its info on first use.
func (r *kindRegistry) forGVK(gvk schema.GroupVersionKind) (*kindInfo, error) {
	if k, ok := r.byGK[gvk.GroupKind()]; ok {
		return k, nil
	}
	proto, err := r.scheme.New(gvk)
	if err != nil {
		// The simulated cluster serves exactly the scheme's kinds: any other
		// kind is not installed, and the client's REST mapping fails as
		// controller-runtime's does (meta.IsNoMatchError holds).
		return nil, &meta.NoKindMatchError{GroupKind: gvk.GroupKind(), SearchedVersions: []string{gvk.Version}}
	}
	t := reflect.TypeOf(proto)
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return nil, fmt.Errorf("opcheck: kind %s is %T, want a pointer to a struct (typed objects only)", gvk, proto)
	}
	if _, ok := proto.(client.Object); !ok {
		return nil, fmt.Errorf("opcheck: kind %s (%T) has no ObjectMeta", gvk, proto)
	}
	st := t.Elem()
	plural, _ := meta.UnsafeGuessKindToResource(gvk)
	facts := factsOf(st)
	k := &kindInfo{
		gvk:            gvk,
		gk:             gvk.GroupKind(),
		gr:             plural.GroupResource(),
		namespaced:     !r.clusterScoped[gvk.GroupKind()],
		statusField:    facts.statusField,
		specFields:     facts.specFields,
		fields:         facts.fields,
		typ:            st,
		order:          len(r.ordered),
		deepCopyInto:   facts.deepCopyInto,
		statusCopyInto: facts.statusCopyInto,
		typed:          facts.typed,
	}
	k.hasStatus = k.statusField >= 0 && !r.noStatus[k.gk]
	builtin := k.isBuiltin()
	k.generation = !builtin || generationKinds[k.gk]
	k.generationOnStatus = !builtin && !k.hasStatus && k.statusField >= 0
	k.createOnUpdate = builtin && createOnUpdateKinds[k.gk]
	k.nameFn = nameValidator(k.gk)
	// Asked now, not on the first write: worlds resumed from a checkpoint
	// share its kinds (kindRegistry.clone), so a kindInfo is never written
	// after it is built.
	k.schemeDefaults = 1
	if schemeDefaults(r.scheme, proto) {
		k.schemeDefaults = 2
	}
	r.byGK[k.gk] = k
	r.byType[t] = k
	r.ordered = append(r.ordered, k)
	return k, nil
}

// typeFacts is what a kind's Go struct type alone determines: where its
// status and spec fields are and its generated copy methods. They are
// found by reflection once per type and process (typeFactsCache), not once
// per world: every schedule builds a world, and the facts are read only,
// so worlds on every worker share them.
type typeFacts struct {
	statusField    int
	specFields     []int
	fields         []fieldFacts
	deepCopyInto   reflect.Value
	statusCopyInto reflect.Value
	typed          *typedCopier
}

// fieldFacts locate one top-level field of a kind's struct and compare it.
type fieldFacts struct {
	offset uintptr
	typ    reflect.Type
	equal  equalFunc
	differ differFunc // nil: ask the semantic comparison
}

var typeFactsCache sync.Map // reflect.Type (a struct type) -> *typeFacts

// factsOf returns the facts of struct type st. The result is shared: never
// modify it.
func factsOf(st reflect.Type) *typeFacts {
	if f, ok := typeFactsCache.Load(st); ok {
		return f.(*typeFacts)
	}
	f := &typeFacts{statusField: -1}
	for i := 0; i < st.NumField(); i++ {
		sf := st.Field(i)
		f.fields = append(f.fields, fieldFacts{offset: sf.Offset, typ: sf.Type, equal: deepEqualOf(sf.Type), differ: semanticDifferOf(sf.Type)})
		switch sf.Name {
		case "TypeMeta", "ObjectMeta":
		case "Status":
			f.statusField = i
		default:
			f.specFields = append(f.specFields, i)
		}
	}
	f.deepCopyInto = copyIntoMethod(reflect.PointerTo(st))
	f.typed = copierFor(st)
	if f.statusField >= 0 {
		f.statusCopyInto = copyIntoMethod(reflect.PointerTo(st.Field(f.statusField).Type))
	}
	actual, _ := typeFactsCache.LoadOrStore(st, f)
	return actual.(*typeFacts)
}

// restMapper returns a RESTMapper that knows every kind of the scheme, with
// the scope the store gives it. It is built once, on first use: building it
// walks every type of the scheme.
func (r *kindRegistry) restMapper() meta.RESTMapper {
	r.mapperOnce.Do(func() { r.mapper = r.sharedRESTMapper() })
	return r.mapper
}

// mapperKey names the RESTMapper of one scheme with one set of
// cluster-scoped kinds; mapperEntry remembers how many types the scheme
// had when it was built (a scheme only grows).
type mapperKey struct {
	scheme        *runtime.Scheme
	clusterScoped string
}

type mapperEntry struct {
	types  int
	mapper meta.RESTMapper
}

// restMappers holds the RESTMappers built so far. Building one walks every
// type of the scheme, and a scenario whose controller is set up with a
// manager asks for it in every world it builds; a DefaultRESTMapper is
// only read once built, so worlds on every worker share one.
var restMappers sync.Map // mapperKey -> *mapperEntry

func (r *kindRegistry) sharedRESTMapper() meta.RESTMapper {
	scoped := make([]string, 0, len(r.clusterScoped))
	for gk, yes := range r.clusterScoped {
		if yes {
			scoped = append(scoped, gk.String())
		}
	}
	slices.Sort(scoped)
	key := mapperKey{scheme: r.scheme, clusterScoped: strings.Join(scoped, ",")}
	types := len(r.scheme.AllKnownTypes())
	if e, ok := restMappers.Load(key); ok && e.(*mapperEntry).types == types {
		return e.(*mapperEntry).mapper
	}
	m := r.buildRESTMapper()
	restMappers.Store(key, &mapperEntry{types: types, mapper: m})
	return m
}

func (r *kindRegistry) buildRESTMapper() meta.RESTMapper {
	gvs := r.scheme.PrioritizedVersionsAllGroups()
	m := meta.NewDefaultRESTMapper(gvs)
	for gvk := range r.scheme.AllKnownTypes() {
		if strings.HasSuffix(gvk.Kind, "List") || strings.HasSuffix(gvk.Kind, "Options") || gvk.Kind == "WatchEvent" || gvk.Kind == "Status" {
			continue
		}
		scope := meta.RESTScopeNamespace
		if r.clusterScoped[gvk.GroupKind()] {
			scope = meta.RESTScopeRoot
		}
		m.Add(gvk, scope)
	}
	return newMemoRESTMapper(m, r.scheme)
}

// memoRESTMapper is a DefaultRESTMapper whose RESTMapping answers for one
// version, or for none, are worked out once when it is built: every watch
// event of an owned object asks it (controller-runtime's
// EnqueueRequestForOwner maps the owner's kind to learn its scope), and
// the DefaultRESTMapper builds and scans its candidate lists afresh each
// time (1.3% of a kuberay/lifecycle schedule). Each answer is a copy: a
// caller that changes the mapping it got cannot change another's, in this
// world or another. Errors and other questions go to the DefaultRESTMapper.
type memoRESTMapper struct {
	*meta.DefaultRESTMapper
	mappings map[mappingQuestion]meta.RESTMapping
}

// mappingQuestion is a RESTMapping call with at most one version ("" for
// none).
type mappingQuestion struct {
	gk      schema.GroupKind
	version string
}

func newMemoRESTMapper(m *meta.DefaultRESTMapper, s *runtime.Scheme) *memoRESTMapper {
	memo := &memoRESTMapper{DefaultRESTMapper: m, mappings: map[mappingQuestion]meta.RESTMapping{}}
	remember := func(q mappingQuestion, versions ...string) {
		if mapping, err := m.RESTMapping(q.gk, versions...); err == nil {
			memo.mappings[q] = *mapping
		}
	}
	for gvk := range s.AllKnownTypes() {
		remember(mappingQuestion{gk: gvk.GroupKind()})
		remember(mappingQuestion{gk: gvk.GroupKind(), version: gvk.Version}, gvk.Version)
	}
	return memo
}

// RESTMapping implements meta.RESTMapper.
func (m *memoRESTMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) <= 1 {
		q := mappingQuestion{gk: gk}
		if len(versions) == 1 {
			q.version = versions[0]
		}
		if mapping, ok := m.mappings[q]; ok {
			return &mapping, nil
		}
	}
	return m.DefaultRESTMapper.RESTMapping(gk, versions...)
}
