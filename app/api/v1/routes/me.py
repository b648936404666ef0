from __future__ import annotations

from fastapi import APIRouter

from app.api.v1.deps import Reader
from app.api.v1.schemas import MeOut, errors

router = APIRouter(tags=["me"])


@router.get(
    "/me",
    response_model=MeOut,
    summary="The token's owner and effective scopes",
    responses=errors(takes_input=False),
)
async def get_me(principal: Reader) -> MeOut:
    user = principal.user
    return MeOut(
        id=user.id,
        login=user.login,
        display_name=user.display_name,
        email=user.email,
        is_site_admin=principal.actor.is_site_admin,
        scopes=sorted(principal.scopes),
        cluster_usernames=dict(principal.actor.cluster_usernames),
    )
