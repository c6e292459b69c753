#!/usr/bin/env python3
"""Opens a page of `rtlat evaluate` (DIR/report.html) in headless Chromium
with the network blocked, and prints what the browser saw as one JSON
object on stdout; the test that runs it (crates/rtlat/tests/integration/
evaluate_browser.rs) decides what is right.

    check_report.py REPORT ARTIFACTS
    check_report.py --tools

REPORT is the page; ARTIFACTS a directory for the screenshots
(desktop.png, phone.png), the probe page and the browser's profile.
--tools only checks that the tools are there (exit status 0 or 77).

What it looks at:
- a probe page first, with an image from another host: proof that what
  follows sees a request and its console error, and that the blocked
  network refuses the request;
- the report at 1280 px: the browser's console (level SEVERE), each
  <section> (id, heading, height), each <svg> (its box), the requests the
  page made besides itself (the DevTools network events) and the
  resource entries of its Performance timeline, and a screenshot of the
  whole page;
- the report as a phone shows it (390 CSS px wide, device-width viewport,
  touch): the layout width, the document's width, the elements beyond the
  right edge, each <svg>'s box, and a screenshot.

Exit status: 0 with the JSON on stdout; 77 with a line "missing: WHAT"
on stderr when selenium, chromium or chromedriver is missing; 1 on any
other failure, with the reason on stderr. It ends within LIMIT seconds
and closes the browser whatever happens.
"""

import base64
import json
import os
import pathlib
import shutil
import signal
import sys

# Never ask Selenium Manager to download a driver or a browser: the
# driver's path is given below, and nothing here may use the network.
os.environ["SE_OFFLINE"] = "true"

LIMIT = 60
DESKTOP = (1280, 900)
PHONE = (390, 844)


def missing(what):
    print(f"missing: {what}", file=sys.stderr)
    sys.exit(77)


def tools():
    try:
        import selenium  # noqa: F401
    except ImportError:
        missing("the Python module selenium (pip install selenium)")
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        missing("chromium (Debian's chromium package)")
    driver = shutil.which("chromedriver")
    if driver is None:
        missing("chromedriver (Debian's chromium-driver package)")
    return browser, driver


class TimedOut(Exception):
    pass


def on_alarm(_signum, _frame):
    raise TimedOut(f"still running after {LIMIT} s")


def start(browser, driver, profile):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for flag in [
        "--headless=new",
        "--no-sandbox",  # root, in CI
        "--disable-gpu",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        f"--window-size={DESKTOP[0]},{DESKTOP[1]}",
        "--hide-scrollbars",
        # The blocked network: every host name fails to resolve and every
        # connection goes to a proxy that is not there (port 9, discard).
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=127.0.0.1:9",
        "--proxy-bypass-list=<-loopback>",
        # Nothing of the browser's own in the background.
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions",
    ]:
        options.add_argument(flag)
    options.set_capability(
        "goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"}
    )
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def severe(d):
    """The console's SEVERE entries since the last look."""
    return [e["message"] for e in d.get_log("browser") if e.get("level") == "SEVERE"]


def network(d):
    """The requests since the last look: each one's URL and, where it
    failed, why."""
    requests = {}
    for entry in d.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message.get("method") == "Network.requestWillBeSent":
            requests[params["requestId"]] = {"url": params["request"]["url"]}
        elif message.get("method") == "Network.loadingFailed":
            requests.setdefault(params["requestId"], {"url": None})
            requests[params["requestId"]]["failed"] = params.get("errorText")
    return list(requests.values())


def load(d, url):
    """Loads `url` afresh, the logs emptied of what came before."""
    d.get("about:blank")
    d.get_log("browser")
    d.get_log("performance")
    d.get(url)


def screenshot(d, path):
    """The whole page, not only what the window shows."""
    width, height = d.execute_script(
        "return [document.documentElement.scrollWidth,"
        " document.documentElement.scrollHeight]"
    )
    shot = d.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1},
        },
    )
    pathlib.Path(path).write_bytes(base64.b64decode(shot["data"]))
    return str(path)


