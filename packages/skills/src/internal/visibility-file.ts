import { readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

/** The file in a role directory that lists its skills hidden from automatic discovery. */
export const VISIBILITY_FILE = ".keel-visibility.json";

/** zod schema of the visibility document: the names of the role directory's `explicit-only` skills. */
export const VisibilityDocumentSchema = z.object({ version: z.literal(1), explicitOnly: z.array(z.string().min(1).max(128)).max(100_000) }).strict();

/** The visibility document. */
export type VisibilityDocument = z.infer<typeof VisibilityDocumentSchema>;

/**
 * The names hidden in a role directory (real path), read synchronously by discovery. A missing
 * file hides nothing; an unreadable or malformed one hides nothing and is reported by `problem`.
 */
export function readHiddenNames(rootPath: string): { names: ReadonlySet<string>; problem?: string } {
  let text: string;
  try {
    text = readFileSync(join(rootPath, VISIBILITY_FILE), "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return { names: new Set() };
    return { names: new Set(), problem: `cannot be read: ${String(error)}` };
  }
  try {
    const parsed = VisibilityDocumentSchema.safeParse(JSON.parse(text));
    if (parsed.success) return { names: new Set(parsed.data.explicitOnly) };
    return { names: new Set(), problem: "does not match its schema" };
  } catch {
    return { names: new Set(), problem: "is not valid JSON" };
  }
}
