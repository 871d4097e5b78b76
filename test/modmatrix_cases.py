"""The module matrix's cases of Debian's apache2 modules that serve, alter,
authenticate or log a request without an apr-util driver (those are in
modmatrix_drivers.py, the third-party packages in modmatrix_thirdparty.py).
They share one server configuration under the event MPM. Configuration
text is a format string (see modmatrix.Case): Apache's own braces are
doubled. NOT_COVERED says why the remaining modules have no case."""

import gzip
import os
import subprocess

from modmatrix import Case, Step
from modmatrix_drivers import ETAG, HELLO, HTTP_DATE

ECHO_CGI = """\
#!/bin/sh
printf 'Content-Type: text/plain\\r\\n\\r\\n'
echo "method=$REQUEST_METHOD query=$QUERY_STRING length=$CONTENT_LENGTH"
echo "remote=$REMOTE_ADDR ident=$REMOTE_IDENT x-in=$HTTP_X_IN ssl=$SSL_PROTOCOL"
echo "path_info=$PATH_INFO matrix=$MATRIX_VAR"
cat
"""

CGI_DIR = """\
<Directory {doc}>
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
"""


def c(name, module, summary, conf="", files=None, steps=None, modules=(), **kw):
    return Case(name=name, module=module, summary=summary, conf=conf,
                files=files if files is not None else {"hello.txt": HELLO},
                steps=steps or (Step("GET", "hello.txt", expect_body=HELLO.encode(),
                                     compare=("content-type",)),),
                modules=modules, **kw)


def get(path="hello.txt", expect=200, compare=("content-type",), **kw):
    return Step("GET", path, expect=expect, compare=compare, **kw)


def post(path, body, expect=200, compare=("content-type",), **kw):
    return Step("POST", path, body=body, expect=expect, compare=compare, **kw)


