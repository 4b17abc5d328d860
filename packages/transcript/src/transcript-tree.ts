import { KeelError } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { buildContextFromPath, type TranscriptContext } from "./context-build.js";
import type { TranscriptEntry } from "./entry-schema.js";

/**
 * A read-only session tree in memory: every entry by id, the children of each, the labels in
 * force. Built in one linear pass; every query is proportional to what it returns (a path walk
 * pushes and reverses once, children come from an index, labels from a map).
 */
export interface TranscriptTree {
  /** How many entries it holds. */
  readonly size: number;
  /** Every entry, in the order they were appended (or read from a file). Do not mutate. */
  entries(): readonly TranscriptEntry[];
  /** The entry with this id. */
  get(id: string): TranscriptEntry | undefined;
  /** The last entry appended, or `undefined` for an empty tree. */
  last(): TranscriptEntry | undefined;
  /** The direct children of an entry in append order (`null`: the roots). `not_found` for an unknown id. */
  children(id: string | null): Result<readonly TranscriptEntry[], KeelError>;
  /** The entries from the root to `leafId`, inclusive (`null`: empty). `not_found` for an unknown id. */
  path(leafId: string | null): Result<TranscriptEntry[], KeelError>;
  /** The label of an entry, as set by the latest `label` entry targeting it. */
  label(id: string): string | undefined;
  /** Every label in force, by entry id. */
  labels(): ReadonlyMap<string, string>;
  /** The model's context at `leafId` (see {@link buildContextFromPath}). `not_found` for an unknown id. */
  buildContext(leafId: string | null): Result<TranscriptContext, KeelError>;
}

/** A tree that the transcript that owns it can extend. */
export interface MutableTranscriptTree extends TranscriptTree {
  /** Adds an entry whose parent is already in the tree (checked by the caller). */
  add(entry: TranscriptEntry): void;
}

const ROOTS = "";

function notFound(id: string): KeelError {
  return new KeelError("not_found", `entry "${id}" is not in this transcript: pass the id of an existing entry`, { details: { entryId: id } });
}

function corrupt(message: string, details: Record<string, string | number>): KeelError {
  return new KeelError("corrupt", message, { details });
}

/**
 * Checks that `entries` form a forest: unique ids, every parent present, no cycle. Linear: each
 * entry's ancestry is walked once (entries already proven to reach a root are not walked again).
 * Errors are `corrupt`, with the offending entry id and its index in `entries` (`details.index`).
 */
export function checkForest(entries: readonly TranscriptEntry[]): Result<Map<string, TranscriptEntry>, KeelError> {
  const byId = new Map<string, TranscriptEntry>();
  const indexOf = new Map<string, number>();
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as TranscriptEntry;
    if (byId.has(entry.id)) {
      return err(corrupt(`entry id "${entry.id}" appears twice (index ${indexOf.get(entry.id)} and ${index})`, { entryId: entry.id, index }));
    }
    byId.set(entry.id, entry);
    indexOf.set(entry.id, index);
  }
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as TranscriptEntry;
    if (entry.parentId !== null && !byId.has(entry.parentId)) {
      return err(corrupt(`entry "${entry.id}" names a parent "${entry.parentId}" that does not exist`, { entryId: entry.id, parentId: entry.parentId, index }));
    }
  }
  // 1: on the walk in progress, 2: known to reach a root.
  const state = new Map<string, 1 | 2>();
  const walk: string[] = [];
  for (const entry of entries) {
    let current: TranscriptEntry | undefined = entry;
    while (current && state.get(current.id) === undefined) {
      state.set(current.id, 1);
      walk.push(current.id);
      current = current.parentId === null ? undefined : byId.get(current.parentId);
    }
    if (current && state.get(current.id) === 1) {
      return err(corrupt(`entry "${current.id}" is its own ancestor (a cycle in parent ids)`, { entryId: current.id, index: indexOf.get(current.id) ?? -1 }));
    }
    for (const id of walk) state.set(id, 2);
    walk.length = 0;
  }
  return ok(byId);
}

/** Builds a tree from a checked forest (see {@link checkForest}); the caller keeps `entries` unchanged. */
export function createMutableTree(entries: readonly TranscriptEntry[], byId: Map<string, TranscriptEntry>): MutableTranscriptTree {
  const all: TranscriptEntry[] = [...entries];
  const childrenOf = new Map<string, TranscriptEntry[]>();
  const labels = new Map<string, string>();
  const index = (entry: TranscriptEntry): void => {
    const key = entry.parentId ?? ROOTS;
    const siblings = childrenOf.get(key);
    if (siblings) siblings.push(entry);
    else childrenOf.set(key, [entry]);
    if (entry.type === "label" && typeof entry["targetId"] === "string") {
      const label = entry["label"];
      if (typeof label === "string" && label.length > 0) labels.set(entry["targetId"], label);
      else labels.delete(entry["targetId"]);
    }
  };
  for (const entry of all) index(entry);

  const path = (leafId: string | null): Result<TranscriptEntry[], KeelError> => {
    if (leafId === null) return ok([]);
    let current = byId.get(leafId);
    if (!current) return err(notFound(leafId));
    const result: TranscriptEntry[] = [];
    while (current) {
      result.push(current);
      current = current.parentId === null ? undefined : byId.get(current.parentId);
    }
    return ok(result.reverse());
  };

  return {
    get size() {
      return all.length;
    },
    entries: () => all,
    get: (id) => byId.get(id),
    last: () => all[all.length - 1],
    children: (id) => {
      if (id !== null && !byId.has(id)) return err(notFound(id));
      return ok(childrenOf.get(id ?? ROOTS) ?? []);
    },
    path,
    label: (id) => labels.get(id),
    labels: () => labels,
    buildContext: (leafId) => path(leafId).map(buildContextFromPath),
    add: (entry) => {
      all.push(entry);
      byId.set(entry.id, entry);
      index(entry);
    },
  };
}

/**
 * Builds a read-only tree over entries (checked by {@link checkForest}: `corrupt` for a duplicate
 * id, a missing parent or a cycle).
 *
 * @example
 * ```ts
 * const tree = createTranscriptTree(imported.entries)._unsafeUnwrap();
 * const context = tree.buildContext(imported.leafId)._unsafeUnwrap();
 * ```
 */
export function createTranscriptTree(entries: readonly TranscriptEntry[]): Result<TranscriptTree, KeelError> {
  return checkForest(entries).map((byId) => {
    const tree = createMutableTree(entries, byId);
    const { add: _add, ...readOnly } = tree;
    return Object.defineProperty(readOnly, "size", { get: () => tree.size, enumerable: true }) as TranscriptTree;
  });
}
