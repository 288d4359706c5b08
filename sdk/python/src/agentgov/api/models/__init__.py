"""Contains all the data models used in inputs/outputs"""

from .actor import Actor
from .actor_type import ActorType
from .agent import Agent
from .agent_count import AgentCount
from .agent_details import AgentDetails
from .agent_metadata import AgentMetadata
from .agent_permissions import AgentPermissions
from .agent_request import AgentRequest
from .agent_request_metadata import AgentRequestMetadata
from .agent_request_permissions import AgentRequestPermissions
from .agent_status import AgentStatus
from .anomaly_detector_metrics import AnomalyDetectorMetrics
from .anomaly_detector_status import AnomalyDetectorStatus
from .anomaly_eval import AnomalyEval
from .anomaly_model_info import AnomalyModelInfo
from .anomaly_report import AnomalyReport
from .anomaly_report_evidence import AnomalyReportEvidence
from .anomaly_source import AnomalySource
from .anomaly_stats import AnomalyStats
from .anomaly_stats_by_severity import AnomalyStatsBySeverity
from .anomaly_stats_by_status import AnomalyStatsByStatus
from .anomaly_stats_by_type import AnomalyStatsByType
from .anomaly_status import AnomalyStatus
from .anomaly_task import AnomalyTask
from .anomaly_type import AnomalyType
from .anomaly_update import AnomalyUpdate
from .api_key import ApiKey
from .api_key_kind import ApiKeyKind
from .approval_grant import ApprovalGrant
from .attack_category import AttackCategory
from .audit_filter import AuditFilter
from .audit_filter_params import AuditFilterParams
from .audit_origin import AuditOrigin
from .audit_record import AuditRecord
from .audit_record_details import AuditRecordDetails
from .authzen_action import AuthzenAction
from .authzen_action_properties_type_0 import AuthzenActionPropertiesType0
from .authzen_configuration import AuthzenConfiguration
from .authzen_decision import AuthzenDecision
from .authzen_decision_context import AuthzenDecisionContext
from .authzen_decisions import AuthzenDecisions
from .authzen_entity import AuthzenEntity
from .authzen_entity_properties_type_0 import AuthzenEntityPropertiesType0
from .authzen_evaluation import AuthzenEvaluation
from .authzen_evaluation_context_type_0 import AuthzenEvaluationContextType0
from .authzen_evaluations import AuthzenEvaluations
from .authzen_evaluations_context_type_0 import AuthzenEvaluationsContextType0
from .authzen_options import AuthzenOptions
from .bucket import Bucket
from .callback_status import CallbackStatus
from .candidate_status import CandidateStatus
from .chain_fault import ChainFault
from .chain_verification import ChainVerification
from .check_request import CheckRequest
from .check_request_context import CheckRequestContext
from .check_response import CheckResponse
from .check_risk_factor import CheckRiskFactor
from .cluster_job import ClusterJob
from .cluster_summary import ClusterSummary
from .component_health import ComponentHealth
from .confirm_request import ConfirmRequest
from .created_api_key import CreatedApiKey
from .created_tenant import CreatedTenant
from .decision_hour import DecisionHour
from .decision_hour_by_decision import DecisionHourByDecision
from .decision_stats import DecisionStats
from .decision_stats_by_decision import DecisionStatsByDecision
from .detector_train_request import DetectorTrainRequest
from .discovery_candidate import DiscoveryCandidate
from .discovery_event import DiscoveryEvent
from .discovery_event_attributes import DiscoveryEventAttributes
from .dismiss_request import DismissRequest
from .effective_settings import EffectiveSettings
from .embedding_model import EmbeddingModel
from .embedding_summary import EmbeddingSummary
from .escalation_step import EscalationStep
from .event_disposition import EventDisposition
from .exchange_request import ExchangeRequest
from .export_format import ExportFormat
from .export_job import ExportJob
from .feedback_request import FeedbackRequest
from .field_error import FieldError
from .fingerprint import Fingerprint
from .fingerprint_value import FingerprintValue
from .guard_calibration import GuardCalibration
from .guard_class_metrics import GuardClassMetrics
from .guard_detector_metrics import GuardDetectorMetrics
from .guard_detector_status import GuardDetectorStatus
from .guard_direction import GuardDirection
from .guard_example import GuardExample
from .guard_feedback import GuardFeedback
from .guard_feedback_kind import GuardFeedbackKind
from .guard_health import GuardHealth
from .guard_label import GuardLabel
from .guard_metrics import GuardMetrics
from .guard_model_info import GuardModelInfo
from .guard_scores import GuardScores
from .guard_stage import GuardStage
from .guard_stats import GuardStats
from .guard_stats_by_verdict import GuardStatsByVerdict
from .guard_stats_hour import GuardStatsHour
from .guard_stats_hour_by_verdict import GuardStatsHourByVerdict
from .guard_task import GuardTask
from .health import Health
from .heartbeat_request import HeartbeatRequest
from .heartbeat_request_metadata_type_0 import HeartbeatRequestMetadataType0
from .hitl_approval import HitlApproval
from .hitl_approval_context_type_0 import HitlApprovalContextType0
from .hitl_callback import HitlCallback
from .hitl_decision import HitlDecision
from .hitl_escalation import HitlEscalation
from .hitl_request import HitlRequest
from .hitl_request_approved_context_type_0 import HitlRequestApprovedContextType0
from .hitl_request_context import HitlRequestContext
from .hitl_status import HitlStatus
from .ingest_batch import IngestBatch
from .ingest_event import IngestEvent
from .ingest_event_attributes import IngestEventAttributes
from .ingest_report import IngestReport
from .issued_secret import IssuedSecret
from .item_error import ItemError
from .job_status import JobStatus
from .litellm_guardrail_request import LitellmGuardrailRequest
from .litellm_guardrail_request_additional_provider_specific_params_type_0 import (
    LitellmGuardrailRequestAdditionalProviderSpecificParamsType0,
)
from .litellm_guardrail_request_request_data_type_0 import LitellmGuardrailRequestRequestDataType0
from .litellm_guardrail_request_request_headers_type_0 import LitellmGuardrailRequestRequestHeadersType0
from .litellm_guardrail_request_structured_messages_type_0_item import (
    LitellmGuardrailRequestStructuredMessagesType0Item,
)
from .litellm_guardrail_request_tool_calls_type_0_item import LitellmGuardrailRequestToolCallsType0Item
from .litellm_guardrail_request_tools_type_0_item import LitellmGuardrailRequestToolsType0Item
from .litellm_guardrail_response import LitellmGuardrailResponse
from .login_request import LoginRequest
from .login_result import LoginResult
from .login_user import LoginUser
from .matched_policy import MatchedPolicy
from .neighbour import Neighbour
from .new_anomaly_report import NewAnomalyReport
from .new_anomaly_report_evidence import NewAnomalyReportEvidence
from .new_api_key import NewApiKey
from .new_audit_entry import NewAuditEntry
from .new_audit_entry_details_type_0 import NewAuditEntryDetailsType0
from .new_export import NewExport
from .new_hitl_request import NewHitlRequest
from .new_hitl_request_context import NewHitlRequestContext
from .new_replay import NewReplay
from .new_tenant import NewTenant
from .new_user import NewUser
from .new_webhook_secret import NewWebhookSecret
from .observation import Observation
from .observe_request import ObserveRequest
from .page_agent import PageAgent
from .page_anomaly_report import PageAnomalyReport
from .page_api_key import PageApiKey
from .page_audit_record import PageAuditRecord
from .page_discovery_candidate import PageDiscoveryCandidate
from .page_hitl_request import PageHitlRequest
from .page_policy import PagePolicy
from .page_tenant_view import PageTenantView
from .page_user import PageUser
from .parameter_kind import ParameterKind
from .password_change import PasswordChange
from .permission import Permission
from .platform_status import PlatformStatus
from .policy import Policy
from .policy_mode import PolicyMode
from .policy_request import PolicyRequest
from .problem import Problem
from .problem_components_type_0 import ProblemComponentsType0
from .provider_view import ProviderView
from .readiness import Readiness
from .receive_body import ReceiveBody
from .replay_change import ReplayChange
from .replay_counts import ReplayCounts
from .replay_example import ReplayExample
from .replay_job import ReplayJob
from .replay_report import ReplayReport
from .report_source import ReportSource
from .resource_counts import ResourceCounts
from .risk_factor import RiskFactor
from .risk_level import RiskLevel
from .risk_levels import RiskLevels
from .role import Role
from .role_change import RoleChange
from .search_hit import SearchHit
from .search_results import SearchResults
from .secret_info import SecretInfo
from .secret_purpose import SecretPurpose
from .series_point import SeriesPoint
from .series_point_by_severity import SeriesPointBySeverity
from .session_decisions import SessionDecisions
from .session_rate import SessionRate
from .session_view import SessionView
from .session_view_actions import SessionViewActions
from .settings_change import SettingsChange
from .severity import Severity
from .shadow_example import ShadowExample
from .shadow_reason import ShadowReason
from .shadow_report import ShadowReport
from .siem_status import SiemStatus
from .siem_test_report import SiemTestReport
from .sink_status import SinkStatus
from .sink_test_result import SinkTestResult
from .stats import Stats
from .template_parameter_view import TemplateParameterView
from .template_use import TemplateUse
from .template_use_parameters import TemplateUseParameters
from .template_view import TemplateView
from .tenant import Tenant
from .tenant_secrets import TenantSecrets
from .tenant_settings import TenantSettings
from .tenant_view import TenantView
from .train_request import TrainRequest
from .update_tenant import UpdateTenant
from .update_user import UpdateUser
from .user import User
from .user_status import UserStatus
from .validate_request import ValidateRequest
from .validation import Validation
from .webhook_ack import WebhookAck

