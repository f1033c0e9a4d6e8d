-- wrk: GET /v1/customers/<id><SUFFIX> for the users of users.txt in turn, with the app's public key (SUFFIX, such as
-- "/placements/onboarding", is empty by default: the customer's state). With NONCE set, every request carries a new
-- X-Nonce, as the SDK's do, so that each signed answer is signed for its own request.
local users = {}
for line in io.lines(os.getenv("USERS")) do users[#users + 1] = line end
local suffix = os.getenv("SUFFIX") or ""
local nonces = os.getenv("NONCE") ~= nil
local alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local counter = 0

-- 16 base64 characters: 12 random bytes, as the SDK sends them.
local function nonce()
  local out = {}
  for i = 1, 16 do
    local at = math.random(1, 64)
    out[i] = alphabet:sub(at, at)
  end
  return table.concat(out)
end

function init(args)
  wrk.headers["Authorization"] = "Bearer " .. os.getenv("PUBLIC_KEY")
end

function request()
  counter = counter + 1
  local headers = nil
  if nonces then
    -- A table given to wrk.format replaces wrk.headers: the key goes in it too.
    headers = { ["Authorization"] = wrk.headers["Authorization"], ["X-Nonce"] = nonce() }
  end
  return wrk.format("GET", "/v1/customers/" .. users[(counter % #users) + 1] .. suffix, headers)
end
