"""The OpenID Connect relying party: discovery, the authorization request with PKCE, the code
exchange and every check of the ID token (ADR 0028).

Authlib builds the authorization request and the token request (RFC 6749, PKCE's S256
challenge) and checks the claims (``CodeIDToken``: issuer, audience, expiry, issue time, nonce,
``azp``, ``at_hash``); joserfc checks the signature against the provider's published keys. The
requests go out through httpx here rather than Authlib's httpx client, whose plain-httpx mode
is deprecated. What is left here is what the portal decides: which keys are believed, how long
the provider's documents are kept, and that every call has a deadline. No web framework and no
database: the sign-in service stores the attempt.
"""

from __future__ import annotations

import asyncio
import base64
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
from authlib.common.security import generate_token
from authlib.oauth2.rfc6749.parameters import prepare_grant_uri, prepare_token_request
from authlib.oauth2.rfc7636 import create_s256_code_challenge
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jwk import KeySet
from joserfc.jws import JWSRegistry, extract_compact

from app.errors import BadGateway, Unauthorized
from app.i18n import _

# The provider's discovery document is re-read at most this often. A token naming a key not
# in the cached set refetches the set (the provider rotated its keys), once per key id and at
# most MAX_REFETCHES times per KEY_REFETCH_INTERVAL.
METADATA_LIFETIME = 3600.0
KEY_REFETCH_INTERVAL = 60.0
MAX_REFETCHES = 5
ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")


class ProviderUnreachable(BadGateway):
    """The provider did not answer in time, or answered something that is not OIDC."""


class SignInRefused(Unauthorized):
    """The provider's answer did not pass a check; the message says which, in plain words."""


@dataclass(frozen=True, slots=True)
class OidcConfig:
    issuer: str
    client_id: str
    client_secret: str
    scopes: str
    clock_skew: int
    timeout: float
    # The claim that names the portal user: read from the userinfo endpoint when the ID token
    # leaves it out, as providers that keep ID tokens small do.
    username_claim: str = "preferred_username"


@dataclass(frozen=True, slots=True)
class AuthorizationRequest:
    """What the browser is sent to, and what must be kept to check the answer."""

    url: str
    state: str
    nonce: str
    code_verifier: str


@dataclass(frozen=True, slots=True)
class SignedInIdentity:
    claims: dict[str, Any]
    id_token: str


def _unreachable() -> ProviderUnreachable:
    return ProviderUnreachable(
        _("The sign-in service cannot be reached right now. Try again in a few minutes.")
    )


