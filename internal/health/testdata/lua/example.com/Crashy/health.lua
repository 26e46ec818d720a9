-- A runtime error: status is absent in the test object.
local hs = {}
hs.status = obj.status.phase
return hs
