-- An endless loop: the run limit must stop it.
local n = 0
while true do
  n = n + 1
end
return { status = "Healthy" }
