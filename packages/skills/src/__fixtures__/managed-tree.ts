/**
 * Helpers of the managing tests: a whole-tree snapshot (every entry, dot files included, with
 * its type and content) and a `SkillIo` that fails one chosen call. Not part of the build.
 */
import { createHash } from "node:crypto";
import { cpSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { nodeSkillIo, type SkillIo } from "../skill-io.js";

/** Every entry under `root` as `relative kind content`, sorted; `[]` when `root` is absent. */
export function snapshotTree(root: string): string[] {
  const lines: string[] = [];
  const walk = (directory: string, relative: string) => {
    for (const name of readdirSync(directory).sort()) {
      const path = join(directory, name);
      const child = relative ? `${relative}/${name}` : name;
      const stat = lstatSync(path);
      if (stat.isDirectory()) {
        lines.push(`${child}/ dir`);
        walk(path, child);
      } else if (stat.isSymbolicLink()) lines.push(`${child} link ${readlinkSync(path)}`);
      else lines.push(`${child} file ${createHash("sha256").update(readFileSync(path)).digest("hex")}`);
    }
  };
  try {
    lstatSync(root);
  } catch {
    return [];
  }
  walk(root, "");
  return lines;
}

/** Copies a directory (for building sources from the read-only shared fixtures). */
export function copyTree(from: string, to: string): void {
  cpSync(from, to, { recursive: true });
}

/** Which call fails: the method, a predicate on its (first) path, and which matching call (1-based). */
export interface FaultPlan {
  method: keyof SkillIo;
  when: (path: string, to?: string) => boolean;
  nth?: number;
  /** The errno code thrown (default `EIO`). */
  code?: string;
}

/** A `SkillIo` over the real file system that throws on the calls chosen by `plans`. */
export function faultyIo(...plans: FaultPlan[]): SkillIo & { fired: () => number } {
  const seen = plans.map(() => 0);
  let fired = 0;
  const wrap =
    <K extends keyof SkillIo>(method: K) =>
    async (...args: Parameters<SkillIo[K]>): Promise<Awaited<ReturnType<SkillIo[K]>>> => {
      for (const [index, plan] of plans.entries()) {
        if (plan.method !== method || !plan.when(String(args[0]), args[1] === undefined ? undefined : String(args[1]))) continue;
        seen[index]! += 1;
        if (seen[index] === (plan.nth ?? 1)) {
          fired++;
          throw Object.assign(new Error(`injected ${plan.code ?? "EIO"} on ${method} ${String(args[0])}`), { code: plan.code ?? "EIO" });
        }
      }
      return (nodeSkillIo[method] as (...inner: unknown[]) => Promise<Awaited<ReturnType<SkillIo[K]>>>)(...args);
    };
  const io = Object.fromEntries((Object.keys(nodeSkillIo) as (keyof SkillIo)[]).map((method) => [method, wrap(method)])) as unknown as SkillIo;
  return Object.assign(io, { fired: () => fired });
}
