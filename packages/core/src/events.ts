import { EventEmitter } from "eventemitter3";
import type { JsonValue } from "./json.js";
import type { Usage } from "./usage.js";

/** Fields every Keel event has. */
export interface EventBase<T extends string> {
  /** The dotted event name, e.g. `role.session.turn`. */
  type: T;
  /** When it happened, epoch milliseconds (from the emitter's clock). */
  at: number;
}

/** The session action of a role turn. */
export type SessionAction = "fresh" | "resumed" | "rotated";

/** `role.session.turn`: a role call ended. */
export interface RoleSessionTurnEvent extends EventBase<"role.session.turn"> {
  missionId: string;
  role: string;
  /** The effective policy (`fresh`, `mission`, `rolling`). */
  policy: string;
  action: SessionAction;
  /** Why the action was chosen (`first_turn`, `max_turns`, `resume_failed`, …). */
  rotationReason: string;
  backend: string;
  model: string | null;
  promptBytes: number;
  usage: Usage | null;
  wallMs: number;
  capsulePath: string;
  threadId: string | null;
  /** The role's turn number in the mission (1-based, over all its sessions). */
  turn: number;
  /** True when a resume failed and the turn was retried fresh. */
  resumeFailed?: boolean;
  /**
   * Whether the turn's capsule was saved: `false` under the `fresh` policy (which keeps none),
   * when the save failed (a `role.session.warning` says why) and when the turn was superseded.
   */
  capsuleWritten?: boolean;
  /**
   * True when the role's lease was lost during the turn (another host took the role over, or it
   * expired unrenewed): its capsule and checkpoint writes were refused `lease_lost`, nothing of
   * the turn was recorded, and `turn` is only the number it planned (another host's turn may
   * have it).
   */
  superseded?: boolean;
}

/** `role.session.warning`: a capsule or checkpoint read or write failed; the turn's result stands. */
export interface RoleSessionWarningEvent extends EventBase<"role.session.warning"> {
  missionId: string;
  role: string;
  /** What was being read or written (`capsule`, `checkpoint`, `handoff`). */
  target: string;
  /** `read`, `write` or `delete`. */
  operation: string;
  code: string;
  message: string;
}

/** One ordered skill root of a role's view. */
export interface SkillRootInfo {
  path: string;
  layer: string;
  /** The role whose directory this is. */
  role: string;
  ownership: "own" | "reference";
}

/** `skill.library.available`: a role's skill view was resolved. */
export interface SkillLibraryAvailableEvent extends EventBase<"skill.library.available"> {
  role: string;
  roots: SkillRootInfo[];
  own: string[];
  reference: string[];
  discoveryMode: string;
  /** How skills reach the backend (`native`, `staged`, `prompt`), when known. */
  deliveryMode?: string;
}

/** A tracked file access (`agent.io.read` / `agent.io.write` / `agent.io.search`). */
export interface AgentIoEvent<T extends "agent.io.read" | "agent.io.write" | "agent.io.search"> extends EventBase<T> {
  role: string;
  missionId: string | null;
  path: string;
  bytes: number;
  /** The skill name when the access is a skill body. */
  skill: string | null;
}

/** `round.review.completed`: a reviewer verdict was recorded. */
export interface RoundReviewCompletedEvent extends EventBase<"round.review.completed"> {
  missionId: string;
  round: number;
  verdict: string;
  reviewerPromptBytes: number;
  policy?: string;
}

/** Budget dimension amounts. */
export type BudgetAmounts = Partial<Record<"tokens" | "timeMs" | "calls" | "costMicroUsd", number>>;

/** `budget.reserved` / `budget.settled` / `budget.refused` / `budget.threshold`: ledger changes. */
export interface BudgetEvent<T extends "budget.reserved" | "budget.settled" | "budget.refused" | "budget.threshold">
  extends EventBase<T> {
  scope: string;
  dimensions: string[];
  amounts: BudgetAmounts;
  /** The scope whose limit decided (for refusals and thresholds). */
  limitingScope: string | null;
  reservationId?: string;
  details?: Record<string, JsonValue>;
}

