-- wrk: POST /dashboard/sign-in with a wrong password for EMAIL, as a flood of sign-in attempts would: the sign-in
-- form's token is a cookie the form carries back (any 64 hex digits the client picks pass that check), so every
-- request reaches the throttle and, past it, bcrypt.
local token = string.rep("ab", 32)
local email = os.getenv("EMAIL") or "ops@example.com"

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/x-www-form-urlencoded"
  wrk.headers["Cookie"] = "storekeeper_signin=" .. token
  wrk.body = "email=" .. email .. "&password=not-the-password-at-all&csrf=" .. token .. "&next=%2Fdashboard"
end
