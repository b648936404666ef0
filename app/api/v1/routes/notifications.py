"""Your notification rules and the log of their deliveries."""

from __future__ import annotations

from fastapi import APIRouter, Response, status

from app.api.v1.deps import Reader, Submitter
from app.api.v1.notification_schemas import CreatedRuleOut, DeliveryOut, RuleIn, RuleOut
from app.api.v1.params import PathId
from app.api.v1.schemas import errors
from app.deps import SessionDep, SettingsDep
from app.notifications import service
from app.vocabulary.notify import Channel, NotifyEvent

router = APIRouter(prefix="/notifications", tags=["notifications"])


def rule_out(rule: service.RuleView) -> RuleOut:
    return RuleOut(
        id=rule.id,
        event=NotifyEvent(rule.event),
        channel=Channel(rule.channel),
        job_id=rule.job_id,
        target=rule.target,
        created_at=rule.created_at,
    )


@router.get(
    "/rules", response_model=list[RuleOut], summary="Your notification rules", responses=errors()
)
async def list_notification_rules(session: SessionDep, principal: Reader) -> list[RuleOut]:
    return [rule_out(rule) for rule in await service.list_rules(session, principal.actor)]


@router.post(
    "/rules",
    response_model=CreatedRuleOut,
    status_code=status.HTTP_201_CREATED,
    summary="Add a notification rule (a webhook's secret is in this answer only)",
    responses=errors(404),
)
async def create_notification_rule(
    session: SessionDep, principal: Submitter, settings: SettingsDep, body: RuleIn
) -> CreatedRuleOut:
    draft = service.RuleDraft(
        event=body.event.value,
        channel=body.channel.value,
        job_id=body.job_id,
        webhook_url=body.webhook_url,
    )
    created = await service.create_rule(
        session, principal.actor, draft, service.Delivery.of(settings)
    )
    return CreatedRuleOut(**rule_out(created.rule).model_dump(), secret=created.secret)


@router.delete(
    "/rules/{rule_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    response_class=Response,
    summary="Delete a notification rule with its pending notifications and log",
    responses=errors(404),
)
async def delete_notification_rule(
    session: SessionDep, principal: Submitter, rule_id: PathId
) -> Response:
    await service.delete_rule(session, principal.actor, rule_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get(
    "/deliveries",
    response_model=list[DeliveryOut],
    summary="Your latest delivery attempts, newest first",
    responses=errors(takes_input=False),
)
async def list_notification_deliveries(session: SessionDep, principal: Reader) -> list[DeliveryOut]:
    return [
        DeliveryOut(
            at=a.at,
            channel=Channel(a.channel),
            event=NotifyEvent(a.event),
            job_id=a.job_id,
            attempt=a.attempt,
            is_success=a.is_success,
            status_code=a.status_code,
            response=a.response,
            error=a.error,
        )
        for a in await service.list_attempts(session, principal.actor)
    ]
