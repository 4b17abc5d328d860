import { totalInputTokens, type KeelEvent, type KeelEventMap } from "@keel/core";
import type { Attributes, Meter } from "@opentelemetry/api";
import { DURATION_BUCKETS, ERROR_TYPE, GEN_AI, KEEL, METRIC, OPERATION, TOKEN_BUCKETS } from "./semconv.js";

/** What a turn's metrics are recorded with: low-cardinality attributes only (no mission, thread or task ids). */
interface TurnLabels {
  role: string;
  backend?: string;
  model?: string | null;
  policy?: string;
}

/** How many label sets of turns are kept for reuse (beyond it they are built for each turn). */
const MAX_LABEL_SETS = 256;

/** Records Keel's metrics on a meter; every method is a no-op cost on the API's no-op meter. */
export interface KeelMetrics {
  /** Records what an event tells: token usage and duration of a turn, budget remaining, work-session tool calls and minutes. */
  record(event: KeelEvent): void;
  /** Records the duration of a turn that failed or was refused (it reports no `role.session.turn`). */
  failedTurn(role: string, code: string, seconds: number): void;
}

/** Creates the instruments on `meter`. */
export function createKeelMetrics(meter: Meter, providers: Readonly<Record<string, string>>): KeelMetrics {
  const tokenUsage = meter.createHistogram(METRIC.tokenUsage, {
    description: "Tokens used by a Keel role turn, by gen_ai.token.type (input: all input, cache included; output)",
    unit: "{token}",
    advice: { explicitBucketBoundaries: TOKEN_BUCKETS },
  });
  const duration = meter.createHistogram(METRIC.operationDuration, {
    description: "Duration of a Keel role turn (gen_ai.operation.name invoke_agent), failed and refused turns included with error.type",
    unit: "s",
    advice: { explicitBucketBoundaries: DURATION_BUCKETS },
  });
  const remaining = meter.createGauge(METRIC.budgetRemaining, {
    description: "What remains of a budget scope's limit in one dimension, as last stated by a budget refusal or threshold crossing",
    unit: "1",
  });
  const toolCalls = meter.createCounter(METRIC.workSessionToolCalls, {
    description: "Tool calls the backends reported for role turns (turns that reported none are not counted)",
    unit: "{call}",
  });
  const activeMinutes = meter.createHistogram(METRIC.workSessionActiveMinutes, {
    description: "Active minutes of each closed work session",
    unit: "min",
  });

  const labels = ({ role, backend, model, policy }: TurnLabels): Attributes => {
    const attributes: Attributes = { [GEN_AI.operationName]: OPERATION.invokeAgent, [GEN_AI.agentName]: role };
    if (backend !== undefined) {
      attributes[KEEL.backend] = backend;
      if (Object.hasOwn(providers, backend)) attributes[GEN_AI.providerName] = providers[backend];
    }
    if (model) attributes[GEN_AI.requestModel] = model;
    if (policy !== undefined) attributes[KEEL.sessionPolicy] = policy;
    return attributes;
  };

  /**
   * The label sets of a turn (the turn's, and with `gen_ai.token.type` input and output), built
   * once per role, backend, model and policy: a turn records them as they are. Frozen, since the
   * SDK keeps them as its data points' attributes.
   */
  const turnLabels = new Map<string, { turn: Attributes; input: Attributes; output: Attributes }>();
  const labelsOfTurn = (event: KeelEventMap["role.session.turn"]): { turn: Attributes; input: Attributes; output: Attributes } => {
    const key = `${event.role}\u0000${event.backend}\u0000${event.model ?? ""}\u0000${event.policy}`;
    const known = turnLabels.get(key);
    if (known) return known;
    const turn = Object.freeze(labels(event));
    const made = { turn, input: Object.freeze({ ...turn, [GEN_AI.tokenType]: "input" }), output: Object.freeze({ ...turn, [GEN_AI.tokenType]: "output" }) };
    // A bound on what is kept, should a host run unboundedly many roles or models.
    if (turnLabels.size < MAX_LABEL_SETS) turnLabels.set(key, made);
    return made;
  };

  const onTurn = (event: KeelEventMap["role.session.turn"]): void => {
    const sets = labelsOfTurn(event);
    duration.record(event.wallMs / 1000, sets.turn);
    const input = totalInputTokens(event.usage);
    if (input !== null) tokenUsage.record(input, sets.input);
    const output = event.usage?.output ?? null;
    if (output !== null) tokenUsage.record(output, sets.output);
  };

  /** `remaining` of a scope in a dimension, when both are numbers. */
  const setRemaining = (scope: unknown, dimension: unknown, value: unknown): void => {
    if (typeof scope !== "string" || typeof dimension !== "string" || typeof value !== "number" || !Number.isFinite(value)) return;
    remaining.record(Math.max(0, value), { [KEEL.budgetScope]: scope, [KEEL.budgetDimension]: dimension });
  };

  return {
    record(event) {
      switch (event.type) {
        case "role.session.turn":
          return onTurn(event);
        case "budget.refused": {
          const details = event.details ?? {};
          setRemaining(event.limitingScope, details["dimension"], details["remaining"]);
          const violations = Array.isArray(details["violations"]) ? details["violations"] : [];
          for (const violation of violations) {
            if (violation && typeof violation === "object" && !Array.isArray(violation)) setRemaining(violation["scope"], violation["dimension"], violation["remaining"]);
          }
          return;
        }
        case "budget.threshold": {
          const details = event.details ?? {};
          const { limit, used } = details;
          if (typeof limit === "number" && typeof used === "number") setRemaining(event.limitingScope ?? event.scope, event.dimensions[0], limit - used);
          return;
        }
        case "work.session.turn":
          if (event.toolCalls !== null) toolCalls.add(event.toolCalls, { [GEN_AI.agentName]: event.role });
          return;
        case "work.session.closed":
          activeMinutes.record(event.activeMinutes, event.role !== null ? { [GEN_AI.agentName]: event.role } : {});
          return;
        default:
          return;
      }
    },
    failedTurn(role, code, seconds) {
      duration.record(seconds, { ...labels({ role }), [ERROR_TYPE]: code });
    },
  };
}
