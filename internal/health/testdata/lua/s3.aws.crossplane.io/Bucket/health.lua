-- An exact match wins over the crossplane.io wildcard.
return { status = "Suspended", message = "buckets are checked by hand" }
