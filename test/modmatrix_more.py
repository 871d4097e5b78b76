"""The module matrix's cases of Debian's apache2 modules, continued from
modmatrix_cases.py: proxies (to an HTTP/1.0 backend, to h2c, balancers),
mod_lua, mod_rewrite, mod_ssl's variables, sessions, logging and the rest;
and NOT_COVERED, the modules without a case and why. Configuration text is
a format string (see modmatrix.Case)."""

from modmatrix import Case, Step, two_vhosts
from modmatrix_cases import CGI_DIR, ECHO_CGI, c, get, post
from modmatrix_drivers import HELLO

LUA_HANDLER = """\
function handle(r)
    r.content_type = "text/plain"
    r.headers_out["X-Lua"] = "yes"
    local body = r:requestbody() or ""
    r:puts("lua: method=" .. r.method .. " args=" .. (r.args or "") .. " body=" .. body .. "\\n")
    return apache2.OK
end
"""

# modules of Debian's apache2 package without a case here, and why
NOT_COVERED = {
    "mod_echo": "a protocol module: it replaces HTTP on its listener (`ProtocolEcho On`), "
                "no request is served",
    "mod_heartbeat, mod_heartmonitor, mod_lbmethod_heartbeat":
        "exchange multicast heartbeats between servers; no request of a client is involved",
    "mod_md": "needs an ACME certificate authority to talk to",
    "mod_proxy_ajp": "needs an AJP backend (Tomcat)",
    "mod_proxy_ftp": "needs an FTP server",
    "mod_proxy_connect": "CONNECT over HTTP/2 is a tunnel of its own (RFC 9113 8.5); "
                         "test/test_forward_proxy.py covers it",
    "mod_proxy_wstunnel": "WebSockets over HTTP/2 (RFC 8441): test/test_websockets.py",
    "mod_proxy_fdpass": "hands the client's socket to another process; an HTTP/2 stream "
                        "has no socket of its own, so it cannot work over HTTP/2",
    "mod_socache_memcache, mod_socache_redis": "need a memcached or Redis server",
    "mod_suexec": "needs Debian's apache2-suexec-pristine (a setuid helper)",
    "mod_dav_lock": "the generic lock database for DAV providers without locks of their "
                    "own (mod_dav_svn); mod_dav_fs (covered) has its own",
    "mod_http2": "the module under test itself",
    "mod_mpm_event, mod_mpm_worker, mod_mpm_prefork": "the MPMs: the matrix's columns",
    "mod_slotmem_plain": "a slot provider for modules that ask for it by name; "
                         "mod_proxy_balancer uses mod_slotmem_shm (covered)",
}


def gateway_case(kind):
    """mod_proxy_scgi or mod_proxy_uwsgi to its backend in
    modmatrix_gateways.py."""
    return c("proxy_%s" % kind, "mod_proxy_%s" % kind,
             "`ProxyPass` to a%s %s backend, GET and POST" % ("n" if kind == "scgi" else "",
                                                             kind.upper() if kind == "scgi" else kind),
             modules=("proxy", "proxy_" + kind),
             conf="ProxyPass {loc}/g/ %s://127.0.0.1:{%s}/\n" % (kind, kind),
             steps=(get("g/x?a=1", expect_body=b"gateway %s: method=GET" % kind.encode(),
                        compare=("content-type", "x-gateway")),
                    post("g/y", b"gateway body {run}", expect_body=b"body=gateway body {run}")),
             helpers=("gateways",), group="proxy")