/** Workflow lifecycle events (`workflow.run.*`, `workflow.stage.*`, `workflow.checkpoint.*`). */
export interface WorkflowEvent<T extends `workflow.${"run" | "stage" | "checkpoint"}.${string}`> extends EventBase<T> {
  runId: string;
  version: number;
  stage: string | null;
  status: string;
}

/** `transcript.compacted` / `transcript.navigated`: transcript tree changes. */
export interface TranscriptEvent<T extends "transcript.compacted" | "transcript.navigated"> extends EventBase<T> {
  sessionId: string;
  entryIds: string[];
  tokensBefore?: number;
  tokensAfter?: number;
}

/**
 * `backend.turn.failed`: a role turn failed because its backend call did (the runtime emits it
 * once, for the call that failed the turn, before the turn's `Err`). A resumed thread that could
 * not be resumed and whose fresh retry succeeded is no failure: its `role.session.turn` says
 * `resumeFailed: true` and no `backend.turn.failed` is emitted.
 */
export interface BackendTurnFailedEvent extends EventBase<"backend.turn.failed"> {
  backend: string;
  /** The `KeelError` code of the failed call (`backend_failed`, `timeout`, `aborted`, `resume_failed`, ...). */
  code: string;
  /** The turn's thread could not be resumed: the failed call is the fresh retry after that, or the resume itself. */
  resumeFailed: boolean;
  message?: string;
  /** The mission of the turn (absent in events from before the runtime emitted it). */
  missionId?: string;
  /** The role of the turn (absent in events from before the runtime emitted it). */
  role?: string;
  /** Whether repeating the turn may succeed (the error's `retryable`). */
  retryable?: boolean;
}

/** `work.session.opened`: a work session was opened (or an open one continued with the same model). */
export interface WorkSessionOpenedEvent extends EventBase<"work.session.opened"> {
  missionId: string;
  /** The role it covers, or `null` for the whole mission. */
  role: string | null;
  sessionId: string;
  /** The model the session is pinned to (`null`: the backend's default). */
  model: string | null;
  /** True when the session was already open and is continued. */
  continued: boolean;
}

/** `work.session.closed`: a work session was closed; its totals over its own window. */
export interface WorkSessionClosedEvent extends EventBase<"work.session.closed"> {
  missionId: string;
  role: string | null;
  sessionId: string;
  model: string | null;
  turns: number;
  tasks: number;
  /** Tokens of the turns that reported usage; `null` when none did (unknown, never 0). */
  tokens: number | null;
  /** Tool calls the backends reported; `null` when the session had turns and none reported any (unknown, never 0). */
  toolCalls: number | null;
  /** Turns whose backend did not report tool calls (not in `toolCalls`). */
  turnsWithoutToolCalls: number;
  activeMinutes: number;
  openedAt: number;
  closedAt: number;
}

/**
 * `work.session.turn`: a role turn ended, with or without an open work session. Usage is
 * recorded for every turn; `sessionId` is `null` when no session was open (the turn is then in no
 * session's figures), and unknown usage or tool calls stay `null`.
 */
export interface WorkSessionTurnEvent extends EventBase<"work.session.turn"> {
  missionId: string;
  role: string;
  /** The session the turn was counted in, or `null`. */
  sessionId: string | null;
  model: string | null;
  usage: Usage | null;
  /** Input of every kind plus output, or `null` when unknown. */
  tokens: number | null;
  /** The backend's tool calls, or `null` when it did not report them. */
  toolCalls: number | null;
  /**
   * The turn's model against its session's pin: `match`, `mismatch`, or `unknown` (the turn named
   * no model in a session pinned to one: never a mismatch); `null` outside any session.
   */
  modelPin: "match" | "mismatch" | "unknown" | null;
  wallMs: number;
  /** The declared task, if any. */
  taskId: string | null;
}

