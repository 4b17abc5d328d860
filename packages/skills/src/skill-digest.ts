import { KeelError, toKeelError, validate } from "@keel/core";
import { errAsync, ResultAsync } from "neverthrow";
import { z } from "zod";
import { listSkillTree, readAndDigest } from "./internal/skill-tree.js";
import { nodeSkillIo, type SkillIo } from "./skill-io.js";
import { DEFAULT_MANAGED_SKILL_LIMITS } from "./skill-manage-options.js";

/** A skill tree's content digest and what it covered. */
export interface SkillTreeDigest {
  /** `sha256:<hex>` over the files' `/`-separated NFC paths (in UTF-8 byte order), sizes and bytes. */
  digest: string;
  /** Files covered. */
  files: number;
  /** Bytes covered. */
  bytes: number;
}

/**
 * The content digest of a skill directory: paths and bytes of every regular file, the
 * `.keel-skill.json` metadata excluded; modes, times and empty directories do not count, so it is
 * the same on every platform and after a copy. `invalid_input` when the tree holds a symlink, a
 * device or a non-portable name, or passes the default managed limits.
 */
export function digestSkillTree(directory: string, options: { io?: SkillIo } = {}): ResultAsync<SkillTreeDigest, KeelError> {
  const checked = validate(z.string().min(1).max(4096), directory, "skill directory");
  if (checked.isErr()) return errAsync(checked.error);
  const io = options.io ?? nodeSkillIo;
  const run = async (): Promise<SkillTreeDigest> => {
    const listing = await listSkillTree(io, directory, DEFAULT_MANAGED_SKILL_LIMITS);
    if (listing.problems.length > 0) {
      throw new KeelError("invalid_input", `${directory} cannot be digested: ${listing.problems[0]!.path} ${listing.problems[0]!.reason}`, {
        details: { problems: listing.problems.slice(0, 50) },
      });
    }
    const { digest } = await readAndDigest(io, listing);
    return { digest, files: listing.files.length, bytes: listing.bytes };
  };
  return ResultAsync.fromThrowable(run, (error) => (KeelError.is(error) ? error : toKeelError(error, "io_failed", `digesting ${directory} failed`)))();
}
