import { KeelError, validateOrThrow, type EventBus, type KeelEvent, type KeelEventMap } from "@keel/core";
import {
  context,
  createContextKey,
  createNoopMeter,
  isSpanContextValid,
  metrics,
  ProxyTracer,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Meter,
  type Span,
  type Tracer,
} from "@opentelemetry/api";
import { refusalCodeOf, spanEventOf, turnAttributes, workSessionTurnAttributes } from "./internal/event-attributes.js";
import { createKeelMetrics } from "./internal/keel-metrics.js";
import { epoch, ERROR_TYPE, GEN_AI, KEEL, OPERATION } from "./internal/semconv.js";
import { createWorkflowSpans } from "./internal/workflow-spans.js";
import {
  KeelEventSourceSchema,
  KeelOtelOptionsSchema,
  TracedTurnSchema,
  type KeelEventSource,
  type KeelOtelOptions,
  type TracedTurn,
} from "./otel-options.js";

/** The instrumentation scope name of Keel's spans. */
export const KEEL_OTEL_SCOPE = "@keel/otel";

/** What {@link instrumentKeel} returns. */
export interface KeelInstrumentation {
  /**
   * Runs one role turn inside its `invoke_agent {role}` span, made the active span while `run`
   * runs: the turn's events (`role.session.turn`, budget decisions, `agent.io.*`,
   * `work.session.*`) land on it exactly, and the spans an agent SDK emits in-process during the
   * turn nest under it. The span ends when `run`'s result settles; an `Err` result (neverthrow) or
   * a rejection sets its status to ERROR with the KeelError code as `error.type`. Returns `run`'s
   * result unchanged. Bad `turn` throws `invalid_input`.
   *
   * @example
   * ```ts
   * const input = { missionId: "m1", role: "engineer", prompt: "Fix the bug" };
   * const result = await otel.traceTurn(input, () => keel.runRoleTurn(input));
   * ```
   */
  traceTurn<T>(turn: TracedTurn, run: () => T): T;
  /** Stops listening and ends every span still open (at the current time). Calling it twice is harmless. */
  uninstrument(): void;
}

/** A turn span and what is known of it. */
interface TurnState {
  span: Span;
  missionId: string | undefined;
  role: string;
  /** Set once the turn's `role.session.turn` arrived. */
  reported: boolean;
  /** When the span started (epoch ms). */
  startedAt: number;
}

/** How {@link createInstrumentation} behaves beyond the public options (replay of a log). */
export interface InstrumentationMode {
  /**
   * Replaying a recorded log: an event with no turn in context is recorded on the open
   * event-built turn span of the same mission (the latest one), not on the caller's active span.
   */
  replay: boolean;
}

const TURN = createContextKey("keel.otel.turn");
const turnKey = (missionId: string | null, role: string): string => `${missionId ?? ""}\u0000${role}`;

/** The tool name of a file access event: `read`, `write` or `search`. */
const toolOf = (type: "agent.io.read" | "agent.io.write" | "agent.io.search"): string => type.slice("agent.io.".length);

/** The class of the API's no-op meter (what `metrics.getMeter` gives while no provider is registered). */
const NoopMeter = createNoopMeter().constructor as new () => Meter;

/**
 * Whether spans from `tracer` can record. `false` while it is the API's proxy tracer (the
 * default, `trace.getTracer`) and no SDK is registered globally: then nothing Keel builds for a
 * span would be kept, and the listener does no span work at all. The answer is checked again on
 * each call until an SDK shows up (a host may register one after instrumenting), then kept.
 */
function tracingProbe(tracer: Tracer): () => boolean {
  if (!(tracer instanceof ProxyTracer)) return () => true;
  let registered = false;
  return () => {
    if (registered) return true;
    const provider = trace.getTracerProvider();
    registered = !(provider instanceof ProxyTracerProvider) || provider.getDelegateTracer(KEEL_OTEL_SCOPE) !== undefined;
    return registered;
  };
}

/**
 * Subscribes to a Keel event bus and turns its events into OpenTelemetry spans on the host's
 * tracer provider (`@opentelemetry/api` only: the host installs and configures the SDK; with
 * none registered and no tracer or meter given, no span, attribute or metric point is built at
 * all, and spans start with the first event after the host registers one).
 *
 * - a role turn is an `invoke_agent {role}` span with the GenAI usage, model and conversation
 *   attributes and Keel's `keel.session.*`, `keel.capsule.path`, `keel.prompt.bytes`;
 * - each file access (`agent.io.read` / `write` / `search`) an `execute_tool {tool}` child span;
 * - budget and capacity decisions and warnings events on the turn's span;
 * - a workflow run an `invoke_workflow` span with one `stage {id}` child per stage;
 * - a closed work session a `work_session` span over its window, with its totals.
 *
 * Spans parent to the span active when the event was emitted (the host's). Wrap each turn with
 * {@link KeelInstrumentation.traceTurn} to have the turn's span active during the turn (agent SDK
 * spans then nest under it, and failed or refused turns get an ERROR status); without it the
 * turn's span is built when the turn ends, from its `role.session.turn`. No prompt, answer or
 * note text is recorded unless `captureContent`. Bad arguments throw `invalid_input`.
 *
 * @example
 * ```ts
 * const otel = instrumentKeel(keel, { providers: { "claude-code": "anthropic" } });
 * // ... run turns ...
 * otel.uninstrument();
 * ```
 */
