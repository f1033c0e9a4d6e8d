-- wrk: GET /v1/customers/<id> for the users of users.txt in turn, with the app's public key.
local users = {}
for line in io.lines(os.getenv("USERS")) do users[#users + 1] = line end
local counter = 0

function init(args)
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("PUBLIC_KEY")
end

function request()
  counter = counter + 1
  return wrk.format("GET", "/v1/customers/" .. users[(counter % #users) + 1])
end
