-- A typical check: read the Ready condition.
local hs = { status = "Progressing", message = "Waiting for the widget controller" }
if obj.status ~= nil and obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Ready" and c.status == "True" then
      hs.status = "Healthy"
      hs.message = c.message
    elseif c.type == "Ready" and c.status == "False" then
      hs.status = "Degraded"
      hs.message = string.format("%s: %s", c.reason, c.message)
    end
  end
end
return hs
