/**
 * `@keel/langgraph`: a LangGraph.js checkpointer (`BaseCheckpointSaver`) over any Keel store.
 *
 * @packageDocumentation
 */
export { KeelCheckpointSaver, createKeelCheckpointer } from "./checkpointer.js";
export { KeelCheckpointerOptionsSchema } from "./checkpointer-options.js";
export type { KeelCheckpointerOptions } from "./checkpointer-options.js";
