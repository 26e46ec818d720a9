package health

// Code is a health status code as Argo CD names it.
type Code string

// The six health codes, from Argo CD.
const (
	// Healthy means the object is fully available.
	Healthy Code = "Healthy"
	// Progressing means the object is not healthy yet but may still become so.
	Progressing Code = "Progressing"
	// Degraded means the object failed or cannot become healthy in time.
	Degraded Code = "Degraded"
	// Suspended means the object is paused or suspended on purpose.
	Suspended Code = "Suspended"
	// Missing means the object does not exist in the cluster.
	Missing Code = "Missing"
	// Unknown means health could not be assessed.
	Unknown Code = "Unknown"
)

// order lists the codes from the most to the least healthy.
var order = map[Code]int{
	Healthy:     0,
	Suspended:   1,
	Progressing: 2,
	Missing:     3,
	Degraded:    4,
	Unknown:     5,
}

// Valid reports whether c is one of the six health codes.
func (c Code) Valid() bool {
	_, ok := order[c]
	return ok
}

// IsWorse reports whether next is a worse health than current, using the order
// Healthy < Suspended < Progressing < Missing < Degraded < Unknown.
func IsWorse(current, next Code) bool {
	return order[next] > order[current]
}

// Status is the health of one object or application. The zero Status (empty
// code) means no check applies.
type Status struct {
	Status  Code   `json:"status,omitempty"`
	Message string `json:"message,omitempty"`
}
