-- A core-group kind (no group folder). Sets a global to prove runs do not share globals.
runs = (runs or 0) + 1
return { status = "Healthy", message = "run " .. tostring(runs) }
