"""Debian's Apache with mod_auth_openidc in front of the portal, as Open OnDemand sites run
it: Apache signs people in at the OpenID provider and passes their login to the portal in a
header (the portal's trusted-header mode, ADR 0004 and 0028).

Apache connects to the portal from its own loopback address (``ProxySourceAddress``), so the
portal can be told to believe the header from that address only.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import httpx

from tests.portal import free_port, wait_for

MODULES = Path("/usr/lib/apache2/modules")
PROXY_ADDRESS = "127.0.0.2"
HEADER = "X-Remote-User"
CLIENT_ID = "apache-portal"
CLIENT_SECRET = "apache-client-secret-for-tests-only"

_CONFIG = """\
ServerRoot {folder}
ServerName 127.0.0.1
Listen 127.0.0.1:{port}
PidFile {folder}/httpd.pid
DefaultRuntimeDir {folder}
ErrorLog {folder}/error.log
LogLevel warn auth_openidc:info
User www-data
Group www-data
LoadModule mpm_event_module {modules}/mod_mpm_event.so
LoadModule authn_core_module {modules}/mod_authn_core.so
LoadModule authz_core_module {modules}/mod_authz_core.so
LoadModule authz_user_module {modules}/mod_authz_user.so
LoadModule headers_module {modules}/mod_headers.so
LoadModule proxy_module {modules}/mod_proxy.so
LoadModule proxy_http_module {modules}/mod_proxy_http.so
LoadModule auth_openidc_module {modules}/mod_auth_openidc.so

OIDCProviderMetadataURL {issuer}/.well-known/openid-configuration
OIDCClientID {client_id}
OIDCClientSecret {client_secret}
OIDCRedirectURI http://127.0.0.1:{port}/oidc/redirect_uri
OIDCCryptoPassphrase apache-test-passphrase-not-secret
OIDCScope "openid profile email"
OIDCPKCEMethod S256
OIDCRemoteUserClaim preferred_username
# The login goes to the portal in this header; a client's own copy is removed before
# anything else runs, whatever the module's version does about it.
OIDCAuthNHeader {header}
RequestHeader unset {header} early
OIDCProviderTokenEndpointAuth client_secret_basic
OIDCHTTPTimeoutLong 10
OIDCHTTPTimeoutShort 5

ProxyPreserveHost On
ProxySourceAddress {proxy_address}
<Location />
  AuthType openid-connect
  Require valid-user
  ProxyPass http://127.0.0.1:{portal_port}/
  ProxyPassReverse http://127.0.0.1:{portal_port}/
</Location>
<Location /oidc/redirect_uri>
  AuthType openid-connect
  Require valid-user
  ProxyPass "!"
</Location>
"""


def apache_client(port: int) -> dict[str, object]:
    """Apache's registration at the provider."""
    return {
        "client_id": CLIENT_ID,
        "client_secret": CLIENT_SECRET,
        "redirect_uris": [f"http://127.0.0.1:{port}/oidc/redirect_uri"],
        "grant_types": ["authorization_code"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "client_secret_basic",
    }


class ApacheProxy:
    def __init__(self, folder: Path, issuer: str, portal_port: int, port: int | None = None):
        self.folder = folder
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.issuer = issuer
        self.portal_port = portal_port
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> ApacheProxy:
        self.folder.mkdir(parents=True, exist_ok=True)
        config = self.folder / "httpd.conf"
        config.write_text(
            _CONFIG.format(
                folder=self.folder,
                port=self.port,
                modules=MODULES,
                issuer=self.issuer,
                client_id=CLIENT_ID,
                client_secret=CLIENT_SECRET,
                header=HEADER,
                proxy_address=PROXY_ADDRESS,
                portal_port=self.portal_port,
            )
        )
        log = (self.folder / "stdout.log").open("ab")
        self.process = subprocess.Popen(
            ["/usr/sbin/apache2", "-f", str(config), "-DFOREGROUND"], stdout=log, stderr=log
        )
        wait_for(self._answers, 30, "Apache to answer")
        return self

    def _answers(self) -> bool:
        if self.process is not None and self.process.poll() is not None:
            raise RuntimeError(f"Apache exited: {self.log()}")
        try:
            httpx.get(self.url, timeout=2)
        except httpx.HTTPError:
            return False
        return True

    def log(self) -> str:
        texts = [(self.folder / name) for name in ("stdout.log", "error.log")]
        return "\n".join(
            path.read_text(errors="replace")[-3000:] for path in texts if path.exists()
        )

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None
