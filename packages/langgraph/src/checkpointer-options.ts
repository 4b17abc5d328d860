import type { SerializerProtocol } from "@langchain/langgraph-checkpoint";
import type { KeelStore } from "@keel/store";
import { keelStoreSchema } from "@keel/store/kit";
import { SafeNameSchema } from "@keel/core";
import { z } from "zod";

/** Options of {@link createKeelCheckpointer}. */
export interface KeelCheckpointerOptions {
  /** Any Keel store: memory, fs, SQLite, PostgreSQL. The checkpointer does not close it. */
  store: KeelStore;
  /** Key prefix under which threads live (default `["langgraph"]`); one per application sharing a store. */
  prefix?: readonly string[];
  /** LangGraph serializer (default: LangGraph's `JsonPlusSerializer`). */
  serde?: SerializerProtocol;
}

/** zod schema of {@link KeelCheckpointerOptions}; an unknown option is refused (a misspelt one would be ignored). */
export const KeelCheckpointerOptionsSchema: z.ZodType<unknown> = z.strictObject({
  store: keelStoreSchema(["docs", "logs"]),
  prefix: z.array(SafeNameSchema).min(1).max(8).optional(),
  serde: z.custom<SerializerProtocol>((value) => typeof value === "object" && value !== null && "dumpsTyped" in value && "loadsTyped" in value).optional(),
});
