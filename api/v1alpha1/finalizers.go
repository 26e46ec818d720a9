package v1alpha1

// The finalizers of an Application, as Argo CD names them.
const (
	// FinalizerResources deletes the app's objects before the app, in the
	// foreground (the plain name and /foreground) or the background.
	FinalizerResources           = "resources-finalizer.argocd.argoproj.io"
	FinalizerResourcesForeground = FinalizerResources + "/foreground"
	FinalizerResourcesBackground = FinalizerResources + "/background"
	// FinalizerPreDelete holds the app until its PreDelete hooks ran, and
	// its /cleanup stage until they were deleted as their delete policies
	// say; the controller adds both while the app's Git holds such hooks.
	FinalizerPreDelete        = "pre-delete-finalizer.argocd.argoproj.io"
	FinalizerPreDeleteCleanup = FinalizerPreDelete + "/cleanup"
	// FinalizerPostDelete and its /cleanup stage are the same for
	// PostDelete hooks.
	FinalizerPostDelete        = "post-delete-finalizer.argocd.argoproj.io"
	FinalizerPostDeleteCleanup = FinalizerPostDelete + "/cleanup"
)