SVG_BOXES = """
return Array.from(document.querySelectorAll('svg')).map(function (s) {
  var r = s.getBoundingClientRect();
  return {label: s.getAttribute('aria-label'), width: r.width,
          height: r.height, left: r.left, right: r.right};
});
"""

SECTIONS = """
return Array.from(document.querySelectorAll('section')).map(function (s) {
  var h = s.querySelector('h2');
  return {id: s.id, heading: h ? h.textContent : null,
          height: s.getBoundingClientRect().height};
});
"""

WIDTHS = """
return {inner_width: window.innerWidth,
        scroll_width: document.documentElement.scrollWidth};
"""

# The elements whose box ends beyond arguments[0] (the phone's width: a
# page too wide for it widens a phone's layout, and its innerWidth with
# it), outside any box that scrolls or clips them (what makes the page
# scroll sideways), at most 10.
BEYOND = """
var edge = arguments[0], out = [];
var clipped = function (e) {
  for (var p = e.parentElement; p; p = p.parentElement) {
    var o = getComputedStyle(p).overflowX;
    if (o === 'auto' || o === 'scroll' || o === 'hidden') return true;
  }
  return false;
};
document.querySelectorAll('body *').forEach(function (e) {
  if (out.length < 10 && e.getBoundingClientRect().right > edge + 1
      && !clipped(e)) {
    out.push(e.tagName.toLowerCase() + (e.id ? '#' + e.id : '')
             + ' right=' + Math.round(e.getBoundingClientRect().right));
  }
});
return out;
"""

RESOURCES = """
return performance.getEntriesByType('resource').map(function (e) { return e.name; });
"""


def check(d, report, artifacts):
    page_url = report.resolve().as_uri()

    probe = artifacts / "probe.html"
    probe.write_text(
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        "<title>probe</title></head><body>"
        '<img src="http://example.com/rtlat-probe.png" alt="probe"></body></html>\n'
    )
    load(d, probe.resolve().as_uri())
    probe_seen = {
        "severe": severe(d),
        "requests": [
            r for r in network(d) if r["url"] != probe.resolve().as_uri()
        ],
    }

    load(d, page_url)
    desktop = {
        "severe": severe(d),
        "requests": [r for r in network(d) if r["url"] != page_url],
        "resources": d.execute_script(RESOURCES),
        "sections": d.execute_script(SECTIONS),
        "svgs": d.execute_script(SVG_BOXES),
        **d.execute_script(WIDTHS),
        "screenshot": screenshot(d, artifacts / "desktop.png"),
    }

    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": PHONE[0], "height": PHONE[1], "deviceScaleFactor": 2, "mobile": True},
    )
    d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": True})
    load(d, page_url)
    phone = {
        "severe": severe(d),
        "requests": [r for r in network(d) if r["url"] != page_url],
        "svgs": d.execute_script(SVG_BOXES),
        "beyond": d.execute_script(BEYOND, PHONE[0]),
        "phone_width": PHONE[0],
        **d.execute_script(WIDTHS),
        "screenshot": screenshot(d, artifacts / "phone.png"),
    }
    return {"page": page_url, "probe": probe_seen, "desktop": desktop, "phone": phone}


def main():
    if sys.argv[1:] == ["--tools"]:
        tools()
        return 0
    if len(sys.argv) != 3:
        print("usage: check_report.py REPORT ARTIFACTS | --tools", file=sys.stderr)
        return 1
    report = pathlib.Path(sys.argv[1])
    artifacts = pathlib.Path(sys.argv[2])
    browser, driver = tools()
    artifacts.mkdir(parents=True, exist_ok=True)
    signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(LIMIT)
    d = None
    try:
        d = start(browser, driver, artifacts / "profile")
        result = check(d, report, artifacts)
    except Exception as e:  # noqa: BLE001 - reported, then exit 1
        print(f"check_report.py: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        signal.alarm(0)
        if d is not None:
            d.quit()
        shutil.rmtree(artifacts / "profile", ignore_errors=True)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
