package kube

import corev1 "k8s.io/api/core/v1"

// SecretData is a Secret's data as the API server stores it: data, with
// stringData written over it. A Secret read from a file (a settings file,
// a manifest) may carry either; one read from the API server has data
// only. The result is a new map.
func SecretData(s *corev1.Secret) map[string][]byte {
	out := make(map[string][]byte, len(s.Data)+len(s.StringData))
	for k, v := range s.Data {
		out[k] = v
	}
	for k, v := range s.StringData {
		out[k] = []byte(v)
	}
	return out
}
