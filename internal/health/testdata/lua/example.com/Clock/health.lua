-- Needs the coroutine library, which only open libs provide.
local gen = coroutine.wrap(function() coroutine.yield("Healthy") end)
return { status = gen(), message = "ticking" }
