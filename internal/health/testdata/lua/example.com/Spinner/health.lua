-- An endless loop: the run limit must stop it. (A loop that counts would
-- allocate a number per step and meet the memory budget first.)
while true do
end
return { status = "Healthy" }
