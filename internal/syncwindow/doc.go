// Package syncwindow owns the sync windows of an AppProject
// (`spec.syncWindows`), with Argo CD's meaning:
//
//   - a window is open from each activation of its cron `schedule` (five
//     fields: minute, hour, day of month, month, day of week, read in the
//     window's `timeZone`, UTC by default) for its `duration`; activations
//     that overlap or touch make one longer opening;
//   - a window applies to an app when one of its `applications` globs
//     matches the app's name, one of its `namespaces` globs the destination
//     namespace, or one of its `clusters` globs the destination server URL
//     or cluster name; with `andOperator: true` every list that is set must
//     match;
//   - with no window applying, every sync may run; an open `deny` window
//     blocks syncs (deny wins over allow); when `allow` windows apply, a
//     sync may run only while one of them is open;
//   - a manual sync passes a block when every open deny window has
//     `manualSync: true`, or, outside the allow windows, when one of those
//     has it.
//
// Evaluate decides for one app at one instant and says until when a block
// lasts: the next instant the decision changes, found by walking the
// windows' edges (opening and closing times), so a controller can wait for
// exactly that instant instead of polling.
//
// The package is pure: it reads no clock (the caller passes the time) and
// no cluster. It does not resolve destinations (internal/cluster) or write
// statuses (internal/controller). Argo CD's `syncOverrun`, which lets a
// running sync continue past a window's edge, is not modelled: wavecd checks
// windows before a sync starts.
package syncwindow
