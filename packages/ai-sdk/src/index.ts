/**
 * `@keel/ai-sdk`: Keel for the Vercel AI SDK. `createAiSdkBackend` runs the host's
 * `LanguageModel` and tools as a Keel `Backend`, the thread kept in a `@keel/transcript` on any
 * Keel store; `toModelMessages` / `fromModelMessages` convert between transcript entries and the
 * AI SDK's `ModelMessage`s for hosts that run their own loop, `responseMessagesOf` the messages
 * every step of a call produced (ai 6 and 7 keep them in different places).
 *
 * @packageDocumentation
 */
export { fromModelMessages, responseMessagesOf, toModelMessages } from "./model-messages.js";
export { DEFAULT_MAX_STEPS, callProviderOptions, createAiSdkBackend } from "./ai-sdk-backend.js";
export type { AiSdkBackendOptions, AiSdkCompactionOptions, AiSdkProviderOptions, AiSdkTelemetrySettings, AiSdkToolFileAccess } from "./ai-sdk-backend-options.js";
