-- Any Crossplane managed resource: Ready and Synced conditions.
local hs = { status = "Progressing", message = "" }
if obj.status and obj.status.conditions then
  for _, c in ipairs(obj.status.conditions) do
    if c.type == "Synced" and c.status == "False" then
      return { status = "Degraded", message = c.message }
    end
    if c.type == "Ready" and c.status == "True" then
      hs.status = "Healthy"
      hs.message = "Resource is up-to-date."
    end
  end
end
return hs