def proxy_cases():
    return [gateway_case("scgi"), gateway_case("uwsgi"),
        c("proxy_http", "mod_proxy, mod_proxy_http", "`ProxyPass` to an HTTP/1.0 backend",
          modules=("proxy", "proxy_http"), conf="""\
ProxyPass {loc}/p/ http://127.0.0.1:{backend}/backend/
ProxyPassReverse {loc}/p/ http://127.0.0.1:{backend}/backend/
""", steps=(get("p/hello.txt", expect_body=HELLO.encode()), get("p/nothing", expect=404)),
          helpers=("backend",), group="proxy"),
        c("proxy_balancer", "mod_proxy_balancer, mod_lbmethod_byrequests, "
          "mod_lbmethod_bybusyness, mod_lbmethod_bytraffic, mod_slotmem_shm",
          "balancers of two members with sticky routes (`stickysession=ROUTEID`), "
          "one per lbmethod", modules=("proxy", "proxy_http", "proxy_balancer",
                                       "slotmem_shm", "lbmethod_byrequests",
                                       "lbmethod_bybusyness", "lbmethod_bytraffic"),
          conf="".join("""\
<Proxy balancer://matrix{m}>
    BalancerMember http://127.0.0.1:{{backend}}/backend route=r1
    BalancerMember http://127.0.0.1:{{backend}}/backend route=r2
    ProxySet stickysession=ROUTEID lbmethod={m}
</Proxy>
ProxyPass {{loc}}/{m}/ balancer://matrix{m}/
""".format(m=m) for m in ("byrequests", "bybusyness", "bytraffic")),
          steps=tuple(get("%s/hello.txt" % m, headers=("Cookie: ROUTEID=.r2",),
                          expect_body=HELLO.encode())
                      for m in ("byrequests", "bybusyness", "bytraffic")),
          helpers=("backend",), group="proxy"),
        c("proxy_hcheck", "mod_proxy_hcheck", "a balancer member health-checked by GET",
          modules=("proxy", "proxy_http", "proxy_balancer", "slotmem_shm",
                   "lbmethod_byrequests", "proxy_hcheck"), conf="""\
<Proxy balancer://matrixhc>
    BalancerMember http://127.0.0.1:{backend}/backend hcmethod=GET hcuri=/backend/hello.txt hcinterval=5 hcfails=3
</Proxy>
ProxyPass {loc}/hc/ balancer://matrixhc/
""", steps=(get("hc/hello.txt", expect_body=HELLO.encode()),),
          helpers=("backend",), group="proxy"),
        c("proxy_html", "mod_proxy_html, mod_xml2enc",
          "`ProxyHTMLURLMap` rewriting the links of a proxied page",
          modules=("proxy", "proxy_http", "xml2enc", "proxy_html"), conf="""\
<Location {loc}/p/>
    ProxyPass http://127.0.0.1:{backend}/backend/
    ProxyHTMLEnable On
    ProxyHTMLLinks a href
    ProxyHTMLURLMap http://backend.example/backend/ {loc}/p/
</Location>
""", steps=(get("p/page.html", expect_body=b'href="/m/proxy_html/p/hello.txt"'),),
          helpers=("backend",), group="proxy"),
        c("authnz_fcgi", "mod_authnz_fcgi",
          "`AuthnzFcgiDefineProvider authn` to a FastCGI authorizer, Basic auth",
          modules=("authnz_fcgi",), conf="""\
AuthnzFcgiDefineProvider authn matrixfcgi fcgi://127.0.0.1:{fcgi}/
<Directory {doc}>
    AuthType Basic
    AuthName "matrix fcgi"
    AuthBasicProvider matrixfcgi
    Require valid-user
</Directory>
""", steps=(get(curl_args=("-u", "alice:alice-pw"), expect_body=HELLO.encode()),
            get(curl_args=("-u", "alice:nope"), expect=401,
                compare=("content-type", "www-authenticate"))),
          helpers=("gateways",), group="proxy"),
        c("proxy_http2", "mod_proxy_http2", "`ProxyPass` to the server's own h2c port",
          modules=("proxy", "proxy_http2"), conf="""\
ProxyPass {loc}/p/ h2c://127.0.0.1:{http}/m/proxy_http2/real/
""", files={"real/hello.txt": HELLO},
          steps=(get("p/hello.txt", expect_body=HELLO.encode()),), group="proxy"),
    ]


def rewrite_cases():
    return [
        c("rewrite", "mod_rewrite",
          "per-directory rules: internal rewrite, redirect, env and cookie flags, "
          "conditions on headers", conf="""\
<Directory {doc}>
    RewriteEngine on
    RewriteBase {loc}/
    RewriteRule "^inner$" "hello.txt" [L]
    RewriteRule "^away$" "{loc}/hello.txt" [R=302,L]
    RewriteCond "%{{HTTP:X-Matrix}}" "^yes$"
    RewriteRule "^cond$" "hello.txt" [E=MATRIX_VAR:from-rewrite,CO=mx:1:test.localhost,L]
    RewriteRule "^gone$" "-" [G]
</Directory>
<Location {loc}/>
    Header set X-Rw "%{{MATRIX_VAR}}e"
</Location>
""", steps=(get("inner", expect_body=HELLO.encode()),
            get("away", expect=302, compare=("location",)),
            get("cond", headers=("X-Matrix: yes",), compare=("set-cookie", "x-rw")),
            get("gone", expect=410))),
    ]


