local hs = { status = "Progressing", message = "Waiting for the widget" }
if obj.status ~= nil and obj.status.ready then
  hs = { status = "Healthy", message = "widget ready" }
end
return hs