/**
 * `work.session.model_mismatch`: a turn named a model other than the one its work session is
 * pinned to. A turn that names no model is "model unknown" (`modelPin: "unknown"` on its
 * `work.session.turn`), never a mismatch.
 */
export interface WorkSessionModelMismatchEvent extends EventBase<"work.session.model_mismatch"> {
  missionId: string;
  role: string;
  sessionId: string;
  /** The pinned model. */
  expected: string | null;
  /** The turn's model. */
  actual: string | null;
}

/** `work.session.checkpoint`: a handoff was written and then the checkpoint counter reset. */
export interface WorkSessionCheckpointEvent extends EventBase<"work.session.checkpoint"> {
  missionId: string;
  role: string;
  sessionId: string;
  /** The revision of the handoff written. */
  handoffRevision: number;
}

/**
 * `work.session.checkpoint_counter_reset`: the checkpoint counter of a work session was set to 0
 * on its own (`resetCheckpointCounter`), with no handoff written. A checkpoint, which writes the
 * handoff and then resets the counter, emits `work.session.checkpoint` instead.
 */
export interface WorkSessionCheckpointCounterResetEvent extends EventBase<"work.session.checkpoint_counter_reset"> {
  missionId: string;
  /** The role whose covering session was reset. */
  role: string;
  sessionId: string;
  /** The counter before the reset. */
  previous: number;
}

/** `work.session.audit_due`: N work sessions (the cadence) closed without an audit. */
export interface WorkSessionAuditDueEvent extends EventBase<"work.session.audit_due"> {
  missionId: string;
  closedSinceAudit: number;
  /** The cadence: an audit is due after this many closed sessions. */
  every: number;
  lastAuditAt: number | null;
}

/** `work.session.audited`: an audit was recorded; the cadence starts again. */
export interface WorkSessionAuditedEvent extends EventBase<"work.session.audited"> {
  missionId: string;
  /** Sessions closed since the previous audit, before this one reset the count. */
  closedSinceAudit: number;
  note: string | null;
}

/** `work.session.refused`: the capacity gate refused a budgeted turn (`no_session` or `capacity_refused`). */
export interface WorkSessionRefusedEvent extends EventBase<"work.session.refused"> {
  missionId: string;
  role: string;
  /** `no_session` or `capacity_refused`. */
  code: string;
  /** The limit reached (`maxToolCalls`, `maxActiveMinutes`), or `null` for `no_session`. */
  limit: string | null;
  /** The limit's value, or `null`. */
  value: number | null;
  taskId: string | null;
}

/**
 * The catalogue of Keel events, by dotted name. Packages emit exactly these; hosts subscribe by
 * name or to `'*'`.
 */
export interface KeelEventMap {
  "role.session.turn": RoleSessionTurnEvent;
  "role.session.warning": RoleSessionWarningEvent;
  "skill.library.available": SkillLibraryAvailableEvent;
  "agent.io.read": AgentIoEvent<"agent.io.read">;
  "agent.io.write": AgentIoEvent<"agent.io.write">;
  "agent.io.search": AgentIoEvent<"agent.io.search">;
  "round.review.completed": RoundReviewCompletedEvent;
  "budget.reserved": BudgetEvent<"budget.reserved">;
  "budget.settled": BudgetEvent<"budget.settled">;
  "budget.refused": BudgetEvent<"budget.refused">;
  "budget.threshold": BudgetEvent<"budget.threshold">;
  "workflow.run.started": WorkflowEvent<"workflow.run.started">;
  "workflow.run.completed": WorkflowEvent<"workflow.run.completed">;
  "workflow.run.failed": WorkflowEvent<"workflow.run.failed">;
  "workflow.run.paused": WorkflowEvent<"workflow.run.paused">;
  "workflow.stage.started": WorkflowEvent<"workflow.stage.started">;
  "workflow.stage.completed": WorkflowEvent<"workflow.stage.completed">;
  "workflow.checkpoint.recorded": WorkflowEvent<"workflow.checkpoint.recorded">;
  "transcript.compacted": TranscriptEvent<"transcript.compacted">;
  "transcript.navigated": TranscriptEvent<"transcript.navigated">;
  "backend.turn.failed": BackendTurnFailedEvent;
  "work.session.opened": WorkSessionOpenedEvent;
  "work.session.closed": WorkSessionClosedEvent;
  "work.session.turn": WorkSessionTurnEvent;
  "work.session.model_mismatch": WorkSessionModelMismatchEvent;
  "work.session.checkpoint": WorkSessionCheckpointEvent;
  "work.session.checkpoint_counter_reset": WorkSessionCheckpointCounterResetEvent;
  "work.session.audit_due": WorkSessionAuditDueEvent;
  "work.session.audited": WorkSessionAuditedEvent;
  "work.session.refused": WorkSessionRefusedEvent;
}

