// Package network owns what the API server reaches through Services in a
// cluster without a pod network: admission webhooks, CRD conversion
// webhooks and aggregated APIs (APIServices) backed by a Service.
//
// The API server runs with --enable-aggregator-routing, so it resolves a
// Service to one of its ready endpoints itself and fails a call to a
// Service without one with its own error, as a real cluster does
// ("failed calling webhook ...: no endpoints available for service",
// an APIService Available=False with MissingEndpoints and its group gone
// from discovery). Its egress selector sends the connections to those
// endpoints, pod IPs that nothing listens on, to Proxy: an HTTP CONNECT
// proxy on 127.0.0.1 that answers for a pod that is Ready and refuses a
// connection to any other address.
//
// Answering for a pod is generic, the same for every webhook and API:
// TLS with the certificate the pod mounts when one of its Secrets holds a
// key pair valid for the Service's name (what a real server presents),
// else one the cluster's CA signs for that name (the API server trusts
// that CA where a webhook or APIService gives no caBundle); an
// AdmissionReview is allowed unchanged, a ConversionReview converted by
// its apiVersion alone, and discovery of the API's group version answers
// with an empty resource list. No behaviour of a particular webhook or API
// is simulated: what a rehearsal shows is whether it is reachable.
package network
