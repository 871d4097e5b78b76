"""The module matrix's cases of apr-util's driver users: modules whose
first use in a process loads a DBM, DBD, LDAP or crypto driver (mod_dav_fs,
mod_authn_dbm, mod_authz_dbm, RewriteMap dbm, mod_proxy_express,
mod_socache_dbm, mod_dbd with mod_authn_dbd/mod_authz_dbd/mod_session_dbd,
mod_session_crypto, mod_ldap with mod_authnz_ldap). Each gets a fresh
child whose first request is over h2, under every MPM. Configuration
text is a format string (see modmatrix.Case): Apache's own braces are
doubled."""

import os
import sqlite3
import subprocess

from modmatrix import ALL_MPMS, Case, Step, two_vhosts
from modmatrix_helpers import LDAP_SUFFIX

HTTP_DATE = r"[A-Z][a-z]{2}, \d\d [A-Z][a-z]{2} \d{4} \d\d:\d\d:\d\d GMT"
ISO_DATE = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"
ETAG = r'(W/)?"[0-9a-f]+-[0-9a-f]+(-[0-9a-f]+)?"'
LOCK_TOKEN = r"opaquelocktoken:[0-9a-f-]+"
HELLO = "hello from the module matrix\n"

DAV_PROPS = b"""<?xml version="1.0" encoding="utf-8"?>
<D:propertyupdate xmlns:D="DAV:" xmlns:M="urn:h2-matrix">
<D:set><D:prop><M:colour>blue {run}</M:colour></D:prop></D:set>
</D:propertyupdate>
"""
DAV_PROPFIND = b"""<?xml version="1.0" encoding="utf-8"?>
<D:propfind xmlns:D="DAV:"><D:allprop/></D:propfind>
"""
DAV_LOCK = b"""<?xml version="1.0" encoding="utf-8"?>
<D:lockinfo xmlns:D="DAV:"><D:lockscope><D:exclusive/></D:lockscope>
<D:locktype><D:write/></D:locktype><D:owner>matrix</D:owner></D:lockinfo>
"""


# mod_dav declares an element's namespaces in the order of a hash table,
# which differs from request to request (over HTTP/1.1 too)
XMLNS = r' xmlns:\w+="[^"]*"'

# mod_dav answers a lock's timeout as the seconds left of it, which is one
# less when a second boundary passes between the lock and its answer (seen
# under ASan); any other value still differs
LOCK_TIMEOUT = r'(?<=<D:timeout>)Second-(59|60)(?=</D:timeout>)'


def dav_steps():
    s = (ISO_DATE, HTTP_DATE, ETAG, LOCK_TOKEN, XMLNS)
    return (
        Step("MKCOL", "{run}/", expect=201),
        Step("PUT", "{run}/a.txt", body=b"put over {run}\n", expect=201),
        Step("PROPPATCH", "{run}/a.txt", body=DAV_PROPS, expect=207,
             headers=("Content-Type: application/xml",)),
        Step("PROPFIND", "{run}/a.txt", body=DAV_PROPFIND, expect=207, scrub=s,
             headers=("Depth: 0", "Content-Type: application/xml"),
             expect_body=b"blue {run}", compare=("content-type",)),
        Step("LOCK", "{run}/a.txt", body=DAV_LOCK, expect=200, scrub=s + (LOCK_TIMEOUT,),
             headers=("Content-Type: application/xml", "Timeout: Second-60"),
             capture={"lock-token": "token"}),
        Step("PUT", "{run}/a.txt", body=b"locked\n", expect=423),
        Step("UNLOCK", "{run}/a.txt", headers=("Lock-Token: {token}",), expect=204),
        Step("COPY", "{run}/a.txt", headers=("Destination: {base}/m/dav_fs/{run}/b.txt",),
             expect=201),
        Step("MOVE", "{run}/b.txt", headers=("Destination: {base}/m/dav_fs/{run}/c.txt",),
             expect=201),
        Step("GET", "{run}/c.txt", expect_body=b"put over {run}", compare=("content-type",)),
        Step("PROPFIND", "{run}/", body=DAV_PROPFIND, expect=207, scrub=s,
             headers=("Depth: 1", "Content-Type: application/xml")),
    )


