"""The dashboard in a real Chromium (Debian's chromium and chromium-driver, driven by Selenium from PyPI).

Signs in (a wrong password first), opens every page, checks that no page logs a console error, that the numbers
shown equal the API's JSON, that a CSV downloads and equals the API's CSV, that a page without a session goes to the
sign-in page, that the header holds on one line at 1280 px and every chart point has its value on hover, that the
customer list's statuses are the API's, and saves a screenshot of the overview and of every page (in a folder
`pages` beside the overview's).

Usage: browser_test.py BASE_URL APP_ID SECRET_KEY EMAIL PASSWORD SCREENSHOT_PATH FRESH_APP_ID   (run by .ci/browser.sh)
"""

import json
import pathlib
import shutil
import sys
import tempfile
import time
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

base, app, secret, email, password, screenshot, fresh = sys.argv[1:8]
environment = "Sandbox"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print("FAIL:", message)


def api(path, accept="application/json"):
    request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {secret}", "Accept": accept})
    with urllib.request.urlopen(request) as response:
        body = response.read().decode()
    return json.loads(body) if accept == "application/json" else body


def api_send(method, path, body, key=None):
    request = urllib.request.Request(
        base + path, method=method, data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {key or secret}", "Content-Type": "application/json"})
    with urllib.request.urlopen(request) as response:
        return json.loads(response.read().decode() or "null")


downloads = tempfile.mkdtemp()
options = webdriver.ChromeOptions()
options.binary_location = "/usr/bin/chromium"
for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,1900"]:
    options.add_argument(argument)
options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
options.add_experimental_option("prefs", {"download.default_directory": downloads, "download.prompt_for_download": False})
driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
driver.execute_cdp_cmd("Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": downloads})


def wait_for_url(fragment, seconds=10):
    """A click that submits a form returns before the next page has loaded: wait for it."""
    deadline = time.time() + seconds
    while fragment not in driver.current_url and time.time() < deadline:
        time.sleep(0.05)
    return fragment in driver.current_url


def console_errors(page):
    for entry in driver.get_log("browser"):
        if entry["level"] == "SEVERE":
            check(False, f"console error on {page}: {entry['message']}")


shots = pathlib.Path(screenshot).parent / "pages"
shutil.rmtree(shots, ignore_errors=True)
shots.mkdir(parents=True)


def open_page(path):
    driver.get(base + path)
    console_errors(path)
    heading = driver.find_element(By.TAG_NAME, "h1").text
    check(heading not in ("Not found", "That did not work", "Something went wrong"), f"{path} answered an error page: {heading}")
    # The header on one line at this window's 1280 px: the sign-out button level with the brand.
    brand = driver.find_elements(By.CSS_SELECTOR, "header .brand")
    button = driver.find_elements(By.CSS_SELECTOR, "header form button")
    if brand and button:
        top, bottom = brand[0].rect["y"], brand[0].rect["y"] + brand[0].rect["height"]
        check(button[0].rect["y"] < bottom and button[0].rect["y"] + button[0].rect["height"] > top,
              f"{path}: the header wraps the sign-out button onto another line at 1280 px")
    # Every drawn point of a chart says its day and value on hover.
    for chart in driver.find_elements(By.CSS_SELECTOR, "svg.chart"):
        points = chart.find_elements(By.CSS_SELECTOR, "circle.point")
        titled = chart.find_elements(By.CSS_SELECTOR, "circle.point > title")
        check(len(points) == len(titled), f"{path}: a chart point has no title")
    name = urllib.parse.urlsplit(path).path.removeprefix("/dashboard").strip("/").replace("/", "_") or "apps"
    name = name.replace(app, "app").replace(fresh, "fresh-app") + ("_" + urllib.parse.urlsplit(path).query.split("type=")[1] if "type=" in path else "")
    driver.save_screenshot(str(shots / f"{name}.png"))
    return heading


def data_values(field):
    return [float(cell.get_attribute("data-value")) for cell in driver.find_elements(By.CSS_SELECTOR, f'td[data-field="{field}"]')]


