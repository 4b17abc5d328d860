import { KeelError } from "@keel/core";
import { err, ok, type Result } from "neverthrow";
import { buildContextFromPath, type TranscriptContext } from "./context-build.js";
import { readEntries } from "./entry-parse.js";
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
  /** The model's context at `leafId`, projected from its path in time linear in the path. `not_found` for an unknown id. */
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
 * Checks that `entries` form a forest: unique ids, every parent present, no cycle. Linear: an
 * entry whose parent comes before it reaches a root by induction over the order (a cycle needs
 * at least one parent named before it is written), so only entries naming a later parent are
 * walked, and append-ordered logs walk none. Errors are `corrupt`, with the offending entry id
 * and its index in `entries` (`details.index`); `invalid_input` when `entries` is not an array of
 * entries (a proxy or a getter whose reading throws included).
 */
export function checkForest(entries: readonly TranscriptEntry[]): Result<Map<string, TranscriptEntry>, KeelError> {
  return readEntries(entries, "checkForest entries (an array)").andThen(indexForest);
}

/** {@link checkForest} of entries already validated (read from a store or checked by the caller). */
export function indexForest(entries: readonly TranscriptEntry[]): Result<Map<string, TranscriptEntry>, KeelError> {
  const byId = new Map<string, TranscriptEntry>();
  const forward: TranscriptEntry[] = [];
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as TranscriptEntry;
    if (byId.has(entry.id)) {
      return err(corrupt(`entry id "${entry.id}" appears twice (index ${entries.findIndex((other) => other.id === entry.id)} and ${index})`, { entryId: entry.id, index }));
    }
    if (entry.parentId !== null && !byId.has(entry.parentId)) forward.push(entry);
    byId.set(entry.id, entry);
  }
  return checkForwardParents(entries, byId, forward).map(() => byId);
}

/**
 * The second half of {@link checkForest}, for a caller that already indexed the entries:
 * `forward` holds every entry whose parent was not indexed when it was reached.
 */
export function checkForwardParents(entries: readonly TranscriptEntry[], byId: ReadonlyMap<string, TranscriptEntry>, forward: readonly TranscriptEntry[]): Result<void, KeelError> {
  const indexOf = (id: string): number => entries.findIndex((entry) => entry.id === id);
  for (const entry of forward) {
    if (entry.parentId !== null && !byId.has(entry.parentId)) {
      return err(corrupt(`entry "${entry.id}" names a parent "${entry.parentId}" that does not exist`, { entryId: entry.id, parentId: entry.parentId, index: indexOf(entry.id) }));
    }
  }
  const rooted = new Set<string>();
  const walk = new Set<string>();
  for (const entry of forward) {
    let current: TranscriptEntry | undefined = entry;
    while (current && !rooted.has(current.id)) {
      if (walk.has(current.id)) {
        return err(corrupt(`entry "${current.id}" is its own ancestor (a cycle in parent ids)`, { entryId: current.id, index: indexOf(current.id) }));
      }
      walk.add(current.id);
      current = current.parentId === null ? undefined : byId.get(current.parentId);
    }
    for (const id of walk) rooted.add(id);
    walk.clear();
  }
  return ok(undefined);
}

/** Builds a tree from a checked forest (see {@link checkForest}); the caller keeps `entries` unchanged. */
export function createMutableTree(entries: readonly TranscriptEntry[], byId: Map<string, TranscriptEntry>): MutableTranscriptTree {
  const all: TranscriptEntry[] = entries.slice();
  // Built on the first children() call: an open or import that never asks pays nothing for it.
  let childrenOf: Map<string, TranscriptEntry[]> | undefined;
  const labels = new Map<string, string>();
  const indexChild = (index: Map<string, TranscriptEntry[]>, entry: TranscriptEntry): void => {
    const key = entry.parentId ?? ROOTS;
    const siblings = index.get(key);
    if (siblings) siblings.push(entry);
    else index.set(key, [entry]);
  };
  const indexLabel = (entry: TranscriptEntry): void => {
    if (entry.type !== "label" || typeof entry["targetId"] !== "string") return;
    const label = entry["label"];
    if (typeof label === "string" && label.length > 0) labels.set(entry["targetId"], label);
    else labels.delete(entry["targetId"]);
  };
  for (const entry of all) indexLabel(entry);
  const children = (): Map<string, TranscriptEntry[]> => {
    if (!childrenOf) {
      childrenOf = new Map();
      for (const entry of all) indexChild(childrenOf, entry);
    }
    return childrenOf;
  };

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
      return ok(children().get(id ?? ROOTS) ?? []);
    },
    path,
    label: (id) => labels.get(id),
    labels: () => labels,
    buildContext: (leafId) => path(leafId).map(buildContextFromPath),
    add: (entry) => {
      all.push(entry);
      byId.set(entry.id, entry);
      if (childrenOf) indexChild(childrenOf, entry);
      indexLabel(entry);
    },
  };
}

/**
 * Builds a read-only tree over entries (checked by {@link checkForest}: `corrupt` for a duplicate
 * id, a missing parent or a cycle, `invalid_input` for a value that is not an array of entries).
 * The entries are read once: the tree holds what was checked.
 *
 * @example
 * ```ts
 * const tree = createTranscriptTree(imported.entries)._unsafeUnwrap();
 * const context = tree.buildContext(imported.leafId)._unsafeUnwrap();
 * ```
 */
export function createTranscriptTree(entries: readonly TranscriptEntry[]): Result<TranscriptTree, KeelError> {
  const checked = readEntries(entries, "createTranscriptTree entries (an array)");
  if (checked.isErr()) return err(checked.error);
  return indexForest(checked.value).map((byId) => {
    const tree = createMutableTree(checked.value, byId);
    const { add: _add, ...readOnly } = tree;
    return Object.defineProperty(readOnly, "size", { get: () => tree.size, enumerable: true }) as TranscriptTree;
  });
}
