-- wrk: POST each line of payloads.txt once, in order (threads take turns through one shared list).
local bodies = {}
for line in io.lines(os.getenv("PAYLOADS")) do bodies[#bodies + 1] = line end
local counter = 0
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  stride = tonumber(os.getenv("THREADS") or "1")
  counter = id
end

function request()
  local body = bodies[(counter % #bodies) + 1]
  counter = counter + stride
  return wrk.format(nil, nil, nil, body)
end