def sign_in(with_password):
    driver.find_element(By.NAME, "email").clear()
    driver.find_element(By.NAME, "email").send_keys(email)
    driver.find_element(By.NAME, "password").send_keys(with_password)
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()


try:
    overview_path = f"/dashboard/apps/{app}?environment={environment}"

    # Without a session, a page goes to the sign-in page (which returns to it afterwards).
    driver.get(base + overview_path)
    check("/dashboard/sign-in" in driver.current_url, f"no session: expected the sign-in page, got {driver.current_url}")

    # A wrong password fails, and says so.
    sign_in("not the password at all")
    deadline = time.time() + 10
    while "Wrong email or password." not in driver.page_source and time.time() < deadline:
        time.sleep(0.05)
    check("/dashboard/sign-in" in driver.current_url, "a wrong password left the sign-in page")
    check("Wrong email or password." in driver.page_source, "a wrong password did not say so")
    for entry in driver.get_log("browser"):  # the 401 itself is logged by Chromium as a failed resource: expected
        check("401" in entry["message"], f"console error on a wrong password: {entry['message']}")

    # The right one opens the page asked for.
    sign_in(password)
    wait_for_url(overview_path)
    check(driver.current_url.endswith(overview_path), f"after sign-in: expected the overview, got {driver.current_url}")
    console_errors("overview")

    # The headline numbers are the API's.
    overview = api(f"/v1/apps/{app}/metrics/overview?environment={environment}")
    for key in ["mrr", "arr", "activeSubscriptions", "activeTrials", "revenueLast30Days", "refundsLast30Days",
                "trialConversionLast30Days", "churnLast30Days"]:
        card = driver.find_element(By.CSS_SELECTOR, f'[data-figure="{key}"]')
        shown = card.get_attribute("data-value")
        expected = overview[key]
        check((shown == "" and expected is None) or (shown != "" and expected is not None and abs(float(shown) - expected) < 1e-9),
              f"overview {key}: page {shown}, API {expected}")
    mrr_text = driver.find_element(By.CSS_SELECTOR, '[data-figure="mrr"] .number').text
    check(mrr_text == f"{overview['mrr']:,.2f}", f"MRR shown as {mrr_text}, API {overview['mrr']}")
    check(overview["activeSubscriptions"] > 0, "the population left no active subscription to show")
    check("Sandbox data" in driver.page_source, "sandbox data is not labelled")
    check(len(driver.find_elements(By.CSS_SELECTOR, "svg.chart")) == 4, "the overview does not draw its four charts")
    # No rate was imported: the server's feed loaded them by itself, and the page says from where and of which day.
    check(not overview["unconverted"], f"a fresh install's rates leave currencies out: {overview['unconverted']}")
    check("leaves out" not in driver.page_source, "the overview warns of currencies left out")
    check("Exchange rates to USD: the latest of 2026-10-30." in driver.page_source and "Fetched from" in driver.page_source,
          "the overview does not say the rates were fetched")
    pathlib.Path(screenshot).parent.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(screenshot)

    # Every page of the navigation, and every metric.
    links = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, 'nav[aria-label="app"] a')]
    check(len(links) >= 8, f"the navigation has {len(links)} links")
    metrics = [m["name"] for m in api(f"/v1/apps/{app}/metrics")["metrics"]]
    pages = [urllib.parse.urlsplit(link) for link in links]
    paths = [p.path + ("?" + p.query if p.query else "") for p in pages]
    paths += [f"/dashboard/apps/{app}/metrics/{m}?environment={environment}" for m in metrics]
    paths += ["/dashboard", f"/dashboard/apps/{app}/events?environment={environment}&type=subscription_started"]
    for path in paths:
        open_page(path)

    # Two apps: the list shows both. The one without customers says what to do first, with its notification URL.
    open_page("/dashboard")
    listed = [a.get_attribute("href") for a in driver.find_elements(By.CSS_SELECTOR, "main li a")]
    check(any(link.endswith(f"/dashboard/apps/{app}") for link in listed) and any(link.endswith(f"/dashboard/apps/{fresh}") for link in listed),
          f"the app list shows {listed}")
    open_page(f"/dashboard/apps/{fresh}?environment={environment}")
    steps = driver.find_elements(By.CSS_SELECTOR, "#first-steps [data-field=notificationURL]")
    check(steps and steps[0].text.endswith(f"/v1/apps/{fresh}/notifications/appstore"), "a new app's overview does not say where notifications go")

    # A metric page's table is the API's series (the same defaults: the 30 days up to tomorrow, by day).
    for metric in ["mrr", "revenue", "activeSubscriptions", "trialConversion"]:
        open_page(f"/dashboard/apps/{app}/metrics/{metric}?environment={environment}")
        series = api(f"/v1/apps/{app}/metrics/{metric}?environment={environment}")
        shown = data_values("value")
        expected = [point["value"] for point in series["points"]]
        check(len(shown) > 0 and shown == expected, f"{metric}: page {shown[:5]}…, API {expected[:5]}…")

    # The CSV link downloads what the API answers as CSV.
    open_page(f"/dashboard/apps/{app}/metrics/revenue?environment={environment}&interval=week")
    driver.find_element(By.LINK_TEXT, "CSV").click()
    target = pathlib.Path(downloads) / "revenue.csv"
    for _ in range(100):
        if target.exists():
            break
        time.sleep(0.1)
    check(target.exists(), "the CSV did not download")
    if target.exists():
        expected_csv = api(f"/v1/apps/{app}/metrics/revenue?environment={environment}&interval=week", accept="text/csv")
        check(target.read_text() == expected_csv, "the downloaded CSV differs from the API's")

    # Customers: a customer from the event stream, found by search; the raw signed data one click away.
    open_page(f"/dashboard/apps/{app}/events?environment={environment}")
    customer_link = driver.find_element(By.CSS_SELECTOR, "tbody a").get_attribute("href")
    open_page(urllib.parse.urlsplit(customer_link).path + f"?environment={environment}")
    raw_link = driver.find_element(By.LINK_TEXT, "raw")
    name = driver.find_element(By.TAG_NAME, "h1").text.removeprefix("Customer ")
    raw_link.click()
    wait_for_url("/raw/")
    console_errors("raw")
    check(driver.find_elements(By.CSS_SELECTOR, "pre"), "the raw page shows no data")
    # The customer list: newest first, each status the API's for that customer; the status filter keeps its own.
    open_page(f"/dashboard/apps/{app}/customers?environment={environment}")
    rows = driver.find_elements(By.CSS_SELECTOR, "#customer-list tbody tr")
    check(len(rows) > 0, "the customer list is empty")
    for row in rows[:5]:
        shown = row.find_element(By.CSS_SELECTOR, '[data-field="status"]').text
        listed = row.find_element(By.CSS_SELECTOR, "a").text
        state = api(f"/v1/customers/{urllib.parse.quote(listed)}?environment={environment}")["state"]
        check(shown == state, f"customer {listed}: the list says {shown}, the API {state}")
    open_page(f"/dashboard/apps/{app}/customers?environment={environment}&status=active")
    statuses = {cell.text for cell in driver.find_elements(By.CSS_SELECTOR, '#customer-list [data-field="status"]')}
    check(statuses == {"active"}, f"the active filter shows {statuses}")
    open_page(f"/dashboard/apps/{app}/customers?environment={environment}")
    driver.find_element(By.NAME, "q").send_keys(name)
    driver.find_element(By.CSS_SELECTOR, "form.controls button").click()
    wait_for_url("/customers/")
    check(driver.find_element(By.TAG_NAME, "h1").text == f"Customer {name}", f"searching {name} did not open the customer")
    console_errors("customer search")

    # Experiments: a definition typed into the form (a refused one first), started and paused with the buttons; the
    # results table has a row per variant with the API's exposure counts.
    api_send("PUT", f"/v1/apps/{app}/paywalls/plain", {"products": ["pro.monthly"]})
    api_send("PUT", f"/v1/apps/{app}/paywalls/bold", {"products": ["pro.yearly", "pro.monthly"], "config": {"hero": "stars"}})
    api_send("PUT", f"/v1/apps/{app}/placements/onboarding", {"defaultPaywall": "plain"})
    open_page(f"/dashboard/apps/{app}/experiments?environment={environment}")
    def submit_definition(text):
        area = driver.find_element(By.NAME, "definition")
        area.clear()
        area.send_keys(text)
        driver.find_element(By.CSS_SELECTOR, "section form button[type=submit]").click()
    submit_definition('{"key": "browser-test", "placement": "onboarding", "coverage": 3, "variants": [{"key": "control"}, {"key": "bold"}]}')
    deadline = time.time() + 10
    while not driver.find_elements(By.ID, "definition-error") and time.time() < deadline:
        time.sleep(0.05)
    errors = driver.find_elements(By.ID, "definition-error")
    check(errors and "coverage" in errors[0].text, "a refused definition did not say why")
    for entry in driver.get_log("browser"):  # the 400 itself is logged by Chromium as a failed resource: expected
        check("400" in entry["message"], f"console error on a refused definition: {entry['message']}")
    submit_definition('{"key": "browser-test", "placement": "onboarding", "variants": [{"key": "control"}, {"key": "bold", "paywall": "bold"}]}')
    check(wait_for_url("/experiments/browser-test"), f"creating an experiment did not open it: {driver.current_url}")
    console_errors("experiment")
    driver.find_element(By.XPATH, "//button[text()='Start']").click()
    deadline = time.time() + 10
    while "Pause" not in driver.page_source and time.time() < deadline:
        time.sleep(0.05)
    check(driver.find_element(By.CSS_SELECTOR, '[data-field="status"]').text == "running", "Start did not start the experiment")
    for user in ["browser-a", "browser-b", "browser-c"]:
        answer = api(f"/v1/customers/{user}/placements/onboarding?environment={environment}")
        if answer["experiment"]:
            api_send("POST", f"/v1/customers/{user}/exposures?environment={environment}",
                     {"experiment": "browser-test", "variant": answer["experiment"]["variant"], "phase": 0, "placement": "onboarding"})
    open_page(f"/dashboard/apps/{app}/experiments/browser-test?environment={environment}")
    results = api(f"/v1/apps/{app}/experiments/browser-test/results?environment={environment}")
    for arm in results["arms"]:
        cell = driver.find_element(By.CSS_SELECTOR, f'tr[data-variant="{arm["key"]}"] td[data-field="exposed"]')
        check(int(cell.text) == arm["exposed"], f"{arm['key']}: page shows {cell.text} exposed, API {arm['exposed']}")
    check(sum(arm["exposed"] for arm in results["arms"]) == 3, f"three exposures expected: {results['arms']}")
    driver.find_element(By.XPATH, "//button[text()='Pause']").click()
    deadline = time.time() + 10
    while "Resume" not in driver.page_source and time.time() < deadline:
        time.sleep(0.05)
    check(api(f"/v1/apps/{app}/experiments/browser-test")["status"] == "paused", "Pause did not pause the experiment")
    console_errors("experiment paused")

    # Sign out: the session ends.
    driver.find_element(By.CSS_SELECTOR, "header form button").click()
    check(wait_for_url("/dashboard/sign-in"), "sign-out did not return to the sign-in page")
    driver.get(base + overview_path)
    check("/dashboard/sign-in" in driver.current_url, "after sign-out a page still opened")
finally:
    driver.quit()
    shutil.rmtree(downloads, ignore_errors=True)

if failures:
    print(f"browser test: {len(failures)} failure(s)")
    sys.exit(1)
print(f"browser test: every page opened in Chromium, numbers equal to the API's, CSV downloaded; screenshots {screenshot} and {shots}/")
