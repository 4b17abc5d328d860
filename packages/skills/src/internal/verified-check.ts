import type { Stats } from "node:fs";
import { readSkillMetadata } from "../skill-import.js";
import { nodeSkillIo, type SkillIo } from "../skill-io.js";
import { DEFAULT_MANAGED_SKILL_LIMITS } from "../skill-manage-options.js";
import type { SkillDiagnostic, SkillEntry } from "../skill-view.js";
import { isSettled, signatureOf } from "./scan-cache.js";
import { listSkillTree, readAndDigest } from "./skill-tree.js";

/**
 * The `requireVerified` check of a library: a skill is offered only when it is a managed skill
 * admitted as `verified` whose tree still has the digest that verification covered.
 *
 * Digesting reads every file of a skill, so digests are kept between resolves keyed by the
 * skill's listing: every file's path, inode, size, mtime and ctime. A listing costs one `lstat`
 * per file; the bytes are read again only when one of those changed, or when a file changed
 * within the racy window (its timestamps cannot yet tell a later same-size edit apart).
 */
export interface VerifiedCheck {
  /** `null` when the skill may be offered, else the diagnostic that says why not. */
  check(skill: SkillEntry): Promise<SkillDiagnostic | null>;
}

interface CachedDigest {
  key: string;
  digest: string;
}

/** Most skill digests remembered (a library's worth; the map is cleared past it). */
const MAX_CACHED_DIGESTS = 4096;

/** Creates the check; `now` is the filesystem's time (for the racy window). */
export function createVerifiedCheck(now: () => number): VerifiedCheck {
  const digests = new Map<string, CachedDigest>();

  const refuse = (skill: SkillEntry, code: "unverified" | "verification_stale", message: string): SkillDiagnostic => ({
    severity: "error",
    code,
    message,
    path: skill.path,
    layer: skill.layer,
    role: skill.role,
  });

  /** The skill tree's digest (metadata excluded), from the cache while its listing is unchanged. */
  const treeDigest = async (directory: string): Promise<{ digest: string } | { problem: string }> => {
    const startedAt = now();
    const signatures: string[] = [];
    let settled = true;
    // Records what the walk's lstat calls see: the listing's key.
    const io: SkillIo = {
      ...nodeSkillIo,
      lstat: async (path: string): Promise<Stats> => {
        const stat = await nodeSkillIo.lstat(path);
        if (stat.isFile()) {
          const signature = signatureOf(stat);
          if (!isSettled(signature, startedAt)) settled = false;
          signatures.push(`${path}\u0000${signature.ino}\u0000${signature.size}\u0000${signature.mtimeMs}\u0000${signature.ctimeMs}`);
        }
        return stat;
      },
    };
    const listing = await listSkillTree(io, directory, DEFAULT_MANAGED_SKILL_LIMITS);
    if (listing.problems.length > 0) return { problem: `${listing.problems[0]!.path} ${listing.problems[0]!.reason}` };
    const key = signatures.join("\u0001");
    const cached = digests.get(directory);
    if (cached && cached.key === key) return { digest: cached.digest };
    const { digest } = await readAndDigest(nodeSkillIo, listing);
    if (settled) {
      if (digests.size >= MAX_CACHED_DIGESTS) digests.clear();
      digests.set(directory, { key, digest });
    } else digests.delete(directory);
    return { digest };
  };

  const check = async (skill: SkillEntry): Promise<SkillDiagnostic | null> => {
    const metadata = await readSkillMetadata(skill.directory);
    if (metadata.isErr()) {
      const why = metadata.error.code === "not_found" ? "it is not a managed skill (no .keel-skill.json): import it with a verification summary" : `its metadata cannot be read (${metadata.error.code}): import it again`;
      return refuse(skill, "unverified", `not offered because the library requires verified skills: ${why}`);
    }
    const { admission, digest } = metadata.value;
    if (admission.decision !== "verified") {
      return refuse(skill, "unverified", `not offered because the library requires verified skills: it was admitted as ${admission.decision}; import it again with a verification summary that passes`);
    }
    let current: { digest: string } | { problem: string };
    try {
      current = await treeDigest(skill.directory);
    } catch (error) {
      current = { problem: `cannot be read (${(error as { code?: string }).code ?? String(error)})` };
    }
    if ("problem" in current) return refuse(skill, "verification_stale", `not offered because its verified content cannot be checked: ${current.problem}`);
    if (current.digest !== digest) {
      return refuse(skill, "verification_stale", `not offered because it changed since it was verified (verified ${digest}, now ${current.digest}): verify it again and import it`);
    }
    return null;
  };

  return { check };
}
