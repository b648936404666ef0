"""All models, imported here so the metadata is complete for Alembic and for tests."""

from app.models.api_tokens import ApiToken
from app.models.audit import AUDIT_SURFACES, AuditEvent
from app.models.base import Base, UTCDateTime, utc_now
from app.models.clusters import ClusterStatus, PollerLease
from app.models.interactive import InteractiveSession
from app.models.job_templates import TEMPLATE_SCOPES, JobTemplate, TemplateVersion
from app.models.jobs import JOB_EVENT_SOURCES, JOB_STATES, Job, JobEvent
from app.models.notifications import DeliveryAttempt, Notification, NotificationRule
from app.models.projects import MEMBERSHIP_ROLES, Membership, Project
from app.models.usage import AccountingJob, AssociationLimit, UsageDaily, UsageIngestMark
from app.models.users import User, UserClusterAccount
from app.models.web_sessions import SignInCounter as SignInCounter
from app.models.web_sessions import WebSession as WebSession

__all__ = [
    "AUDIT_SURFACES",
    "JOB_EVENT_SOURCES",
    "JOB_STATES",
    "MEMBERSHIP_ROLES",
    "TEMPLATE_SCOPES",
    "AccountingJob",
    "ApiToken",
    "AssociationLimit",
    "AuditEvent",
    "Base",
    "ClusterStatus",
    "DeliveryAttempt",
    "InteractiveSession",
    "Job",
    "JobEvent",
    "JobTemplate",
    "Membership",
    "Notification",
    "NotificationRule",
    "PollerLease",
    "Project",
    "TemplateVersion",
    "UTCDateTime",
    "UsageDaily",
    "UsageIngestMark",
    "User",
    "UserClusterAccount",
    "utc_now",
]
