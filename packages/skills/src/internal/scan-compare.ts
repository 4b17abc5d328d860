import type { SkillDiagnostic } from "../skill-view.js";
import type { ScannedLayer, ScannedRoot, ScanResult } from "./skill-scan.js";

function sameDiagnostics(left: readonly SkillDiagnostic[], right: readonly SkillDiagnostic[]): boolean {
  if (left.length !== right.length) return false;
  return left.every((diagnostic, index) => {
    const other = right[index] as SkillDiagnostic;
    return (
      diagnostic.code === other.code &&
      diagnostic.severity === other.severity &&
      diagnostic.path === other.path &&
      diagnostic.message === other.message &&
      diagnostic.target === other.target &&
      diagnostic.role === other.role &&
      diagnostic.layer === other.layer
    );
  });
}

function sameRoot(left: ScannedRoot, right: ScannedRoot): boolean {
  if (left.role !== right.role || left.path !== right.path || left.skills.length !== right.skills.length) return false;
  return left.skills.every((skill, index) => skill === right.skills[index]) && sameDiagnostics(left.diagnostics, right.diagnostics);
}

/**
 * True when two scans found the same tree: same layers, roots and diagnostics, and the very same
 * skill objects (an unchanged file yields the same object from the cache). Then every view built
 * from the earlier scan is still right.
 */
export function sameScan(previous: ScanResult, next: ScanResult): boolean {
  if (previous.layers.length !== next.layers.length) return false;
  return previous.layers.every((layer, index) => {
    const other = next.layers[index] as ScannedLayer;
    if (layer.name !== other.name || layer.path !== other.path || layer.roots.length !== other.roots.length) return false;
    if (!sameDiagnostics(layer.diagnostics, other.diagnostics)) return false;
    return layer.roots.every((root, rootIndex) => sameRoot(root, other.roots[rootIndex] as ScannedRoot));
  });
}
