// Package provisioner finds the apps that deploy a node provisioner, for
// the explanation of a stalled sync whose pods cannot be scheduled (see
// internal/sync): Applications that hold Karpenter's NodePool, or that are
// annotated wavecd.io/node-provisioner: "true" (the Application or one of
// its objects), with whether the provisioner runs and why it may not (its
// last sync failed, or failed and waits to be retried).
//
// Child Applications a parent has not created yet are found in the
// parent's rendered manifests and rendered themselves, so a provisioner in
// a later wave is named, with its parent and wave, before it exists.
//
// What the package does not own: detecting and explaining a stall
// (internal/sync), rendering (its caller's Render).
package provisioner
