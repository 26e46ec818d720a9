// Package eksaddons holds the EKS add-ons corpus test: the bootstrap under
// ../eks-addons (a root Helm chart of Applications; Calico, Karpenter and
// the AWS Load Balancer Controller as wrapper charts depending on their
// upstream charts) rehearsed in its four scenarios with the real Tigera
// operator and Karpenter running as the processes behind their pods, the
// upstream charts taken from the Go module cache and served by a local
// chart mirror (index.yaml folders and an OCI registry on loopback). Each
// verdict comes from what the operators do; the test checks it and what
// they made. It also holds the chaos harness's operator case: the
// operator killed mid-bootstrap.
//
// The package has no code of its own.
package eksaddons