class OidcClient:
    """One provider, its documents cached in memory for the life of the process."""

    def __init__(self, config: OidcConfig) -> None:
        self.config = config
        self._metadata: dict[str, Any] | None = None
        self._metadata_read_at = 0.0
        self._keys: KeySet | None = None
        self._refetches: list[float] = []
        self._missing_kids: dict[str, float] = {}
        self._lock = asyncio.Lock()

    def _client_auth(self) -> dict[str, str]:
        """client_secret_basic: both parts form-encoded first (RFC 6749 2.3.1)."""
        if not self.config.client_secret:
            return {}
        pair = f"{quote(self.config.client_id)}:{quote(self.config.client_secret)}"
        return {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}

    async def _get_json(self, url: str) -> dict[str, Any]:
        try:
            async with httpx.AsyncClient(timeout=self.config.timeout) as client:
                response = await client.get(url, headers={"Accept": "application/json"})
                response.raise_for_status()
                document = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise _unreachable() from error
        if not isinstance(document, dict):
            raise _unreachable()
        return document

    async def metadata(self) -> dict[str, Any]:
        """The discovery document, checked to name this issuer (OIDC Discovery 4.3)."""
        async with self._lock:
            fresh = time.monotonic() - self._metadata_read_at < METADATA_LIFETIME
            if self._metadata is not None and fresh:
                return self._metadata
            issuer = self.config.issuer.rstrip("/")
            document = await self._get_json(f"{issuer}/.well-known/openid-configuration")
            required = ("authorization_endpoint", "token_endpoint", "jwks_uri")
            if document.get("issuer") != self.config.issuer or not all(
                isinstance(document.get(key), str) for key in required
            ):
                raise _unreachable()
            self._metadata, self._metadata_read_at = document, time.monotonic()
            return document

    async def _key_set(self, *, missing_kid: str | None = None) -> KeySet:
        """The provider's keys; read again when a token names a key id not among them."""
        async with self._lock:
            if self._keys is not None and not self._may_refetch(missing_kid):
                return self._keys
        jwks_uri = (await self.metadata())["jwks_uri"]
        document = await self._get_json(jwks_uri)
        try:
            keys = KeySet.import_key_set(document)  # type: ignore[arg-type]
        except (JoseError, ValueError, TypeError, KeyError) as error:
            raise _unreachable() from error
        async with self._lock:
            self._keys = keys
        return keys

    def _may_refetch(self, kid: str | None) -> bool:
        """Once per unknown key id, and a few times a minute at most whatever the ids: a
        stream of forged ids cannot make the portal hammer the provider."""
        if kid is None:
            return False
        now = time.monotonic()
        recent = [at for at in self._refetches if now - at < KEY_REFETCH_INTERVAL]
        already = now - self._missing_kids.get(kid, -KEY_REFETCH_INTERVAL) < KEY_REFETCH_INTERVAL
        if already or len(recent) >= MAX_REFETCHES:
            return False
        self._refetches = [*recent, now]
        self._missing_kids = {
            k: at for k, at in self._missing_kids.items() if now - at < KEY_REFETCH_INTERVAL
        }
        self._missing_kids[kid] = now
        return True

    async def authorization_request(self, redirect_uri: str) -> AuthorizationRequest:
        """A new request: fresh state, nonce and PKCE verifier, and the address to send to."""
        endpoint = (await self.metadata())["authorization_endpoint"]
        state, nonce, verifier = generate_token(43), generate_token(43), generate_token(64)
        url = prepare_grant_uri(
            endpoint,
            self.config.client_id,
            "code",
            redirect_uri=redirect_uri,
            scope=self.config.scopes,
            state=state,
            nonce=nonce,
            code_challenge=create_s256_code_challenge(verifier),
            code_challenge_method="S256",
        )
        return AuthorizationRequest(url=url, state=state, nonce=nonce, code_verifier=verifier)

    async def exchange(
        self, code: str, *, code_verifier: str, nonce: str, redirect_uri: str
    ) -> SignedInIdentity:
        """Trade the code for tokens and return the ID token's checked claims."""
        token = await self._token(code, code_verifier=code_verifier, redirect_uri=redirect_uri)
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise SignInRefused(_("The sign-in service sent no identity. Please sign in again."))
        access_token = token.get("access_token")
        claims = await self.verify_id_token(id_token, nonce=nonce, access_token=access_token)
        if self.config.username_claim not in claims and isinstance(access_token, str):
            claims = {**await self._userinfo(access_token, claims["sub"]), **claims}
        return SignedInIdentity(claims=claims, id_token=id_token)

    async def _token(self, code: str, *, code_verifier: str, redirect_uri: str) -> dict[str, Any]:
        endpoint = (await self.metadata())["token_endpoint"]
        body = prepare_token_request(
            "authorization_code",
            code=code,
            redirect_uri=redirect_uri,
            code_verifier=code_verifier,
            client_id=None if self.config.client_secret else self.config.client_id,
        )
        headers = {
            "Content-Type": "application/x-www-form-urlencoded",
            "Accept": "application/json",
            **self._client_auth(),
        }
        try:
            async with httpx.AsyncClient(timeout=self.config.timeout) as client:
                answer = await client.post(endpoint, content=body, headers=headers)
            token = answer.json()
        except (httpx.HTTPError, ValueError) as error:
            raise _unreachable() from error
        # A refused code (reused, expired, another client's) is an OAuth error, not an outage.
        if not isinstance(token, dict) or answer.status_code != 200 or "error" in token:
            raise SignInRefused(
                _("The sign-in service refused to confirm this sign-in. Please sign in again.")
            )
        return token

    async def _userinfo(self, access_token: str, subject: str) -> dict[str, Any]:
        """The userinfo endpoint's claims, when they are about the ID token's subject."""
        endpoint = (await self.metadata()).get("userinfo_endpoint")
        if not isinstance(endpoint, str):
            return {}
        try:
            async with httpx.AsyncClient(timeout=self.config.timeout) as client:
                answer = await client.get(
                    endpoint, headers={"Authorization": f"Bearer {access_token}"}
                )
                answer.raise_for_status()
                claims = answer.json()
        except (httpx.HTTPError, ValueError) as error:
            raise _unreachable() from error
        # OpenID Connect Core 5.3.2: a different subject means the answer is not to be used.
        if not isinstance(claims, dict) or claims.get("sub") != subject:
            return {}
        return claims

    async def _decode(self, id_token: str) -> jwt.Token:
        registry = JWSRegistry(algorithms=list(ALGORITHMS))
        try:
            return jwt.decode(id_token, await self._key_set(), registry=registry)
        except InvalidKeyIdError:
            # The provider may have rotated its keys since they were read: read them once more.
            keys = await self._key_set(missing_kid=_key_id(id_token))
        try:
            return jwt.decode(id_token, keys, registry=registry)
        except InvalidKeyIdError as error:
            raise SignInRefused(
                _("The identity was signed with a key the sign-in service does not publish.")
            ) from error

    async def verify_id_token(
        self, id_token: str, *, nonce: str, access_token: str | None = None
    ) -> dict[str, Any]:
        """The ID token's claims once its signature, issuer, audience, times and nonce hold."""
        try:
            decoded = await self._decode(id_token)
        except (JoseError, ValueError) as error:
            raise SignInRefused(
                _("The identity sent by the sign-in service could not be verified.")
            ) from error
        params = {"nonce": nonce, "client_id": self.config.client_id}
        if access_token:
            params["access_token"] = access_token
        options: dict[str, Any] = {
            "iss": {"essential": True, "values": [self.config.issuer]},
            "aud": {"essential": True, "values": [self.config.client_id]},
        }
        claims = CodeIDToken(decoded.claims, decoded.header, options, params)
        try:
            claims.validate(now=int(time.time()), leeway=self.config.clock_skew)
        except JoseError as error:
            raise SignInRefused(_claim_message(error)) from error
        return dict(claims)

    async def logout_url(self, *, id_token: str, post_logout_redirect_uri: str) -> str | None:
        """RP-initiated logout at the provider, when it offers it (None otherwise)."""
        try:
            endpoint = (await self.metadata()).get("end_session_endpoint")
        except ProviderUnreachable:
            return None
        if not isinstance(endpoint, str):
            return None
        params = httpx.QueryParams(
            id_token_hint=id_token,
            post_logout_redirect_uri=post_logout_redirect_uri,
            client_id=self.config.client_id,
        )
        return str(httpx.URL(endpoint).copy_merge_params(params))


def _key_id(token: str) -> str:
    try:
        kid = extract_compact(token.encode()).headers().get("kid")
    except (JoseError, ValueError):
        return ""
    return kid if isinstance(kid, str) else ""


def _claim_message(error: JoseError) -> str:
    claim = getattr(error, "claim", "")
    if getattr(error, "error", "") == "expired_token" or claim == "exp":
        return _("The identity sent by the sign-in service has expired. Please sign in again.")
    if claim == "nonce":
        return _("This sign-in answer was already used or belongs to another sign-in.")
    return _("The identity sent by the sign-in service was not meant for this portal.")
