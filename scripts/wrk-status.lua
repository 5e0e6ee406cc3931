-- wrk script for scripts/bench-limits: requests the path in $WRK_PATH (a GET,
-- or a JSON POST of $WRK_BODY when that is set) and tallies responses by status
-- in each thread; `done` prints one JSON line
-- `{"status": {"200": n, "429": n, ...}}` summed over the threads.
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  counts = {}
end

local body = os.getenv("WRK_BODY")

request = function()
  if body and #body > 0 then
    return wrk.format("POST", os.getenv("WRK_PATH"), { ["content-type"] = "application/json" }, body)
  end
  return wrk.format("GET", os.getenv("WRK_PATH"))
end

function response(status, headers, body)
  counts[status] = (counts[status] or 0) + 1
end

function done(summary, latency, requests)
  local total = {}
  for _, t in ipairs(threads) do
    local c = t:get("counts")
    for status, n in pairs(c) do
      total[status] = (total[status] or 0) + n
    end
  end
  local parts = {}
  for status, n in pairs(total) do
    parts[#parts + 1] = string.format('"%d": %d', status, n)
  end
  io.write(string.format('STATUS {"status": {%s}}\n', table.concat(parts, ", ")))
end
