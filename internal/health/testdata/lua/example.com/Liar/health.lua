-- A status outside the six health codes.
return { status = "Great", message = "all good" }
