// Package testenv owns the local control plane that tests of the main module
// run against: one real cluster (etcd, kube-apiserver, controller-manager,
// scheduler, KWOK) per test package, started from TestMain, and a namespace
// per test.
//
//	func TestMain(m *testing.M) { os.Exit(testenv.Main(m)) }
//
//	func TestSomething(t *testing.T) {
//		env := testenv.Get(t)
//		ns := env.Namespace(t)
//		...
//	}
//
// A package that needs more than the default two nodes, or process-backed
// pods running the real wavecd binary, shapes its cluster with Options:
//
//	func TestMain(m *testing.M) {
//		os.Exit(testenv.MainWith(m, testenv.Options{Wavecd: true}))
//	}
//
// It builds bin/wavecd-localcluster when it is missing or stale (the Go
// build cache makes an up-to-date build cheap), and bin/wavecd too with
// Options.Wavecd, and fails loudly when the cluster cannot start: tests
// against the API server are never skipped.
// FinalizerOperator stands in for an operator that finalizes its custom
// resources, for tests of a teardown.
// WAVECD_TEST_DEBUG=1 logs what the code under test does at debug level.
// The cluster runs as a child of the test process with a parent-death
// signal, so a test binary killed by a timeout takes the cluster with it.
package testenv
