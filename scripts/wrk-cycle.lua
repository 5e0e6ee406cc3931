-- wrk script for scripts/bench-serve: each request takes the next path from the
-- file named by $WRK_PATHS (one path per line), cycling, so a run spreads over
-- every query of the set instead of repeating one.
local paths = {}
for line in io.lines(os.getenv("WRK_PATHS")) do
  if #line > 0 then paths[#paths + 1] = line end
end
local i = 0
request = function()
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
