import type { BackendFileOperation } from "@keel/backend";
import { SafeNameSchema, type Clock, type EventBus } from "@keel/core";
import type { KeelStore } from "@keel/store";
import { keelStoreSchema } from "@keel/store/kit";
import type { generateText, LanguageModel, StopCondition, ToolSet } from "ai";
import { z } from "zod";

/** The provider options the AI SDK takes on a call (`providerOptions` of `generateText`). */
export type AiSdkProviderOptions = NonNullable<Parameters<typeof generateText>[0]["providerOptions"]>;

/**
 * The AI SDK's telemetry settings of a call (`experimental_telemetry` of `generateText`, in `ai` 6
 * and 7): `isEnabled`, `functionId`, `metadata`, `recordInputs`, `recordOutputs`, and `tracer`
 * (ai 6) or `integrations` (ai 7).
 */
export type AiSdkTelemetrySettings = NonNullable<Parameters<typeof generateText>[0]["experimental_telemetry"]>;

/**
 * How one of the host's tools touches files, so its calls become Keel's `fileAccess` (and so
 * `agent.io.*` events): what it does, and which argument of its input names the file.
 */
export interface AiSdkToolFileAccess {
  /** `read` (a file opened), `write` (created, replaced or edited) or `search` (a grep or glob over a path). */
  op: BackendFileOperation;
  /** The input argument holding the path (a search without it stands for `.`). */
  pathArgument: string;
  /** For a `write`: the input argument holding the written text, to count its bytes. */
  contentArgument?: string;
}

/**
 * When and how a resumed thread is compacted before its turn (Keel's transcript compaction: the
 * older part summarized by the same model with Keel's summary prompt, the newest kept verbatim).
 */
export interface AiSdkCompactionOptions {
  /** The model's context window, in tokens. */
  contextWindow: number;
  /** Compact when the context (estimated) and the prompt leave less than this free; also the summary's budget (default 16,384). */
  reserveTokens?: number;
  /** Keep about this many tokens of the newest context verbatim (default 20,000). */
  keepRecentTokens?: number;
  /** Extra instructions for the summary (what to keep). */
  customInstructions?: string;
}

/** Options of {@link createAiSdkBackend}. */
export interface AiSdkBackendOptions {
  /** The model every turn calls: a provider's model (`openai("gpt-5")`, `anthropic(…)`) or a gateway id. */
  model: LanguageModel;
  /** The tools of the loop, with their `execute` (the host's code; Keel runs none of its own). */
  tools?: ToolSet;
  /** The system prompt of every call (not stored in the thread: a change applies to the next turn). */
  system?: string;
  /** When the tool loop stops (default `stepCountIs(20)`; the SDK's own default is one step, no loop). */
  stopWhen?: StopCondition<ToolSet> | StopCondition<ToolSet>[];
  /** The Keel store the threads live in (any adapter with documents and logs: memory, fs, SQLite, PostgreSQL). */
  store: KeelStore;
  /** The backend id (default `ai-sdk`), a safe name. */
  id?: string;
  /** Retries the SDK makes itself on a retryable provider error (default the SDK's, 2). */
  maxRetries?: number;
  /**
   * Provider options of every call. With an OpenAI Responses model (`openai(…)`), `openai.store`
   * is set to `false` unless given here: the restored history is then sent inline, not as
   * references to items the provider may no longer hold.
   */
  providerOptions?: AiSdkProviderOptions;
  /** Tool name → how it touches files (see {@link AiSdkToolFileAccess}); a tool not named touches none. */
  toolFileAccess?: Readonly<Record<string, AiSdkToolFileAccess>>;
  /**
   * Compact a resumed thread before its turn when its context nears `contextWindow` (see
   * {@link AiSdkCompactionOptions}); without it a thread grows until the provider refuses it.
   */
  compaction?: AiSdkCompactionOptions;
  /** The clock of transcript entry timestamps (default the system clock). */
  clock?: Clock;
  /** Where the transcripts' events go. */
  events?: EventBus;
  /**
   * The AI SDK's own telemetry for every call of the turn (its `experimental_telemetry`), so that
   * its spans (`ai.generateText`, `ai.toolCall`, … in `ai` 6; with `@ai-sdk/otel`'s integration
   * in `ai` 7) nest under the turn's span when `@keel/otel`'s `traceTurn` runs the turn. Off
   * unless given. Unlike the SDK's own default, `recordInputs` and `recordOutputs` are `false`
   * unless set here: like Keel's spans, the SDK's then carry no prompt or answer text.
   */
  telemetry?: AiSdkTelemetrySettings;
}

const ToolFileAccessSchema = z.strictObject({
  op: z.union([z.literal("read"), z.literal("write"), z.literal("search")]),
  pathArgument: z.string().min(1),
  contentArgument: z.string().min(1).optional(),
});

const CompactionSchema = z.strictObject({
  contextWindow: z.number().int().positive(),
  reserveTokens: z.number().int().nonnegative().optional(),
  keepRecentTokens: z.number().int().nonnegative().optional(),
  customInstructions: z.string().optional(),
});

const functionValue = (what: string) => z.custom<(...args: never[]) => unknown>((value) => typeof value === "function", `${what} must be a function`);

/** zod schema of {@link AiSdkBackendOptions.model}: a `LanguageModel` (an object with `doGenerate`) or a model id. */
export const AiSdkModelSchema = z.union([
  z.string().min(1),
  z.custom<object>(
    (value) => typeof value === "object" && value !== null && typeof (value as { doGenerate?: unknown }).doGenerate === "function",
    "model must be an AI SDK LanguageModel (an object with doGenerate) or a model id",
  ),
]);

/** zod schema of {@link AiSdkBackendOptions.providerOptions}: options by provider name. */
export const AiSdkProviderOptionsSchema = z.record(z.string(), z.record(z.string(), z.unknown()));

/** zod schema of {@link AiSdkBackendOptions} (strict: an unknown option is refused). */
export const AiSdkBackendOptionsSchema: z.ZodType<AiSdkBackendOptions> = z.strictObject({
  model: AiSdkModelSchema,
  tools: z.record(z.string().min(1), z.looseObject({})).optional(),
  system: z.string().optional(),
  stopWhen: z.union([functionValue("stopWhen"), z.array(functionValue("stopWhen")).min(1)]).optional(),
  store: keelStoreSchema(["docs", "logs"]),
  id: SafeNameSchema.optional(),
  maxRetries: z.number().int().nonnegative().max(100).optional(),
  providerOptions: AiSdkProviderOptionsSchema.optional(),
  toolFileAccess: z.record(z.string().min(1), ToolFileAccessSchema).optional(),
  compaction: CompactionSchema.optional(),
  clock: z.custom<Clock>((value) => typeof (value as Clock | undefined)?.now === "function", "clock must have now()").optional(),
  events: z.custom<EventBus>((value) => typeof (value as EventBus | undefined)?.emit === "function", "events must be an EventBus").optional(),
  telemetry: z
    .strictObject({
      isEnabled: z.boolean().optional(),
      recordInputs: z.boolean().optional(),
      recordOutputs: z.boolean().optional(),
      functionId: z.string().optional(),
      metadata: z.record(z.string(), z.unknown()).optional(),
      tracer: z.custom<object>((value) => typeof value === "object" && value !== null && typeof (value as { startActiveSpan?: unknown }).startActiveSpan === "function", "telemetry.tracer must be an OpenTelemetry Tracer").optional(),
      integrations: z.union([z.looseObject({}), z.array(z.looseObject({}))]).optional(),
    })
    .optional(),
}) as unknown as z.ZodType<AiSdkBackendOptions>;
