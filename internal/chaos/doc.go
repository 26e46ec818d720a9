// Package chaos holds the crash-anywhere harness: it runs a real
// `wavecd controller` process against the local cluster and syncs an
// upstream-shaped app (a PreSync Job, three waves of ConfigMaps and
// Deployments, a PostSync Job, all with generateName hooks and no wavecd
// annotations) while faults strike at random moments:
//
//   - the controller is killed with SIGKILL by its PID, 1 to 3 times a run,
//     and started again, as a Deployment would restart it;
//   - kube-apiserver is stopped and started again (the local cluster's
//     supervisor does it on SIGUSR1 and SIGUSR2);
//   - the Git repository disappears for some seconds;
//   - of three sharded replicas, the one the app is pinned to is killed
//     once mid-sync and restarted a few seconds later: the others take
//     the app over when its Lease expires.
//
// Each run checks what an operator cares about: every hook ran once per
// sync attempt (no duplicate), no desired object was ever deleted or is
// missing (no lost object), and the app ended Synced and Healthy with its
// sync Succeeded within a deadline (not stuck); it records the recovery
// time from the end of the last fault. The table of all runs is printed.
//
// The tests are the harness: `make chaos RUNS=n` runs n runs and writes
// the table; the normal test suite runs five. Its operator case, which
// needs the upstream charts and the operators built, lives with them:
// test/eksaddons' TestOperatorKilledMidBootstrap kills the Tigera
// operator's process mid-bootstrap and checks its pod restarts it and the
// bootstrap converges with everything made. The package has no code
// outside its tests. A scenario is one fault kind (see scenarios).
package chaos