def htdbm(case, server, dbtype, users, groups=None):
    """A DBM user file of `dbtype` made by htdbm (groups: user -> the
    group list htdbm -t stores as the record's comment)."""
    path = os.path.join(case.vars(server)["data"], "users." + dbtype.lower())
    for i, (user, pw) in enumerate(users.items()):
        args = ["htdbm", "-b"] + (["-c"] if i == 0 else [])
        args += ["-T" + dbtype]
        if groups and user in groups:
            args += ["-t", path, user, pw, groups[user]]
        else:
            args += [path, user, pw]
        subprocess.run(args, check=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def auth_steps(good, bad):
    """A user let in (200) and one refused (401), with Basic auth."""
    return (
        Step("GET", "ok.txt", curl_args=("-u", good), expect_body=HELLO.encode(),
             compare=("content-type", "www-authenticate")),
        Step("GET", "ok.txt", curl_args=("-u", bad), expect=401,
             compare=("content-type", "www-authenticate")),
        Step("GET", "ok.txt", curl_args=("-u", good), expect_body=HELLO.encode()),
    )


def dbm_auth_case(dbtype, authz):
    name = "authz_dbm_%s" % dbtype.lower() if authz else "authn_dbm_%s" % dbtype.lower()
    require = "Require dbm-group admins" if authz else "Require valid-user"
    extra = ("    AuthzDBMType %s\n    AuthDBMGroupFile {data}/users.%s\n"
             % (dbtype, dbtype.lower()) if authz else "")
    users = {"alice": "alice-pw", "bob": "bob-pw"}

    def setup(case, server):
        htdbm(case, server, dbtype, users, {"alice": "admins", "bob": "staff"})
    return Case(
        name=name, module="mod_authz_dbm" if authz else "mod_authn_dbm",
        summary="%sAuthDBMType %s, file by `htdbm -T%s`, `%s`" % (
            "AuthBasicProvider dbm, " if not authz else "", dbtype, dbtype, require),
        modules=("authn_dbm", "authz_dbm") if authz else ("authn_dbm",),
        conf="""\
<Directory {doc}>
    AuthType Basic
    AuthName "matrix %s"
    AuthBasicProvider dbm
    AuthDBMType %s
    AuthDBMUserFile {data}/users.%s
%s    %s
</Directory>
""" % (name, dbtype, dbtype.lower(), extra, require),
        files={"ok.txt": HELLO}, setup=setup,
        steps=auth_steps("alice:alice-pw", "bob:bob-pw" if authz else "alice:wrong"),
        group="dbm", fresh=True, mpms=ALL_MPMS)


def rewrite_dbm_setup(case, server):
    d = case.vars(server)["data"]
    with open(os.path.join(d, "map.txt"), "w") as f:
        f.write("alpha hello\nbeta other\n")
    subprocess.run(["httxt2dbm", "-f", "DB", "-i", os.path.join(d, "map.txt"),
                    "-o", os.path.join(d, "map.db")], check=True, stdout=subprocess.PIPE)


REWRITE_PRG = """\
#!/usr/bin/python3 -u
import sys
for line in sys.stdin:
    print({{"alpha": "hello", "beta": "other"}}.get(line.strip(), "NULL"), flush=True)
"""


def rewrite_map_case(kind, arg, setup=None, data=None):
    vhost = """\
    RewriteMap m_{kind} "{arg}"
""".format(kind=kind, arg=arg)
    return Case(
        name="rewritemap_%s" % kind, module="mod_rewrite",
        summary="RewriteMap %s (%s), a rule that looks a key up" % (kind, arg.split(":")[0]),
        modules=(),
        conf=two_vhosts("rw-%s.test.localhost" % kind, """\
    DocumentRoot {doc}
%s    RewriteEngine on
    RewriteRule "^/k/(.*)$" "/${{m_%s:$1|missing}}.txt" [PT]
""" % (vhost, kind)) + """\
<Directory {doc}>
    Require all granted
</Directory>
""",
        files={"hello.txt": HELLO, "other.txt": "other\n", "missing.txt": "missing\n"},
        data=data or {}, setup=setup,
        steps=(Step("GET", "/k/alpha", host="rw-%s.test.localhost" % kind,
                    expect_body=HELLO.encode(), compare=("content-type", "etag")),
               Step("GET", "/k/beta", host="rw-%s.test.localhost" % kind,
                    expect_body=b"other"),
               Step("GET", "/k/gamma", host="rw-%s.test.localhost" % kind,
                    expect_body=b"missing")),
        # mod_rewrite opens a dbm map when it reads the configuration: the
        # parent loads the driver, which its children inherit (a group of
        # its own, so that the other DBM users' first use is a child's)
        group="rewritemap_dbm" if kind == "dbm" else "dbm", fresh=kind == "dbm",
        mpms=ALL_MPMS)


def express_setup(case, server):
    d = case.vars(server)["data"]
    with open(os.path.join(d, "map.txt"), "w") as f:
        f.write("express.test.localhost http://127.0.0.1:%d\n" % (server.http_port + 5))
    subprocess.run(["httxt2dbm", "-f", "DB", "-i", os.path.join(d, "map.txt"),
                    "-o", os.path.join(d, "map.db")], check=True, stdout=subprocess.PIPE)


def dbd_setup(case, server):
    d = case.vars(server)["data"]
    pw = subprocess.run(["htpasswd", "-nbs", "alice", "alice-pw"], stdout=subprocess.PIPE,
                        check=True, text=True).stdout.strip().split(":", 1)[1]
    pw2 = subprocess.run(["htpasswd", "-nbs", "bob", "bob-pw"], stdout=subprocess.PIPE,
                         check=True, text=True).stdout.strip().split(":", 1)[1]
    db = sqlite3.connect(os.path.join(d, "auth.db"))
    db.executescript("""
        CREATE TABLE users (user TEXT PRIMARY KEY, password TEXT);
        CREATE TABLE groups (user TEXT, grp TEXT);
        CREATE TABLE session (value TEXT, key TEXT, app TEXT, expiry INTEGER);
        INSERT INTO groups VALUES ('alice', 'admins');
        INSERT INTO groups VALUES ('bob', 'staff');
    """)
    db.execute("INSERT INTO users VALUES ('alice', ?)", (pw,))
    db.execute("INSERT INTO users VALUES ('bob', ?)", (pw2,))
    db.commit()
    db.close()


SESSION_CGI = """\
#!/usr/bin/python3
import os
q = os.environ.get("QUERY_STRING", "")
print("Content-Type: text/plain")
if q.startswith("set="):
    print("X-Replace-Session: user=" + q[4:])
print()
print("session: " + os.environ.get("HTTP_SESSION", "(none)"))
"""


SESSION_DBD_SQL = """\
DBDPrepareSQL "SELECT value FROM session WHERE key = %s AND (expiry = 0 OR expiry > %lld)" selectsession
DBDPrepareSQL "INSERT INTO session (value, expiry, key) VALUES (%s, %lld, %s)" insertsession
DBDPrepareSQL "UPDATE session SET value = %s, expiry = %lld WHERE key = %s" updatesession
DBDPrepareSQL "DELETE FROM session WHERE key = %s" deletesession
"""


def session_steps(cookie_name):
    return (
        Step("GET", "s.cgi?set=alice-{run}",
             capture={"set-cookie": "cookie"}, compare=("content-type",)),
        Step("GET", "s.cgi", headers=("Cookie: {cookie}",),
             expect_body=b"session: user=alice-{run}", compare=("content-type",)),
    )


def session_conf(extra):
    return """\
<Directory {doc}>
    Options +ExecCGI
    AddHandler cgi-script .cgi
    Session On
    SessionEnv On
    SessionHeader X-Replace-Session
%s</Directory>
""" % extra


def driver_cases():
    cases = [
        Case(name="dav_fs", module="mod_dav_fs",
             summary="`Dav On`, `DavLockDB`; MKCOL, PUT, PROPPATCH, PROPFIND, LOCK, "
                     "UNLOCK, COPY, MOVE",
             modules=("dav", "dav_fs"),
             conf="""\
DavLockDB {data}/davlock
<Directory {doc}>
    Dav On
</Directory>
""", files={"index.html": "dav\n"}, steps=dav_steps(), group="dbm", fresh=True,
             mpms=ALL_MPMS),
        dbm_auth_case("DB", False), dbm_auth_case("GDBM", False),
        dbm_auth_case("DB", True), dbm_auth_case("GDBM", True),
        rewrite_map_case("dbm", "dbm=db:{data}/map.db", setup=rewrite_dbm_setup),
        rewrite_map_case("txt", "txt:{data}/map.txt",
                         data={"map.txt": "alpha hello\nbeta other\n"}),
        rewrite_map_case("prg", "prg:{data}/map.py", data={"map.py": REWRITE_PRG}),
        Case(name="proxy_express", module="mod_proxy_express",
             summary="`ProxyExpressEnable`, host map in a DBM file (httxt2dbm -F DB) "
                     "to an HTTP/1.0 backend",
             modules=("proxy", "proxy_http", "proxy_express"),
             conf=two_vhosts("express.test.localhost", """\
    ProxyExpressEnable on
    ProxyExpressDBMType DB
    ProxyExpressDBMFile {data}/map.db
"""), setup=express_setup,
             steps=(Step("GET", "/backend/hello.txt", host="express.test.localhost",
                         expect_body=HELLO.encode(), compare=("content-type",)),
                    Step("GET", "/backend/none.txt", host="express.test.localhost",
                         expect=404)),
             group="dbm", fresh=True, mpms=ALL_MPMS, helpers=("backend",)),
        Case(name="authn_dbd", module="mod_authn_dbd, mod_authz_dbd, mod_dbd",
             summary="DBDriver sqlite3, `AuthBasicProvider dbd`, `Require dbd-group admins`",
             modules=("dbd", "authn_dbd", "authz_dbd"),
             conf="""\
DBDriver sqlite3
DBDParams "{data}/auth.db"
<Directory {doc}>
    AuthType Basic
    AuthName "matrix dbd"
    AuthBasicProvider dbd
    AuthDBDUserPWQuery "SELECT password FROM users WHERE user = %s"
    AuthzDBDQuery "SELECT grp FROM groups WHERE user = %s"
    Require dbd-group admins
</Directory>
""", files={"ok.txt": HELLO}, setup=dbd_setup,
             steps=auth_steps("alice:alice-pw", "bob:bob-pw"),
             group="dbd", fresh=True, mpms=ALL_MPMS),
        Case(name="session_dbd", module="mod_session_dbd",
             summary="sessions kept in sqlite3 through mod_dbd, `SessionDBDCookieName`",
             modules=("dbd", "session", "session_dbd", "cgid"),
             conf=SESSION_DBD_SQL + session_conf("""\
    SessionDBDCookieName dbdsession path=/
"""), files={"s.cgi": SESSION_CGI}, setup=None,
             steps=session_steps("dbdsession"), group="dbd", mpms=ALL_MPMS),
        Case(name="session_crypto", module="mod_session_crypto",
             summary="`SessionCryptoDriver openssl`, an encrypted cookie session",
             modules=("session", "session_cookie", "session_crypto", "cgid"),
             conf="SessionCryptoDriver openssl\n" + session_conf("""\
    SessionCookieName session path=/
    SessionCryptoPassphrase matrix-secret
"""), files={"s.cgi": SESSION_CGI},
             steps=session_steps("session"), group="session_crypto", fresh=True,
             mpms=ALL_MPMS),
        Case(name="socache_dbm_ssl", module="mod_socache_dbm",
             summary="`SSLSessionCache dbm:...`: TLS sessions in a DBM file",
             modules=("socache_dbm",),
             conf='SSLSessionCache "dbm:{data}/ssl_scache"\n',
             files={"ok.txt": HELLO},
             steps=(Step("GET", "ok.txt", expect_body=HELLO.encode(),
                         compare=("content-type", "etag")),),
             group="socache_dbm", fresh=True, mpms=ALL_MPMS),
        Case(name="cache_socache_dbm", module="mod_cache_socache, mod_socache_dbm",
             summary="`CacheEnable socache`, `CacheSocache dbm:...`, a CGI's answer "
                     "cached", modules=("cache", "cache_socache", "socache_dbm", "cgid"),
             conf="""\
CacheSocache "dbm:{data}/cache"
CacheHeader on
<Directory {doc}>
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
<Location {loc}/>
    CacheEnable socache
</Location>
""", files={"c.cgi": "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n"
                           "Cache-Control: max-age=60\\r\\n\\r\\nanswer of %s\\n' "
                           "\"$QUERY_STRING\"\n"},
             steps=(Step("GET", "c.cgi?{run}", expect_body=b"answer of {run}",
                         compare=("x-cache", "content-type")),
                    Step("GET", "c.cgi?{run}", expect_body=b"answer of {run}",
                         compare=("x-cache", "content-type"))),
             group="socache_dbm", fresh=True, mpms=ALL_MPMS),
        Case(name="authnz_ldap", module="mod_authnz_ldap, mod_ldap",
             summary="`AuthBasicProvider ldap` against a private slapd, "
                     "`Require ldap-group`",
             modules=("ldap", "authnz_ldap"),
             conf="""\
LDAPCacheTTL 0
<Directory {doc}>
    AuthType Basic
    AuthName "matrix ldap"
    AuthBasicProvider ldap
    AuthLDAPURL "ldap://127.0.0.1:{ldap}/ou=people,%s?uid"
    Require ldap-group cn=admins,ou=groups,%s
</Directory>
<Location {loc}/ldap-status>
    SetHandler ldap-status
</Location>
""" % (LDAP_SUFFIX, LDAP_SUFFIX), files={"ok.txt": HELLO},
             steps=auth_steps("alice:alice-pw", "bob:bob-pw") + (
                 Step("GET", "ok.txt", curl_args=("-u", "alice:wrong"), expect=401),),
             group="ldap", fresh=True, mpms=ALL_MPMS, needs=("/usr/sbin/slapd",),
             helpers=("slapd",)),
    ]
    return cases
