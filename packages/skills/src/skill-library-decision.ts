/** What a library update does with one skill. */
export type LibraryAction = "add" | "update" | "unchanged" | "conflict" | "removed" | "invalid" | "withdrawn";

/** What is known of one skill name for {@link decideLibraryUpdate}. */
export interface LibrarySkillFacts {
  /** The skill name. */
  name: string;
  /** The state document's record: the digest installed from which library, and whether it was withdrawn. */
  recorded: { library: string; digest: string; withdrawn: boolean } | null;
  /** The digest of what is on disk now (metadata excluded), or `null` when nothing is there. */
  current: string | null;
  /** The upstream skill: its digest, or why it cannot be installed; `null` when upstream no longer has it. */
  upstream: { digest: string } | { invalid: string } | null;
}

/** One line of a library update plan. */
export interface LibraryPlanEntry {
  name: string;
  action: LibraryAction;
  /** What `apply` will do: `install` (add or replace), `remove` (to the trash), `forget` (drop the record), `none`. */
  operation: "install" | "remove" | "forget" | "none";
  /** Why, in words. */
  reason: string;
  recorded: string | null;
  current: string | null;
  upstream: string | null;
}

/**
 * Decides what an update does with one skill, comparing three digests: recorded (installed
 * from this library), current (on disk) and upstream. Pure and total. In order:
 *
 * 1. upstream has it but it fails validation → `invalid`, nothing done;
 * 2. withdrawn from this role (recorded as such) → `withdrawn`, nothing done;
 * 3. not recorded from this library: absent on disk → `add`; present → `conflict` (someone else's
 *    skill of that name), replaced only with `force`;
 * 4. recorded, gone upstream → `removed`: kept unless `prune` (then moved to the trash, or only
 *    forgotten when it is gone locally too); a locally modified one only with `force` as well;
 * 5. recorded, on disk differs from the record (modified or deleted locally) → `conflict`,
 *    overwritten with upstream only with `force`;
 * 6. recorded and unmodified: upstream equal → `unchanged`, else `update`.
 *
 * @example
 * ```ts
 * decideLibraryUpdate({ name: "pdf", recorded: { library: "/src", digest: "sha256:a", withdrawn: false },
 *   current: "sha256:b", upstream: { digest: "sha256:c" } }, "/src", { force: false, prune: false });
 * // → { action: "conflict", operation: "none", … } (modified locally)
 * ```
 */
export function decideLibraryUpdate(facts: LibrarySkillFacts, library: string, options: { force: boolean; prune: boolean }): LibraryPlanEntry {
  const upstreamDigest = facts.upstream && "digest" in facts.upstream ? facts.upstream.digest : null;
  const ours = facts.recorded !== null && facts.recorded.library === library ? facts.recorded : null;
  const entry = (action: LibraryAction, operation: LibraryPlanEntry["operation"], reason: string): LibraryPlanEntry => ({
    name: facts.name,
    action,
    operation,
    reason,
    recorded: ours?.digest ?? null,
    current: facts.current,
    upstream: upstreamDigest,
  });
  if (facts.upstream && "invalid" in facts.upstream) return entry("invalid", "none", `upstream cannot be installed: ${facts.upstream.invalid}`);
  if (ours?.withdrawn) return entry("withdrawn", "none", "withdrawn from this role: import it again to take it back");
  if (!ours) {
    if (!upstreamDigest) return entry("unchanged", "none", "not from this library");
    if (facts.current === null) return entry("add", "install", "new upstream");
    const reason = facts.recorded ? `installed from another library (${facts.recorded.library})` : "a skill of this name exists that this library did not install";
    return entry("conflict", options.force ? "install" : "none", options.force ? `${reason}: replaced (force)` : `${reason}: skipped (force replaces it)`);
  }
  const modified = facts.current !== ours.digest;
  if (!upstreamDigest) {
    if (!options.prune) return entry("removed", "none", "removed upstream: kept (prune removes it)");
    if (facts.current === null) return entry("removed", "forget", "removed upstream and locally: forgotten");
    if (modified && !options.force) return entry("conflict", "none", "removed upstream but modified locally: kept (force with prune removes it)");
    return entry("removed", "remove", "removed upstream: moved to the trash (prune)");
  }
  if (modified) {
    const what = facts.current === null ? "deleted locally" : "modified locally";
    return entry("conflict", options.force ? "install" : "none", options.force ? `${what}: overwritten with upstream (force)` : `${what}: skipped (force overwrites it)`);
  }
  if (upstreamDigest === ours.digest) return entry("unchanged", "none", "up to date");
  return entry("update", "install", "changed upstream");
}
