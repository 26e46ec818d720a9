-- Forgets to return a table.
local hs = { status = "Healthy" }
