import { totalInputTokens, type KeelEvent, type KeelEventMap, type Usage } from "@keel/core";
import type { Attributes } from "@opentelemetry/api";
import { GEN_AI, KEEL } from "./semconv.js";

/** Sets `key` only when the value is known: unknown stays absent, never 0 or "". */
function put(attributes: Attributes, key: string, value: string | number | boolean | string[] | null | undefined): void {
  if (value === null || value === undefined) return;
  attributes[key] = value;
}

/** The GenAI usage attributes of a Keel usage, added to `attributes` (a new object when none); unknown buckets are left out. */
export function usageAttributes(usage: Usage | null, attributes: Attributes = {}): Attributes {
  if (!usage) return attributes;
  // The conventions' input_tokens is the whole input, cache reads and writes included.
  // One store per known key, not a shared setter: a setter's store sees every key (megamorphic).
  const input = totalInputTokens(usage);
  if (input !== null) attributes[GEN_AI.usageInputTokens] = input;
  if (usage.output !== null) attributes[GEN_AI.usageOutputTokens] = usage.output;
  if (usage.cacheRead !== null) attributes[GEN_AI.usageCacheReadInputTokens] = usage.cacheRead;
  if (usage.cacheWrite !== null) attributes[GEN_AI.usageCacheCreationInputTokens] = usage.cacheWrite;
  if (usage.reasoning !== null) attributes[GEN_AI.usageReasoningOutputTokens] = usage.reasoning;
  if (usage.costUsd !== null) attributes[KEEL.costUsd] = usage.costUsd;
  return attributes;
}

/** The attributes a `role.session.turn` gives its `invoke_agent` span (a new object, the caller's to extend). */
export function turnAttributes(event: KeelEventMap["role.session.turn"], providers: Readonly<Record<string, string>>): Attributes {
  const attributes: Attributes = {
    [GEN_AI.agentName]: event.role,
    [KEEL.missionId]: event.missionId,
    [KEEL.backend]: event.backend,
    [KEEL.sessionPolicy]: event.policy,
    [KEEL.sessionAction]: event.action,
    [KEEL.rotationReason]: event.rotationReason,
    [KEEL.capsulePath]: event.capsulePath,
    [KEEL.promptBytes]: event.promptBytes,
    [KEEL.turn]: event.turn,
    [KEEL.wallMs]: event.wallMs,
  };
  usageAttributes(event.usage, attributes);
  if (Object.hasOwn(providers, event.backend)) attributes[GEN_AI.providerName] = providers[event.backend];
  if (event.model !== null) attributes[GEN_AI.requestModel] = event.model;
  if (event.threadId !== null) attributes[GEN_AI.conversationId] = event.threadId;
  if (event.resumeFailed) attributes[KEEL.resumeFailed] = true;
  return attributes;
}

/** The attributes a `work.session.turn` adds to its turn's span. */
export function workSessionTurnAttributes(event: KeelEventMap["work.session.turn"]): Attributes {
  const attributes: Attributes = {};
  if (event.sessionId !== null) attributes[KEEL.workSessionId] = event.sessionId;
  if (event.toolCalls !== null) attributes[KEEL.toolCalls] = event.toolCalls;
  if (event.modelPin !== null) attributes[KEEL.modelPin] = event.modelPin;
  if (event.taskId !== null) attributes[KEEL.taskId] = event.taskId;
  return attributes;
}

/** `keel.budget.amount.{dimension}`, made once per dimension (Keel has a handful). */
const amountKeys = new Map<string, string>();
function amountKey(dimension: string): string {
  let key = amountKeys.get(dimension);
  if (key === undefined) {
    key = `keel.budget.amount.${dimension}`;
    if (amountKeys.size < 64) amountKeys.set(dimension, key);
  }
  return key;
}

/** Numbers of a `details` object, read loosely (budget events). */
function detailNumber(details: Record<string, unknown> | undefined, key: string): number | undefined {
  const value = details?.[key];
  return typeof value === "number" ? value : undefined;
}

function detailString(details: Record<string, unknown> | undefined, key: string): string | undefined {
  const value = details?.[key];
  return typeof value === "string" ? value : undefined;
}

/**
 * The span event an event becomes when it is recorded on a span: its name (the Keel event type)
 * and attributes, with no text unless `captureContent`. `undefined` for events that are spans of
 * their own (turns, file accesses, workflow, closed work sessions).
 */
