-- wrk: GET /v1/customers/<id><SUFFIX> for the users of users.txt in turn, with the app's public key (SUFFIX, such as
-- "/placements/onboarding", is empty by default: the customer's state).
local users = {}
for line in io.lines(os.getenv("USERS")) do users[#users + 1] = line end
local suffix = os.getenv("SUFFIX") or ""
local counter = 0

function init(args)
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("PUBLIC_KEY")
end

function request()
  counter = counter + 1
  return wrk.format("GET", "/v1/customers/" .. users[(counter % #users) + 1] .. suffix)
end
