// Package notify owns notifications as Argo CD users configure them: it
// reads argocd-notifications-cm and argocd-notifications-secret, the
// subscription annotations of Applications and AppProjects, evaluates
// triggers against each Application and sends what they say to Slack,
// Microsoft Teams, email, GitHub, Opsgenie or any webhook.
//
// Configuration (config.go) is Argo CD's, unchanged: service.<type>[.<name>]
// keys whose strings may name a Secret key as $key, template.<name> (Go
// templates, template.go), trigger.<name> (conditions with `when`,
// `oncePer` and `send`, in the expr language, trigger.go), defaultTriggers
// and defaultTriggers.<service>, `subscriptions` with label selectors,
// and `context`. A key that cannot be read is left out and reported (a
// Warning Event on the ConfigMap, naming the key); the others work.
// Subscriptions (subscriptions.go) come from the
// notifications.argoproj.io/subscribe.<trigger>.<service> annotations (and
// the subscribe.<service> and subscriptions forms) of the app and its
// project, and from the `subscriptions` key.
//
// Triggers and templates see what Argo CD gives them (vars.go): app,
// appProject, context, secrets, serviceType, recipient, and the function
// namespaces time, strings, sync and repo (its offline part: the commit
// metadata and app details Argo CD asks its repo server for are not
// available). wavecd adds the wavecd namespace (wavecd.go): Stall() reads
// the SyncStalled condition (the blocked wave, the scheduler's reason,
// where the node provisioner sits), DependencyWait() the DependencyWait
// condition and its age, Bootstrap() a root app of apps with its
// descendants, wall time and slowest wave. The catalog (catalog.yaml) holds
// Argo CD's default triggers and templates and wavecd's on-stalled,
// on-dependency-wait and on-bootstrap-complete; the Helm chart and `wavecd
// up --settings` install it.
//
// The Controller watches the Applications of its namespace on its own
// (a manager Runnable, run on the leader), as Argo CD's notifications
// controller does beside its application controller, and looks at each
// app on every change and every resync (a minute), skipping an app whose
// sync ended after its last comparison. What was sent is kept, as in Argo
// CD, in the app's notified.notifications.argoproj.io annotation (oncePer
// values included), written with a merge patch of that annotation alone,
// and in memory, so neither a restart nor a stale cache sends twice.
//
// Deliveries (deliver.go) run in the background, a few at a time: a
// receiver that is slow or down never holds up an evaluation, and nothing
// here is in the path of a sync. A failed delivery is retried with
// backoff (a webhook's retryMax, retryWaitMin and retryWaitMax; 3 retries
// from 1 s to 5 s otherwise; a receiver's Retry-After is honoured; a 4xx
// other than 408 and 429 is final); one that fails for good leaves a
// Warning Event on the app (NotificationDeliveryFailed) and is counted in
// wavecd_notifications_deliveries_total. The values of
// argocd-notifications-secret are masked in every logged or recorded
// error, and errors never quote a request's URL or headers.
//
// What the package does not own: deciding that a sync stalled or waits
// on a dependency (internal/controller, internal/sync write the
// conditions it reads), the metrics registry (internal/server).
package notify
