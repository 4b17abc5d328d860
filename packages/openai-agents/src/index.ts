/**
 * `@keel/openai-agents`: an OpenAI Agents JS `Session` over any Keel store.
 *
 * @packageDocumentation
 */
export { KeelSession, createKeelSession } from "./session.js";
export { KeelSessionOptionsSchema } from "./session-options.js";
export type { KeelSessionOptions } from "./session-options.js";
