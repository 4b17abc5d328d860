import type { KeelStore } from "@keel/store";
import { keelStoreSchema } from "@keel/store/kit";
import { SafeNameSchema } from "@keel/core";
import { z } from "zod";

/** Options of {@link createKeelSession}. */
export interface KeelSessionOptions {
  /** Any Keel store: memory, fs, SQLite, PostgreSQL. The session does not close it. */
  store: KeelStore;
  /** The session's id, a SafeName (letters, digits, '.', '_', '-'); the same id in another process is the same session. */
  sessionId: string;
  /** Key prefix of the sessions (default `["openai-agents", "sessions"]`). */
  prefix?: readonly string[];
  /** How many times `popItem` retries when another writer appended first (default 50). */
  maxPopAttempts?: number;
}

/** zod schema of {@link KeelSessionOptions}; an unknown option is refused (a misspelt one would be ignored). */
export const KeelSessionOptionsSchema: z.ZodType<unknown> = z.strictObject({
  store: keelStoreSchema(["docs", "logs"]),
  sessionId: SafeNameSchema,
  prefix: z.array(SafeNameSchema).min(1).max(8).optional(),
  maxPopAttempts: z.number().int().min(1).max(10_000).optional(),
});
