-- Library check for Deployments, to show that it wins over the built-in check.
return { status = "Suspended", message = "from the library" }