export function spanEventOf(event: KeelEvent, captureContent: boolean): { name: string; attributes: Attributes } | undefined {
  const attributes: Attributes = {};
  switch (event.type) {
    case "budget.reserved":
    case "budget.settled":
    case "budget.refused":
    case "budget.threshold": {
      const details = event.details as Record<string, unknown> | undefined;
      attributes[KEEL.budgetScope] = event.scope;
      attributes[KEEL.budgetDimensions] = event.dimensions;
      for (const [dimension, amount] of Object.entries(event.amounts)) put(attributes, amountKey(dimension), amount);
      if (event.limitingScope !== null) attributes[KEEL.budgetLimitingScope] = event.limitingScope;
      if (event.reservationId !== undefined) attributes[KEEL.budgetReservationId] = event.reservationId;
      if (details !== undefined) {
        const outcome = detailString(details, "outcome");
        if (outcome !== undefined) attributes[KEEL.budgetOutcome] = outcome;
        const dimension = detailString(details, "dimension");
        if (dimension !== undefined) attributes[KEEL.budgetDimension] = dimension;
        const asked = detailNumber(details, "asked");
        if (asked !== undefined) attributes[KEEL.budgetAsked] = asked;
        const remaining = detailNumber(details, "remaining");
        if (remaining !== undefined) attributes[KEEL.budgetRemaining] = remaining;
        const limit = detailNumber(details, "limit");
        if (limit !== undefined) attributes[KEEL.budgetLimit] = limit;
        const percent = detailNumber(details, "percent");
        if (percent !== undefined) attributes[KEEL.budgetPercent] = percent;
        const level = detailString(details, "level");
        if (level !== undefined) attributes[KEEL.budgetLevel] = level;
      }
      break;
    }
    case "work.session.refused":
      attributes[KEEL.missionId] = event.missionId;
      attributes[GEN_AI.agentName] = event.role;
      attributes[KEEL.capacityCode] = event.code;
      put(attributes, KEEL.capacityLimit, event.limit);
      put(attributes, KEEL.capacityValue, event.value);
      put(attributes, KEEL.taskId, event.taskId);
      break;
    case "role.session.warning":
      attributes[GEN_AI.agentName] = event.role;
      attributes[KEEL.warningTarget] = event.target;
      attributes[KEEL.warningOperation] = event.operation;
      attributes[KEEL.warningCode] = event.code;
      if (captureContent) attributes[KEEL.warningMessage] = event.message;
      break;
    case "skill.library.available":
      attributes[GEN_AI.agentName] = event.role;
      attributes[KEEL.skillsOwn] = event.own.length;
      attributes[KEEL.skillsReference] = event.reference.length;
      put(attributes, KEEL.skillsDelivery, event.deliveryMode);
      break;
    case "work.session.opened":
    case "work.session.model_mismatch":
    case "work.session.checkpoint":
    case "work.session.checkpoint_counter_reset":
    case "work.session.audit_due":
    case "work.session.audited":
      attributes[KEEL.missionId] = event.missionId;
      if ("role" in event) put(attributes, GEN_AI.agentName, event.role);
      if ("sessionId" in event) attributes[KEEL.workSessionId] = event.sessionId;
      if (event.type === "work.session.audited" && captureContent) put(attributes, "keel.audit.note", event.note);
      break;
    case "round.review.completed":
      attributes[KEEL.missionId] = event.missionId;
      attributes["keel.review.round"] = event.round;
      attributes["keel.review.verdict"] = event.verdict;
      break;
    case "transcript.compacted":
    case "transcript.navigated":
      attributes["keel.transcript.session_id"] = event.sessionId;
      put(attributes, "keel.transcript.tokens_before", event.tokensBefore);
      put(attributes, "keel.transcript.tokens_after", event.tokensAfter);
      break;
    case "backend.turn.failed":
      attributes[KEEL.backend] = event.backend;
      attributes[KEEL.errorCode] = event.code;
      if (event.role !== undefined) attributes[GEN_AI.agentName] = event.role;
      if (event.missionId !== undefined) attributes[KEEL.missionId] = event.missionId;
      if (event.resumeFailed) attributes[KEEL.resumeFailed] = true;
      if (event.retryable !== undefined) attributes[KEEL.errorRetryable] = event.retryable;
      if (captureContent) put(attributes, KEEL.warningMessage, event.message);
      break;
    default:
      return undefined;
  }
  return { name: event.type, attributes };
}

/**
 * The KeelError code a refusal or failure event stands for (`budget.refused` → `budget_exceeded`,
 * `work.session.refused` and `backend.turn.failed` → their `code`), or `undefined` for any other.
 */
export function refusalCodeOf(event: KeelEvent): string | undefined {
  switch (event.type) {
    case "budget.refused":
      return "budget_exceeded";
    case "work.session.refused":
    case "backend.turn.failed":
      return event.code;
    default:
      return undefined;
  }
}