/** A Keel event name. */
export type KeelEventType = keyof KeelEventMap;

/** Any Keel event. */
export type KeelEvent = KeelEventMap[KeelEventType];

/** An event as given to {@link EventBus.emit}: `at` may be left out and is then stamped. */
export type EventInput<T extends KeelEventType> = Omit<KeelEventMap[T], "at"> & { at?: number };

/** Removes the listener it was returned for. Calling it twice is harmless. */
export type Unsubscribe = () => void;

/** A typed, synchronous event bus whose listeners cannot break the emitter. */
export interface EventBus {
  /** Emits one event to the listeners of its type and then to `'*'` listeners. Never throws. */
  emit<T extends KeelEventType>(event: EventInput<T> & { type: T }): void;
  /** Listens to one event type. */
  on<T extends KeelEventType>(type: T, listener: (event: KeelEventMap[T]) => void): Unsubscribe;
  /** Listens to every event. */
  on(type: "*", listener: (event: KeelEvent) => void): Unsubscribe;
  /** Number of listeners of a type (or of `'*'`). */
  listenerCount(type: KeelEventType | "*"): number;
}

/** Options of {@link createEventBus}. */
export interface EventBusOptions {
  /** Stamps `at` on events that lack it. Default `Date.now`. */
  clock?: { now(): number };
  /**
   * Called when a listener throws. The emitter and the other listeners go on regardless.
   * Default: `process.emitWarning` with the error.
   */
  onListenerError?: (error: unknown, event: KeelEvent) => void;
}

/**
 * Creates an {@link EventBus}. Listeners are isolated: a throwing listener is reported to
 * `onListenerError` and never breaks the emitter or the other listeners.
 *
 * @example
 * ```ts
 * const events = createEventBus();
 * const off = events.on("role.session.turn", (event) => console.log(event.action));
 * off();
 * ```
 */
export function createEventBus(options: EventBusOptions = {}): EventBus {
  const emitter = new EventEmitter();
  const now = options.clock ? () => options.clock!.now() : () => Date.now();
  const report =
    options.onListenerError ??
    ((error: unknown, event: KeelEvent) => {
      process.emitWarning(`a Keel event listener for "${event.type}" threw: ${error instanceof Error ? error.message : String(error)}`);
    });
  const wrap = (listener: (event: KeelEvent) => void) => (event: KeelEvent) => {
    try {
      listener(event);
    } catch (error) {
      try {
        report(error, event);
      } catch {
        // A failing error reporter must not break the emitter either.
      }
    }
  };
  return {
    emit(input) {
      const event = { ...input, at: input.at ?? now() } as unknown as KeelEvent;
      emitter.emit(event.type, event);
      emitter.emit("*", event);
    },
    on(type: string, listener: (event: never) => void): Unsubscribe {
      const wrapped = wrap(listener as (event: KeelEvent) => void);
      emitter.on(type, wrapped);
      let active = true;
      return () => {
        if (!active) return;
        active = false;
        emitter.off(type, wrapped);
      };
    },
    listenerCount: (type) => emitter.listenerCount(type),
  } as EventBus;
}
