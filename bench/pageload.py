#!/usr/bin/env python3
"""What users feel: headless Chromium loads a page of about 100 assets over
h2 with TLS from mod_h2 ("ours"), stock mod_http2, nginx and h2o, each in
its default configuration plus what it needs to serve the files (MIME
types for the fonts; nginx: its mime.types), on loopback and through the
20 ms delay link of bench/upload.py (bench/delay_proxy.c, 10 ms each way,
TCP level: TLS and h2 pass through it).

    python3 bench/pageload.py [--loads 20] [--servers ours,stock,nginx,h2o]
                              [--cells loopback-cold,loopback-warm,20ms-cold,20ms-warm]
                              [--tag pageload]
    python3 bench/pageload.py --report results/<stamp>-pageload.json

--servers may add "ours-nowarm": ours on its H2TLSWarmUpSize 0 port (as
in refs.py; nginx and h2o send full TLS records from the start).

The page (generated deterministically into bench/run/pageload-site/, then
copied to /page/ of the docroots): index.html with 3 stylesheets and one
render-blocking script in <head>, 4 fonts (@font-face, subsets of the
system's DejaVu fonts as WOFF when fontTools is there, else random bytes,
which Chromium still downloads), a 1.5 MB hero image right after the
heading, 80 images of 2-60 KB and 6 CSS background images (valid PNGs of
noise, so they decode and cost what compressed images cost), 2 defer and
2 async scripts: 100 responses, 3.2 MB.

Cells: "cold" = a new browser context per load (Chromium's incognito-like
context: no connection, no TLS session to resume); "warm" = the page
loaded again over the h2 connection the context already has (blocks of 5
loads per server after one unmeasured load; whether the connection was
reused is recorded per load). The HTTP cache is off in both
(Network.setCacheDisabled), so every asset is fetched every time. Cold
loads interleave the servers load by load, warm ones block by block.

From the browser's own timing (Navigation Timing, Paint Timing, Resource
Timing): TTFB = responseStart of the page (from the navigation's start,
so cold includes TCP + TLS), FCP, load = loadEventEnd, bytes = transferSize
of page and resources. Medians and p90 over --loads loads per cell.
RFC 9218: from the DevTools protocol, the priority Chromium gave each
request and the `priority` header it sent; from Resource Timing, the
order in which the responses ended. Reported: whether the hero image was
requested while a render-blocking response (renderBlockingStatus
"blocking": the CSS and the head script) was still open, i.e. whether the
server chose the order at all; where the last of those finished against
the hero, and the mean finishing position of each urgency. A load in which
Chromium aborted requests with ERR_NETWORK_CHANGED (addresses on this
machine change with others' work) is repeated, twice at most.

Chromium runs with --ignore-certificate-errors (a benchmark against the
sandbox's own CA) and a private profile under bench/run/pageload/.
Servers listen on 127.0.0.1 ports 49xxx (ours 49080/49443, stock
49180/49543, nginx 49280/49643, h2o 49380/49743, the delay link 498xx);
everything started is stopped by pid at the end (Chromium's helpers by
its process group, which is its pid). Every load is bounded
(20 s per DevTools event). Results: results/<date>-<tag>.json/.md."""

import argparse
import datetime
import json
import math
import os
import random
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import time
import urllib.request
import zlib

import run as bench                                # bench/run.py's helpers
import refs                                        # the reference servers
import upload                                      # the delay link
from run import log

sys.path.insert(0, os.path.join(bench.REPO_DIR, "test"))
from test_browser import DevTools, chromium_bin    # noqa: E402

PORT_BASES = {"ours": 49000, "stock": 49100, "nginx": 49200, "h2o": 49300}
PROXY_BASE = 49800                 # + index of the server: its +20 ms port
bench.PORTS.update({"pageload-ours": PORT_BASES["ours"],
                    "pageload-stock": PORT_BASES["stock"]})
SITE_DIR = os.path.join(bench.RUN_DIR, "pageload-site")
WORK_DIR = os.path.join(bench.RUN_DIR, "pageload")
PAGE = "/page/index.html"
HOST = "test.localhost"            # the sandbox certificate's name
FONT_DIR = "/usr/share/fonts/truetype/dejavu"
FONTS = ("DejaVuSans.ttf", "DejaVuSans-Bold.ttf", "DejaVuSerif.ttf", "DejaVuSansMono.ttf")
# the sandbox's mime.types has no fonts: httpd would send them without a type
HTTPD_EXTRA = "AddType font/woff .woff\n"
WARM_BLOCK = 5
ALL_CELLS = ("loopback-cold", "loopback-warm", "20ms-cold", "20ms-warm")
# the per-resource rows kept in the JSON (+20 ms cold cell only)
COMPACT = ("url", "start", "end", "size", "priority", "priority_header", "blocking")
URGENCY = {"VeryHigh": 0, "High": 1, "Medium": 2, "Low": 3, "VeryLow": 4}


