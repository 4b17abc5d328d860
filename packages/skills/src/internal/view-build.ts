import type { ShadowedSkill, SkillDiagnostic, SkillDiscoveryMode, SkillEntry, SkillLocation, SkillRoot, SkillView } from "../skill-view.js";
import type { ScannedSkill } from "./scan-cache.js";
import type { ScannedRoot, ScanResult } from "./skill-scan.js";

function byPath(left: SkillDiagnostic, right: SkillDiagnostic): number {
  return left.path < right.path ? -1 : left.path > right.path ? 1 : 0;
}

function locationOf(entry: { path: string; layer: string; role: string; ownership: SkillLocation["ownership"] }): SkillLocation {
  return { path: entry.path, layer: entry.layer, role: entry.role, ownership: entry.ownership };
}

/** One layer's roots for `role`: its own directory (if it exists), then the others by role name. */
function layerRoots(roots: readonly ScannedRoot[], role: string): { root: ScannedRoot; ownership: SkillRoot["ownership"] }[] {
  const own = roots.filter((root) => root.role === role).map((root) => ({ root, ownership: "own" as const }));
  const others = roots.filter((root) => root.role !== role).map((root) => ({ root, ownership: "reference" as const }));
  return [...own, ...others];
}

/** Which skills of which role directory (real path) are `explicit-only`. */
export type HiddenSkills = ReadonlyMap<string, ReadonlySet<string>>;

const NOTHING_HIDDEN: HiddenSkills = new Map();

/**
 * Builds a role's view from a scan. A hidden (`explicit-only`) skill keeps its precedence (it
 * still shadows later skills of its name) but is listed in `hidden`, not in the catalogue. Pure. An earlier root wins a name collision (the loser goes
 * to `shadowed`); the same real file reached twice is kept once (an `info` diagnostic).
 */
export function buildView(scan: ScanResult, role: string, mode: SkillDiscoveryMode, hidden: HiddenSkills = NOTHING_HIDDEN): SkillView {
  const roots: SkillRoot[] = [];
  const skills: SkillEntry[] = [];
  const shadowed: ShadowedSkill[] = [];
  const diagnostics: SkillDiagnostic[] = [];
  const byName = new Map<string, SkillEntry>();
  const seenPaths = new Map<string, SkillLocation>();
  for (const layer of scan.layers) {
    diagnostics.push(...layer.diagnostics);
    for (const { root, ownership } of layerRoots(layer.roots, role)) {
      roots.push({ path: root.path, layer: layer.name, role: root.role, ownership });
      const rootDiagnostics = [...root.diagnostics];
      for (const found of root.skills) {
        const entry = entryOf(found, root, layer.name, ownership);
        const earlier = seenPaths.get(found.path);
        if (earlier) {
          rootDiagnostics.push({
            severity: "info",
            code: "duplicate_path",
            message: `the same file was already found through layer "${earlier.layer}", role "${earlier.role}": this copy is dropped`,
            path: found.path,
            layer: layer.name,
            role: root.role,
          });
          continue;
        }
        seenPaths.set(found.path, locationOf(entry));
        const winner = byName.get(entry.name);
        if (winner) {
          shadowed.push({ name: entry.name, winner: locationOf(winner), loser: locationOf(entry) });
          continue;
        }
        byName.set(entry.name, entry);
        skills.push(entry);
      }
      diagnostics.push(...rootDiagnostics.sort(byPath));
    }
  }
  for (const skill of skills) Object.freeze(skill);
  const isHidden = (skill: SkillEntry) => hidden.get(skill.root)?.has(skill.name) === true;
  const visible = hidden.size === 0 ? skills : skills.filter((skill) => !isHidden(skill));
  for (const item of [...roots, ...diagnostics]) Object.freeze(item);
  for (const item of shadowed) {
    Object.freeze(item.winner);
    Object.freeze(item.loser);
    Object.freeze(item);
  }
  return Object.freeze({
    role,
    mode,
    roots: Object.freeze(roots),
    own: Object.freeze(visible.filter((skill) => skill.ownership === "own")),
    reference: Object.freeze(visible.filter((skill) => skill.ownership === "reference")),
    skills: Object.freeze(visible),
    hidden: Object.freeze(skills.filter((skill) => isHidden(skill))),
    shadowed: Object.freeze(shadowed),
    diagnostics: Object.freeze(diagnostics),
    stats: Object.freeze({ ...scan.stats }),
  });
}

function entryOf(found: ScannedSkill, root: ScannedRoot, layer: string, ownership: SkillRoot["ownership"]): SkillEntry {
  const fields = found.fields;
  return {
    name: fields.name,
    description: fields.description,
    license: fields.license,
    compatibility: fields.compatibility,
    metadata: fields.metadata,
    allowedTools: fields.allowedTools,
    disableModelInvocation: fields.disableModelInvocation,
    path: found.path,
    directory: found.directory,
    relativePath: found.relativePath,
    root: root.path,
    layer,
    role: root.role,
    ownership,
    bytes: found.bytes,
  };
}
