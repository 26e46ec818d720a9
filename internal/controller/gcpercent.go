package controller

import (
	"context"
	"os"
	"runtime/debug"
)

// gcPercent is the collector's headroom (GOGC) a controller process runs
// with: the heap may grow by half its live size before the next
// collection, where Go's default lets it double. What outlives a burst of
// work (a bootstrap of a thousand apps: the apps' cache, each app's last
// render) ends up scattered over the spans of the burst's whole heap goal,
// and those spans stay resident after it: the settled memory follows the
// goal, not the live heap. At 1,000 apps (28 MB live) the settled memory
// went from 132.6 to 120.9 MiB and from 137.2 to 123.4 MiB (paired runs of
// bench/peers), with no more CPU (5.89 and 5.54 ms per app); at 5,000
// apps (150 to 230 MB live) half the default took the settled memory from
// 336-341 to 261-295 MiB and the peak from 530-572 to 375-408 MiB.
const gcPercent = 50

// holdGCPercent sets gcPercent for the process until ctx ends, then the
// percent it found. The GOGC environment variable, when set, is the
// user's choice and stands.
func holdGCPercent(ctx context.Context) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return
	}
	prev := debug.SetGCPercent(gcPercent)
	<-ctx.Done()
	debug.SetGCPercent(prev)
}
