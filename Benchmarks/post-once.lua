-- wrk: POST each line of payloads.txt exactly once, then stop (threads take turns through one shared list).
local bodies = {}
for line in io.lines(os.getenv("PAYLOADS")) do bodies[#bodies + 1] = line end
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
  local body = bodies[counter + 1] or bodies[1]
  counter = counter + stride
  return wrk.format(nil, nil, nil, body)
end

function response(status, headers, body)
  if counter >= #bodies + stride * 16 then wrk.thread:stop() end
end
