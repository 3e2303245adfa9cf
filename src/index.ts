// agentstate's public API: named exports only; anything exported here is public.

export type { Principal, Role } from './auth/access.js';
export { principalWriter, type Writer } from './auth/attribution.js';
export { type Durability, openSqliteBackend, type SqliteOptions } from './backends/sqlite/backend.js';
export type {
  BackendCapabilities,
  ClaimQuery,
  CounterRecord,
  DumpOptions,
  DumpRecord,
  EventBackend,
  EventQuery,
  LeaseQuery,
  LimitBackend,
  LimitChange,
  LimitRow,
  LimitRowDump,
  NewEvent,
  NewWorkItem,
  Outcome,
  ResolveQuery,
  StoreBackend,
  StoredEvent,
  WorkItemBackend,
} from './core/backend.js';
export type {
  CompletedStep,
  FailedStep,
  ResetRecord,
  RunRecord,
  SignalRecord,
  SleepRecord,
  WaitedRecord,
  WaitingRecord,
} from './core/codecs/run-records.js';
export type { DocumentStoreContext, KindResolver } from './core/documents/context.js';
export type { ApplyInput, KindCall } from './core/documents/inputs.js';
export { VersionPrunedError } from './core/documents/reads.js';
export { DocumentStore } from './core/documents/store.js';
export { EventLog, SYSTEM_EVENT_TYPES, type TailOptions } from './core/events/log.js';
export { computeEventHash, GENESIS_HASH } from './core/hash.js';
export { LIMITS } from './core/input.js';
export { formatHeadAnchor, type HeadAnchor, parseHeadAnchor } from './core/integrity/head.js';
export {
  checkRecords,
  type InstanceRecord,
  IntegrityChecker,
  type IntegrityOptions,
} from './core/integrity/verify.js';
export type { JsonSchema } from './core/json-schema.js';
export type {
  CommitContext,
  CommitEffects,
  DocSnapshot,
  FileStamp,
  KindDefinition,
  KindFile,
  KindOperation,
  OperationContext,
  ViewContext,
} from './core/kind.js';
export {
  type CheckedDump,
  checkDump,
  type DumpCounts,
  type DumpHeader,
  exportInstance,
  importInstance,
  readDump,
} from './core/portable.js';
export { redactUrl } from './core/redact.js';
export { isSuspended, JoinFailed, RunSuspended } from './core/runs/errors.js';
export { Run } from './core/runs/run.js';
export {
  type AskOptions,
  type AskResult,
  type ChildOutcome,
  type JoinOptions,
  type RunHolder,
  type StepInfo,
  type StepInput,
  type StepOptions,
  WAIT_FOREVER,
  type WaitOptions,
  type WaitResult,
} from './core/runs/types.js';
export { type Clock, systemClock } from './core/time.js';
export * from './core/types.js';
export { DEFAULT_LEASE_MS, DEFAULT_MAX_ATTEMPTS } from './core/work/inputs.js';
export { WorkQueue } from './core/work/queue.js';
export { canTransition, isTerminal, TRANSITIONS } from './core/work/rules.js';
export * from './errors.js';
export { Instance, type OpenInstanceOptions, openInstance } from './instance/instance.js';
export { type ListInstancesOptions, listInstances } from './instance/list.js';
export {
  checkName,
  defaultHost,
  type InstanceLocation,
  type InstancePaths,
  instancePaths,
  locateInstance,
} from './instance/paths.js';
export { type ScaffoldResult, scaffold } from './instance/scaffold.js';
export { createStore, type Store, type StoreOptions } from './instance/store.js';
export { getKind, kindNames, registerKind, validateSchema } from './kinds/registry.js';
// Helpers for writing a kind's rules (docs/kinds.md, "Your own kind").
export {
  type AppendOnlyOptions,
  checkAppendOnly,
  checkFieldPermissions,
  checkLocks,
  checkTransition,
  checkUniqueIds,
  type FieldPermissionOptions,
  fail,
  hasOverride,
  type LockRecord,
  type PermissionMatrix,
  type TransitionOptions,
  type TransitionTable,
} from './kinds/rules.js';
export type { TickResult } from './kinds/schedule/operations.js';
export { type ResumeSummary, renderResume, resumeSummary } from './kinds/workflow-sessions/operations.js';
export {
  checkGate,
  checkGates,
  type Gate,
  type GateFile,
  type GateOptions,
  type GateResult,
  gateFile,
} from './kinds/workflow-sessions/rules.js';
export {
  DURATION_BUCKETS_S,
  EXPIRING_WITHIN_S,
  MAX_KINDS,
  METRICS_CONTENT_TYPE,
  prometheusMetrics,
} from './metrics/prometheus.js';
export { type DashboardResult, regenerateDashboard, renderDashboard } from './reports/dashboard.js';
export { type RetroInput, type RetroResult, type RetroSummary, retrospective } from './reports/retro.js';
export { callOperation, type EdgeCall } from './service/edge.js';
export { type InstanceFlags, resolveInstance } from './service/instance-resolver.js';
export { type InvokeOptions, invoke, runOperation } from './service/invoke.js';
export type { Operation, OperationGroup, RunContext } from './service/operation.js';
export { getOperation, OPERATION_NAMES, OPERATIONS } from './service/table.js';
export { targetFor, targetOfPath, type ViewTarget } from './views/files.js';
export { type RecoverResult, recoverView } from './views/recover.js';
export {
  type ExportResult,
  exportView,
  type ImportOptions,
  type ImportResult,
  importView,
} from './views/sync.js';
export { type ValidateResult, validateView } from './views/validate.js';
export { type WatchEvent, type WatchOptions, watchView } from './views/watch.js';
export { type ExecOptions, execChildrenEnded, execHandler } from './worker/exec.js';
export {
  createScheduler,
  Scheduler,
  type SchedulerEvents,
  type SchedulerOptions,
} from './worker/scheduler.js';
export {
  createWorker,
  FailNow,
  type Handler,
  type HandlerContext,
  type HandlerSpec,
  RetryAfter,
  type RetryPolicy,
  retryDelay,
  Worker,
  type WorkerEvents,
  type WorkerOptions,
} from './worker/worker.js';
export { runWorkflowProcess, type WorkflowInvocation, type WorkflowOutput } from './workflows/process.js';
export {
  isWorkflowName,
  runWorkflow,
  WORKFLOW_NAMES,
  WORKFLOWS,
  type WorkflowDef,
  type WorkflowName,
} from './workflows/registry.js';