def misc_cases():
    return [
        c("lua", "mod_lua", "`LuaMapHandler` to a Lua handler reading the body",
          modules=("lua",), conf="""\
LuaMapHandler "^{loc}/lua" {data}/handler.lua handle
""", data={"handler.lua": LUA_HANDLER},
          steps=(get("lua?x=1", expect_body=b"args=x=1", compare=("content-type", "x-lua")),
                 post("lua", b"lua body {run}", expect_body=b"body=lua body {run}"))),
        c("log_config", "mod_log_config",
          "`CustomLog` with a format of its own, in a `<VirtualHost>`-free server; "
          "its lines compared", conf="""\
SetEnvIf Request_URI "^{loc}/" matrix_log
CustomLog "{data}/access_log" "%h %m %U%q %>s %b %{{X-Log}}i %{{Content-Type}}o" env=matrix_log
""", steps=(get(headers=("X-Log: one",)), get("nothing", expect=404),
            post("hello.txt?{run}", b"x")),
          log="{data}/access_log"),
        c("ratelimit", "mod_ratelimit", "`SetOutputFilter RATE_LIMIT`, rate-limit 512 KiB/s",
          modules=("ratelimit",), conf="""\
<Location {loc}/>
    SetOutputFilter RATE_LIMIT
    SetEnv rate-limit 512
</Location>
""", files={"t.txt": HELLO * 300},
          steps=(get("t.txt", compare=("content-type", "content-length")),)),
        c("reflector", "mod_reflector",
          "`SetHandler reflector`, `ReflectorHeader`: the request body echoed",
          modules=("reflector",), conf="""\
<Location {loc}/r>
    SetHandler reflector
    ReflectorHeader X-In X-Reflected
</Location>
""", steps=(Step("POST", "r", body=b"reflected body {run}", headers=(
                "Content-Type: text/x-matrix", "X-In: header {run}"),
                expect_body=b"reflected body {run}",
                compare=("content-type", "x-reflected", "content-length")),),
          note="beyond stock: stock answers an empty 200 over h2 and h2c"),
        c("remoteip", "mod_remoteip", "`RemoteIPHeader X-Forwarded-For` from 127.0.0.1",
          modules=("remoteip",), conf=CGI_DIR + """\
RemoteIPHeader X-Forwarded-For
RemoteIPInternalProxy 127.0.0.1
""", files={"e.cgi": ECHO_CGI},
          steps=(get("e.cgi", headers=("X-Forwarded-For: 192.0.2.7",),
                     expect_body=b"remote=192.0.2.7"),)),
        c("reqtimeout", "mod_reqtimeout", "`RequestReadTimeout header=10 body=10`, a POST",
          modules=("reqtimeout",), conf=CGI_DIR + "RequestReadTimeout header=10 body=10\n",
          files={"e.cgi": ECHO_CGI},
          steps=(post("e.cgi", b"timely body\n", expect_body=b"timely body"),)),
        c("sed", "mod_sed", "`OutputSed` on a file, `InputSed` on a POST body",
          modules=("sed",), conf=CGI_DIR + """\
<Location {loc}/out>
    AddOutputFilter Sed txt
    OutputSed "s/hello/HELLO/"
</Location>
<Location {loc}/in>
    SetInputFilter Sed
    InputSed "s/body/BODY/"
</Location>
""", files={"out/hello.txt": HELLO, "in/e.cgi": ECHO_CGI},
          steps=(get("out/hello.txt", expect_body=b"HELLO from"),
                 post("in/e.cgi", b"sed body\n", expect_body=b"sed BODY"))),
        c("session_cookie", "mod_session, mod_session_cookie",
          "`Session On`, `SessionCookieName`, the session set by a CGI",
          modules=("session", "session_cookie"), conf=CGI_DIR + """\
<Directory {doc}>
    Session On
    SessionEnv On
    SessionHeader X-Replace-Session
    SessionCookieName plainsession path=/
</Directory>
""", files={"s.cgi": "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n'\n"
                     "case \"$QUERY_STRING\" in set=*) printf 'X-Replace-Session: user=%s\\r\\n'"
                     " \"${{QUERY_STRING#set=}}\";; esac\nprintf '\\r\\nsession: %s\\n' "
                     "\"$HTTP_SESSION\"\n"},
          steps=(get("s.cgi?set=bob-{run}", capture={"set-cookie": "cookie"},
                     compare=("content-type", "set-cookie")),
                 get("s.cgi", headers=("Cookie: {cookie}",),
                     expect_body=b"session: user=bob-{run}"))),
        c("setenvif", "mod_setenvif", "`SetEnvIf User-Agent`, `BrowserMatch`", conf="""\
<Location {loc}/>
    SetEnvIf User-Agent "^matrix-agent" MATRIX_AGENT=seen
    BrowserMatch "^matrix-agent" MATRIX_BROWSER=matched
    Header set X-Agent "%{{MATRIX_AGENT}}e %{{MATRIX_BROWSER}}e"
</Location>
""", steps=(get(headers=("User-Agent: matrix-agent/1",), compare=("content-type", "x-agent")),)),
        c("speling", "mod_speling", "`CheckSpelling On`, `CheckCaseOnly Off`",
          modules=("speling",), conf="""\
<Directory {doc}>
    CheckSpelling On
</Directory>
""", steps=(get("HELLO.txt", expect=301, compare=("location",)),
            get("helo.txt", expect=301, compare=("location",)))),
        c("ssl", "mod_ssl", "`SSLOptions +StdEnvVars` seen by a CGI (https only)",
          conf=CGI_DIR + """\
<Location {loc}/>
    SSLOptions +StdEnvVars
</Location>
""", files={"e.cgi": ECHO_CGI}, steps=(get("e.cgi"),)),
        c("status", "mod_status", "`SetHandler server-status` (?auto)", conf="""\
<Location {loc}/status>
    SetHandler server-status
</Location>
""", steps=(Step("GET", "status?auto", expect_body=b"ServerVersion",
                 scrub=(r"(?s)CurrentTime.*",), compare=("content-type",)),),
          note="the counters in the page differ from request to request; compared: "
               "status, type and the page up to them"),
        c("substitute", "mod_substitute", "`Substitute s/hello/bye/`",
          conf="""\
<Directory {doc}>
    AddOutputFilterByType SUBSTITUTE text/plain
    Substitute "s/hello/bye/"
</Directory>
""", modules=("substitute",), steps=(get(expect_body=b"bye from"),)),
        c("unique_id", "mod_unique_id", "`UNIQUE_ID` in a response header",
          modules=("unique_id",), conf="""\
<Location {loc}/>
    Header set X-Uid "%{{UNIQUE_ID}}e"
</Location>
""", steps=(get(compare=("content-type", "x-uid"), scrub=(r"^[A-Za-z0-9@\-_]{20,}$",)),)),
        c("userdir", "mod_userdir", "`UserDir {data}/*/html`: /~alice/",
          modules=("userdir",), conf="""\
UserDir {data}/*/html
<Directory {data}>
    Require all granted
</Directory>
""", data={"alice/html/hello.txt": HELLO},
          steps=(get("/~alice/hello.txt", expect_body=HELLO.encode()),)),
        c("usertrack", "mod_usertrack", "`CookieTracking on`, `CookieName`",
          modules=("usertrack",), conf="""\
<Location {loc}/>
    CookieTracking on
    CookieName matrixtrack
</Location>
""", steps=(get(compare=("content-type", "set-cookie"),
                scrub=(r"matrixtrack=[^;]*",)),)),
        c("vhost_alias", "mod_vhost_alias", "`VirtualDocumentRoot {data}/%1` in a vhost",
          modules=("vhost_alias",), conf=two_vhosts("va.test.localhost", """\
    VirtualDocumentRoot {data}/%1
""") + """\
<Directory {data}>
    Require all granted
</Directory>
""", data={"va/hello.txt": HELLO},
          steps=(Step("GET", "/hello.txt", host="va.test.localhost",
                      expect_body=HELLO.encode(), compare=("content-type",)),)),
    ]


def more_cases():
    return proxy_cases() + rewrite_cases() + misc_cases()