__all__ = (
    "Actor",
    "ActorType",
    "Agent",
    "AgentCount",
    "AgentDetails",
    "AgentMetadata",
    "AgentPermissions",
    "AgentRequest",
    "AgentRequestMetadata",
    "AgentRequestPermissions",
    "AgentStatus",
    "AnomalyDetectorMetrics",
    "AnomalyDetectorStatus",
    "AnomalyEval",
    "AnomalyModelInfo",
    "AnomalyReport",
    "AnomalyReportEvidence",
    "AnomalySource",
    "AnomalyStats",
    "AnomalyStatsBySeverity",
    "AnomalyStatsByStatus",
    "AnomalyStatsByType",
    "AnomalyStatus",
    "AnomalyTask",
    "AnomalyType",
    "AnomalyUpdate",
    "ApiKey",
    "ApiKeyKind",
    "ApprovalGrant",
    "AttackCategory",
    "AuditFilter",
    "AuditFilterParams",
    "AuditOrigin",
    "AuditRecord",
    "AuditRecordDetails",
    "AuthzenAction",
    "AuthzenActionPropertiesType0",
    "AuthzenConfiguration",
    "AuthzenDecision",
    "AuthzenDecisionContext",
    "AuthzenDecisions",
    "AuthzenEntity",
    "AuthzenEntityPropertiesType0",
    "AuthzenEvaluation",
    "AuthzenEvaluationContextType0",
    "AuthzenEvaluations",
    "AuthzenEvaluationsContextType0",
    "AuthzenOptions",
    "Bucket",
    "CallbackStatus",
    "CandidateStatus",
    "ChainFault",
    "ChainVerification",
    "CheckRequest",
    "CheckRequestContext",
    "CheckResponse",
    "CheckRiskFactor",
    "ClusterJob",
    "ClusterSummary",
    "ComponentHealth",
    "ConfirmRequest",
    "CreatedApiKey",
    "CreatedTenant",
    "DecisionHour",
    "DecisionHourByDecision",
    "DecisionStats",
    "DecisionStatsByDecision",
    "DetectorTrainRequest",
    "DiscoveryCandidate",
    "DiscoveryEvent",
    "DiscoveryEventAttributes",
    "DismissRequest",
    "EffectiveSettings",
    "EmbeddingModel",
    "EmbeddingSummary",
    "EscalationStep",
    "EventDisposition",
    "ExchangeRequest",
    "ExportFormat",
    "ExportJob",
    "FeedbackRequest",
    "FieldError",
    "Fingerprint",
    "FingerprintValue",
    "GuardCalibration",
    "GuardClassMetrics",
    "GuardDetectorMetrics",
    "GuardDetectorStatus",
    "GuardDirection",
    "GuardExample",
    "GuardFeedback",
    "GuardFeedbackKind",
    "GuardHealth",
    "GuardLabel",
    "GuardMetrics",
    "GuardModelInfo",
    "GuardScores",
    "GuardStage",
    "GuardStats",
    "GuardStatsByVerdict",
    "GuardStatsHour",
    "GuardStatsHourByVerdict",
    "GuardTask",
    "Health",
    "HeartbeatRequest",
    "HeartbeatRequestMetadataType0",
    "HitlApproval",
    "HitlApprovalContextType0",
    "HitlCallback",
    "HitlDecision",
    "HitlEscalation",
    "HitlRequest",
    "HitlRequestApprovedContextType0",
    "HitlRequestContext",
    "HitlStatus",
    "IngestBatch",
    "IngestEvent",
    "IngestEventAttributes",
    "IngestReport",
    "IssuedSecret",
    "ItemError",
    "JobStatus",
    "LitellmGuardrailRequest",
    "LitellmGuardrailRequestAdditionalProviderSpecificParamsType0",
    "LitellmGuardrailRequestRequestDataType0",
    "LitellmGuardrailRequestRequestHeadersType0",
    "LitellmGuardrailRequestStructuredMessagesType0Item",
    "LitellmGuardrailRequestToolCallsType0Item",
    "LitellmGuardrailRequestToolsType0Item",
    "LitellmGuardrailResponse",
    "LoginRequest",
    "LoginResult",
    "LoginUser",
    "MatchedPolicy",
    "Neighbour",
    "NewAnomalyReport",
    "NewAnomalyReportEvidence",
    "NewApiKey",
    "NewAuditEntry",
    "NewAuditEntryDetailsType0",
    "NewExport",
    "NewHitlRequest",
    "NewHitlRequestContext",
    "NewReplay",
    "NewTenant",
    "NewUser",
    "NewWebhookSecret",
    "Observation",
    "ObserveRequest",
    "PageAgent",
    "PageAnomalyReport",
    "PageApiKey",
    "PageAuditRecord",
    "PageDiscoveryCandidate",
    "PageHitlRequest",
    "PagePolicy",
    "PageTenantView",
    "PageUser",
    "ParameterKind",
    "PasswordChange",
    "Permission",
    "PlatformStatus",
    "Policy",
    "PolicyMode",
    "PolicyRequest",
    "Problem",
    "ProblemComponentsType0",
    "ProviderView",
    "Readiness",
    "ReceiveBody",
    "ReplayChange",
    "ReplayCounts",
    "ReplayExample",
    "ReplayJob",
    "ReplayReport",
    "ReportSource",
    "ResourceCounts",
    "RiskFactor",
    "RiskLevel",
    "RiskLevels",
    "Role",
    "RoleChange",
    "SearchHit",
    "SearchResults",
    "SecretInfo",
    "SecretPurpose",
    "SeriesPoint",
    "SeriesPointBySeverity",
    "SessionDecisions",
    "SessionRate",
    "SessionView",
    "SessionViewActions",
    "SettingsChange",
    "Severity",
    "ShadowExample",
    "ShadowReason",
    "ShadowReport",
    "SiemStatus",
    "SiemTestReport",
    "SinkStatus",
    "SinkTestResult",
    "Stats",
    "TemplateParameterView",
    "TemplateUse",
    "TemplateUseParameters",
    "TemplateView",
    "Tenant",
    "TenantSecrets",
    "TenantSettings",
    "TenantView",
    "TrainRequest",
    "UpdateTenant",
    "UpdateUser",
    "User",
    "UserStatus",
    "ValidateRequest",
    "Validation",
    "WebhookAck",
)