# ---------------------------------------------------------------- the page
def png(width, height, rnd):
    """A valid RGB PNG of noise: noise does not compress, so the file is
    about width * height * 3 bytes, like an already compressed image."""
    raw = b"".join(b"\x00" + rnd.randbytes(width * 3) for _ in range(height))

    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height,
                                                              8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw, 1)) + chunk(b"IEND", b""))


def png_of_size(nbytes, rnd):
    """A 4:3 noise PNG of about nbytes; (data, width, height)."""
    pixels = max(nbytes // 3, 16)
    w = max(int(math.sqrt(pixels * 4 / 3)), 4)
    h = max(pixels // w, 3)
    return png(w, h, rnd), w, h


def css_text(index, nbytes, rnd):
    """Stylesheet filler: rules of the kind real sites ship, nbytes long."""
    rules = []
    n = 0
    while sum(len(r) for r in rules) < nbytes:
        rules.append(".s%d-%d { margin: %dpx %dpx; padding: %dpx; color: #%06x; "
                     "border: 1px solid #%06x; }\n" % (index, n, rnd.randrange(20),
                                                       rnd.randrange(20), rnd.randrange(9),
                                                       rnd.randrange(1 << 24),
                                                       rnd.randrange(1 << 24)))
        n += 1
    return "".join(rules)


def js_text(name, nbytes, rnd):
    """Script filler: functions that are parsed, and a little work at the
    end, so the browser compiles and runs it as it would a real one."""
    parts = ["// %s\n" % name]
    n = 0
    while sum(len(p) for p in parts) < nbytes:
        parts.append("function f_%s_%d(a, b) { var x = a * %d + b; return x %% %d; }\n"
                     % (name, n, rnd.randrange(1000), rnd.randrange(1, 97)))
        n += 1
    parts.append("window.loaded_%s = f_%s_%d(3, 4);\n" % (name, name, n - 1))
    return "".join(parts)


def web_fonts(out, rnd):
    """The fonts as WOFF: Latin subsets of the system's DejaVu fonts (web
    font sized, 20-40 KB) if fontTools and the fonts are there; else
    40 KB of random bytes, which Chromium downloads and then rejects.
    Returns {file name: "subset" | "random"}."""
    try:
        import logging
        from fontTools import subset
        # it reports every table it drops ("FFTM NOT subset")
        logging.getLogger("fontTools").setLevel(logging.ERROR)
    except ImportError:
        subset = None
    made = {}
    for i, src in enumerate(FONTS):
        name = "font%d.woff" % i
        path = os.path.join(FONT_DIR, src)
        if subset and os.path.exists(path):
            opts = subset.Options()
            opts.flavor = "woff"
            font = subset.load_font(path, opts)
            font.recalcTimestamp = False           # the same bytes every run
            sub = subset.Subsetter(opts)
            sub.populate(unicodes=range(0x20, 0x180))
            sub.subset(font)
            subset.save_font(font, os.path.join(out, name), opts)
            made[name] = "subset"
        else:
            with open(os.path.join(out, name), "wb") as f:
                f.write(rnd.randbytes(40000))
            made[name] = "random"
    return made


def write(out, name, data):
    with open(os.path.join(out, name), "wb" if isinstance(data, bytes) else "w") as f:
        f.write(data)


def build_site(out):
    """Generate the page and its assets into out; returns a manifest."""
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    rnd = random.Random(32)                      # issue 32: the same site every run
    fonts = web_fonts(out, rnd)
    for i, size in enumerate((48000, 24000, 12000)):
        text = css_text(i, size, rnd)
        if i == 0:
            faces = ("body-sans", "body-bold", "serif", "mono")
            text = "".join("@font-face { font-family: '%s'; src: url(font%d.woff) "
                           "format('woff'); }\n" % (f, j) for j, f in enumerate(faces)) + (
                "body { font-family: 'body-sans', sans-serif; }\n"
                "h1, h2 { font-family: 'body-bold', sans-serif; }\n"
                "blockquote { font-family: 'serif', serif; }\n"
                "code { font-family: 'mono', monospace; }\n") + "".join(
                ".bg%d { background-image: url(bg%d.png); width: 160px; height: 90px; }\n"
                % (j, j) for j in range(6)) + text
        write(out, "style%d.css" % i, text)
    write(out, "app.js", js_text("app", 90000, rnd))
    scripts = [("defer%d.js" % i, "defer", s) for i, s in enumerate((40000, 25000))]
    scripts += [("async%d.js" % i, "async", s) for i, s in enumerate((30000, 15000))]
    for name, _, size in scripts:
        write(out, name, js_text(name.split(".")[0], size, rnd))
    big, bw, bh = png_of_size(1500000, rnd)
    write(out, "hero.png", big)
    for j in range(6):
        write(out, "bg%d.png" % j, png_of_size(rnd.randrange(3000, 12000), rnd)[0])
    images = []
    for j in range(80):
        # log-uniform 2..60 KB: many small images, few large ones
        data, w, h = png_of_size(int(2000 * math.exp(rnd.random() * math.log(30))), rnd)
        write(out, "img%02d.png" % j, data)
        images.append((j, w, h))
    write(out, "index.html", page_html(scripts, (bw, bh), images, rnd))
    files = sorted(os.listdir(out))
    return {"files": len(files), "bytes": sum(os.path.getsize(os.path.join(out, f))
                                              for f in files), "fonts": fonts}


def page_html(scripts, hero, images, rnd):
    words = ("stream frame window priority header server client page image "
             "font style script browser request response connection").split()

    def para():
        return "<p>%s.</p>\n" % " ".join(rnd.choice(words) for _ in range(60))
    head = ['<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">\n'
            '<title>pageload</title><link rel="icon" href="data:,">\n']
    head += ['<link rel="stylesheet" href="style%d.css">\n' % i for i in range(3)]
    head.append('<script src="app.js"></script>\n')          # render-blocking
    head += ['<script %s src="%s"></script>\n' % (how, name) for name, how, _ in scripts]
    body = ["</head><body>\n<h1>A page of about a hundred assets</h1>\n",
            '<img src="hero.png" width="%d" height="%d" alt="hero">\n' % hero,
            para(), "<blockquote>%s</blockquote>\n" % para(), "<code>h2 frames</code>\n"]
    body += ['<div class="bg%d"></div>\n' % j for j in range(6)]
    for j, w, h in images:
        body.append('<img src="img%02d.png" width="%d" height="%d" alt="">\n' % (j, w, h))
        if j % 8 == 7:
            body.append("<h2>Section %d</h2>\n%s" % (j // 8, para()))
    body.append("</body></html>\n")
    return "".join(head + body)


# ---------------------------------------------------------------- servers
def start_servers(names):
    """ours / stock / nginx / h2o on their 49xxx ports, all serving the site
    (httpd from its own docroot, nginx and h2o from ours' as in refs.py)."""
    servers = {}
    for name in names:
        if name in ("ours", "stock"):
            servers[name] = refs.Httpd(name, "pageload-" + name, HTTPD_EXTRA)
            servers[name].start()
            shutil.copytree(SITE_DIR, os.path.join(servers[name].inst.docroot, "page"),
                            dirs_exist_ok=True)
    sb = next((s.inst.sb for s in servers.values()), None)
    if sb is None:
        raise SystemExit("pageload: --servers needs ours or stock (their docroot and "
                         "certificate serve nginx and h2o too)")
    for name in names:
        if name == "ours-nowarm":
            # refs.py's face of the ours httpd: its port with H2TLSWarmUpSize 0
            if not isinstance(servers.get("ours"), refs.Httpd):
                raise SystemExit("pageload: ours-nowarm needs ours in --servers")
            servers[name] = refs.Variant(name, servers["ours"])
        elif name in ("nginx", "h2o"):
            exe = refs.NGINX if name == "nginx" else refs.H2O
            if not os.path.exists(exe):
                log("pageload: %s left out (not installed: apt-get install %s)" % (name, name))
                continue
            cls = refs.Nginx if name == "nginx" else refs.H2o
            srv = cls(name, sb.docroot, sb.server_cert, sb.server_key,
                      port_base=PORT_BASES[name], run_name="pageload-" + name)
            if name == "nginx":
                # nginx's default configuration includes its MIME types;
                # refs.py's minimal one does not, and Chromium ignores a
                # stylesheet sent as application/octet-stream
                srv.http_extra = "\n    include /etc/nginx/mime.types;"
            srv.start()
            servers[name] = srv
    return servers


class DelayLink:
    """bench/upload.py's delay proxy in front of every server's TLS port."""

    def __init__(self, servers, lifetime):
        os.makedirs(WORK_DIR, exist_ok=True)
        self.ports = {name: PROXY_BASE + i for i, name in enumerate(servers)}
        for attempt in range(21):
            try:
                self.proc = upload.start_delay_proxy(
                    None, WORK_DIR, int(lifetime),
                    pairs=[(self.ports[n], s.tls_port) for n, s in servers.items()])
                break
            except RuntimeError:
                # 49xxx lies in the ephemeral range: a client's connection
                # (h2load of another benchmark) may hold the port a while
                if attempt == 20:
                    raise
                log("delay_proxy: a port is busy, retrying")
                time.sleep(3)
        self.name = "delay_proxy"
        bench.STARTED.append(self)

    def stop(self):
        bench.stop_process(self)


# ---------------------------------------------------------------- the browser
class Chromium:
    """One headless Chromium for the whole run (flags as in
    test/test_browser.py), driven over the DevTools protocol: a browser
    session for contexts and targets, a page session per target."""

    name = "chromium"

    def __init__(self):
        exe = chromium_bin()
        if not exe:
            raise SystemExit("pageload: chromium not installed (sandbox/deps.sh)")
        self.profile = os.path.join(WORK_DIR, "profile")
        shutil.rmtree(self.profile, ignore_errors=True)
        os.makedirs(self.profile)
        cmd = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--disable-extensions",
               "--disable-dev-shm-usage", "--user-data-dir=" + self.profile,
               "--ignore-certificate-errors", "--remote-debugging-port=0",
               "--remote-allow-origins=*", "--window-size=1280,800",
               # a page in a background tab would be throttled
               "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
               "--host-resolver-rules=MAP %s 127.0.0.1" % HOST, "about:blank"]
        self.log = open(os.path.join(WORK_DIR, "chromium.log"), "wb")
        # its own process group: its helpers are stopped with it
        self.proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=self.log,
                                     stderr=subprocess.STDOUT, start_new_session=True)
        bench.STARTED.append(self)
        self.port = self._devtools_port()
        with urllib.request.urlopen("http://127.0.0.1:%d/json/version" % self.port,
                                    timeout=10) as resp:
            self.browser = DevTools(json.load(resp)["webSocketDebuggerUrl"])

    def _devtools_port(self):
        # with port 0 Chromium writes the one it took to DevToolsActivePort
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while time.time() < deadline and self.proc.poll() is None:
            if os.path.exists(port_file):
                with open(port_file) as f:
                    first = f.readline().strip()
                if first.isdigit():
                    return int(first)
            time.sleep(0.2)
        raise SystemExit("pageload: chromium did not open its DevTools port (see %s)"
                         % self.log.name)

    def new_context(self):
        """A fresh browser context with one page in it: (context id, page
        session), the page's network events on and its HTTP cache off."""
        ctx = self.browser.call("Target.createBrowserContext")["browserContextId"]
        tid = self.browser.call("Target.createTarget", url="about:blank",
                                browserContextId=ctx)["targetId"]
        page = DevTools("ws://127.0.0.1:%d/devtools/page/%s" % (self.port, tid))
        page.call("Network.enable")
        page.call("Network.setCacheDisabled", cacheDisabled=True)
        page.call("Page.enable")
        return ctx, page

    def close_context(self, ctx, page):
        page.close()
        self.browser.call("Target.disposeBrowserContext", browserContextId=ctx)

    def stop(self):
        self.browser.close()
        bench.stop_process(self)
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)   # helpers left in its group
        except ProcessLookupError:
            pass
        self.log.close()


# runs in the page after its load event: the browser's own timing
COLLECT_JS = """(() => new Promise(done => {
  const report = fcp => {
    const n = performance.getEntriesByType('navigation')[0];
    const res = performance.getEntriesByType('resource').map(e => ({
      url: e.name, start: e.startTime, end: e.responseEnd, size: e.transferSize,
      proto: e.nextHopProtocol, blocking: e.renderBlockingStatus, status: e.responseStatus,
      body: e.encodedBodySize}));
    done(JSON.stringify({fcp: fcp, res: res, nav: {
      start: n.startTime, connect_start: n.connectStart, connect_end: n.connectEnd,
      request_start: n.requestStart, response_start: n.responseStart,
      dcl: n.domContentLoadedEventEnd, load_end: n.loadEventEnd, size: n.transferSize,
      proto: n.nextHopProtocol}}));
  };
  const after_load = () => setTimeout(() => {
    const p = performance.getEntriesByName('first-contentful-paint')[0];
    if (p) return report(p.startTime);
    // not painted yet: wait for it, 3 s at most
    const t = setTimeout(() => report(null), 3000);
    new PerformanceObserver(l => { clearTimeout(t); report(l.getEntries()[0].startTime); })
      .observe({type: 'paint', buffered: true});
  }, 0);
  if (document.readyState === 'complete') after_load();
  else addEventListener('load', after_load);
}))()"""


def priorities(events):
    """url -> (Chromium's priority at the end, the priority header it sent),
    from the DevTools events of one load."""
    by_id, prio, header = {}, {}, {}
    for ev in events:
        p = ev["params"]
        if ev["method"] == "Network.requestWillBeSent":
            by_id[p["requestId"]] = p["request"]["url"]
            prio.setdefault(p["requestId"], p["request"].get("initialPriority"))
        elif ev["method"] == "Network.resourceChangedPriority":
            prio[p["requestId"]] = p["newPriority"]
        elif ev["method"] == "Network.requestWillBeSentExtraInfo":
            hs = {k.lower(): v for k, v in p.get("headers", {}).items()}
            header[p["requestId"]] = hs.get("priority")
    return {url: (prio.get(rid), header.get(rid)) for rid, url in by_id.items()}


def load_page(page, url):
    """Navigate and measure one load; a result dict (with "error" if a
    step timed out: each DevTools wait is bounded by test_browser's 20 s)."""
    page.events.clear()
    t0 = time.monotonic()
    try:
        page.call("Page.navigate", url=url)
        page.wait_event("Network.responseReceived", lambda p: p["response"]["url"] == url)
        page.wait_event("Page.loadEventFired")
        r = page.call("Runtime.evaluate", expression=COLLECT_JS, awaitPromise=True,
                      returnByValue=True)
        data = json.loads(r["result"]["value"])
    except (AssertionError, OSError, KeyError, ValueError) as e:
        return {"error": str(e)[:300], "wall_s": round(time.monotonic() - t0, 2)}
    prios = priorities(page.events)
    failed = [ev["params"].get("errorText") for ev in page.events
              if ev["method"] == "Network.loadingFailed"]
    page.events.clear()
    nav, res = data["nav"], data["res"]
    for e in res:
        e["priority"], e["priority_header"] = prios.get(e["url"], (None, None))
        e["url"] = e["url"].rsplit("/", 1)[-1]
    return {"ttfb_ms": nav["response_start"] - nav["start"], "fcp_ms": data["fcp"],
            "load_ms": nav["load_end"] - nav["start"],
            "bytes": nav["size"] + sum(e["size"] for e in res),
            "resources": len(res), "failed": failed,
            "not_200": sum(e["status"] != 200 for e in res),
            # 0 = not fetched (a cache hit), which the disabled cache should rule out
            "zero_size": sum(e["size"] == 0 for e in res),
            "not_h2": sum(e["proto"] != "h2" for e in res + [nav]),
            "reused_connection": nav["connect_start"] == nav["connect_end"],
            "nav": nav, "res": res, "wall_s": round(time.monotonic() - t0, 2)}


# ---------------------------------------------------------------- the cells
def rotated(names, i):
    k = i % len(names)
    return names[k:] + names[:k]


def unspoiled(load):
    """load() again (twice at most) when Chromium saw the machine's network
    change during it (other users' work on this machine changes addresses
    now and then; Chromium then aborts its requests with
    ERR_NETWORK_CHANGED). How often is kept with the result."""
    for spoiled in range(3):
        r = load()
        if spoiled == 2 or "net::ERR_NETWORK_CHANGED" not in r.get("failed", ()):
            r["repeated_network_changed"] = spoiled
            return r
        log("a load spoiled by a network change (ERR_NETWORK_CHANGED): repeated")


def cold_load(chrome, url):
    ctx, page = chrome.new_context()
    try:
        return load_page(page, url)
    finally:
        chrome.close_context(ctx, page)


def record(runs, cell, name, i, r):
    runs.append({"cell": cell, "server": name, "load": i, **r})
    if "error" in r:
        log("%-13s %-5s #%-2d ERROR %s" % (cell, name, i, r["error"]))
    else:
        log("%-13s %-5s #%-2d ttfb %6.1f fcp %6.1f load %7.1f ms %7.0f kB %3d res%s%s%s" % (
            cell, name, i, r["ttfb_ms"], r["fcp_ms"] or -1, r["load_ms"], r["bytes"] / 1e3,
            r["resources"], " (%d not h2)" % r["not_h2"] if r["not_h2"] else "",
            " reused" if r["reused_connection"] else "",
            " FAILED %d (%s), %d not 200, %d unfetched" % (
                len(r["failed"]), ", ".join(sorted(set(r["failed"]))), r["not_200"],
                r["zero_size"])
            if r["failed"] or r["not_200"] or r["zero_size"] else ""))


def run_cold(chrome, cell, names, url_of, loads, runs):
    """A new browser context for every load, servers interleaved load by load."""
    for i in range(loads):
        for name in rotated(names, i):
            url = url_of(name, i)
            record(runs, cell, name, i, unspoiled(lambda: cold_load(chrome, url)))


def run_warm(chrome, cell, names, url_of, loads, runs):
    """Blocks of WARM_BLOCK loads over one context's connection, after one
    unmeasured load that opens it; servers interleaved block by block (a
    gap of other servers' blocks would outlast httpd's KeepAliveTimeout)."""
    for b in range(math.ceil(loads / WARM_BLOCK)):
        for name in rotated(names, b):
            ctx, page = chrome.new_context()
            try:
                first = load_page(page, url_of(name, "open%d" % b))
                if "error" in first:
                    log("%s %s: the opening load failed: %s" % (cell, name, first["error"]))
                for i in range(b * WARM_BLOCK, min(loads, (b + 1) * WARM_BLOCK)):
                    url = url_of(name, i)
                    record(runs, cell, name, i, unspoiled(lambda: load_page(page, url)))
            finally:
                chrome.close_context(ctx, page)


def run_cells(args, chrome, servers, link):
    runs = []
    names = list(servers)
    # one unmeasured load from each server first: the run's first load
    # would otherwise also pay for Chromium's first renderer and font cache
    for name in names:
        cold_load(chrome, "https://%s:%d%s?n=first" % (HOST, servers[name].tls_port, PAGE))
    for cell in args.cells:
        def url_of(name, n, cell=cell):
            port = link.ports[name] if cell.startswith("20ms") else servers[name].tls_port
            return "https://%s:%d%s?n=%s" % (HOST, port, PAGE, n)
        t0 = time.monotonic()
        (run_warm if cell.endswith("warm") else run_cold)(
            chrome, cell, names, url_of, args.loads, runs)
        log("%s: %.0f s" % (cell, time.monotonic() - t0))
    return runs


# ---------------------------------------------------------------- numbers
def p90(vals):
    s = sorted(vals)
    return s[max(0, math.ceil(0.9 * len(s)) - 1)]


def stats(runs, cell, name, key):
    vals = [r[key] for r in runs if r["cell"] == cell and r["server"] == name
            and r.get(key) is not None]
    return (statistics.median(vals), p90(vals), len(vals)) if vals else None


def urgency(e):
    """The RFC 9218 urgency of a request: from the priority header Chromium
    sent, else from its own priority (which that header is made from)."""
    h = e.get("priority_header")
    if h is None:
        return URGENCY.get(e.get("priority"))
    for part in h.split(","):
        part = part.strip()
        if part.startswith("u=") and part[2:].isdigit():
            return int(part[2:])
    return 3            # RFC 9218's default, which Chromium leaves out


def arrival(r):
    """One load's arrival order: positions (1 = first response to end) of
    the last render-blocking resource and of the hero image, the ms between
    their ends, and the mean position of each urgency."""
    res = sorted(r["res"], key=lambda e: e["end"])
    pos = {e["url"]: i + 1 for i, e in enumerate(res)}
    blocking = [e for e in res if e.get("blocking") == "blocking"]
    hero = next((e for e in res if e["url"] == "hero.png"), None)
    if not blocking or not hero:
        return None
    last = max(blocking, key=lambda e: e["end"])
    by_u = {}
    for e in res:
        u = urgency(e)
        if u is not None:
            by_u.setdefault(u, []).append(pos[e["url"]])
    return {"last_blocking_pos": pos[last["url"]], "hero_pos": pos["hero.png"],
            # requested while a blocking response was still open: only then
            # does the server choose what goes first
            "hero_contended": hero["start"] < last["end"],
            "hero_after_blocking_ms": hero["end"] - last["end"],
            "blocking_first": hero["end"] > last["end"], "n": len(res),
            "urgency_mean_pos": {u: statistics.mean(p) for u, p in by_u.items()}}


# ---------------------------------------------------------------- tables
def paired(runs, cell, a, b, key):
    """Median over the loads of a's value over b's in the load of the same
    number: loads with one number run within seconds of each other, so
    this ratio follows less of the machine's changing load than the ratio
    of the medians."""
    va = {r["load"]: r.get(key) for r in runs if r["cell"] == cell and r["server"] == a}
    vb = {r["load"]: r.get(key) for r in runs if r["cell"] == cell and r["server"] == b}
    q = [va[i] / vb[i] for i in va if va[i] and vb.get(i)]
    return statistics.median(q) if q else None


def timing_table(runs, cells, names):
    L = ["| cell | metric, p50 / p90 | %s | ours/nginx p50 (paired) "
         "| ours/stock p50 (paired) |" % " | ".join(names), "|---" * (len(names) + 4) + "|"]
    for cell in cells:
        for key, what in (("ttfb_ms", "TTFB ms"), ("fcp_ms", "FCP ms"),
                          ("load_ms", "load ms"), ("bytes", "kB, p50")):
            s = {n: stats(runs, cell, n, key) for n in names}
            if key == "bytes":
                vals = ["%.0f" % (s[n][0] / 1e3) if s[n] else "n/a" for n in names]
            else:
                vals = ["%.0f / %.0f" % s[n][:2] if s[n] else "n/a" for n in names]

            def ratio(other):
                o, b = s.get("ours"), s.get(other)
                if not (o and b and b[0]):
                    return "-"
                return "%.2f (%.2f)" % (o[0] / b[0], paired(runs, cell, "ours", other, key))
            L.append("| %s | %s | %s | %s | %s |" % (
                cell if key == "ttfb_ms" else "", what, " | ".join(vals),
                ratio("nginx") if key != "bytes" else "", ratio("stock") if key != "bytes"
                else ""))
    return "\n".join(L)


def priority_table(runs, cells, names):
    L = ["| cell | server | loads | hero requested before blocking done | blocking before "
         "hero | last blocking pos | hero pos | hero end - last blocking end, ms "
         "| mean pos u=0 / 1 / 2 / 3 / 4 |", "|---" * 9 + "|"]
    for cell in cells:
        for name in names:
            a = [r["arrival"] for r in runs if r["cell"] == cell and r["server"] == name
                 and r.get("arrival")]
            if not a:
                continue
            med = lambda k: statistics.median(x[k] for x in a)  # noqa: E731
            us = []
            for u in range(5):
                # int keys in a fresh run, strings once through JSON
                v = [m.get(u, m.get(str(u))) for m in (x["urgency_mean_pos"] for x in a)]
                v = [x for x in v if x is not None]
                us.append("%.0f" % statistics.median(v) if v else "-")
            L.append("| %s | %s | %d | %d/%d | %d/%d | %.0f | %.0f | %.0f | %s |" % (
                cell, name, len(a), sum(x["hero_contended"] for x in a), len(a),
                sum(x["blocking_first"] for x in a), len(a),
                med("last_blocking_pos"), med("hero_pos"), med("hero_after_blocking_ms"),
                " / ".join(us)))
    return "\n".join(L)


def rows(r):
    """A load's per-resource rows as dicts (compact lists once in the JSON)."""
    return [e if isinstance(e, dict) else dict(zip(COMPACT, e)) for e in r.get("res") or []]


def milestones_table(runs, names, cell="20ms-cold"):
    """When the subresources of a load were asked for and ended (ms from
    the navigation's start, medians): where a server spends its time."""
    L = ["| server | first request | last blocking end | hero end | last end | load |",
         "|---|---|---|---|---|---|"]
    for name in names:
        rs = [rows(r) for r in runs if r["cell"] == cell and r["server"] == name and r.get("res")]
        rs = [x for x in rs if any(e["url"] == "hero.png" for e in x)]
        if not rs:
            continue
        med = lambda f: statistics.median(f(x) for x in rs)  # noqa: E731
        L.append("| %s | %.0f | %.0f | %.0f | %.0f | %.0f |" % (
            name, med(lambda x: min(e["start"] for e in x)),
            med(lambda x: max(e["end"] for e in x if e["blocking"] == "blocking")),
            med(lambda x: next(e["end"] for e in x if e["url"] == "hero.png")),
            med(lambda x: max(e["end"] for e in x)),
            statistics.median(r["load_ms"] for r in runs if r["cell"] == cell
                              and r["server"] == name and r.get("res"))))
    return "\n".join(L)


def kind_of(url):
    for prefix, kind in (("style", "CSS"), ("app", "head script"), ("defer", "defer script"),
                         ("async", "async script"), ("font", "font"), ("hero", "hero image"),
                         ("img", "image"), ("bg", "CSS background")):
        if url.startswith(prefix):
            return kind
    return "other"


def asked_counts(runs):
    """What Chromium asked for: [kind of asset, its priority, the priority
    header, requests] over every load with per-resource rows."""
    seen = {}
    for r in runs:
        for e in r.get("res", []):
            k = (kind_of(e["url"]), e.get("priority"), e.get("priority_header"))
            seen[k] = seen.get(k, 0) + 1
    return [list(k) + [n] for k, n in sorted(seen.items(), key=lambda kv: (
        kv[0][0], URGENCY.get(kv[0][1], 9)))]


def asked_table(asked):
    L = ["| asset | Chromium priority (final) | priority header sent | requests |",
         "|---|---|---|---|"]
    for kind, prio, header, n in asked:
        L.append("| %s | %s | %s | %d |" % (kind, prio, header or "(none)", n))
    return "\n".join(L)


def report(args, stamp, site, runs, names, elapsed):
    """The .md (and, for a new run, the .json) of a run."""
    fresh = "asked" not in site
    if fresh:
        for r in runs:
            if r.get("res"):
                r["arrival"] = arrival(r)
        site["asked"] = asked_counts(runs)
        site["elapsed_s"] = elapsed
    failed = sum("error" in r for r in runs)
    partial = sum(bool(r.get("failed") or r.get("not_200") or r.get("zero_size"))
                  for r in runs)
    reused = [r["reused_connection"] for r in runs if r["cell"].endswith("warm")
              and "error" not in r]
    md = ["# Page loads in headless Chromium (%s)" % stamp, "",
          "`python3 bench/pageload.py --loads %d --cells %s --servers %s` (%s). "
          "%d loads per cell and server, %d failed, %d with a failed, non-200 or "
          "unfetched resource; the page: %d files, %.2f MB (fonts: %s). "
          "Warm loads that reused the connection: %d/%d. Loopback, 2 cores shared by "
          "Chromium, the servers and other work (load average %.1f at the start, %.1f at "
          "the end); +20 ms = bench/delay_proxy, 10 ms each way."
          % (args.loads, ",".join(args.cells), ",".join(names),
             "%.0f min" % (elapsed / 60) if elapsed else "duration not recorded", args.loads,
             failed, partial, site["files"], site["bytes"] / 1e6,
             ", ".join(sorted(set(site["fonts"].values()))), sum(reused), len(reused),
             *site["loadavg_start_end"]), "",
          "## Timing (the browser's Navigation / Paint Timing), ms", "",
          "Ratios: of the p50s; in parentheses the median of the ratios load by load "
          "(the loads of one number run seconds apart, cold ones back to back).", "",
          timing_table(runs, args.cells, names), "",
          "## RFC 9218: arrival order against urgency", "",
          "Positions: rank of a response's end (Resource Timing responseEnd) among the "
          "page's %d subresources, medians over the loads. \"blocking\" = Chromium's "
          "renderBlockingStatus (the 3 CSS and the head script); hero = the 1.5 MB image "
          "right after the heading. Urgency from the priority header Chromium sent." %
          statistics.median([r["resources"] for r in runs if "error" not in r] or [0]), "",
          priority_table(runs, args.cells, names), "",
          "When the +20 ms cold loads' subresources were asked for and ended, ms from "
          "the navigation's start (medians):", "", milestones_table(runs, names), "",
          "What Chromium asked for (%s):" % site.get("asked_from", "all loads"), "",
          asked_table(site["asked"]), ""]
    base = os.path.join(bench.RESULTS_DIR, stamp)
    with open(base + ".md", "w") as f:
        f.write("\n".join(md))
    print("\n".join(md))
    if fresh:
        save(args, stamp, site, runs)
    print("results: %s.json/.md" % base)


def save(args, stamp, site, runs):
    for r in runs:
        # per-resource detail only for the +20 ms cold cell (the file stays small)
        if r["cell"] == "20ms-cold" and r.get("res"):
            r["res"] = [[round(e[k], 1) if k in ("start", "end") else e[k] for k in COMPACT]
                        for e in r["res"]]
        else:
            r.pop("res", None)
    with open(os.path.join(bench.RESULTS_DIR, stamp + ".json"), "w") as f:
        json.dump({"stamp": stamp, "args": vars(args), "site": site, "runs": runs}, f)


def rewrite(path):
    """--report: the .md of an earlier run again, from its .json."""
    with open(path) as f:
        data = json.load(f)
    runs, site = data["runs"], data["site"]
    args = argparse.Namespace(**data["args"])
    if "asked" not in site:
        # written before the counts were kept: only the +20 ms cold loads
        # still have their per-resource rows
        rows = [dict(zip(COMPACT, e)) for r in runs for e in r.get("res", [])]
        site["asked"] = asked_counts([{"res": rows}])
        site["asked_from"] = "the +20 ms cold loads"
    names = list(dict.fromkeys(r["server"] for r in runs))
    report(args, data["stamp"], site, runs, names, site.get("elapsed_s", 0))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--loads", type=int, default=20, help="measured loads per cell and server")
    ap.add_argument("--servers", default="ours,stock,nginx,h2o")
    ap.add_argument("--cells", default=",".join(ALL_CELLS))
    ap.add_argument("--tag", default="pageload")
    ap.add_argument("--report", metavar="JSON", help="rewrite the .md of an earlier run")
    args = ap.parse_args()
    if args.report:
        rewrite(args.report)
        return 0
    args.cells = args.cells.split(",")
    for c in args.cells:
        if c not in ALL_CELLS:
            raise SystemExit("pageload: unknown cell %s (%s)" % (c, ", ".join(ALL_CELLS)))
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + "-" + args.tag
    t0, load0 = time.monotonic(), os.getloadavg()[0]
    site = build_site(SITE_DIR)
    log("site: %d files, %.2f MB" % (site["files"], site["bytes"] / 1e6))
    try:
        servers = start_servers(args.servers.split(","))
        link = None
        if any(c.startswith("20ms") for c in args.cells):
            # lives as long as the run may: 10 s a load, bounded
            link = DelayLink(servers, 300 + 10 * args.loads * len(servers) * len(args.cells))
        chrome = Chromium()
        runs = run_cells(args, chrome, servers, link)
    finally:
        bench.stop_all()
    site["loadavg_start_end"] = [load0, os.getloadavg()[0]]   # others' work on the 2 cores
    report(args, stamp, site, runs, list(servers), time.monotonic() - t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