def htpasswd_setup(users, digest=False):
    def setup(case, server):
        d = case.vars(server)["data"]
        for i, (u, pw) in enumerate(users.items()):
            if digest:
                args = ["htdigest"] + (["-c"] if i == 0 else []) + [
                    os.path.join(d, "digest"), "matrix digest", u]
                subprocess.run(args, input=(pw + "\n" + pw + "\n").encode(), check=True,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            else:
                args = ["htpasswd", "-b"] + (["-c"] if i == 0 else []) + [
                    os.path.join(d, "passwd"), u, pw]
                subprocess.run(args, check=True, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    return setup


USERS = {"alice": "alice-pw", "bob": "bob-pw", "www-data": "www-pw"}


def basic_dir(realm, *lines, before=""):
    """Configuration: Basic auth on the case's directory, with `lines`
    (provider, files, Require) inside."""
    return before + """\
<Directory {doc}>
    AuthType Basic
    AuthName "matrix %s"
%s</Directory>
""" % (realm, "".join("    %s\n" % l for l in lines))


def basic(user_pw, path="hello.txt", expect=200, **kw):
    return get(path, expect=expect, curl_args=("-u", user_pw),
               compare=("content-type", "www-authenticate"), **kw)


# the form login's settings, for the protected directory and the login
# handler alike
FORM_AUTH = """\
    AuthType form
    AuthName "matrix form"
    AuthFormProvider file
    AuthUserFile {data}/passwd
    Session On
    SessionCookieName formsession path=/
"""


def auth_cases():
    return [
        c("auth_basic", "mod_auth_basic, mod_authn_file, mod_authz_user",
          "`AuthType Basic`, `AuthUserFile` by htpasswd, `Require user alice`",
          conf=basic_dir("basic", "AuthUserFile {data}/passwd", "Require user alice"), setup=htpasswd_setup(USERS),
          steps=(basic("alice:alice-pw"), basic("bob:bob-pw", expect=401),
                 basic("alice:nope", expect=401), get(expect=401))),
        c("auth_digest", "mod_auth_digest",
          "`AuthType Digest`, `AuthUserFile` by htdigest", modules=("auth_digest",),
          conf="""\
<Directory {doc}>
    AuthType Digest
    AuthName "matrix digest"
    AuthDigestProvider file
    AuthUserFile {data}/digest
    Require valid-user
</Directory>
""", setup=htpasswd_setup(USERS, digest=True),
          steps=(get(digest="alice:alice-pw"), get(digest="alice:nope", expect=401),
                 get(expect=401, compare=("content-type",)))),
        c("authn_anon", "mod_authn_anon", "`AuthBasicProvider anon`, `Anonymous guest`",
          modules=("authn_anon",), conf=basic_dir(
              "anon", "AuthBasicProvider anon", "Anonymous guest",
              "Anonymous_MustGiveEmail on", "Require valid-user"), steps=(basic("guest:me@example.com"), basic("alice:me@example.com", expect=401))),
        c("authn_core", "mod_authn_core", "`<AuthnProviderAlias file ...>` used by Basic",
          conf="""\
<AuthnProviderAlias file matrixfile>
    AuthUserFile {data}/passwd
</AuthnProviderAlias>
""" + basic_dir("alias", "AuthBasicProvider matrixfile", "Require valid-user"), setup=htpasswd_setup(USERS),
          steps=(basic("bob:bob-pw"), basic("bob:nope", expect=401))),
        c("authn_socache", "mod_authn_socache",
          "`AuthnCacheSOCache shmcb`, file logins cached (`AuthnCacheProvideFor file`)",
          modules=("authn_socache",), conf="""\
AuthnCacheSOCache shmcb
""" + basic_dir("socache", "AuthBasicProvider socache file", "AuthUserFile {data}/passwd",
                "AuthnCacheProvideFor file", "AuthnCacheContext matrix",
                "Require valid-user"), setup=htpasswd_setup(USERS),
          steps=(basic("alice:alice-pw"), basic("alice:alice-pw"),
                 basic("alice:nope", expect=401))),
        c("authz_groupfile", "mod_authz_groupfile", "`AuthGroupFile`, `Require group`",
          modules=("authz_groupfile",), conf=basic_dir(
              "groups", "AuthUserFile {data}/passwd", "AuthGroupFile {data}/groups",
              "Require group admins"), data={"groups": "admins: alice\nstaff: bob\n"},
          setup=htpasswd_setup(USERS),
          steps=(basic("alice:alice-pw"), basic("bob:bob-pw", expect=401))),
        c("authz_host", "mod_authz_host", "`Require ip`, `Require not ip` in `<RequireAll>`",
          conf="""\
<Directory {doc}>
    Require ip 127.0.0.1
</Directory>
<Directory {doc}/no>
    <RequireAll>
        Require all granted
        Require not ip 127.0.0.0/8
    </RequireAll>
</Directory>
""", files={"hello.txt": HELLO, "no/hello.txt": HELLO},
          steps=(get(), get("no/hello.txt", expect=403))),
        c("authz_owner", "mod_authz_owner", "`Require file-owner` (user www-data)",
          modules=("authz_owner",), conf=basic_dir(
              "owner", "AuthUserFile {data}/passwd", "Require file-owner"), setup=htpasswd_setup(USERS),
          steps=(basic("www-data:www-pw"), basic("alice:alice-pw", expect=401))),
        c("access_compat", "mod_access_compat", "`Order`, `Allow from`, `Deny from`",
          modules=("access_compat",), conf="""\
<Directory {doc}>
    Order deny,allow
    Deny from all
    Allow from 127.0.0.1
</Directory>
<Directory {doc}/no>
    Order allow,deny
    Deny from 127.0.0.1
</Directory>
""", files={"hello.txt": HELLO, "no/hello.txt": HELLO},
          steps=(get(), get("no/hello.txt", expect=403))),
        c("auth_form", "mod_auth_form, mod_session_cookie, mod_request",
          "`AuthType form`, a login handler, the session in a cookie",
          modules=("session", "session_cookie", "request", "auth_form"), conf="""\
<Directory {doc}>
%s    Require valid-user
</Directory>
<Location {loc}/login>
    SetHandler form-login-handler
    AuthFormLoginSuccessLocation {loc}/hello.txt
%s    Require all granted
</Location>
""" % (FORM_AUTH, FORM_AUTH), setup=htpasswd_setup(USERS),
          steps=(get(expect=401),
                 post("login", b"httpd_username=alice&httpd_password=alice-pw",
                      expect=302, compare=("location",), capture={"set-cookie": "cookie"}),
                 get(headers=("Cookie: {cookie}",)))),
    ]


def content_cases():
    gz = gzip.compress(b"inflated request body\n", mtime=0)
    return [
        c("actions", "mod_actions", "`Action` for a type, run by a CGI",
          modules=("actions",), conf="""\
Action text/x-matrix {loc}/handler.cgi virtual
AddType text/x-matrix .mx
""" + CGI_DIR, files={"handler.cgi": ECHO_CGI, "page.mx": "mx\n"},
          steps=(get("page.mx", expect_body=b"path_info=/m/actions/page.mx"),)),
        c("alias", "mod_alias", "`Alias`, `Redirect`, `RedirectMatch`", conf="""\
Alias {loc}/aliased {doc}/real
Redirect 301 {loc}/old {loc}/new
RedirectMatch 307 "^{loc}/match/(.*)$" "{loc}/real/$1"
""", files={"real/hello.txt": HELLO},
          steps=(get("aliased/hello.txt"), get("old/x", expect=301, compare=("location",)),
                 get("match/hello.txt", expect=307, compare=("location",)))),
        c("allowmethods", "mod_allowmethods", "`AllowMethods GET`",
          modules=("allowmethods",), conf="""\
<Directory {doc}>
    AllowMethods GET
</Directory>
""", steps=(get(), post("hello.txt", b"x", expect=405))),
        c("asis", "mod_asis", "`AddHandler send-as-is`: status and headers from the file",
          modules=("asis",), conf="AddHandler send-as-is .asis\n",
          files={"a.asis": "Status: 299 As Is\nX-Asis: yes\nContent-Type: text/plain\n\n"
                           "as is\n"},
          steps=(get("a.asis", expect=299, compare=("content-type", "x-asis")),)),
        c("autoindex", "mod_autoindex", "`Options +Indexes`, `IndexOptions FancyIndexing`",
          modules=("autoindex",), conf="""\
<Directory {doc}>
    Options +Indexes
    IndexOptions FancyIndexing SuppressLastModified
</Directory>
""", files={"a.txt": "a\n", "b.txt": "b\n"},
          steps=(get("", expect_body=b"a.txt"), get("?C=S;O=D"))),
        c("brotli", "mod_brotli", "`SetOutputFilter BROTLI_COMPRESS`",
          modules=("brotli",), conf="""\
<Directory {doc}>
    SetOutputFilter BROTLI_COMPRESS
</Directory>
""", files={"t.txt": HELLO * 50},
          steps=(get("t.txt", headers=("Accept-Encoding: br",),
                     compare=("content-type", "content-encoding", "vary")),)),
        c("buffer", "mod_buffer", "`SetOutputFilter BUFFER` on a CGI",
          modules=("buffer",), conf=CGI_DIR + """\
<Location {loc}/>
    SetOutputFilter BUFFER
</Location>
""", files={"e.cgi": ECHO_CGI}, steps=(get("e.cgi?x=1", expect_body=b"query=x=1"),)),
        c("cache_disk", "mod_cache, mod_cache_disk",
          "`CacheEnable disk`, `CacheHeader on`: a CGI's answer, then the cached one",
          modules=("cache", "cache_disk"), conf=CGI_DIR + """\
CacheRoot {data}/cache
CacheHeader on
<Location {loc}/>
    CacheEnable disk
</Location>
""", files={"c.cgi": "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n"
                     "Cache-Control: max-age=60\\r\\n\\r\\nanswer of %s\\n' \"$QUERY_STRING\"\n"},
          steps=(get("c.cgi?{run}", compare=("x-cache", "content-type")),
                 get("c.cgi?{run}", compare=("x-cache", "content-type")))),
        c("cern_meta", "mod_cern_meta", "`MetaFiles on`: headers from .web/*.meta",
          modules=("cern_meta",), conf="""\
<Directory {doc}>
    MetaFiles on
    MetaDir .web
    MetaSuffix .meta
</Directory>
""", files={"hello.txt": HELLO, ".web/hello.txt.meta": "X-Meta: from the meta file\n"},
          steps=(get(compare=("content-type", "x-meta")),)),
        c("cgi", "mod_cgid (mod_cgi under prefork)",
          "a shell CGI: environment, query, request body", conf=CGI_DIR,
          files={"e.cgi": ECHO_CGI},
          steps=(get("e.cgi?a=b"), post("e.cgi", b"posted body\n",
                                        expect_body=b"posted body"))),
        c("charset_lite", "mod_charset_lite", "`CharsetSourceEnc UTF-8`, "
          "`CharsetDefault ISO-8859-1`", modules=("charset_lite",), conf="""\
<Directory {doc}>
    CharsetSourceEnc UTF-8
    CharsetDefault ISO-8859-1
    AddCharset ISO-8859-1 .txt
</Directory>
""", files={"t.txt": "caf\u00e9\n"}, steps=(get("t.txt", expect_body=b"caf\xe9"),)),
        c("data", "mod_data", "`SetOutputFilter DATA`: the answer as a data: URL",
          modules=("data",), conf="""\
<Directory {doc}>
    SetOutputFilter DATA
</Directory>
""", steps=(get(expect_body=b"data:text/plain;base64,"),)),
        c("deflate", "mod_deflate",
          "`SetOutputFilter DEFLATE`; `SetInputFilter DEFLATE` inflating a POST",
          conf=CGI_DIR + """\
<Location {loc}/out>
    SetOutputFilter DEFLATE
</Location>
<Location {loc}/in>
    SetInputFilter DEFLATE
</Location>
""", files={"out/t.txt": HELLO * 40, "in/e.cgi": ECHO_CGI},
          steps=(get("out/t.txt", headers=("Accept-Encoding: gzip",),
                     compare=("content-type", "content-encoding", "vary")),
                 Step("POST", "in/e.cgi", body=gz, headers=("Content-Encoding: gzip",),
                      expect_body=b"inflated request body"))),
        c("dialup", "mod_dialup", "`ModemStandard V.92` on a small file",
          modules=("dialup",), conf="""\
<Location {loc}/>
    ModemStandard V.92
</Location>
""", steps=(get(), get("/index.html", compare=("content-type", "etag"))),
          group="dialup", settle=2.5),
        c("dir", "mod_dir", "`DirectoryIndex`, `DirectorySlash`, `FallbackResource`",
          conf="""\
<Directory {doc}>
    DirectoryIndex start.html
</Directory>
<Directory {doc}/fb>
    FallbackResource {loc}/start.html
</Directory>
""", files={"start.html": "start\n", "sub/start.html": "sub start\n", "fb/x": "x"},
          steps=(get("", expect_body=b"start"), get("sub", expect=301, compare=("location",)),
                 get("fb/nothing/here", expect_body=b"start"))),
        c("dumpio", "mod_dumpio", "`DumpIOInput On`, `DumpIOOutput On`, "
          "`LogLevel dumpio:trace7` in a Location",
          modules=("dump_io",), conf="""\
DumpIOInput On
DumpIOOutput On
<Location {loc}/>
    LogLevel dumpio:trace7
</Location>
""" + CGI_DIR, files={"e.cgi": ECHO_CGI, "hello.txt": HELLO},
          steps=(get(), post("e.cgi", b"dumped\n", expect_body=b"dumped"))),
        c("env", "mod_env", "`SetEnv`, seen by a CGI and mod_headers", conf=CGI_DIR + """\
<Location {loc}/>
    SetEnv MATRIX_VAR from-setenv
    Header set X-Env "%{{MATRIX_VAR}}e"
</Location>
""", files={"e.cgi": ECHO_CGI},
          steps=(get("e.cgi", expect_body=b"matrix=from-setenv",
                     compare=("content-type", "x-env")),)),
        c("expires", "mod_expires", "`ExpiresByType text/plain \"access plus 1 hour\"`",
          modules=("expires",), conf="""\
<Directory {doc}>
    ExpiresActive On
    ExpiresByType text/plain "access plus 1 hour"
</Directory>
""", steps=(get(compare=("content-type", "cache-control")),)),
        c("ext_filter", "mod_ext_filter", "`ExtFilterDefine` running tr(1) on the answer",
          modules=("ext_filter",), conf="""\
ExtFilterDefine matrixupper mode=output intype=text/plain cmd="/usr/bin/tr a-z A-Z"
<Directory {doc}>
    SetOutputFilter matrixupper
</Directory>
""", steps=(get(expect_body=HELLO.upper().encode()),)),
        c("file_cache", "mod_file_cache", "`CacheFile` of a file", modules=("file_cache",),
          conf="CacheFile {doc}/hello.txt\n",
          steps=(get(compare=("content-type", "content-length")),)),
        c("filter", "mod_filter", "`FilterDeclare`, `FilterProvider` of SUBSTITUTE by type",
          modules=("substitute",), conf="""\
FilterDeclare matrixsub
FilterProvider matrixsub SUBSTITUTE "%{{CONTENT_TYPE}} =~ m|^text/plain|"
<Directory {doc}>
    FilterChain matrixsub
    Substitute "s/hello/filtered/"
</Directory>
""", steps=(get(expect_body=b"filtered from"),)),
        c("headers", "mod_headers", "`Header set/append/unset`, `RequestHeader set`",
          conf=CGI_DIR + """\
<Location {loc}/>
    RequestHeader set X-In "set-by-requestheader"
    Header set X-Out "one"
    Header append X-Out "two"
    Header unset ETag
</Location>
""", files={"e.cgi": ECHO_CGI},
          steps=(get("e.cgi", expect_body=b"x-in=set-by-requestheader",
                     compare=("content-type", "x-out", "etag")),)),
        c("ident", "mod_ident", "`IdentityCheck On` (nothing answers on port 113)",
          modules=("ident",), conf=CGI_DIR + """\
<Location {loc}/>
    IdentityCheck On
    IdentityCheckTimeout 2
</Location>
""", files={"e.cgi": ECHO_CGI}, steps=(get("e.cgi"),)),
        c("imagemap", "mod_imagemap", "`SetHandler imap-file`: a click to a redirect",
          modules=("imagemap",), conf="AddHandler imap-file .map\n",
          files={"i.map": "default {loc}/hello.txt\nrect {loc}/in.txt 0,0 10,10\n"},
          steps=(get("i.map?5,5", expect=302, compare=("location",)),
                 get("i.map?50,50", expect=302, compare=("location",)))),
        c("include", "mod_include", "SSI: `#echo`, `#include virtual`, `#if`",
          conf="""\
<Directory {doc}>
    Options +Includes
    AddOutputFilter INCLUDES .shtml
</Directory>
""", files={"hello.txt": HELLO, "p.shtml":
                    "uri=<!--#echo var=\"DOCUMENT_URI\" -->\n"
                    "<!--#include virtual=\"hello.txt\" -->"
                    "<!--#if expr=\"%{{REQUEST_METHOD}} == 'GET'\" -->get<!--#endif -->\n"},
          steps=(get("p.shtml", expect_body=b"hello from"),)),
        c("info", "mod_info", "`SetHandler server-info`, one module's section",
          modules=("info",), conf="""\
<Location {loc}/info>
    SetHandler server-info
</Location>
""", steps=(get("info?mod_alias.c", expect_body=b"mod_alias.c"),)),
        c("log_debug", "mod_log_debug", "`LogMessage` with an expression",
          modules=("log_debug",), conf="""\
<Location {loc}/>
    LogMessage "matrix log_debug %{{REQUEST_URI}}" hook=fixups
</Location>
""", steps=(get(),)),
        c("log_forensic", "mod_log_forensic", "`ForensicLog` of every request",
          modules=("log_forensic",), conf="ForensicLog {data}/../forensic_log\n",
          steps=(get(),)),
        c("macro", "mod_macro", "`<Macro>` of a Location with a header, `Use`",
          modules=("macro",), conf="""\
<Macro MatrixLoc $name>
    <Location {loc}/$name>
        Header set X-Macro "$name"
    </Location>
</Macro>
Use MatrixLoc sub
UndefMacro MatrixLoc
""", files={"sub/hello.txt": HELLO},
          steps=(get("sub/hello.txt", compare=("content-type", "x-macro")),)),
        c("mime", "mod_mime", "`AddType`, `AddCharset`, `AddLanguage`", conf="""\
<Directory {doc}>
    AddType application/x-matrix .mtx
    AddCharset UTF-8 .mtx
    AddLanguage de .mtx
</Directory>
""", files={"a.mtx": "mtx\n"},
          steps=(get("a.mtx", compare=("content-type", "content-language")),)),
        c("mime_magic", "mod_mime_magic", "`MimeMagicFile` typing a file without extension",
          modules=("mime_magic",), conf="MimeMagicFile /etc/apache2/magic\n",
          files={"noext": "%PDF-1.4\n% matrix\n"},
          steps=(get("noext", compare=("content-type",)),)),
        c("negotiation", "mod_negotiation", "`Options +MultiViews`, by Accept-Language",
          modules=("negotiation",), conf="""\
<Directory {doc}>
    Options +MultiViews
    AddLanguage de .de
    AddLanguage en .en
</Directory>
""", files={"page.html.en": "english\n", "page.html.de": "deutsch\n"},
          steps=(get("page", headers=("Accept-Language: de",), expect_body=b"deutsch",
                     compare=("content-type", "content-language", "vary")),
                 get("page", headers=("Accept-Language: en",), expect_body=b"english"))),
    ]


def all_cases():
    from modmatrix_drivers import driver_cases
    from modmatrix_more import more_cases
    from modmatrix_thirdparty import thirdparty_cases
    return auth_cases() + content_cases() + more_cases() + driver_cases() + thirdparty_cases()
