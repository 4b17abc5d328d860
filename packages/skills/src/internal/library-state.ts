import { join } from "node:path";
import { KeelError } from "@keel/core";
import { z } from "zod";
import type { ManagedContext } from "../skill-manage-options.js";
import { readDocument, writeDocument } from "./document-write.js";

/** The state document of a role directory's library-installed skills. */
export const LIBRARY_STATE_FILE = ".keel-library.json";

/** zod schema of the library state: per skill, the library it came from, its path there and the digest installed. */
export const LibraryStateSchema = z
  .object({
    version: z.literal(1),
    skills: z.record(
      z.string().min(1).max(128),
      z.object({ library: z.string().min(1), path: z.string(), digest: z.string().regex(/^sha256:[0-9a-f]{64}$/), withdrawn: z.boolean().optional() }).strict(),
    ),
  })
  .strict();

/** The library state document. */
export type LibraryState = z.infer<typeof LibraryStateSchema>;

/** Reads the state of the context's role directory (empty when absent); `corrupt` when malformed. */
export async function readLibraryState(context: ManagedContext): Promise<LibraryState> {
  const path = join(context.roleDirectory, LIBRARY_STATE_FILE);
  let data: unknown;
  try {
    data = await readDocument(context.io, path);
  } catch (error) {
    if (error instanceof SyntaxError) throw new KeelError("corrupt", `${path} is not valid JSON: fix or remove it`, { details: { location: path } });
    throw error;
  }
  if (data === undefined) return { version: 1, skills: {} };
  const parsed = LibraryStateSchema.safeParse(data);
  if (!parsed.success) throw new KeelError("corrupt", `${path} does not match the library state schema: fix or remove it`, { details: { location: path } });
  return parsed.data;
}

/** Writes the state (the caller holds the role lock); an empty state removes the document. */
export async function writeLibraryState(context: ManagedContext, state: LibraryState): Promise<void> {
  const path = join(context.roleDirectory, LIBRARY_STATE_FILE);
  await writeDocument(context.io, path, Object.keys(state.skills).length === 0 ? null : (state as never));
}