export function instrumentKeel(source: KeelEventSource, options: KeelOtelOptions = {}): KeelInstrumentation {
  return createInstrumentation(source, options, { replay: false });
}

/** {@link instrumentKeel}, with the replay mode of {@link replayEvents}. */
export function createInstrumentation(source: KeelEventSource, options: KeelOtelOptions, mode: InstrumentationMode): KeelInstrumentation {
  const checked = validateOrThrow(KeelEventSourceSchema, source, "event source of instrumentKeel");
  const valid = validateOrThrow(KeelOtelOptionsSchema, options, "options of instrumentKeel");
  const bus: EventBus = "events" in checked && typeof (checked as { on?: unknown }).on !== "function" ? checked.events : (checked as EventBus);
  const tracer: Tracer = valid.tracer ?? trace.getTracer(KEEL_OTEL_SCOPE);
  const captureContent = valid.captureContent ?? false;
  const providers = valid.providers ?? {};
  const settleMs = valid.turnSettleMs ?? 2000;
  const meter: Meter = valid.meter ?? metrics.getMeter(KEEL_OTEL_SCOPE);
  // The API's no-op meter stays one (the metrics API has no proxy): nothing to record, ever.
  const metering = !(meter instanceof NoopMeter);
  const tracing = tracingProbe(tracer);
  const keelMetrics = createKeelMetrics(meter, providers);
  const workflows = createWorkflowSpans(tracer);
  /** Turn spans built from events alone, open for the turn's later events. */
  const pending = new Map<string, { state: TurnState; endAt: number; timer: ReturnType<typeof setTimeout> }>();
  /** Spans started by traceTurn and not ended yet. */
  const traced = new Set<TurnState>();
  let active = true;

  const endPending = (key: string): void => {
    const open = pending.get(key);
    if (!open) return;
    clearTimeout(open.timer);
    pending.delete(key);
    open.state.span.end(epoch(open.endAt));
  };

  /** The traced turn whose span is active in `ctx`, if any. */
  const tracedIn = (ctx: Context): TurnState | undefined => ctx.getValue(TURN) as TurnState | undefined;

  /** Whether `state` (the traced turn in context) is the turn of `role` in `missionId` (`null`: any mission). */
  const isTurnOf = (state: TurnState, missionId: string | null, role: string): boolean =>
    state.role === role && (missionId === null || state.missionId === undefined || state.missionId === missionId);

  /** The turn an event belongs to: the traced turn in context, else an event-built one. */
  const turnOf = (current: TurnState | undefined, missionId: string | null, role: string): TurnState | undefined => {
    if (current && isTurnOf(current, missionId, role)) return current;
    return pending.size === 0 ? undefined : pending.get(turnKey(missionId, role))?.state;
  };

  /** In replay: the latest open event-built turn (of `missionId` when the event names one). */
  const latestPending = (missionId: string | undefined): TurnState | undefined => {
    let latest: TurnState | undefined;
    for (const { state } of pending.values()) if (missionId === undefined || state.missionId === missionId) latest = state;
    return latest;
  };

  const onTurn = (event: KeelEventMap["role.session.turn"], ctx: Context): void => {
    const current = tracedIn(ctx);
    if (current && !current.reported && current.role === event.role && (current.missionId === undefined || current.missionId === event.missionId)) {
      current.reported = true;
      current.span.setAttributes(turnAttributes(event, providers));
      return;
    }
    const key = turnKey(event.missionId, event.role);
    endPending(key);
    const attributes = turnAttributes(event, providers);
    attributes[GEN_AI.operationName] = OPERATION.invokeAgent;
    const span = tracer.startSpan(`${OPERATION.invokeAgent} ${event.role}`, { kind: SpanKind.INTERNAL, startTime: epoch(event.at - event.wallMs), attributes }, ctx);
    if (!span.isRecording()) {
      // Sampled out: nothing will hold the turn's later events, so no timer either.
      span.end(epoch(event.at));
      return;
    }
    const state: TurnState = { span, missionId: event.missionId, role: event.role, reported: true, startedAt: event.at - event.wallMs };
    const timer = setTimeout(() => endPending(key), settleMs);
    timer.unref?.();
    pending.set(key, { state, endAt: event.at, timer });
  };

  const onAccess = (event: KeelEventMap["agent.io.read" | "agent.io.write" | "agent.io.search"], ctx: Context): void => {
    const current = tracedIn(ctx);
    const turn = turnOf(current, event.missionId, event.role);
    // The traced turn in context is already the active span there: no new context to build.
    const parent: Context = turn && turn !== current ? trace.setSpan(ctx, turn.span) : ctx;
    const tool = toolOf(event.type);
    const attributes: Attributes = {
      [GEN_AI.operationName]: OPERATION.executeTool,
      [GEN_AI.toolName]: tool,
      [GEN_AI.toolType]: "function",
      [GEN_AI.agentName]: event.role,
      [KEEL.ioPath]: event.path,
      [KEEL.ioBytes]: event.bytes,
    };
    if (event.skill !== null) attributes[KEEL.skill] = event.skill;
    const at = epoch(event.at);
    tracer.startSpan(`${OPERATION.executeTool} ${tool}`, { kind: SpanKind.INTERNAL, startTime: at, attributes }, parent).end(at);
  };

  const onWorkSessionClosed = (event: KeelEventMap["work.session.closed"], ctx: Context): void => {
    const attributes: Attributes = {
      [KEEL.missionId]: event.missionId,
      [KEEL.workSessionId]: event.sessionId,
      [KEEL.workSessionTurns]: event.turns,
      [KEEL.workSessionTasks]: event.tasks,
      [KEEL.workSessionActiveMinutes]: event.activeMinutes,
    };
    if (event.role !== null) attributes[GEN_AI.agentName] = event.role;
    if (event.model !== null) attributes[GEN_AI.requestModel] = event.model;
    if (event.tokens !== null) attributes[KEEL.workSessionTokens] = event.tokens;
    if (event.toolCalls !== null) attributes[KEEL.toolCalls] = event.toolCalls;
    tracer.startSpan("work_session", { kind: SpanKind.INTERNAL, startTime: epoch(event.openedAt), attributes }, ctx).end(epoch(event.closedAt));
  };

  /**
   * A failed backend call of the traced turn in context: an event on the turn's span, which is
   * ERROR with the code from now on (the turn's `Err` sets the same when it settles). Any other
   * (no traced turn, or one that already reported its turn): `false`, the failure gets a span of
   * its own, since an event-built span open for the role is an earlier turn's.
   */
  const onBackendFailed = (event: KeelEventMap["backend.turn.failed"], recorded: { name: string; attributes: Attributes }, current: TurnState | undefined): boolean => {
    if (!current || current.reported || !current.span.isRecording() || (event.role !== undefined && !isTurnOf(current, event.missionId ?? null, event.role))) return false;
    current.span.addEvent(recorded.name, recorded.attributes, epoch(event.at));
    current.span.setAttribute(ERROR_TYPE, event.code);
    current.span.setAttribute(KEEL.errorCode, event.code);
    current.span.setStatus({ code: SpanStatusCode.ERROR, message: captureContent && event.message !== undefined ? event.message : event.code });
    return true;
  };

  /** Records an event on its turn's span, else on the active span, else as a zero-length span. */
  const onOther = (event: KeelEvent, ctx: Context): void => {
    const recorded = spanEventOf(event, captureContent);
    if (!recorded) return;
    const current = tracedIn(ctx);
    if (event.type === "backend.turn.failed") {
      if (!onBackendFailed(event, recorded, current)) alone(event, recorded, ctx);
      return;
    }
    const owner = "role" in event && typeof event.role === "string" ? turnOf(current, "missionId" in event ? (event.missionId as string | null) : null, event.role) : undefined;
    const inContext =
      owner ?? current ?? (mode.replay ? latestPending("missionId" in event && typeof event.missionId === "string" ? event.missionId : undefined) : undefined);
    const span = inContext?.span ?? trace.getSpan(ctx);
    if (span && span.isRecording()) {
      span.addEvent(recorded.name, recorded.attributes, epoch(event.at));
      return;
    }
    alone(event, recorded, ctx);
  };

  /** An event no turn holds: a zero-length span of its own, an ERROR when it is a refusal or a failure. */
  const alone = (event: KeelEvent, recorded: { name: string; attributes: Attributes }, ctx: Context): void => {
    const at = epoch(event.at);
    const span = tracer.startSpan(recorded.name, { kind: SpanKind.INTERNAL, startTime: at, attributes: recorded.attributes }, ctx);
    const code = refusalCodeOf(event);
    if (code !== undefined) {
      span.setAttribute(ERROR_TYPE, code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: code });
    }
    span.end(at);
  };

  const listener = (event: KeelEvent): void => {
    if (!active) return;
    if (metering) keelMetrics.record(event);
    // No SDK behind the default tracer: every span would be the API's no-op, so none is built.
    if (!tracing()) return;
    const ctx = context.active();
    switch (event.type) {
      case "role.session.turn":
        return onTurn(event, ctx);
      case "agent.io.read":
      case "agent.io.write":
      case "agent.io.search":
        return onAccess(event, ctx);
      case "work.session.turn": {
        const turn = turnOf(tracedIn(ctx), event.missionId, event.role);
        if (turn?.span.isRecording()) turn.span.setAttributes(workSessionTurnAttributes(event));
        // The last event of a runtime turn: an event-built turn span is complete.
        if (pending.size > 0) endPending(turnKey(event.missionId, event.role));
        return;
      }
      case "work.session.closed":
        return onWorkSessionClosed(event, ctx);
      default:
        if (event.type.startsWith("workflow.")) return workflows.handle(event as Parameters<typeof workflows.handle>[0]);
        return onOther(event, ctx);
    }
  };
  const unsubscribe = bus.on("*", listener);

  const finish = (state: TurnState, error: unknown): void => {
    if (!traced.delete(state)) return;
    if (error !== undefined) {
      const code = KeelError.is(error) ? error.code : "unknown";
      state.span.setAttribute(ERROR_TYPE, code);
      if (KeelError.is(error)) state.span.setAttribute(KEEL.errorCode, error.code);
      const message = captureContent && error instanceof Error ? error.message : code;
      state.span.setStatus({ code: SpanStatusCode.ERROR, message });
      // A turn that reported no role.session.turn (failed or refused) has no duration recorded yet.
      if (!state.reported && metering) keelMetrics.failedTurn(state.role, code, Math.max(0, Date.now() - state.startedAt) / 1000);
    }
    state.span.end();
  };

  const settle = (state: TurnState, value: unknown): void => {
    const result = value as { isErr?: unknown; error?: unknown; value?: unknown } | null;
    if (result && typeof result === "object" && typeof result.isErr === "function") {
      if ((result.isErr as () => boolean).call(result)) return finish(state, result.error ?? new Error("error result"));
      const text = (result.value as { text?: unknown } | undefined)?.text;
      if (captureContent && typeof text === "string") state.span.setAttribute(GEN_AI.outputMessages, messagesJson("assistant", text));
    }
    finish(state, undefined);
  };

  return {
    traceTurn<T>(turn: TracedTurn, run: () => T): T {
      const input = validateOrThrow(TracedTurnSchema, turn, "turn of traceTurn");
      if (typeof run !== "function") throw new KeelError("invalid_input", "traceTurn needs the turn to run as a function: traceTurn(input, () => keel.runRoleTurn(input))");
      // Neither spans nor metrics can be recorded: the turn runs as it is, untouched.
      if (!active || (!metering && !tracing())) return run();
      const attributes: Attributes = { [GEN_AI.operationName]: OPERATION.invokeAgent, [GEN_AI.agentName]: input.role };
      if (input.missionId !== undefined) attributes[KEEL.missionId] = input.missionId;
      if (input.taskId !== undefined) attributes[KEEL.taskId] = input.taskId;
      if (captureContent && input.prompt !== undefined) attributes[GEN_AI.inputMessages] = messagesJson("user", input.prompt);
      const ctx = context.active();
      const span = tracer.startSpan(`${OPERATION.invokeAgent} ${input.role}`, { kind: SpanKind.INTERNAL, attributes }, ctx);
      const state: TurnState = { span, missionId: input.missionId, role: input.role, reported: false, startedAt: Date.now() };
      traced.add(state);
      // With no SDK the span is the API's no-op with no trace to carry: the turn runs as it is,
      // without a context switch (its metrics are still recorded).
      const carry = span.isRecording() || isSpanContextValid(span.spanContext());
      let result: T;
      try {
        result = carry ? context.with(trace.setSpan(ctx, span).setValue(TURN, state), run) : run();
      } catch (error) {
        finish(state, error);
        throw error;
      }
      if (result !== null && typeof result === "object" && typeof (result as { then?: unknown }).then === "function") {
        (result as unknown as PromiseLike<unknown>).then(
          (value) => settle(state, value),
          (error: unknown) => finish(state, error ?? new Error("rejected")),
        );
      } else {
        settle(state, result);
      }
      return result;
    },
    uninstrument() {
      if (!active) return;
      active = false;
      unsubscribe();
      for (const key of [...pending.keys()]) endPending(key);
      workflows.endAll(Date.now());
    },
  };
}

/** One message in the GenAI conventions' JSON form (content capture only). */
function messagesJson(role: "user" | "assistant", text: string): string {
  return JSON.stringify([{ role, parts: [{ type: "text", content: text }] }]);
}
