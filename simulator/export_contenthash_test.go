package simulator

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ContentHash is the content hash StateHash uses for a stored object
// (equal exactly when the JSON encodings without resourceVersion and
// managedFields are equal).
func ContentHash(obj client.Object) uint64 {
	var c contentHasher
	return c.hash(obj)
}

// JSONContentHash is the FNV-64a hash of that JSON encoding: the slow
// path the content hash's classes are checked against.
func JSONContentHash(obj client.Object) (uint64, error) {
	c := copyObject(obj)
	c.SetResourceVersion("")
	c.SetManagedFields(nil)
	data, err := json.Marshal(c)
	if err != nil {
		return 0, err
	}
	h := fnv.New64a()
	h.Write(data)
	return h.Sum64(), nil
}

// ContentClasses checks, object by object, that two hashes put objects
// of one Go type in the same classes: the fast content hash and the JSON
// one, each a function of the other.
type ContentClasses map[reflect.Type]*contentClassPair

type contentClassPair struct {
	fastToJSON, jsonToFast map[uint64]uint64
	example                map[uint64]client.Object // by JSON hash
}

// Add records obj with its two hashes, or says how the classes split.
func (c ContentClasses) Add(obj client.Object, fast, jsonHash uint64) error {
	t := reflect.TypeOf(obj)
	p := c[t]
	if p == nil {
		p = &contentClassPair{fastToJSON: map[uint64]uint64{}, jsonToFast: map[uint64]uint64{}, example: map[uint64]client.Object{}}
		c[t] = p
	}
	if j, ok := p.fastToJSON[fast]; ok && j != jsonHash {
		return fmt.Errorf("%T %s/%s and %s/%s have different JSON encodings but one content hash %x: the explorer would merge distinct states", obj, obj.GetNamespace(), obj.GetName(), p.example[j].GetNamespace(), p.example[j].GetName(), fast)
	}
	if f, ok := p.jsonToFast[jsonHash]; ok && f != fast {
		return fmt.Errorf("%T %s/%s and %s/%s encode alike in JSON but have content hashes %x and %x: the explorer would split a state it merged", obj, obj.GetNamespace(), obj.GetName(), p.example[jsonHash].GetNamespace(), p.example[jsonHash].GetName(), fast, f)
	}
	p.fastToJSON[fast], p.jsonToFast[jsonHash] = jsonHash, fast
	if p.example[jsonHash] == nil {
		p.example[jsonHash] = obj
	}
	return nil
}
