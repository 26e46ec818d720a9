package application

import "fmt"

// NotFoundError says an Application does not exist.
type NotFoundError struct {
	Name, Namespace string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("application %q not found in namespace %q", e.Name, e.Namespace)
}
