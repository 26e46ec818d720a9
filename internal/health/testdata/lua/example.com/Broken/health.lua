-- A syntax error: the if has no then.
hs = {}
if obj.status == nil
  hs.status = "Progressing"
end
return hs
