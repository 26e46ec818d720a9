package destination

import (
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/wavecd/wavecd/internal/kube"
)

// stampSeed seeds the stamps of predictions, which live in memory only.
var stampSeed = maphash.MakeSeed()

// predictionStamp identifies the inputs of a prediction: the desired
// object, the live one and the apply mode. The live object's status and
// version fields are left out: an apply does not change the status, and
// the diff ignores both, so a prediction made before a status change (a
// child Application's health, a Deployment's ready replicas) still holds.
// managedFields go too: the live cache does not keep them, so a prediction
// never depended on them.
//
// It hashes the objects' values where they are, keys in order, types
// tagged: a root's comparison stamps each of its thousands of children,
// and encoding them to JSON to hash them was a few percent of a
// bootstrap's CPU.
func predictionStamp(desired, live *unstructured.Unstructured, mode kube.ApplyMode) (string, bool) {
	var h maphash.Hash
	h.SetSeed(stampSeed)
	hashObject(&h, desired.Object, false)
	if live != nil {
		_ = h.WriteByte('|')
		hashObject(&h, live.Object, true)
	}
	return strconv.FormatUint(h.Sum64(), 16) + "|" + string(mode), true
}

// hashObject hashes an object; without volatile, the live fields
// predictionStamp leaves out.
func hashObject(h *maphash.Hash, obj map[string]any, withoutVolatile bool) {
	if !withoutVolatile {
		hashValue(h, obj)
		return
	}
	hashMap(h, obj, func(k string, v any) bool {
		if k == "status" {
			return false
		}
		if md, ok := v.(map[string]any); ok && k == "metadata" {
			_, _ = h.WriteString(k)
			hashMap(h, md, func(k string, _ any) bool {
				return k != "resourceVersion" && k != "generation" && k != "managedFields"
			})
			return false
		}
		return true
	})
}

// hashMap hashes m's entries in key order; keep says which to hash (an
// entry it declines may hash itself).
func hashMap(h *maphash.Hash, m map[string]any, keep func(k string, v any) bool) {
	var buf [16]string
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	_ = h.WriteByte('{')
	for _, k := range keys {
		if keep != nil && !keep(k, m[k]) {
			continue
		}
		_, _ = h.WriteString(k)
		_ = h.WriteByte(':')
		hashValue(h, m[k])
	}
	_ = h.WriteByte('}')
}

// hashValue hashes a value of an unstructured object, with its type.
func hashValue(h *maphash.Hash, v any) {
	switch v := v.(type) {
	case nil:
		_ = h.WriteByte('n')
	case bool:
		if v {
			_ = h.WriteByte('t')
		} else {
			_ = h.WriteByte('f')
		}
	case string:
		_ = h.WriteByte('s')
		writeUint(h, uint64(len(v)))
		_, _ = h.WriteString(v)
	case int64:
		_ = h.WriteByte('i')
		writeUint(h, uint64(v))
	case int:
		_ = h.WriteByte('i')
		writeUint(h, uint64(v))
	case float64:
		_ = h.WriteByte('d')
		writeUint(h, math.Float64bits(v))
	case map[string]any:
		hashMap(h, v, nil)
	case []any:
		_ = h.WriteByte('[')
		for _, e := range v {
			hashValue(h, e)
		}
		_ = h.WriteByte(']')
	default:
		// Not what a decoded object holds; hashed by its printed form.
		_, _ = fmt.Fprintf(h, "?%T%v", v, v)
	}
}

func writeUint(h *maphash.Hash, u uint64) {
	var b [8]byte
	for i := range b {
		b[i] = byte(u >> (8 * i))
	}
	_, _ = h.Write(b[:])
}
