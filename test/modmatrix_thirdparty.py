"""The module matrix's cases of the module packages an administrator adds
to Debian's apache2: libapache2-mod-php8.2 (prefork only: it is not
thread-safe), libapache2-mod-perl2, libapache2-mod-wsgi-py3,
libapache2-mod-security2 with modsecurity-crs, libapache2-mod-fcgid (with
php-cgi) and php-fpm through mod_proxy_fcgi (test/phpfpm.py's private
php-fpm). Each package's cases have a configuration of their own.
Configuration text is a format string (see modmatrix.Case)."""

from modmatrix import ALL_MPMS, Case, Step

PERL_HANDLER = """\
package MatrixHandler;
use strict;
use Apache2::RequestRec ();
use Apache2::RequestIO ();
use APR::Table ();
use Apache2::Const -compile => qw(OK);

sub handler {{
    my $r = shift;
    my ($body, $buf) = ('', '');
    while ($r->read($buf, 8192)) {{ $body .= $buf; }}
    $r->content_type('text/plain');
    $r->headers_out->set('X-Perl' => 'handler');
    $r->print("perl handler: method=", $r->method, " args=", ($r->args // ''),
              " body=", $body, "\\n");
    return Apache2::Const::OK;
}}
1;
"""

PERL_REGISTRY = """\
use strict;
my $q = $ENV{{QUERY_STRING}} // '';
print "Content-Type: text/plain\\r\\nX-Perl: registry\\r\\n\\r\\n";
print "registry script: query=$q method=$ENV{{REQUEST_METHOD}}\\n";
"""

PHP_ECHO = """\
<?php
header('Content-Type: text/plain');
header('X-Php: ' . PHP_SAPI);
echo "method=", $_SERVER['REQUEST_METHOD'], " get=", json_encode($_GET),
     " post=", json_encode($_POST), " input=", file_get_contents('php://input'), "\\n";
"""

WSGI_APP = """\
def application(environ, start_response):
    n = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(n) if n else environ["wsgi.input"].read()
    out = ("wsgi: method=%s query=%s body=%s group=%s\\n" % (
        environ["REQUEST_METHOD"], environ.get("QUERY_STRING", ""),
        body.decode("utf-8", "replace"), environ.get("mod_wsgi.process_group", ""))).encode()
    start_response("200 OK", [("Content-Type", "text/plain"), ("X-Wsgi", "yes"),
                              ("Content-Length", str(len(out)))])
    return [out]
"""

FORM = ("Content-Type: application/x-www-form-urlencoded",)


