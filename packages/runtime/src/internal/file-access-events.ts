import { stat } from "node:fs/promises";
import { isAbsolute, relative, resolve } from "node:path";
import type { BackendFileAccess } from "@keel/backend";

/** One `agent.io.*` event to emit, without `type`'s `at` (the bus adds it). */
export interface FileAccessEvent {
  type: "agent.io.read" | "agent.io.write" | "agent.io.search";
  role: string;
  missionId: string;
  path: string;
  bytes: number;
  skill: null;
}

const TYPES = { read: "agent.io.read", write: "agent.io.write", search: "agent.io.search" } as const;

/** `path` relative to `cwd` when it lies inside it (as the agent's tool saw it otherwise). */
export function relativeToCwd(cwd: string, path: string): { path: string; inside: boolean } {
  const full = resolve(cwd, path);
  const fromCwd = relative(cwd, full);
  const inside = fromCwd !== "" && !fromCwd.startsWith("..") && !isAbsolute(fromCwd);
  return inside ? { path: fromCwd, inside } : { path: fromCwd === "" ? "." : path, inside: false };
}

async function sizeOf(cwd: string, path: string): Promise<number> {
  const info = await stat(resolve(cwd, path)).catch(() => undefined);
  return info?.isFile() ? info.size : 0;
}

/**
 * The `agent.io.*` events of one turn, from what the agent really did: the backend's
 * `fileAccess` (its tool calls), in order, each path relative to `cwd` when inside it. Bytes are
 * the backend's when it knew them; otherwise a read or write inside `cwd` is sized from the file
 * as it is after the turn, anything else is 0. A backend that shows no tool call at all
 * (`toolCalls` 0 or `null`, unknown, and no access: a scripted or API backend) falls back to the
 * paths the role reported inspecting (`inspected`), as reads.
 */
export async function fileAccessEvents(
  cwd: string,
  turn: { role: string; missionId: string },
  reported: { fileAccess: readonly BackendFileAccess[]; toolCalls: number | null } | undefined,
  inspected: readonly string[],
): Promise<FileAccessEvent[]> {
  const fromTools = reported !== undefined && ((reported.toolCalls ?? 0) > 0 || reported.fileAccess.length > 0);
  const accesses: { op: BackendFileAccess["op"]; path: string; bytes?: number }[] = fromTools
    ? [...reported.fileAccess]
    : inspected.map((path) => ({ op: "read" as const, path }));
  return Promise.all(
    accesses.map(async (access): Promise<FileAccessEvent> => {
      const { path, inside } = relativeToCwd(cwd, access.path);
      const bytes = access.bytes ?? (inside && access.op !== "search" ? await sizeOf(cwd, path) : 0);
      return { type: TYPES[access.op], role: turn.role, missionId: turn.missionId, path, bytes, skill: null };
    }),
  );
}