def thirdparty_cases():
    return [
        Case(name="php", module="mod_php (libapache2-mod-php8.2)",
             summary="`SetHandler application/x-httpd-php` for *.php; GET and a form POST",
             modules=("php8.2",), conf="""\
<Directory {doc}>
    <FilesMatch "\\.php$">
        SetHandler application/x-httpd-php
    </FilesMatch>
</Directory>
""", files={"echo.php": PHP_ECHO},
             steps=(Step("GET", "echo.php?a=1", expect_body=b'get={"a":"1"}',
                         compare=("content-type", "x-php")),
                    Step("POST", "echo.php", body=b"name=matrix&n=2", headers=FORM,
                         expect_body=b'"name":"matrix"', compare=("content-type",))),
             group="php", mpms=("prefork",),
             needs=("/usr/lib/apache2/modules/libphp8.2.so",)),
        Case(name="perl", module="mod_perl (libapache2-mod-perl2)",
             summary="a `PerlResponseHandler` module reading the body; a "
                     "`ModPerl::Registry` script",
             modules=("perl",), conf="""\
PerlSwitches -I{data}
PerlModule MatrixHandler
<Location {loc}/handler>
    SetHandler perl-script
    PerlResponseHandler MatrixHandler
</Location>
<Directory {doc}/registry>
    SetHandler perl-script
    PerlResponseHandler ModPerl::Registry
    Options +ExecCGI
    PerlOptions +ParseHeaders
</Directory>
""", data={"MatrixHandler.pm": PERL_HANDLER}, files={"registry/r.pl": PERL_REGISTRY},
             steps=(Step("GET", "handler?x=1", expect_body=b"args=x=1",
                         compare=("content-type", "x-perl")),
                    Step("POST", "handler", body=b"perl body {run}",
                         expect_body=b"body=perl body {run}", compare=("content-type",)),
                    Step("GET", "registry/r.pl?q=2", expect_body=b"query=q=2",
                         compare=("content-type", "x-perl"))),
             group="perl", mpms=ALL_MPMS,
             needs=("/usr/lib/apache2/modules/mod_perl.so",)),
        Case(name="wsgi", module="mod_wsgi (libapache2-mod-wsgi-py3)",
             summary="`WSGIScriptAlias`, embedded and `WSGIDaemonProcess` mode",
             modules=("wsgi",), conf="""\
WSGISocketPrefix {data}/wsgi
WSGIDaemonProcess matrix processes=1 threads=4 display-name=matrix-wsgi
WSGIScriptAlias {loc}/embedded {data}/app.wsgi
WSGIScriptAlias {loc}/daemon {data}/app.wsgi
<Location {loc}/daemon>
    WSGIProcessGroup matrix
</Location>
<Directory {data}>
    Require all granted
</Directory>
""", data={"app.wsgi": WSGI_APP},
             steps=(Step("GET", "embedded?x=1", expect_body=b"query=x=1",
                         compare=("content-type", "x-wsgi", "content-length")),
                    Step("POST", "embedded", body=b"wsgi body {run}",
                         expect_body=b"body=wsgi body {run}"),
                    Step("POST", "daemon", body=b"daemon body {run}",
                         expect_body=b"group=matrix", compare=("content-type", "x-wsgi"))),
             group="wsgi", needs=("/usr/lib/apache2/modules/mod_wsgi.so",)),
        Case(name="security2_crs", module="mod_security2 + OWASP CRS (modsecurity-crs)",
             summary="`SecRuleEngine On`, CRS 3 rules: a clean request passes, SQL "
                     "injection and XSS (query, form body) and a scanner get 403",
             modules=("unique_id", "security2"), conf="""\
<IfModule security2_module>
    SecDataDir {data}
    SecTmpDir {data}
    SecRuleEngine On
    SecRequestBodyAccess On
    SecAuditEngine Off
    Include /etc/modsecurity/crs/crs-setup.conf
    Include /usr/share/modsecurity-crs/rules/*.conf
</IfModule>
""" + """\
<Directory {doc}>
    Options +ExecCGI
    AddHandler cgi-script .cgi
</Directory>
""", files={"hello.txt": "hello from the module matrix\n",
                     "e.cgi": "#!/bin/sh\nprintf 'Content-Type: text/plain\\r\\n\\r\\n'\ncat\n"},
             steps=(Step("GET", "hello.txt", compare=("content-type",)),
                    Step("GET", "hello.txt?id=1%27%20OR%20%271%27=%271", expect=403),
                    Step("GET", "hello.txt?q=%3Cscript%3Ealert(1)%3C/script%3E", expect=403),
                    Step("GET", "hello.txt", headers=("User-Agent: nikto",), expect=403),
                    Step("POST", "e.cgi", body=b"comment=<script>alert(1)</script>",
                         headers=FORM, expect=403),
                    Step("POST", "e.cgi", body=b"comment=just+words", headers=FORM,
                         expect_body=b"comment=just+words")),
             group="security2", needs=("/usr/lib/apache2/modules/mod_security2.so",
                                       "/usr/share/modsecurity-crs/rules")),
        Case(name="fcgid", module="mod_fcgid (libapache2-mod-fcgid)",
             summary="`FcgidWrapper /usr/bin/php-cgi8.2 .php`: PHP as FastCGI, GET and POST",
             modules=("fcgid",), conf="""\
FcgidIPCDir {data}/ipc
FcgidProcessTableFile {data}/shm
FcgidMaxProcesses 2
<Directory {doc}>
    Options +ExecCGI
    AddHandler fcgid-script .php
    FcgidWrapper /usr/bin/php-cgi8.2 .php
</Directory>
""", files={"echo.php": PHP_ECHO},
             steps=(Step("GET", "echo.php?a=1", expect_body=b'get={"a":"1"}',
                         compare=("content-type", "x-php")),
                    Step("POST", "echo.php", body=b"name=matrix&n=2", headers=FORM,
                         expect_body=b'"name":"matrix"')),
             group="fcgid", needs=("/usr/lib/apache2/modules/mod_fcgid.so",
                                   "/usr/bin/php-cgi8.2")),
        Case(name="php_fpm", module="mod_proxy_fcgi + php-fpm",
             summary="*.php handed to a private php-fpm over a unix socket "
                     "(`SetHandler proxy:unix:...|fcgi://`)",
             modules=("proxy", "proxy_fcgi"),
             steps=(Step("GET", "/fpm/hello.php", expect_body=b"Hello from PHP",
                         compare=("content-type",)),
                    Step("POST", "/fpm/upload.php", body=b"fpm body " * 1000,
                         expect_body=b'"size":9000', compare=("content-type",),
                         scrub=(r'"protocol":"HTTP\\/[0-9.]+"',))),
             group="php_fpm", helpers=("fpm",), needs=("/usr/sbin/php-fpm8.2",),
             note="the script's SERVER_PROTOCOL is HTTP/2.0 over h2"),
    ]
